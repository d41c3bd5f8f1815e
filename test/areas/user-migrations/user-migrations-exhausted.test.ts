// Exports that cannot finish (issue 12): a job that ran out of attempts ends its migration `failed`,
// with its unfinished archive removed and its repositories unlocked; a periodic sweep removes
// unfinished archive files nothing is writing any more. Exports share the workers between users
// (issue 11): one user's queue of exports does not hold up another user's.
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { test } from 'node:test';
import { createTestDatabase, engine } from '../../helpers/database.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { waitFor } from '../../helpers/process.ts';

const EXPORT_QUEUE = 'user-migrations.export';

function partialFiles(dataDir: string): string[] {
  const root = join(dataDir, 'migration-archives');
  try {
    return readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.partial'));
  } catch {
    return [];
  }
}

async function userWithRepository(server: TestServer, login: string, repositories: string[]): Promise<string> {
  await server.admin('POST', '/users', { login });
  for (const name of repositories) await server.admin('POST', '/repos', { owner: login, name });
  const { token } = await server.admin('POST', '/tokens', { login, kind: 'classic', scopes: ['repo'] });
  return token;
}

test('an export whose attempts all died ends failed, with no unfinished archive and its repositories unlocked', { timeout: 120_000 }, async () => {
  const database = await createTestDatabase();
  // An API process without workers takes the start; a worker process comes later.
  const api = await startServer({ CODEHOST_WORKER: '0' }, { database });
  let worker: TestServer | undefined;
  try {
    const token = await userWithRepository(api, 'erin', ['kept']);
    const started = await api.api('POST', '/user/migrations', { token, body: { repositories: ['kept'], lock_repositories: true } });
    assert.equal(started.status, 201, started.text);
    const id = started.body.id as number;
    assert.equal((await api.adminRaw('POST', '/repos/erin/kept/issues', { author: 'erin', title: 'locked' })).status, 403);

    // What the last attempt left when its process died: the migration exporting, an unfinished
    // archive on disk, and the job with no attempt left.
    const db = api.server.ctx.db.kysely;
    await db.updateTable('user_migrations').set({ state: 'exporting', export_run: 'dead-run' }).where('id', '=', id).execute();
    mkdirSync(join(database.dataDir, 'migration-archives', String(id)), { recursive: true });
    writeFileSync(join(database.dataDir, 'migration-archives', String(id), 'dead-run.tar.gz.0d5e8f4a.partial'), 'half an archive');
    if (engine === 'sqlite') {
      await sql`update jobs set attempts = retry_limit + 1, locked_until = ${new Date(Date.now() - 60_000).toISOString()} where queue = ${EXPORT_QUEUE}`.execute(db);
    } else {
      await sql`update pgboss.job set state = 'active', retry_count = retry_limit, started_on = now() - interval '1 hour', heartbeat_on = now() - interval '1 hour'
        where name = ${EXPORT_QUEUE}`.execute(db);
    }

    worker = await startServer({ CODEHOST_JOB_LEASE_SECONDS: '1' }, { database });
    const failed = await waitFor('the migration to fail', 60, async () => {
      const view = await api.admin('GET', `/migrations/${id}`);
      return view.state === 'failed' ? view : undefined;
    });
    assert.deepEqual(failed.locked_repositories, []);
    assert.match(failed.failure, /attempt/);
    await worker.drain();
    assert.deepEqual(partialFiles(database.dataDir), []);
    assert.equal((await api.api('GET', `/user/migrations/${id}`, { token })).body.state, 'failed');
    assert.equal((await api.adminRaw('POST', '/repos/erin/kept/issues', { author: 'erin', title: 'unlocked' })).status, 201);
  } finally {
    await worker?.close();
    await api.close();
    await database.drop();
  }
});

