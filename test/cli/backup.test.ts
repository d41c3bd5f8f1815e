// `codehost backup DIR` against a running demo server (every file it writes 0600 under umask 022),
// then the restore docs/backup.md gives, its block run as written (paths, database and role the
// test's own): a new data directory (and, on PostgreSQL, a new database from the dump, owned by a
// new role), served by a second server as another user connecting as that role, which answers the
// data written before the backup (rows and git data) and writes. Prints the times.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import pg from 'pg';
import { createTestDatabase, engine, type TestDatabase } from '../helpers/database.ts';
import { freePort, startCli, type CliProcess } from '../helpers/process.ts';

const run = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;
const CLI = join(ROOT, 'bin/codehost.js');
const DEMO_SEED = join(ROOT, 'src/admin/demo.yaml');
const MONA = 'chp_DemoMonaClassicToken00000000013Mkcu6';
const ADMIN = 'backup-test-admin-token-0123456789abcdef';

let work: string;
const databases: TestDatabase[] = [];
const servers: CliProcess[] = [];

before(() => {
  work = mkdtempSync(join(tmpdir(), 'codehost-backup-'));
  // The restored server runs as another user: it must reach the restored data directory in here.
  chmodSync(work, 0o755);
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
async function serve(env: Record<string, string>, seed: boolean, user?: { uid: number; gid: number }): Promise<string> {
  const server = startCli(['serve', ...(seed && env.DATABASE_URL ? ['--seed', DEMO_SEED] : [])], { env, ...(user ? { uid: user.uid, gid: user.gid, cwd: '/' } : {}) });
  servers.push(server);
  await server.waitFor(/codehost is listening on/, 90);
  return `http://127.0.0.1:${env.CODEHOST_PORT}`;
}

/** The OS user the restored server runs as (the docs' `codehost`): nobody when the test is root. */
const SERVICE_USER = (() => {
  const name = process.getuid?.() === 0 ? 'nobody' : userInfo().username;
  const id = (flag: string) => Number(execFileSync('id', [flag, name], { encoding: 'utf8' }).trim());
  return { name, group: execFileSync('id', ['-gn', name], { encoding: 'utf8' }).trim(), uid: id('-u'), gid: id('-g') };
})();

/** The shell block of docs/backup.md's "Restore" section for this engine. */
function restoreBlock(): string {
  const text = readFileSync(join(ROOT, 'docs/backup.md'), 'utf8');
  const section = text.slice(text.indexOf('\n## Restore\n'), text.indexOf('\n## ', text.indexOf('\n## Restore\n') + 1));
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!);
  const block = blocks.find((code) => code.includes('pg_restore') === (engine === 'postgres'));
  assert.ok(block, `docs/backup.md restores ${engine}`);
  return block;
}

/**
 * Runs the restore block of docs/backup.md (all but its last line, the server's start) from the
 * backup `target` into a new data directory (and on PostgreSQL a new database, created for a new
 * role the server then connects as); dropped at the end (it is in `databases` before anything is made).
 */
async function restoreAsDocumented(target: string): Promise<TestDatabase> {
  const suffix = randomBytes(6).toString('hex');
  const dataDir = join(work, `restored-${suffix}`);
  const [role, name] = [`codehost_restore_${suffix}`, `codehost_restored_${suffix}`];
  const lines = restoreBlock().trimEnd().split('\n');
  const start = lines.pop()!;
  assert.match(start, /codehost(\.js)? serve$/, 'the block ends with the start of the server');
  const admin = process.env.DATABASE_URL ? new URL(process.env.DATABASE_URL) : null;
  let databaseUrl: string | null = null;
  const restored: TestDatabase = {
    get databaseUrl() {
      return databaseUrl;
    },
    dataDir,
    drop: async () => {
      if (admin) {
        const client = new pg.Client({ connectionString: admin.toString() });
        await client.connect();
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await client.query(`DROP ROLE IF EXISTS ${role}`);
        await client.end();
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  // Dropped at the end whatever happens from here on.
  databases.push(restored);
  if (admin) {
    const client = new pg.Client({ connectionString: admin.toString() });
    await client.connect();
    await client.query(`CREATE ROLE ${role} LOGIN`);
    await client.end();
    const url = new URL(admin);
    url.username = role;
    url.password = '';
    url.pathname = `/${name}`;
    databaseUrl = url.toString();
  }
  const script = lines.join('\n')
    .replaceAll('/var/backups/codehost/2026-11-26-0300', target)
    .replaceAll('/var/lib/codehost-restored', dataDir)
    .replaceAll('codehost_restored', name)
    .replace(/^ROLE=codehost\b/m, `ROLE=${role}`)
    .replaceAll('-o codehost -g codehost', `-o ${SERVICE_USER.name} -g ${SERVICE_USER.group}`)
    .replaceAll('codehost:codehost', `${SERVICE_USER.name}:${SERVICE_USER.group}`)
    // A superuser of the test's cluster (the docs: the postgres user of the database's machine).
    .replaceAll('runuser -u postgres -- ', '');
  if (admin) assert.ok(script.includes(role), 'the restore names the role the server connects as');
  await run('bash', ['-euo', 'pipefail', '-c', script], {
    env: {
      PATH: process.env.PATH,
      ...(admin ? { PGHOST: admin.hostname, PGPORT: admin.port || '5432', PGUSER: decodeURIComponent(admin.username) || 'postgres', ...(admin.password ? { PGPASSWORD: decodeURIComponent(admin.password) } : {}) } : {}),
    },
  }).catch((error: { stderr: string }) => assert.fail(`the restore of docs/backup.md failed:\n${error.stderr}`));
  return restored;
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
  // Every file the backup wrote is its owner's only (the database holds secrets, and a restore's
  // `cp -a` keeps the modes): the database copy and every other file 0600, every directory 0700.
  assert.equal(statSync(join(target, engine === 'sqlite' ? 'codehost.db' : 'codehost.pgdump')).mode & 0o777, 0o600, 'the database copy is 0600');
  const entries = readdirSync(target, { recursive: true, encoding: 'utf8' }).map((path) => ({ path, stat: statSync(join(target, path)) }));
  assert.ok(entries.some(({ stat }) => stat.isDirectory()) && entries.filter(({ stat }) => stat.isFile()).length > 10);
  const other = entries
    .map(({ path, stat }) => ({ path, mode: (stat.mode & 0o777).toString(8), want: stat.isDirectory() ? '700' : '600' }))
    .filter(({ mode, want }) => mode !== want);
  assert.deepEqual(other, [], 'every file of the backup 0600, every directory 0700');
  assert.ok(existsSync(join(target, engine === 'sqlite' ? 'codehost.db' : 'codehost.pgdump')));
  assert.ok(readdirSync(join(target, 'git')).length >= 3, 'the git data of the demo repositories');
  // A second backup into the same directory is refused: a backup never overwrites one.
  await assert.rejects(run(process.execPath, [CLI, 'backup', target], { env: { PATH: process.env.PATH, ...env } }), (error: { stderr: string }) =>
    /exists already/.test(error.stderr));

  // The restore, as docs/backup.md says it, as root would run it: its block for this engine, with
  // the test's paths, a database and a role of its own; then the server as the service's user.
  const restoreStarted = performance.now();
  const restored = await restoreAsDocumented(target);
  const restoreMs = Math.round(performance.now() - restoreStarted);
  const copy = await serve(settings(restored, restored.dataDir, await freePort()), false, SERVICE_USER);

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
  // And it writes: the restored tables (and files) are the server's own, not root's.
  const written = await fetch(`${copy}/_admin/repos/acme/widgets/issues`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'Written after the restore', author: 'mona' }),
  });
  assert.equal(written.status, 201, await written.text());
  console.log(`# ${engine}: backup of the demo data ${backupMs} ms (command), restore ${restoreMs} ms (copy${engine === 'postgres' ? ' + pg_restore' : ''}); ${stdout.trim()}`);
});
