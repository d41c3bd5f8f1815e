// Deliveries you can carry (docs/testing.md "Webhook deliveries"): an app's deliveries exported as a
// fixtures file (each request exactly as posted, never the secret), `codehost replay` posting them,
// re-signed, to a real loopback receiver that verifies them with @octokit/webhooks-methods, and every
// failed delivery since a time redelivered in one call. Both databases (DATABASE_URL).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { verify } from '@octokit/webhooks-methods';
import { Receiver, type Received } from '../../helpers/receiver.ts';
import { ADMIN_TOKEN, startServer, type TestServer } from '../../helpers/server.ts';

const ROOT = new URL('../../..', import.meta.url).pathname;
const SECRET = 'original-secret-9f8e7d6c5b4a';
const REPLAY_SECRET = 'replay-secret-0a1b2c3d';
const label = (fixture: { event: string; action: string | null }) => (fixture.action ? `${fixture.event}.${fixture.action}` : fixture.event);

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** `codehost replay ARGS` as a user runs it: a process of its own, with only the environment given. */
function replay(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['src/main.ts', 'replay', ...args], { cwd: ROOT, timeout: 120_000, env: { PATH: process.env.PATH, ...env } }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

/** The headers a receiver got, without the ones the HTTP client adds (host, connection, length). */
function sentHeaders(received: Received): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(received.headers)) {
    if (!['host', 'connection', 'content-length'].includes(name)) out[name] = String(value);
  }
  return out;
}

/** Both signatures of a post check out with the secret: SHA-256 by @octokit/webhooks-methods, SHA-1 by its definition. */
async function assertSigned(received: Received, secret: string): Promise<void> {
  assert.equal(await verify(secret, received.body, String(received.headers['x-hub-signature-256'])), true, 'x-hub-signature-256');
  assert.equal(received.headers['x-hub-signature'], `sha1=${createHmac('sha1', secret).update(received.bytes).digest('hex')}`);
}

