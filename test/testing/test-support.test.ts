// The test double's state (spec/admin-api.md "Test support"): POST /_admin/reset to empty, demo or a
// seed; named snapshots saved, listed, restored in place while requests run, deleted; the test clock
// within what the databases hold; all of it 404 in production mode.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gateOf } from '../../src/testing/gate.ts';
import { ADMIN_TOKEN, startServer, type TestServer } from '../helpers/server.ts';

const MONA = 'chp_DemoMonaClassicToken00000000013Mkcu6';

describe('reset and snapshots', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ CODEHOST_TEST_MODE: '1' });
  });
  after(() => server.close());

  test('reset to empty: every row, file, fault and clock move gone; the admin token stays', async () => {
    await server.admin('POST', '/users', { login: 'gone' });
    await server.admin('POST', '/repos', { owner: 'gone', name: 'with-git', init_git: true });
    await server.admin('POST', '/faults', { effect: 'status', status: 500, times: 5, match: { path: '/nowhere' } });
    await server.advance(3600);
    const { took_ms } = await server.admin('POST', '/reset', {});
    assert.equal(typeof took_ms, 'number');
    assert.equal((await server.api('GET', '/users/gone')).status, 404);
    assert.deepEqual(await server.admin('GET', '/faults'), []);
    const { now } = await server.admin('GET', '/clock');
    assert.ok(Math.abs(Date.parse(now) - Date.now()) < 5_000, `the clock is back to now: ${now}`);
    assert.deepEqual(readdirSync(server.server.ctx.config.dataDir).filter((name) => name === 'git'), []);
    // Ids start again.
    const user = await server.admin('POST', '/users', { login: 'first' });
    assert.equal(user.id, 1);
    // The admin token and the secret key (settings) stay.
    assert.equal((await server.adminRaw('GET', '/clock')).status, 200);
  });

  test('reset to demo, twice: the demo world answers with its fixed tokens; the second reset restores the saved demo', async () => {
    await server.admin('POST', '/users', { login: 'not-demo' });
    for (const round of [1, 2]) {
      const { took_ms } = await server.admin('POST', '/reset', { to: 'demo' });
      assert.equal(typeof took_ms, 'number', `round ${round}`);
      assert.equal((await server.api('GET', '/users/not-demo')).status, 404);
      const repo = await server.api('GET', '/repos/acme/secret-sauce', { token: MONA });
      assert.equal(repo.status, 200, `round ${round}: ${repo.text}`);
      await server.admin('POST', '/users', { login: 'not-demo' });
    }
    // The saved demo is not a snapshot of the user's.
    assert.deepEqual((await server.admin('GET', '/snapshots')).map((s: { name: string }) => s.name).filter((n: string) => n.startsWith('.')), []);
  });

  test('reset to a seed (YAML or JSON); a seed that is neither, or refers to nothing, is 422 and no 500', async () => {
    await server.admin('POST', '/reset', { to: 'seed', seed: 'users:\n  - login: seeded\n' });
    assert.equal((await server.api('GET', '/users/seeded')).status, 200);
    assert.equal((await server.api('GET', '/users/mona')).status, 404);
    await server.admin('POST', '/reset', { to: 'seed', seed: JSON.stringify({ users: [{ login: 'json-seeded' }] }) });
    assert.equal((await server.api('GET', '/users/json-seeded')).status, 200);
    for (const body of [
      { to: 'seed' },
      { to: 'seed', seed: 'users: [unclosed' },
      { to: 'seed', seed: '- a list' },
      { to: 'empty', seed: 'users: []' },
      { to: 'elsewhere' },
      { to: 'seed', seed: 'repos:\n  - { owner: nobody, name: x }\n' },
    ]) {
      const response = await server.adminRaw('POST', '/reset', body);
      assert.ok(response.status === 422 || response.status === 404, `${JSON.stringify(body)}: ${response.status} ${response.text}`);
      assert.ok(response.body.message, JSON.stringify(body));
    }
  });

  test('a reset to a seed that fails answers its error and leaves the world as it was: rows, ids, git data, faults, clock', async () => {
    await server.admin('POST', '/reset', {});
    await server.admin('POST', '/users', { login: 'keeper' });
    const repo = await server.admin('POST', '/repos', { owner: 'keeper', name: 'kept', init_git: true });
    await server.admin('POST', '/faults', { effect: 'status', status: 500, times: 5, match: { path: '/nowhere' } });
    await server.advance(3600);
    const clockBefore = Date.parse((await server.admin('GET', '/clock')).now);
    const gitData = join(server.server.ctx.config.dataDir, 'git', `${repo.id}.git`);
    assert.ok(existsSync(gitData));
    // Its first entries load (and make git data), a later one refers to nothing.
    const failing = 'users:\n  - login: newcomer\nrepos:\n  - { owner: newcomer, name: fresh, init_git: true }\n  - { owner: nobody, name: x }\n';
    const response = await server.adminRaw('POST', '/reset', { to: 'seed', seed: failing });
    assert.equal(response.status, 404, response.text);
    assert.match(response.body.message, /nobody/);
    assert.equal((await server.api('GET', '/users/keeper')).status, 200, 'the world before the reset is there');
    assert.equal((await server.api('GET', '/repos/keeper/kept')).status, 200);
    assert.equal((await server.api('GET', '/users/newcomer')).status, 404, 'nothing of the seed stays');
    assert.ok(existsSync(gitData), 'the git data before the reset is there');
    assert.deepEqual(readdirSync(join(server.server.ctx.config.dataDir, 'git')), [`${repo.id}.git`], 'no git data of the seed stays');
    assert.equal((await server.admin('GET', '/faults')).length, 1, 'the faults stay');
    const clockAfter = Date.parse((await server.admin('GET', '/clock')).now);
    assert.ok(clockAfter - clockBefore > -1_000 && clockAfter - clockBefore < 60_000, 'the clock keeps its move');
    // Ids go on from where they were.
    const next = await server.admin('POST', '/users', { login: 'after-failed-reset' });
    assert.ok(next.id > repo.owner.id, `${next.id} after ${repo.owner.id}`);
    await server.admin('POST', '/reset', {});
  });

  test('a snapshot saves rows, git data, the clock and faults; restore puts them back in place; list, duplicate, delete, 404', async () => {
    await server.admin('POST', '/reset', {});
    await server.admin('POST', '/users', { login: 'mona' });
    await server.admin('POST', '/repos', { owner: 'mona', name: 'kept', init_git: true });
    for (let i = 0; i < 3; i++) await server.admin('POST', '/repos/mona/kept/issues', { author: 'mona', title: `issue ${i}` });
    await server.advance(86_400);
    await server.admin('POST', '/faults', { effect: 'status', status: 503, times: 2, match: { path: '/users/nobody' } });
    const { now: savedNow } = await server.admin('GET', '/clock');

    const saved = await server.adminRaw('POST', '/snapshots', { name: 'three-issues' });
    assert.equal(saved.status, 201, saved.text);
    assert.equal(saved.body.name, 'three-issues');
    assert.ok(saved.body.bytes > 0);
    assert.ok(!Number.isNaN(Date.parse(saved.body.created_at)));
    const duplicate = await server.adminRaw('POST', '/snapshots', { name: 'three-issues' });
    assert.equal(duplicate.status, 422);
    assert.equal(duplicate.body.errors[0].code, 'already_exists');
    for (const name of ['', 'Upper', 'a/b', 'x'.repeat(65), '.demo']) {
      const response = await server.adminRaw('POST', '/snapshots', { name });
      assert.ok(response.status === 422 || response.status === 400, `${name}: ${response.status}`);
    }

    // Change everything, then restore.
    await server.admin('POST', '/users', { login: 'later' });
    await server.admin('POST', '/repos/mona/kept/issues', { author: 'mona', title: 'issue 3' });
    await server.admin('DELETE', '/faults');
    await server.advance(86_400);
    await server.admin('POST', '/snapshots', { name: 'later' });

    const restored = await server.admin('POST', '/snapshots/three-issues/restore', {});
    assert.equal(typeof restored.took_ms, 'number');
    assert.equal((await server.api('GET', '/users/later')).status, 404);
    for (const number of [1, 2, 3]) assert.equal((await server.api('GET', `/repos/mona/kept/issues/${number}`)).body.title, `issue ${number - 1}`);
    assert.equal((await server.api('GET', '/repos/mona/kept/issues/4')).status, 404);
    const { now } = await server.admin('GET', '/clock');
    assert.ok(Math.abs(Date.parse(now) - Date.parse(savedNow)) < 10_000, `${now} vs ${savedNow}`);
    assert.equal((await server.admin('GET', '/faults')).length, 1);
    assert.equal((await server.api('GET', '/users/nobody')).status, 503);
    const repo = await server.admin('GET', '/repos/mona/kept');
    assert.ok(repo.id);
    assert.ok(existsSync(join(server.server.ctx.config.dataDir, 'git')));
    // Numbering continues as it would have from the snapshot: the next issue is number 4.
    const next = await server.admin('POST', '/repos/mona/kept/issues', { author: 'mona', title: 'after restore' });
    assert.equal(next.number, 4);
    const user = await server.admin('POST', '/users', { login: 'after-restore' });
    assert.equal(user.id, 2 + 0, 'ids continue from the snapshot (mona is 1)');

    const list = await server.admin('GET', '/snapshots');
    assert.deepEqual(list.map((s: { name: string }) => s.name), ['later', 'three-issues']);
    assert.equal((await server.adminRaw('DELETE', '/snapshots/later')).status, 204);
    assert.equal((await server.adminRaw('DELETE', '/snapshots/later')).status, 404);
    assert.equal((await server.adminRaw('POST', '/snapshots/later/restore', {})).status, 404);
    assert.deepEqual((await server.admin('GET', '/snapshots')).map((s: { name: string }) => s.name), ['three-issues']);
    // A snapshot outlives a reset.
    await server.admin('POST', '/reset', {});
    await server.admin('POST', '/snapshots/three-issues/restore', {});
    assert.equal((await server.api('GET', '/users/mona')).status, 200);
  });

  test('a restore copies back only the git data that changed since the snapshot was saved or restored', async () => {
    const dataDir = server.server.ctx.config.dataDir;
    const gitOf = (id: number) => join(dataDir, 'git', `${id}.git`);
    await server.admin('POST', '/reset', { to: 'demo' });
    const head = join(gitOf((await server.admin('GET', '/repos/acme/widgets')).id), 'HEAD');
    const original = readFileSync(head, 'utf8');
    // Unchanged: left as it is (the same file).
    const inode = statSync(head).ino;
    await server.admin('POST', '/reset', { to: 'demo' });
    assert.equal(statSync(head).ino, inode);
    // A file rewritten, a repository's git data added: both put back as the demo had them.
    writeFileSync(head, 'ref: refs/heads/elsewhere\n');
    const added = await server.admin('POST', '/repos', { owner: 'mona', name: 'added', init_git: true });
    assert.equal(existsSync(gitOf(added.id)), true);
    await server.admin('POST', '/reset', { to: 'demo' });
    assert.equal(readFileSync(head, 'utf8'), original);
    assert.equal(existsSync(gitOf(added.id)), false);
    // A snapshot deleted and saved again under its name holds the new files.
    await server.admin('POST', '/snapshots', { name: 'files' });
    const second = await server.admin('POST', '/repos', { owner: 'mona', name: 'second', init_git: true });
    await server.admin('DELETE', '/snapshots/files');
    await server.admin('POST', '/snapshots', { name: 'files' });
    await server.admin('POST', '/snapshots/files/restore', {});
    assert.equal(existsSync(gitOf(second.id)), true);
    await server.admin('DELETE', '/snapshots/files');
  });

  test('a repository made after a snapshot: the restore puts the saved rows back, the tables\' triggers not adding their own', async () => {
    await server.admin('POST', '/reset', {});
    await server.admin('POST', '/users', { login: 'octo' });
    await server.admin('POST', '/repos', { owner: 'octo', name: 'tools' });
    await server.admin('POST', '/snapshots', { name: 'one-repository' });
    await server.admin('POST', '/repos', { owner: 'octo', name: 'later' });
    const restored = await server.adminRaw('POST', '/snapshots/one-repository/restore', {});
    assert.equal(restored.status, 200, restored.text);
    assert.equal((await server.api('GET', '/repos/octo/tools')).status, 200);
    assert.equal((await server.api('GET', '/repos/octo/later')).status, 404);
    // The triggers are on again: a repository made now has its version row (its representation reads it).
    await server.admin('POST', '/repos', { owner: 'octo', name: 'after' });
    assert.equal((await server.api('GET', '/repos/octo/after')).status, 200);
    await server.admin('DELETE', '/snapshots/one-repository');
  });

  test('requests in flight during restores see the state before or after, never a mix, never a 5xx', async () => {
    await server.admin('POST', '/reset', {});
    await server.admin('POST', '/users', { login: 'alpha' });
    await server.admin('POST', '/repos', { owner: 'alpha', name: 'one' });
    await server.admin('POST', '/snapshots', { name: 'alpha' });
    await server.admin('POST', '/reset', {});
    await server.admin('POST', '/users', { login: 'beta' });
    await server.admin('POST', '/repos', { owner: 'beta', name: 'one' });
    await server.admin('POST', '/snapshots', { name: 'beta' });

    let stop = false;
    const seen: string[] = [];
    const readers = Array.from({ length: 6 }, async () => {
      while (!stop) {
        // Two reads that must agree: the owner exists exactly when its repository does.
        const [alpha, alphaRepo] = await Promise.all([server.api('GET', '/users/alpha'), server.api('GET', '/repos/alpha/one')]);
        assert.ok(alpha.status < 500 && alphaRepo.status < 500, `${alpha.status} ${alphaRepo.status}`);
        seen.push(`${alpha.status}`);
      }
    });
    const writers = (async () => {
      for (let i = 0; i < 10; i++) {
        await server.admin('POST', `/snapshots/${i % 2 ? 'alpha' : 'beta'}/restore`, {});
        const created = await server.adminRaw('POST', '/users', { login: `made-${i}` });
        assert.equal(created.status, 201, created.text);
      }
      stop = true;
    })();
    await Promise.all([writers, ...readers]);
    assert.ok(seen.includes('200') && seen.includes('404'), 'the readers saw both states');
  });
});

