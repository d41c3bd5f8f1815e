// An export whose server process is killed (SIGKILL) on every attempt (issue 12): once the job has no
// attempt left, the migration ends `failed`, no unfinished archive file is left, and the repository it
// locked takes writes again. The server is a real child process (`node src/main.ts serve`).
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { insertSyntheticActivity } from '../../fixtures/migration-data.ts';
import { killedServers } from '../../helpers/killed.ts';
import { waitFor } from '../../helpers/process.ts';

const ADMIN_TOKEN = 'killed-admin-token';
/** Attempts of an export job (src/areas/user-migrations/service.ts: 3 retries). */
const ATTEMPTS = 4;

const servers = killedServers(ADMIN_TOKEN);

test('an export killed on every attempt ends failed, leaves no unfinished file and unlocks its repository', { timeout: 300_000 }, async () => {
  const database = servers.database;
  let server = await servers.start();
  const admin = async (method: string, path: string, body?: unknown) => {
    const response = await server.call(method, path, body);
    return { status: response.status, body: (await response.json()) as any };
  };

  const user = (await admin('POST', '/users', { login: 'erin' })).body;
  const repository = (await admin('POST', '/repos', { owner: 'erin', name: 'big', init_git: true })).body;
  const { token } = (await admin('POST', '/tokens', { login: 'erin', kind: 'classic', scopes: [] })).body;
  // One connection to the database for the whole test (its polls).
  await servers.inspect(async (db) => {
    await insertSyntheticActivity(db, { repositoryId: repository.id, authorId: user.id, issues: 5_000, commentsPerIssue: 4 });

    const started = await fetch(`${server.url}/api/v3/user/migrations`, {
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
        const row = await db.selectFrom('user_migrations').select(['state', 'export_run', 'records_exported']).where('id', '=', id).executeTakeFirstOrThrow();
        assert.equal(row.state === 'exported' || row.state === 'failed', false, `attempt ${attempt}: the export ended ${row.state} before it was killed`);
        return row.state === 'exporting' && row.export_run && !runs.includes(row.export_run) && row.records_exported > 0 ? row.export_run : undefined;
      });
      runs.push(run);
      await server.kill();
      server = await servers.start();
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
    const shown = await fetch(`${server.url}/api/v3/user/migrations/${id}`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(((await shown.json()) as { state: string }).state, 'failed');
    assert.equal(runs.length, ATTEMPTS);
  });
  // The last server stops as an operator stops it (after() kills it if the test failed first).
  const exited = new Promise((r) => server.child.once('exit', r));
  server.child.kill('SIGTERM');
  await exited;
});