describe('deliveries as fixtures, replayed', () => {
  let server: TestServer;
  let original: Receiver;
  /** Answers 500 while `failing` is set. */
  let failing = false;
  let dir: string;
  let start: string;

  before(async () => {
    original = await new Receiver((_path, response) => void response.writeHead(failing ? 500 : 200).end(failing ? 'down' : 'ok')).start();
    server = await startServer({ CODEHOST_TEST_MODE: '1' });
    dir = mkdtempSync(join(tmpdir(), 'codehost-fixtures-'));
    await server.admin('POST', '/reset', {
      to: 'seed',
      seed: JSON.stringify({
        users: [{ login: 'mona' }],
        orgs: [{ login: 'acme', owners: ['mona'] }],
        repos: [{ owner: 'acme', name: 'widgets' }],
        apps: [
          { slug: 'carried', permissions: { issues: 'write' }, events: ['issues', 'issue_comment'], webhook: { url: original.url('/hook'), secret: SECRET } },
          { slug: 'unsigned', permissions: { issues: 'read' }, events: ['issues'], webhook: { url: original.url('/plain'), content_type: 'form' } },
        ],
        installations: [{ app: 'carried', account: 'acme', repositories: 'all' }, { app: 'unsigned', account: 'acme', repositories: 'all' }],
      }),
    });
    await server.drain();
    await new Promise((resolve) => setTimeout(resolve, 20));
    start = new Date().toISOString();
    // One after the other (deliveries of activity made at once may go out in any order).
    const issue = await server.admin('POST', '/repos/acme/widgets/issues', { author: 'mona', title: 'First — with ünïcode' });
    await server.drain();
    await server.admin('POST', `/repos/acme/widgets/issues/${issue.number}/comments`, { author: 'mona', body: 'a comment' });
    await server.drain();
    await server.admin('POST', '/repos/acme/widgets/issues', { author: 'mona', title: 'Second' });
    await server.drain();
  });
  after(async () => {
    await server?.close();
    await original?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const fixturesOf = async (app: string, since?: string) => server.admin('GET', `/apps/${app}/deliveries/fixtures${since ? `?since=${encodeURIComponent(since)}` : ''}`);

  test('the fixtures file: each request as posted, in the order sent, with its signatures; never the secret', async () => {
    const file = await fixturesOf('carried');
    assert.equal(file.app, 'carried');
    const posted = original.on('/hook');
    // The new app's ping and its installation (sent at once, in either order), then the activity, one after the other.
    assert.deepEqual(file.fixtures.slice(0, 2).map(label).sort(), ['installation.created', 'ping']);
    assert.deepEqual(file.fixtures.slice(2).map(label), ['issues.opened', 'issue_comment.created', 'issues.opened']);
    assert.deepEqual(file.fixtures.slice(2).map((f: any) => f.guid), posted.slice(2).map((r) => r.headers['x-vendor-delivery']));
    assert.equal(file.fixtures.length, posted.length);
    for (const [i, fixture] of file.fixtures.entries()) {
      const sent = posted.find((r) => r.headers['x-vendor-delivery'] === fixture.guid)!;
      assert.deepEqual(fixture.headers, sentHeaders(sent), `headers of ${i}`);
      assert.equal(fixture.body, sent.body, `body of ${i}`);
      assert.deepEqual(fixture.signatures, { 'x-hub-signature': sent.headers['x-hub-signature'], 'x-hub-signature-256': sent.headers['x-hub-signature-256'] });
      assert.equal(await verify(SECRET, fixture.body, fixture.signatures['x-hub-signature-256']), true);
      assert.equal(fixture.status_code, 200);
    }
    assert.equal(JSON.parse(file.fixtures[2].body).issue.title, 'First — with ünïcode');
    const text = JSON.stringify(file);
    assert.ok(!text.includes(SECRET), 'the secret is not in the file');
    assert.ok(!text.includes(SECRET.slice(0, 12)), 'nor part of it');

    // A form hook without a secret: the body as posted (payload=…), no signatures.
    const plain = await fixturesOf('unsigned');
    assert.deepEqual(plain.fixtures.map((f: any) => f.body).sort(), original.on('/plain').map((r) => r.body).sort());
    assert.match(plain.fixtures[0].body, /^payload=%7B/);
    assert.ok(plain.fixtures.every((f: any) => f.signatures === null && f.headers['x-hub-signature-256'] === undefined));
  });

  test('since: later deliveries only; a bad since is 422, an unknown app 404', async () => {
    const all = (await fixturesOf('carried')).fixtures;
    assert.equal((await fixturesOf('carried', start)).fixtures.length, 3, 'the three after the installation');
    assert.equal((await fixturesOf('carried', all.at(-1).delivered_at)).fixtures.at(-1).guid, all.at(-1).guid);
    assert.deepEqual((await fixturesOf('carried', '2999-01-01T00:00:00Z')).fixtures, []);
    for (const bad of ['yesterday', '12', '2026-13-45T99:00:00Z']) {
      const answer = await server.adminRaw('GET', `/apps/carried/deliveries/fixtures?since=${bad}`);
      assert.equal(answer.status, 422, bad);
      assert.equal(answer.body.errors[0].field, 'since');
    }
    const unknown = await server.adminRaw('GET', '/apps/nobody/deliveries/fixtures');
    assert.equal(unknown.status, 404);
    assert.match(unknown.body.message, /nobody/);
    // Still the delivery by id beside it.
    assert.equal((await server.adminRaw('GET', `/apps/carried/deliveries/${all[0].id}`)).status, 200);
  });

  test('replay FILE --secret: each fixture posted in order to a loopback receiver, re-signed; the receiver verifies them', async () => {
    const file = await fixturesOf('carried');
    const path = join(dir, 'carried.json');
    writeFileSync(path, JSON.stringify(file));
    const target = await new Receiver().start();
    try {
      const run = await replay([path, '--to', target.url('/replayed'), '--secret', REPLAY_SECRET]);
      assert.equal(run.code, 0, run.stderr);
      const lines = run.stdout.trim().split('\n');
      assert.equal(lines.length, 5);
      assert.deepEqual(lines, file.fixtures.map((f: any) => `200 ${label(f)} ${f.guid} OK`));
      const got = target.on('/replayed');
      assert.deepEqual(got.map((r) => r.headers['x-vendor-delivery']), file.fixtures.map((f: any) => f.guid));
      for (const [i, received] of got.entries()) {
        assert.equal(received.body, file.fixtures[i].body);
        await assertSigned(received, REPLAY_SECRET);
        assert.equal(await verify(SECRET, received.body, String(received.headers['x-hub-signature-256'])), false, 'no longer the old signature');
        const { 'x-hub-signature': _sha1, 'x-hub-signature-256': _sha256, ...rest } = sentHeaders(received);
        const { 'x-hub-signature': _o1, 'x-hub-signature-256': _o2, ...recorded } = file.fixtures[i].headers;
        assert.deepEqual(rest, recorded, 'every other header as recorded');
      }
      assert.ok(!run.stdout.includes(REPLAY_SECRET) && !run.stderr.includes(REPLAY_SECRET), 'the secret is not echoed');

      // Without --secret: the signatures as recorded (the original secret still verifies them).
      const asRecorded = await replay([path, '--to', target.url('/recorded')]);
      assert.equal(asRecorded.code, 0, asRecorded.stderr);
      for (const received of target.on('/recorded')) await assertSigned(received, SECRET);
    } finally {
      await target.stop();
    }
  });

  test('replay --server --app --since: a live app\'s deliveries, through the admin API', async () => {
    const target = await new Receiver().start();
    try {
      const run = await replay(['--server', server.url, '--app', 'carried', '--since', start, '--to', target.url('/live'), '--secret', REPLAY_SECRET], { CODEHOST_ADMIN_TOKEN: ADMIN_TOKEN });
      assert.equal(run.code, 0, run.stderr);
      const got = target.on('/live');
      assert.deepEqual(got.map((r) => `${r.headers['x-vendor-event']}`), ['issues', 'issue_comment', 'issues']);
      for (const received of got) await assertSigned(received, REPLAY_SECRET);

      // An unknown app, a bad time, no token: one line, exit status 1, nothing posted.
      for (const [args, env, expected] of [
        [['--app', 'nobody'], { CODEHOST_ADMIN_TOKEN: ADMIN_TOKEN }, /answered 404 for app nobody/],
        [['--app', 'carried', '--since', 'tomorrow'], { CODEHOST_ADMIN_TOKEN: ADMIN_TOKEN }, /answered 422.*since must be an ISO 8601 time/],
        [['--app', 'carried'], {}, /CODEHOST_ADMIN_TOKEN must be set/],
      ] as const) {
        const failed = await replay(['--server', server.url, ...args, '--to', target.url('/never')], env);
        assert.equal(failed.code, 1, args.join(' '));
        assert.equal(failed.stderr.trim().split('\n').length, 1, failed.stderr);
        assert.match(failed.stderr, expected);
      }
      assert.equal(target.on('/never').length, 0);
    } finally {
      await target.stop();
    }
  });

  test('a target that is not loopback is refused in one line, before anything is read or posted', async () => {
    const path = join(dir, 'refused.json');
    writeFileSync(path, JSON.stringify(await fixturesOf('carried')));
    for (const to of ['http://192.168.1.5:8080/hook', 'http://8.8.8.8/hook', 'http://169.254.169.254/', 'not a url']) {
      const run = await replay([path, '--to', to]);
      assert.equal(run.code, 1, to);
      assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
      assert.match(run.stderr, /--to must/, to);
      assert.equal(run.stdout, '');
    }
    // Loopback in another spelling is a loopback receiver.
    const target = await new Receiver().start();
    try {
      const run = await replay([path, '--to', `http://127.1:${target.port}/spelled`]);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(target.on('/spelled').length, 5);
      // And a name whose every address is loopback.
      const named = await replay([path, '--to', `http://localhost:${target.port}/named`]);
      assert.equal(named.code, 0, named.stderr);
      assert.equal(target.on('/named').length, 5);
    } finally {
      await target.stop();
    }
  });

  test('a receiver that answers 500 (or nothing) is a non-zero exit, each post still one line', async () => {
    const path = join(dir, 'failing.json');
    writeFileSync(path, JSON.stringify(await fixturesOf('carried', start)));
    const down = await new Receiver((_path, response) => void response.writeHead(500).end('no')).start();
    try {
      const run = await replay([path, '--to', down.url('/down'), '--secret', REPLAY_SECRET]);
      assert.equal(run.code, 1);
      const lines = run.stdout.trim().split('\n');
      assert.equal(lines.length, 3);
      assert.ok(lines.every((line) => line.startsWith('500 ') && line.endsWith('Invalid HTTP Response: 500')), run.stdout);
      assert.match(run.stderr, /3 of 3 posts were not answered 2xx/);
    } finally {
      await down.stop();
    }
    // No receiver at all on the port (it just stopped).
    const closed = await replay([path, '--to', down.url('/gone')]);
    assert.equal(closed.code, 1);
    assert.match(closed.stdout, /^--- issues\.opened \S+ failed to connect to host$/m);
  });

  test('bad use is one line: no --to, a file and --app, a missing or broken file', async () => {
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '{"fixtures": [{"headers": "no"}]}');
    for (const args of [[join(dir, 'carried.json')], ['--to', 'http://127.0.0.1:9/'], [join(dir, 'carried.json'), '--app', 'carried', '--to', 'http://127.0.0.1:9/'], [join(dir, 'missing.json'), '--to', 'http://127.0.0.1:9/'], [broken, '--to', 'http://127.0.0.1:9/'], ['x', '--to', 'http://127.0.0.1:9/', '--colour']]) {
      const run = await replay(args);
      assert.equal(run.code, 1, args.join(' '));
      assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
    }
  });

  test('redeliver every failed delivery since a time in one call: same GUID, redelivery true; how many were queued', async () => {
    const since = new Date().toISOString();
    failing = true;
    await server.admin('POST', '/repos/acme/widgets/issues', { author: 'mona', title: 'Lost A' });
    await server.admin('POST', '/repos/acme/widgets/issues', { author: 'mona', title: 'Lost B' });
    await server.drain();
    failing = false;
    await server.admin('POST', '/repos/acme/widgets/issues', { author: 'mona', title: 'Fine' });
    await server.drain();
    const failedGuids = (await server.admin('GET', '/apps/carried/deliveries')).filter((d: any) => d.status_code === 500).map((d: any) => d.guid);
    assert.equal(failedGuids.length, 2);

    const answer = await server.adminRaw('POST', '/apps/carried/deliveries/redeliver', { since, status: 'failed' });
    assert.equal(answer.status, 202, answer.text);
    assert.deepEqual(answer.body, { queued: 2 });
    await server.drain();
    const listed = await server.admin('GET', '/apps/carried/deliveries');
    const redelivered = listed.filter((d: any) => d.redelivery);
    assert.deepEqual(redelivered.map((d: any) => d.guid).sort(), [...failedGuids].sort());
    assert.ok(redelivered.every((d: any) => d.status_code === 200));
    const lastPosts = original.on('/hook').slice(-2);
    assert.deepEqual(lastPosts.map((r) => r.headers['x-vendor-delivery']).sort(), [...failedGuids].sort());
    for (const received of lastPosts) await assertSigned(received, SECRET);

    // Delivered now: nothing left to redeliver; nor since a later time; status defaults to failed.
    assert.deepEqual(await server.admin('POST', '/apps/carried/deliveries/redeliver', { since }), { queued: 0 });
    assert.deepEqual(await server.admin('POST', '/apps/carried/deliveries/redeliver', { since: '2999-01-01T00:00:00Z', status: 'failed' }), { queued: 0 });

    // Error paths: an unknown app, a bad since, a missing since, another status.
    assert.equal((await server.adminRaw('POST', '/apps/nobody/deliveries/redeliver', { since })).status, 404);
    for (const body of [{ since: 'last week' }, {}, { since, status: 'succeeded' }, { since: 5 }]) {
      const refused = await server.adminRaw('POST', '/apps/carried/deliveries/redeliver', body);
      assert.equal(refused.status, 422, JSON.stringify(body));
    }
  });
});

describe('docs/testing.md "Webhook deliveries"', () => {
  test('the replay block runs as written: an export, two replays, a bulk redelivery', async () => {
    const block = [...readFileSync(join(ROOT, 'docs/testing.md'), 'utf8').matchAll(/^```sh replay\n([\s\S]*?)^```$/gm)];
    assert.equal(block.length, 1, 'one block tagged replay');
    const server = await startServer({ CODEHOST_TEST_MODE: '1' });
    try {
      await server.admin('POST', '/reset', { to: 'demo' });
      const run = await new Promise<Run>((resolve) => {
        execFile('bash', ['-c', `set -euo pipefail\n${block[0]![1]}`], {
          cwd: ROOT,
          timeout: 180_000,
          env: { PATH: `${dirname(process.execPath)}:${process.env.PATH}`, CODEHOST_URL: server.url, CODEHOST_ADMIN_TOKEN: ADMIN_TOKEN },
        }, (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }));
      });
      assert.equal(run.code, 0, run.stderr);
      const lines = run.stdout.trim().split('\n');
      const posts = lines.filter((line) => /^\d{3} /.test(line));
      // ping, installation created, issues opened: from the file, then live.
      assert.deepEqual(posts.map((line) => line.split(' ')[1]), ['ping', 'installation.created', 'issues.opened', 'ping', 'installation.created', 'issues.opened']);
      assert.ok(posts.every((line) => line.startsWith('200 ') && line.endsWith(' OK')), run.stdout);
      assert.deepEqual(JSON.parse(run.stdout.slice(run.stdout.lastIndexOf('{'))), { queued: 0 });
      assert.ok(!run.stdout.includes('the-app-secret'));
    } finally {
      await server.close();
    }
  });
});