describe('the test clock within reason', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  test('a move past what every database holds is 422 naming the limit; the clock and later requests still work', async () => {
    await server.admin('POST', '/users', { login: 'mona' });
    for (const seconds of [8.64e12, 2 ** 53, 1e308, 400 * 365 * 86_400]) {
      const response = await server.adminRaw('POST', '/clock', { advance_seconds: seconds });
      assert.equal(response.status, 422, `${seconds}: ${response.text}`);
      assert.equal(response.body.errors[0].field, 'advance_seconds');
      assert.match(response.body.errors[0].message, /2038-01-18T03:14:07\.000Z/);
      assert.equal((await server.adminRaw('GET', '/clock')).status, 200);
      assert.equal((await server.api('GET', '/users/mona')).status, 200);
    }
    // Up to the limit is fine, and everything still answers there.
    const { now } = await server.admin('GET', '/clock');
    const room = Math.floor((Date.parse('2038-01-18T03:14:07.000Z') - Date.parse(now)) / 1000) - 60;
    await server.admin('POST', '/clock', { advance_seconds: room });
    assert.equal((await server.adminRaw('GET', '/clock')).status, 200);
    assert.equal((await server.api('GET', '/users/mona')).status, 200);
    const token = await server.admin('POST', '/tokens', { login: 'mona', kind: 'classic', scopes: ['repo'] });
    assert.equal((await server.api('GET', '/user', { token: token.token })).status, 200);
  });
});

