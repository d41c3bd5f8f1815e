// The export threads (src/areas/user-migrations/export-worker.ts): one idle thread is kept and reused
// by the next export; a thread that fails is not kept; the idle one is ended after its idle time and
// when the server closes; and a drained queue (POST /_admin/jobs/drain) leaves no thread working or
// exiting, so nothing writes to the data directory after the drain (the compile cache included).
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ExportThreads } from '../../../src/areas/user-migrations/export-worker.ts';
import { exportThreads } from '../../../src/areas/user-migrations/service.ts';
import { classicToken } from '../../helpers/credentials.ts';
import { repositoryWithBrokenGitData } from '../../helpers/migrations.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

let server: TestServer;
let alice: string;
let bob: string;

before(async () => {
  server = await startServer({ CODEHOST_MIGRATION_ARCHIVES_PER_USER: '1000' });
  await server.admin('POST', '/users', { login: 'alice' });
  await server.admin('POST', '/users', { login: 'bob' });
  await server.admin('POST', '/repos', { owner: 'alice', name: 'alpha', init_git: true });
  await server.admin('POST', '/repos', { owner: 'bob', name: 'bravo', init_git: true });
  await server.admin('POST', '/repos/alice/alpha/issues', { author: 'bob', title: 'Broken build', body: 'It fails' });
  alice = await classicToken(server, 'alice', ['repo']);
  bob = await classicToken(server, 'bob', ['repo']);
});
after(async () => {
  await server.close();
});

const threads = () => exportThreads.of(server.server.ctx).threads;

async function exportOf(token: string, repository: string): Promise<number> {
  const response = await server.api('POST', '/user/migrations', { token, body: { repositories: [repository] } });
  assert.equal(response.status, 201, response.text);
  return response.body.id;
}

async function state(id: number, token = alice): Promise<string> {
  return (await server.api('GET', `/user/migrations/${id}`, { token })).body.state;
}

/** Every file under `dir` with its size and modification time. */
function listing(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((name) => {
    const stat = statSync(join(dir, name));
    return `${name} ${stat.size} ${stat.mtimeMs}`;
  }).sort();
}

describe('export threads', () => {
  test('the drain returns once the thread is idle: nothing is written to the data directory after it', async () => {
    const first = await exportOf(alice, 'alpha');
    await server.drain();
    assert.equal(await state(first), 'exported');
    assert.deepEqual(threads(), { idle: 1, busy: 0, started: 1 }, 'the thread started ahead ran the export and is kept');
    const cache = process.env.NODE_COMPILE_CACHE || join(server.server.ctx.config.dataDir, 'compile-cache');
    const written = listing(cache);
    assert.ok(written.length > 0, 'the thread wrote its compile cache before the drain returned');
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.deepEqual(listing(cache), written, 'nothing written since');
  });

  test('the kept thread runs the next export; two at once start a second thread, which is ended', async () => {
    const before = threads().started;
    const next = await exportOf(alice, 'alpha');
    await server.drain();
    assert.equal(await state(next), 'exported');
    assert.deepEqual(threads(), { idle: 1, busy: 0, started: before }, 'no thread started');

    const [one, two] = [await exportOf(alice, 'alpha'), await exportOf(bob, 'bravo')];
    await server.drain();
    assert.equal(await state(one), 'exported');
    assert.equal(await state(two, bob), 'exported');
    const now = threads();
    assert.ok(now.started <= before + 1, `at most one more thread (${now.started - before})`);
    assert.deepEqual({ idle: now.idle, busy: now.busy }, { idle: 1, busy: 0 }, 'one kept, the other ended before the drain returned');
  });

  test('a thread whose export fails is not kept; the next export gets a new one', async () => {
    await repositoryWithBrokenGitData(server, 'alice', 'broken');
    const started = threads().started;
    const failing = await exportOf(alice, 'broken');
    await server.drain();
    assert.equal(await state(failing), 'failed');
    assert.deepEqual(threads(), { idle: 0, busy: 0, started }, 'the kept thread ran it and was ended');

    const next = await exportOf(alice, 'alpha');
    await server.drain();
    assert.equal(await state(next), 'exported');
    assert.deepEqual(threads(), { idle: 1, busy: 0, started: started + 1 });
  });

  test('closing the server ends its idle thread, and the cache it writes as it exits is written by then', async () => {
    const other = await startServer();
    try {
      await other.admin('POST', '/users', { login: 'carol' });
      await other.admin('POST', '/repos', { owner: 'carol', name: 'charlie', init_git: true });
      const token = await classicToken(other, 'carol', ['repo']);
      // Warmed by the request (the job may take it, or still be queued when the server closes).
      assert.equal((await other.api('POST', '/user/migrations', { token, body: { repositories: ['charlie'] } })).status, 201);
      const pool = exportThreads.of(other.server.ctx);
      assert.equal(pool.threads.started, 1);
      const cache = process.env.NODE_COMPILE_CACHE || join(other.server.ctx.config.dataDir, 'compile-cache');
      await other.close();
      assert.deepEqual({ idle: pool.threads.idle, busy: pool.threads.busy }, { idle: 0, busy: 0 });
      const written = listing(cache);
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.deepEqual(listing(cache), written, 'nothing written after the close');
    } finally {
      await other.close();
    }
  });
});

describe('ExportThreads', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'codehost-export-threads-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));
  const database = { databaseUrl: null, dataDir, databasePooler: 'session' as const };

  test('the idle thread is ended after its idle time; a closed pool warms no more', async () => {
    const pool = new ExportThreads(database, 100);
    pool.warm();
    pool.warm();
    assert.deepEqual(pool.threads, { idle: 1, busy: 0, started: 1 }, 'one idle thread at most');
    const deadline = Date.now() + 30_000;
    while (pool.threads.idle || pool.threads.busy) {
      assert.ok(Date.now() < deadline, 'the idle thread was not ended');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    pool.warm();
    assert.equal(pool.threads.idle, 1);
    await pool.close();
    assert.deepEqual(pool.threads, { idle: 0, busy: 0, started: 2 });
    pool.warm();
    assert.deepEqual(pool.threads, { idle: 0, busy: 0, started: 2 }, 'closed: none started');
  });

  test('a thread taken and stopped before its job is ended, not kept', async () => {
    const pool = new ExportThreads(database, 60_000);
    const thread = pool.take();
    assert.deepEqual(pool.threads, { idle: 0, busy: 1, started: 1 });
    await thread.stop();
    assert.deepEqual(pool.threads, { idle: 0, busy: 0, started: 1 });
    await pool.close();
  });
});
