// The CLI as a newcomer uses it: help, migrate, seed (idempotent), serve with the demo data and
// its printed curl lines, `admin` against the running server, and a graceful SIGTERM.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startServe } from '../helpers/process.ts';

const run = promisify(execFile);
const CLI = new URL('../../bin/codehost.js', import.meta.url).pathname;
let database: TestDatabase;

function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { DATABASE_URL: _ignored, ...rest } = process.env;
  return {
    ...rest,
    CODEHOST_DATA_DIR: database.dataDir,
    CODEHOST_LOG_LEVEL: 'warn',
    ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}),
    ...extra,
  };
}

const cli = (args: string[], extra: Record<string, string> = {}) => run(process.execPath, [CLI, ...args], { env: env(extra) });

before(async () => {
  database = await createTestDatabase();
});
after(() => database.drop());

describe('help and errors', () => {
  test('--help on the CLI and each command', async () => {
    assert.match((await cli(['--help'])).stdout, /serve \[--seed FILE\]/);
    for (const command of ['serve', 'migrate', 'seed', 'admin', 'replay']) {
      assert.match((await cli([command, '--help'])).stdout, new RegExp(`Usage: codehost ${command}`));
    }
  });

  test('an unknown command or a bad setting exits 1 with a message', async () => {
    await assert.rejects(cli(['frobnicate']), (error: { code: number; stderr: string }) => error.code === 1 && /unknown command/.test(error.stderr));
    await assert.rejects(cli(['migrate'], { CODEHOST_PORT: 'eighty' }), (error: { code: number; stderr: string }) => error.code === 1 && /CODEHOST_PORT/.test(error.stderr));
  });
});

describe('unknown options', () => {
  // Every command refuses an option it does not know, with one line and exit status 1, before it
  // touches anything: `migrate --chek` must not migrate.
  const CALLS: string[][] = [
    ['migrate', '--chek'],
    ['serve', '--bogus'],
    ['seed', 'seed.yaml', '--bogus'],
    ['backup', '--bogus', 'target'],
    ['backup', 'target', '--bogus'],
    ['admin', 'GET', '/users', '--bogus'],
    ['admin', 'reset', '--bogus'],
    ['admin', 'snapshot', 'list', '--bogus'],
    ['admin-token', 'reset', '--bogus'],
    ['admin-token', 'generate', '--bogus'],
    ['secret-key', 'generate', '--bogus'],
    ['secret-key', 'rotate', '--bogus'],
    ['token', 'generate', '--kind', 'classic', '--bogus'],
    ['replay', 'fixtures.json', '--to', 'http://127.0.0.1:9/', '--bogus'],
    ['help', 'serve', '--bogus'],
    ['--version', '--bogus'],
  ];
  for (const args of CALLS) {
    test(`codehost ${args.join(' ')}: one line, exit 1, nothing touched`, async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'codehost-options-'));
      try {
        const option = args.find((arg) => arg === '--chek' || arg === '--bogus')!;
        const extra: Record<string, string> = { CODEHOST_DATA_DIR: dataDir, CODEHOST_NEW_SECRET_KEY: 'x'.repeat(43), CODEHOST_ADMIN_TOKEN: 'a'.repeat(40), CODEHOST_URL: 'http://127.0.0.1:9' };
        const { DATABASE_URL: _db, ...without } = env(extra);
        const failed = await run(process.execPath, [CLI, ...args], { cwd: dataDir, env: without }).then(
          ({ stdout }) => assert.fail(`exit 0, printed:\n${stdout}`),
          (error: { code: number; stdout: string; stderr: string }) => error,
        );
        assert.equal(failed.code, 1);
        assert.equal(failed.stdout, '');
        const lines = failed.stderr.trim().split('\n');
        assert.equal(lines.length, 1, failed.stderr);
        assert.match(lines[0]!, new RegExp(`unknown option ${option}\\b`));
        assert.deepEqual(readdirSync(dataDir), [], 'nothing written: no database, no backup');
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
  }
});

