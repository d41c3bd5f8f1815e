// Secrets a new user can recover, as real processes: the generated admin token is shown by the first
// start that actually serves (not lost to a start that failed), `codehost admin-token reset` gives a
// new one offline and the old one stops working at once, CODEHOST_ADMIN_TOKEN is the token only
// while it is set (the banner says which one is in force), and the banner's demo curl lines appear
// only when the demo data is there, and then they work.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { createTestDatabase, engine, type TestDatabase } from '../helpers/database.ts';
import { freePort, startCli, type CliProcess } from '../helpers/process.ts';

const exec = promisify(execFile);
let database: TestDatabase;
let scratch: string;

before(async () => {
  database = await createTestDatabase();
  scratch = mkdtempSync(join(tmpdir(), 'codehost-cli-secrets-'));
});
after(async () => {
  rmSync(scratch, { recursive: true, force: true });
  await database.drop();
});

function env(port: number, extra: Record<string, string> = {}): Record<string, string> {
  return {
    CODEHOST_DATA_DIR: database.dataDir,
    CODEHOST_PORT: String(port),
    CODEHOST_DEMO: '0',
    CODEHOST_TEST_CLOCK: '1',
    CODEHOST_LOG_LEVEL: 'warn',
    ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}),
    ...extra,
  };
}

/** Starts `codehost serve` and waits for its banner. */
async function serve(port: number, extra: Record<string, string> = {}): Promise<{ cli: CliProcess; banner: string }> {
  const cli = startCli(['serve'], { env: env(port, extra) });
  await cli.waitFor(/codehost is listening/);
  await new Promise((r) => setTimeout(r, 100)); // the banner is one write; this is slack for the pipe
  return { cli, banner: cli.output() };
}

async function stop(cli: CliProcess): Promise<void> {
  cli.child.kill('SIGTERM');
  assert.equal(await cli.exited(), 0);
}

/** The status of an admin call with `token`. */
async function adminStatus(port: number, token: string): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${port}/_admin/clock`, { headers: { authorization: `Bearer ${token}` } });
  await response.arrayBuffer();
  return response.status;
}

const GENERATED = /admin token \(new[^:]*: (chadm_\w+)/;

describe('the admin token', () => {
  let stored = '';

  test('a start that fails after creating the database does not lose the generated token', async () => {
    const bad = join(scratch, 'bad.yaml');
    writeFileSync(bad, 'users:\n  - { login: dave }\nrepos:\n  - { owner: nobody-here }\n');
    const port = await freePort();
    const failed = startCli(['serve', '--seed', bad], { env: env(port) });
    assert.equal(await failed.exited(), 1);
    assert.match(failed.output(), /repos\[0\]/);
    assert.doesNotMatch(failed.output(), /chadm_/);

    const { cli, banner } = await serve(port);
    try {
      const token = GENERATED.exec(banner)?.[1];
      assert.ok(token, banner);
      assert.match(banner, /admin-token reset/);
      assert.equal(await adminStatus(port, token), 200);
      assert.equal(await adminStatus(port, 'chadm_wrong'), 401);
      stored = token;
    } finally {
      await stop(cli);
    }
    // The next start shows no token: the stored one is in force.
    const again = await serve(port);
    try {
      assert.doesNotMatch(again.banner, /chadm_/);
      assert.match(again.banner, /admin token: the stored one/);
      assert.equal(await adminStatus(port, stored), 200);
    } finally {
      await stop(again.cli);
    }
  });

  test('`codehost admin-token reset` prints a new token, offline or not; the old one stops working at once', async () => {
    assert.ok(stored);
    const port = await freePort();
    // Offline: no server runs.
    const offline = startCli(['admin-token', 'reset'], { env: env(port) });
    assert.equal(await offline.exited(), 0, offline.output());
    const second = /(chadm_\w+)/.exec(offline.output())?.[1];
    assert.ok(second && second !== stored, offline.output());

    const { cli, banner } = await serve(port);
    try {
      assert.doesNotMatch(banner, /chadm_/);
      assert.equal(await adminStatus(port, stored), 401);
      assert.equal(await adminStatus(port, second), 200);
      // While the server runs: the answer changes with the next request.
      const reset = startCli(['admin-token', 'reset'], { env: env(port) });
      assert.equal(await reset.exited(), 0, reset.output());
      const third = /(chadm_\w+)/.exec(reset.output())?.[1];
      assert.ok(third && third !== second);
      assert.equal(await adminStatus(port, second), 401);
      assert.equal(await adminStatus(port, third), 200);
      stored = third;
    } finally {
      await stop(cli);
    }
  });

  test('CODEHOST_ADMIN_TOKEN is the token while it is set; unset, the stored one is again', async () => {
    const port = await freePort();
    const chosen = 'my-own-admin-token-0001';
    const withVariable = await serve(port, { CODEHOST_ADMIN_TOKEN: chosen });
    try {
      assert.match(withVariable.banner, /admin token: CODEHOST_ADMIN_TOKEN/);
      assert.doesNotMatch(withVariable.banner, new RegExp(chosen));
      assert.equal(await adminStatus(port, chosen), 200);
      assert.equal(await adminStatus(port, stored), 401);
    } finally {
      await stop(withVariable.cli);
    }
    const without = await serve(port);
    try {
      assert.match(without.banner, /admin token: the stored one/);
      assert.equal(await adminStatus(port, stored), 200);
      assert.equal(await adminStatus(port, chosen), 401);
    } finally {
      await stop(without.cli);
    }
  });

  test('reset while CODEHOST_ADMIN_TOKEN is set says the variable stays in force', async () => {
    const reset = startCli(['admin-token', 'reset'], { env: env(await freePort(), { CODEHOST_ADMIN_TOKEN: 'my-own-admin-token-0001' }) });
    assert.equal(await reset.exited(), 0);
    assert.match(reset.output(), /chadm_\w+/);
    assert.match(reset.output(), /CODEHOST_ADMIN_TOKEN is set/);
    stored = /(chadm_\w+)/.exec(reset.output())![1]!;
  });
});

describe('demo curl lines', () => {
  const curls = (output: string) => output.split('\n').filter((line) => line.trim().startsWith('curl '));

  test('none when the demo data was not loaded (CODEHOST_DEMO=1 on an existing database, or PostgreSQL)', async () => {
    const port = await freePort();
    const { cli, banner } = await serve(port, { CODEHOST_DEMO: '1' });
    try {
      assert.deepEqual(curls(banner), []);
      assert.doesNotMatch(banner, /Try the demo data/);
    } finally {
      await stop(cli);
    }
  });

  test('a new embedded database gets the demo data: the lines are printed, on every start, and they work', { skip: engine === 'postgres' }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'codehost-demo-'));
    try {
      for (const start of ['first', 'second']) {
        const port = await freePort();
        const { cli, banner } = await serve(port, { CODEHOST_DATA_DIR: dataDir, CODEHOST_DEMO: '1' });
        try {
          const lines = curls(banner);
          assert.equal(lines.length, 3, `${start} start:\n${banner}`);
          for (const line of lines) {
            const { stdout } = await exec('bash', ['-c', `${line.trim()} -s -o /dev/null -w '%{http_code}'`]);
            assert.equal(stdout, '200', line);
          }
        } finally {
          await stop(cli);
        }
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
