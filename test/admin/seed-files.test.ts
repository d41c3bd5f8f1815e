// Seed files load all or nothing: an entry that fails leaves nothing of the file behind (rows and
// git data), on both databases; the error names the entry by section, index and key; a JSON file's
// syntax error is reported as JSON's; a bad `serve --seed` leaves no new database with demo data.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { createTestDatabase, engine, type TestDatabase } from '../helpers/database.ts';

const run = promisify(execFile);
const CLI = new URL('../../bin/codehost.js', import.meta.url).pathname;
let database: TestDatabase;
let files: string;

/** Exactly these settings (no CODEHOST_* or DATABASE_URL of the test's own environment). */
const env = (settings: Record<string, string | null>): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  CODEHOST_LOG_LEVEL: 'warn',
  ...Object.fromEntries(Object.entries(settings).filter((entry): entry is [string, string] => entry[1] !== null)),
});

const cli = (args: string[]) =>
  run(process.execPath, [CLI, ...args], { env: env({ CODEHOST_DATA_DIR: database.dataDir, DATABASE_URL: database.databaseUrl }), timeout: 60_000 });

/** The CLI's failure: its stderr (it must fail). */
async function failure(args: string[]): Promise<string> {
  try {
    await cli(args);
  } catch (error) {
    return (error as { stderr: string }).stderr;
  }
  assert.fail(`codehost ${args.join(' ')} succeeded`);
}

function file(name: string, text: string): string {
  const path = join(files, name);
  writeFileSync(path, text);
  return path;
}

before(async () => {
  database = await createTestDatabase();
  files = mkdtempSync(join(tmpdir(), 'codehost-seed-files-'));
  await cli(['migrate']);
});
after(async () => {
  rmSync(files, { recursive: true, force: true });
  await database.drop();
});

const gitDirs = () => (existsSync(join(database.dataDir, 'git')) ? readdirSync(join(database.dataDir, 'git')) : []);

test(`${engine}: a failing core entry leaves nothing of the file, and is named by section, index and key`, async () => {
  const good = ['users:', '  - { login: alice }', 'orgs:', '  - { login: team-a, owners: [alice] }', 'repos:', '  - { owner: team-a, name: tools, init_git: true }'];
  const bad = file('bad-repo.yaml', [
    ...good,
    '  - { owner: team-a, name: docs }',
    '  - { owner: alice, name: dotfiles, init_git: true }',
    '  - { owner: nobody, name: widgets }',
  ].join('\n'));
  const stderr = await failure(['seed', bad]);
  assert.match(stderr, /repos\[3\] \(nobody\/widgets\): User not found: nobody/);
  assert.match(stderr, /nothing of the seed was loaded/);
  assert.equal(stderr.trim().split('\n').length, 1, stderr);
  assert.deepEqual(gitDirs(), [], 'the git data of the rolled-back repositories is removed');

  // Nothing of it is there: the same entries, fixed, are all created.
  const fixed = file('good.yaml', good.join('\n'));
  assert.match((await cli(['seed', fixed])).stdout, /created 1 users, 1 orgs, 1 repos/);
  assert.equal(gitDirs().length, 1);
  // Loading it again skips what exists (each entry's duplicate is rolled back alone).
  assert.match((await cli(['seed', fixed])).stdout, /created nothing new/);
});

test(`${engine}: a failing area entry (issues) rolls back the core entries before it`, async () => {
  const bad = file('bad-issue.yaml', [
    'users:',
    '  - { login: bob }',
    'repos:',
    '  - { owner: bob, name: notes }',
    'issues:',
    '  - { repository: bob/notes, title: First, author: bob }',
    '  - { repository: bob/missing, title: Second, author: bob }',
  ].join('\n'));
  const stderr = await failure(['seed', bad]);
  assert.match(stderr, /issues\[1\] \(bob\/missing Second\): Repository not found: bob\/missing/);
  assert.match((await cli(['seed', file('bob.yaml', 'users:\n  - { login: bob }\n')])).stdout, /created 1 users/);
});

test(`${engine}: a schema error of an area entry names its index`, async () => {
  const bad = file('bad-schema.yaml', 'users:\n  - { login: carol }\nissues:\n  - { repository: team-a/tools, title: A, author: alice }\n  - { repository: team-a/tools, author: alice }\n');
  const stderr = await failure(['seed', bad]);
  assert.match(stderr, /issues\[1\] \(team-a\/tools\)/);
  assert.match((await cli(['seed', file('carol.yaml', 'users:\n  - { login: carol }\n')])).stdout, /created 1 users/);
});

test('JSON is detected by content: its syntax error is reported as JSON, whatever the file name', async () => {
  for (const name of ['broken.json', 'broken.yaml']) {
    const stderr = await failure(['seed', file(name, '{\n  "users": [\n    { "login": "dave" },\n  ]\n}\n')]);
    assert.match(stderr, /is not valid JSON/);
    assert.doesNotMatch(stderr, /YAML|Flow/);
  }
  // YAML's error is YAML's, naming the line.
  assert.match(await failure(['seed', file('broken-yaml.yaml', 'users:\n  - { login: dave\n')]), /is not valid YAML: .*line/);
  // A valid JSON file with a .yaml name loads.
  assert.match((await cli(['seed', file('ok.yaml', '{"users": [{"login": "dave"}]}')])).stdout, /created 1 users/);
});

test(`${engine}: a bad \`serve --seed\` leaves no new database with demo data behind`, { timeout: 240_000 }, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'codehost-seed-serve-'));
  const fresh = await createTestDatabase();
  try {
    const serve = (seed: string) =>
      run(process.execPath, [CLI, 'serve', '--seed', seed], {
        env: env({ CODEHOST_DATA_DIR: dataDir, CODEHOST_PORT: '0', CODEHOST_ADMIN_TOKEN: 'x'.repeat(40), DATABASE_URL: fresh.databaseUrl }),
        timeout: 60_000,
      });
    // A syntax error: found before anything is created.
    await assert.rejects(serve(file('serve-broken.json', '{"users": [}')), (error: { stderr: string }) => /is not valid JSON/.test(error.stderr));
    assert.ok(!existsSync(join(dataDir, 'codehost.db')), 'a seed file with a syntax error creates no database');
    // A reference error: found while loading; the demo data and the file are rolled back together.
    await assert.rejects(
      serve(file('serve-bad.yaml', 'repos:\n  - { owner: nobody, name: x }\n')),
      (error: { stderr: string }) => /repos\[0\] \(nobody\/x\): User not found: nobody/.test(error.stderr),
    );
    assert.ok(!existsSync(join(dataDir, 'codehost.db')), 'the new embedded database is removed');
    assert.deepEqual(existsSync(join(dataDir, 'git')) ? readdirSync(join(dataDir, 'git')) : [], []);
    if (engine === 'postgres') {
      // Demo data is never loaded on PostgreSQL; the seed left nothing: `seed` of a user creates it.
      const { stdout } = await run(process.execPath, [CLI, 'seed', file('pg-one.yaml', 'users:\n  - { login: nobody }\n')], {
        env: env({ CODEHOST_DATA_DIR: dataDir, DATABASE_URL: fresh.databaseUrl }),
      });
      assert.match(stdout, /created 1 users/);
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    await fresh.drop();
  }
});