describe('migrate and seed', () => {
  test('migrate applies the migrations once; --check says whether any is pending and applies nothing', async () => {
    const pending = await cli(['migrate', '--check']).then(
      ({ stdout }) => assert.fail(`exit 0 on a new database, printed:\n${stdout}`),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    assert.equal(pending.code, 1);
    assert.equal(pending.stdout, '');
    assert.equal(pending.stderr.trim().split('\n').length, 1, pending.stderr);
    assert.match(pending.stderr, /^\d+ migrations pending \(0001_core, .*\): run `codehost migrate`$/m);
    if (!database.databaseUrl) assert.deepEqual(readdirSync(database.dataDir).filter((name) => name.startsWith('codehost.db')), [], 'no embedded database made by the check');
    assert.match((await cli(['migrate'])).stdout, /applied: 0001_core/);
    assert.match((await cli(['migrate'])).stdout, /up to date/);
    const { stdout, stderr } = await cli(['migrate', '--check']);
    assert.equal(stdout.trim(), 'the database is up to date');
    assert.equal(stderr, '');
  });

  test('a database a newer release migrated (a migration this release does not know) is served as it is: migrate applies nothing, --check exits 0, serve starts ready', async () => {
    const future = '9999_a_newer_release';
    const record = async (statement: string) => {
      if (database.databaseUrl) {
        const client = new pg.Client({ connectionString: database.databaseUrl });
        await client.connect();
        await client.query(statement);
        await client.end();
      } else {
        const file = new DatabaseSync(join(database.dataDir, 'codehost.db'));
        file.exec(statement);
        file.close();
      }
    };
    await cli(['migrate']);
    await record(`INSERT INTO kysely_migration (name, timestamp) VALUES ('${future}', '2027-01-01T00:00:00.000Z')`);
    try {
      assert.match((await cli(['migrate'])).stdout, /up to date/);
      assert.equal((await cli(['migrate', '--check'])).stdout.trim(), 'the database is up to date');
      const served = await startServe(database, 'a'.repeat(40));
      assert.equal((await fetch(`${served.url}/readyz`)).status, 200);
      await served.kill();
    } finally {
      await record(`DELETE FROM kysely_migration WHERE name = '${future}'`);
    }
  });

  test('seed loads a file, prints one-time secrets, and a second load leaves what exists alone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'codehost-seed-'));
    try {
      const file = join(dir, 'seed.yaml');
      writeFileSync(file, [
        'users:',
        '  - { login: alice }',
        '  - { login: bob }',
        'orgs:',
        '  - { login: team-a, owners: [alice], members: [bob] }',
        'repos:',
        '  - { owner: team-a, name: tools }',
        'tokens:',
        '  - { login: alice, kind: classic, scopes: [repo] }',
        'apps:',
        '  - { slug: seeded-app }',
      ].join('\n'));
      const first = await cli(['seed', file]);
      assert.match(first.stdout, /created 2 users, 1 orgs, 1 repos, 1 tokens, 1 apps/);
      assert.match(first.stdout, /token: chp_/);
      assert.match(first.stdout, /client_secret: [0-9a-f]{40}/);
      const json = join(dir, 'seed.json');
      writeFileSync(json, JSON.stringify({ users: [{ login: 'alice' }, { login: 'carol' }], repos: [{ owner: 'team-a', name: 'tools' }] }));
      assert.match((await cli(['seed', json])).stdout, /created 1 users/);

      const bad = join(dir, 'bad.yaml');
      writeFileSync(bad, 'users:\n  - { login: dave }\nrepos:\n  - { owner: team-a }\n');
      await assert.rejects(cli(['seed', bad]), (error: { stderr: string }) => /repos\[0\]/.test(error.stderr));
      const unknown = join(dir, 'unknown.yaml');
      writeFileSync(unknown, 'users:\n  - { login: erin }\nwidgets: []\n');
      await assert.rejects(cli(['seed', unknown]), (error: { stderr: string }) => /unknown seed key "widgets"/.test(error.stderr));
      // Neither refused file created anything.
      const again = await cli(['seed', json]);
      assert.match(again.stdout, /created nothing new/);
      const check = join(dir, 'check.yaml');
      writeFileSync(check, 'users:\n  - { login: dave }\n  - { login: erin }\n');
      assert.match((await cli(['seed', check])).stdout, /created 2 users/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('serve', () => {
  test('serve with the demo data prints working curl lines, answers `admin`, and stops on SIGTERM', { timeout: 60_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'codehost-serve-'));
    // Port 0: the system picks a free one (no guess that another process may hold); the banner names it.
    const child = spawn(process.execPath, [CLI, 'serve'], {
      env: { ...env({ CODEHOST_DATA_DIR: dataDir, CODEHOST_PORT: '0', CODEHOST_DEMO: '1' }), DATABASE_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    try {
      const deadline = Date.now() + 30_000;
      while (!output.includes('Try the demo data') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      const port = Number(/codehost is listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output)?.[1]);
      assert.ok(port > 0, output);
      const adminToken = /admin token[^:]*: (\S+)/.exec(output)?.[1];
      assert.ok(adminToken, output);
      const curls = output.split('\n').filter((line) => line.trim().startsWith('curl '));
      assert.equal(curls.length, 3);
      for (const line of curls) {
        const { stdout } = await run('bash', ['-c', `${line.trim()} -s -o /dev/null -w '%{http_code}'`]);
        assert.equal(stdout, '200', line);
      }
      const created = await cli(['admin', 'POST', '/users', '{"login":"zed"}'], { CODEHOST_ADMIN_TOKEN: adminToken, CODEHOST_URL: `http://127.0.0.1:${port}` });
      assert.match(created.stdout, /"login": "zed"/);
      const admin = { CODEHOST_ADMIN_TOKEN: adminToken, CODEHOST_URL: `http://127.0.0.1:${port}` };
      const users = JSON.parse((await cli(['admin', 'users', '--per-page', '100'], admin)).stdout) as { login: string }[];
      assert.ok(users.some((user) => user.login === 'zed'));
      const tokens = JSON.parse((await cli(['admin', 'tokens', 'mona'], admin)).stdout) as { login: string; token?: string }[];
      assert.ok(tokens.length > 0 && tokens.every((token) => token.login === 'mona' && token.token === undefined));
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