test('the sweep removes unfinished archive files of dead runs, not those of a run exporting now nor fresh ones', async () => {
  const server = await startServer();
  try {
    const token = await userWithRepository(server, 'fred', ['one', 'two']);
    const ids: number[] = [];
    for (const name of ['one', 'two']) {
      const started = await server.api('POST', '/user/migrations', { token, body: { repositories: [name] } });
      assert.equal(started.status, 201, started.text);
      ids.push(started.body.id);
    }
    await server.drain();
    const [done, live] = ids as [number, number];
    // `live` looks as if a run were exporting it now.
    await server.server.ctx.db.kysely.updateTable('user_migrations').set({ state: 'exporting', export_run: 'live-run' }).where('id', '=', live).execute();

    const root = join(server.server.ctx.config.dataDir, 'migration-archives');
    const hoursAgo = new Date(Date.now() - 2 * 3600_000);
    const place = (folder: string, name: string, old: boolean) => {
      mkdirSync(join(root, folder), { recursive: true });
      const path = join(root, folder, name);
      writeFileSync(path, 'part of an archive');
      if (old) utimesSync(path, hoursAgo, hoursAgo);
      return `${folder}/${name}`;
    };
    const deadRun = place(String(done), 'dead-run.tar.gz.3f2504e0-4f89-11d3-9a0c-0305e82c3301.partial', true);
    const noMigration = place('987654', 'gone.tar.gz.7c9e6679-7425-40de-944b-e07fc1f90ae7.partial', true);
    const liveRun = place(String(live), 'live-run.tar.gz.16fd2706-8baf-433b-82eb-8c7fada847da.partial', true);
    const fresh = place(String(done), 'other-run.tar.gz.9b2f5c1e-3d4a-4e6b-8c7d-0e1f2a3b4c5d.partial', false);

    await server.drain(); // runs every sweep once
    const left = partialFiles(server.server.ctx.config.dataDir).map((name) => name.split('\\').join('/')).sort();
    assert.deepEqual(left, [fresh, liveRun].sort());
    assert.ok(!left.includes(deadRun) && !left.includes(noMigration));
    // The finished archive is untouched.
    const archive = await server.api('GET', `/user/migrations/${done}/archive`, { token });
    assert.equal(archive.status, 302);
  } finally {
    await server.close();
  }
});

test('one user\'s queue of exports does not hold up another user\'s export', { timeout: 120_000 }, async () => {
  const server = await startServer({ CODEHOST_WORKER: '0' });
  const database = { databaseUrl: server.server.ctx.config.databaseUrl, dataDir: server.server.ctx.config.dataDir, drop: async () => {} };
  let worker: TestServer | undefined;
  try {
    const names = ['a1', 'a2', 'a3', 'a4', 'a5'];
    const busy = await userWithRepository(server, 'gina', names);
    const single = await userWithRepository(server, 'hank', ['b1']);
    const owner = new Map<number, string>();
    // Queued while no worker runs: all of gina's first (up to her limit), then hank's.
    for (const name of names) {
      const started = await server.api('POST', '/user/migrations', { token: busy, body: { repositories: [name] } });
      assert.equal(started.status, 201, started.text);
      owner.set(started.body.id, name);
    }
    const hank = await server.api('POST', '/user/migrations', { token: single, body: { repositories: ['b1'] } });
    assert.equal(hank.status, 201, hank.text);
    owner.set(hank.body.id, 'b1');

    worker = await startServer({}, { database });
    // The poll in which each export was first seen begun (exporting or done) and first seen finished.
    // Fairness is in the order the exports begin: how long each then takes depends on its thread (a
    // new one loads its modules, a kept one does not), so the order they finish in proves nothing.
    const begunIn = new Map<string, number>();
    const seenIn = new Map<string, number>();
    let poll = 0;
    await waitFor('every export', 100, async () => {
      poll++;
      const rows = await server.server.ctx.db.kysely.selectFrom('user_migrations').select(['id', 'state']).execute();
      for (const row of rows) {
        const name = owner.get(row.id)!;
        if (row.state !== 'pending' && !begunIn.has(name)) begunIn.set(name, poll);
        if (row.state === 'exported' && !seenIn.has(name)) seenIn.set(name, poll);
      }
      assert.ok(rows.every((row) => row.state !== 'failed'));
      return seenIn.size === owner.size ? true : undefined;
    });
    const polls = JSON.stringify({ begunIn: Object.fromEntries(begunIn), seenIn: Object.fromEntries(seenIn) });
    // Two workers: one runs gina's exports one after another, the other takes hank's at once. Hers
    // begin one at a time, each after the one before it ended, so at most one of them (her first)
    // can have begun in a poll before hank's did.
    const begunBefore = names.filter((name) => begunIn.get(name)! < begunIn.get('b1')!);
    assert.ok(begunBefore.length <= 1, polls);
    // One at a time (in whatever order the queue takes them): each of hers begins no earlier than the
    // poll that saw the one begun before it end.
    const hers = [...names].sort((a, b) => begunIn.get(a)! - begunIn.get(b)!);
    for (let i = 1; i < hers.length; i++) assert.ok(begunIn.get(hers[i])! >= seenIn.get(hers[i - 1])!, polls);
  } finally {
    await worker?.close();
    await server.close();
  }
});