describe('test support in production mode', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ CODEHOST_MODE: 'production' });
  });
  after(() => server.close());

  test('reset, snapshots and the journal are 404', async () => {
    for (const [method, path, body] of [
      ['POST', '/reset', {}], ['POST', '/snapshots', { name: 'x' }], ['GET', '/snapshots'], ['POST', '/snapshots/x/restore', {}],
      ['DELETE', '/snapshots/x'], ['GET', '/requests'], ['POST', '/requests/count', {}], ['DELETE', '/requests'],
    ] as const) {
      const response = await server.adminRaw(method, path, body);
      assert.equal(response.status, 404, `${method} ${path}`);
    }
    assert.equal(ADMIN_TOKEN.length > 0, true);
  });
});

describe('the gate when clients give up', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ CODEHOST_TEST_MODE: '1' });
    await server.admin('POST', '/users', { login: 'waiter' });
  });
  after(() => server.close());

  /** A GET that is abandoned (its socket destroyed) once it has been sent. */
  const abandoned = (path: string) =>
    new Promise<void>((resolve) => {
      const request = httpRequest(`${server.url}${path}`, { method: 'GET' });
      request.on('error', () => resolve());
      request.end(() => setTimeout(() => {
        request.destroy();
        resolve();
      }, 100));
    });

  test('clients that give up while they wait at the gate leave their place: the next snapshot and later requests answer', async () => {
    const gate = gateOf(server.server.ctx);
    let release!: () => void;
    const held = gate.exclusive(() => new Promise<void>((resolve) => (release = resolve)));
    // They wait behind the exclusive section, then give up.
    await Promise.all([abandoned('/users/waiter'), abandoned('/healthz'), abandoned('/users/waiter')]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    release();
    await held;
    const within = (ms: number) => AbortSignal.timeout(ms);
    const snapshot = await fetch(`${server.url}/_admin/snapshots`, {
      method: 'POST', signal: within(5_000), headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'after-abandon' }),
    });
    assert.equal(snapshot.status, 201, await snapshot.text());
    const health = await fetch(`${server.url}/healthz`, { signal: within(5_000) });
    assert.equal(health.status, 200);
    const reset = await fetch(`${server.url}/_admin/reset`, {
      method: 'POST', signal: within(5_000), headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: '{}',
    });
    assert.equal(reset.status, 200, await reset.text());
  });
});
