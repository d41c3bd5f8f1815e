// An export whose server process is killed (SIGKILL) on every attempt (issue 12): once the job has no
// attempt left, the migration ends `failed`, no unfinished archive file is left, and the repository it
// locked takes writes again. The server is a real child process (`node src/main.ts serve`).
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { openDatabase } from '../src/db/index.ts';
import { insertSyntheticActivity } from './fixtures/migration-data.ts';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';
import { freePort, spawnServe, waitFor } from './helpers/process.ts';

const ADMIN_TOKEN = 'killed-admin-token';
/** Attempts of an export job (src/areas/user-migrations/service.ts: 3 retries). */
const ATTEMPTS = 4;

let database: TestDatabase;
let child: ChildProcess | null = null;

after(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  await database?.drop();
});

test('an export killed on every attempt ends failed, leaves no unfinished file and unlocks its repository', { timeout: 300_000 }, async () => {
  database = await createTestDatabase();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const serve = async () => {
    const process_ = spawnServe({ port, database, adminToken: ADMIN_TOKEN });
    await waitFor('the server to be ready', 30, async () => {
      if (process_.exitCode !== null) throw new Error(`the server exited with ${process_.exitCode}`);
      return (await fetch(`${base}/readyz`).then((r) => r.ok, () => false)) || undefined;
    });
    return process_;
  };
  const admin = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${base}/_admin${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  const kill = async () => {
    const exited = new Promise((r) => child!.once('exit', r));
    child!.kill('SIGKILL');
    await exited;
  };

  child = await serve();
  const user = (await admin('POST', '/users', { login: 'erin' })).body;
  const repository = (await admin('POST', '/repos', { owner: 'erin', name: 'big', init_git: true })).body;
  const { token } = (await admin('POST', '/tokens', { login: 'erin', kind: 'classic', scopes: [] })).body;
  const db = openDatabase({ databaseUrl: database.databaseUrl, sqlitePath: `${database.dataDir}/codehost.db`, poolSize: 1 });
  try {
    await insertSyntheticActivity(db.kysely, { repositoryId: repository.id, authorId: user.id, issues: 5_000, commentsPerIssue: 4 });

    const started = await fetch(`${base}/api/v3/user/migrations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ repositories: ['big'], lock_repositories: true }),
    });
    assert.equal(started.status, 201);
    const { id } = (await started.json()) as { id: number };

    // Each attempt is killed once its run is under way (a run of its own, some records written).
    const runs: string[] = [];
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      const run = await waitFor(`attempt ${attempt} to be under way`, 90, async () => {
        const row = await db.kysely.selectFrom('user_migrations').select(['state', 'export_run', 'records_exported']).where('id', '=', id).executeTakeFirstOrThrow();
        assert.equal(row.state === 'exported' || row.state === 'failed', false, `attempt ${attempt}: the export ended ${row.state} before it was killed`);
        return row.state === 'exporting' && row.export_run && !runs.includes(row.export_run) && row.records_exported > 0 ? row.export_run : undefined;
      });
      runs.push(run);
      await kill();
      child = await serve();
    }

    const failed = await waitFor('the migration to fail', 90, async () => {
      const view = (await admin('GET', `/migrations/${id}`)).body;
      return view.state === 'failed' ? view : undefined;
    });
    assert.match(failed.failure, /did not finish in 4 attempts/);
    assert.deepEqual(failed.locked_repositories, []);
    assert.equal((await admin('POST', '/jobs/drain', { timeout_seconds: 30 })).status, 200);
    const left = readdirSync(join(database.dataDir, 'migration-archives'), { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.partial') || name.endsWith('.tar.gz'));
    assert.deepEqual(left, []);
    assert.equal((await admin('POST', '/repos/erin/big/issues', { author: 'erin', title: 'after the failed migration' })).status, 201);
    const shown = await fetch(`${base}/api/v3/user/migrations/${id}`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(((await shown.json()) as { state: string }).state, 'failed');
    assert.equal(runs.length, ATTEMPTS);
  } finally {
    await db.close();
    child.kill('SIGTERM');
    await new Promise((r) => child!.once('exit', r));
  }
});
