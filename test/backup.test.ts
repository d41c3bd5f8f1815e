// `codehost backup DIR` against a running demo server, then the restore docs/backup.md describes:
// a new data directory (and, on PostgreSQL, a new database from the dump), served by a second
// server, which answers the data written before the backup (rows and git data). Prints the times.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { createTestDatabase, engine, type TestDatabase } from './helpers/database.ts';
import { freePort, startCli, type CliProcess } from './helpers/process.ts';

const run = promisify(execFile);
const ROOT = new URL('..', import.meta.url).pathname;
const CLI = join(ROOT, 'bin/codehost.js');
const DEMO_SEED = join(ROOT, 'src/admin/demo.yaml');
const MONA = 'chp_DemoMonaClassicToken00000000013Mkcu6';
const ADMIN = 'backup-test-admin-token-0123456789abcdef';

let work: string;
const databases: TestDatabase[] = [];
const servers: CliProcess[] = [];

before(() => {
  work = mkdtempSync(join(tmpdir(), 'codehost-backup-'));
});
after(async () => {
  for (const server of servers) {
    server.child.kill('SIGTERM');
    await server.exited();
  }
  for (const database of databases) await database.drop();
  rmSync(work, { recursive: true, force: true });
});

function settings(database: TestDatabase, dataDir: string, port: number): Record<string, string> {
  return {
    CODEHOST_DATA_DIR: dataDir,
    CODEHOST_PORT: String(port),
    CODEHOST_ADMIN_TOKEN: ADMIN,
    CODEHOST_LOG_LEVEL: 'warn',
    ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}),
  };
}

/** `codehost serve` with the demo data (SQLite: a new database gets it; PostgreSQL: --seed demo.yaml). */
async function serve(env: Record<string, string>, seed: boolean): Promise<string> {
  const server = startCli(['serve', ...(seed && env.DATABASE_URL ? ['--seed', DEMO_SEED] : [])], { env });
  servers.push(server);
  await server.waitFor(/codehost is listening on/, 90);
  return `http://127.0.0.1:${env.CODEHOST_PORT}`;
}

const api = (base: string, path: string, init: RequestInit = {}) =>
  fetch(`${base}/api/v3${path}`, { ...init, headers: { authorization: `Bearer ${MONA}`, 'content-type': 'application/json', ...init.headers } });

test(`${engine}: backup of a running demo server, restored into a new data directory, serves the data`, { timeout: 300_000 }, async () => {
  const source = await createTestDatabase();
  databases.push(source);
  const base = await serve(settings(source, source.dataDir, await freePort()), true);
  const created = await fetch(`${base}/_admin/repos/acme/widgets/issues`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'Written before the backup', author: 'mona' }),
  });
  assert.equal(created.status, 201);
  const { number } = (await created.json()) as { number: number };

  const target = join(work, 'backup-1');
  const env = settings(source, source.dataDir, 0);
  const started = performance.now();
  // Under the usual umask 022, as a shell or cron runs it: the modes are the command's, not the umask's.
  const { stdout } = await run('sh', ['-c', 'umask 022 && exec "$@"', 'sh', process.execPath, CLI, 'backup', target], { env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env } });
  const backupMs = Math.round(performance.now() - started);
  assert.match(stdout, /^backup: .* files, .* KiB, in \d+ ms/);
  assert.equal(statSync(target).mode & 0o777, 0o700, 'the backup directory is 0700');
  // Every file the backup wrote is readable by its owner only (the database holds secrets, and a
  // restore's `cp -a` keeps the modes): the database copy 0600, nothing with a group or other bit.
  assert.equal(statSync(join(target, engine === 'sqlite' ? 'codehost.db' : 'codehost.pgdump')).mode & 0o777, 0o600, 'the database copy is 0600');
  const open = readdirSync(target, { recursive: true, encoding: 'utf8' })
    .map((path) => ({ path, mode: statSync(join(target, path)).mode & 0o777 }))
    .filter(({ mode }) => (mode & 0o077) !== 0);
  assert.deepEqual(open, [], 'no file or directory of the backup is readable by others');
  assert.ok(existsSync(join(target, engine === 'sqlite' ? 'codehost.db' : 'codehost.pgdump')));
  assert.ok(readdirSync(join(target, 'git')).length >= 3, 'the git data of the demo repositories');
  // A second backup into the same directory is refused: a backup never overwrites one.
  await assert.rejects(run(process.execPath, [CLI, 'backup', target], { env: { PATH: process.env.PATH, ...env } }), (error: { stderr: string }) =>
    /exists already/.test(error.stderr));

  // The restore, as docs/backup.md says it.
  const restoreStarted = performance.now();
  const restored = await createTestDatabase();
  databases.push(restored);
  rmSync(restored.dataDir, { recursive: true, force: true });
  cpSync(target, restored.dataDir, { recursive: true, preserveTimestamps: true, filter: (path) => !path.endsWith('.pgdump') });
  if (restored.databaseUrl) {
    await run('pg_restore', ['--no-owner', '--exit-on-error', '--dbname', restored.databaseUrl, join(target, 'codehost.pgdump')]);
  }
  const restoreMs = Math.round(performance.now() - restoreStarted);
  const copy = await serve(settings(restored, restored.dataDir, await freePort()), false);

  const issue = await api(copy, `/repos/acme/widgets/issues/${number}`);
  assert.equal(issue.status, 200);
  assert.equal(((await issue.json()) as { title: string }).title, 'Written before the backup');
  const repo = await api(copy, '/repos/acme/secret-sauce');
  assert.equal(repo.status, 200, 'a private repository, read with the restored token');
  const gitPaths = readdirSync(join(restored.dataDir, 'git'));
  for (const path of gitPaths) assert.ok(existsSync(join(restored.dataDir, 'git', path, 'HEAD')), `${path} is a git directory`);
  // The restored server signs with the same secret key (stored in the database when not set): a
  // download URL is what the original would make. Here: an admin call works, and the data is the same.
  const users = await fetch(`${copy}/_admin/users?per_page=100`, { headers: { authorization: `Bearer ${ADMIN}` } });
  assert.equal(users.status, 200);
  console.log(`# ${engine}: backup of the demo data ${backupMs} ms (command), restore ${restoreMs} ms (copy${engine === 'postgres' ? ' + pg_restore' : ''}); ${stdout.trim()}`);
});