describe('the helper: fixtures(app, { since })', () => {
  test('drains first, answers the fixtures file; since as text or a Date; an unknown app throws with the 404', async () => {
    const { startCodehost } = await import('codehost/testing');
    const receiver = await new Receiver().start();
    const codehost = await startCodehost({
      databaseUrl: process.env.DATABASE_URL || undefined,
      seed: {
        users: [{ login: 'mona' }],
        orgs: [{ login: 'acme', owners: ['mona'] }],
        repos: [{ owner: 'acme', name: 'widgets' }],
        apps: [{ slug: 'hooked', permissions: { issues: 'read' }, events: ['issues'], webhook: { url: receiver.url('/hook'), secret: SECRET } }],
        installations: [{ app: 'hooked', account: 'acme', repositories: 'all' }],
      },
    });
    try {
      // The seed's ping and installation go out first: `since` is when a delivery was sent.
      await codehost.drain();
      const since = new Date();
      await codehost.admin('POST', '/repos/acme/widgets/issues', { author: 'mona', title: 'Helped' });
      // No drain here: fixtures() runs the queue first.
      const file = await codehost.fixtures('hooked', { since });
      assert.equal(file.app, 'hooked');
      assert.deepEqual(file.fixtures.map(label), ['issues.opened']);
      const [fixture] = file.fixtures;
      assert.equal(await verify(SECRET, fixture.body, fixture.signatures['x-hub-signature-256']), true);
      assert.equal(fixture.body, receiver.on('/hook').at(-1)!.body);
      assert.ok(!JSON.stringify(file).includes(SECRET));
      assert.equal((await codehost.fixtures('hooked')).fixtures.length, 3, 'ping and installation too, without since');
      assert.deepEqual((await codehost.fixtures('hooked', { since: '2999-01-01T00:00:00Z' })).fixtures, []);
      await assert.rejects(codehost.fixtures('nobody'), /answered 404/);
      await assert.rejects(codehost.fixtures('hooked', { since: 'soon' }), /answered 422/);
    } finally {
      await codehost.stop();
      await receiver.stop();
    }
  });
});
