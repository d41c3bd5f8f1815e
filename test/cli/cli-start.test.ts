// The first minutes with the CLI, as real processes: --version and help, startup errors that say in
// one line what is wrong and what to do (and touch nothing), the banner before the logs, a `.env`
// file, and signals that reach the server however it was started (`npx codehost`, `npm start`).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { eventually, freePort, portOpen, processAlive, runCli, startCli, stopped, type CliProcess } from '../helpers/process.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

let database: TestDatabase;
let scratch: string;

before(async () => {
  database = await createTestDatabase();
  scratch = mkdtempSync(join(tmpdir(), 'codehost-cli-start-'));
});
after(async () => {
  rmSync(scratch, { recursive: true, force: true });
  await database.drop();
});

/** Settings for a server on the test database (`DATABASE_URL` when the run is on PostgreSQL). */
function serverEnv(port: number, extra: Record<string, string> = {}): Record<string, string> {
  return {
    CODEHOST_DATA_DIR: database.dataDir,
    CODEHOST_PORT: String(port),
    CODEHOST_DEMO: '0',
    CODEHOST_ADMIN_TOKEN: 'cli-start-admin-token',
    CODEHOST_LOG_LEVEL: 'warn',
    ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}),
    ...extra,
  };
}


describe('--version and help', () => {
  test('--version (and -v) prints the version of package.json', async () => {
    for (const flag of ['--version', '-v']) {
      const { code, output } = await runCli([flag], {});
      assert.equal(code, 0);
      assert.equal(output.trim(), `codehost ${VERSION}`);
    }
  });

  test('`help COMMAND` prints the command\'s help, like `COMMAND --help`; `help` alone the overview', async () => {
    const overview = await runCli(['help'], {});
    assert.equal(overview.code, 0);
    assert.match(overview.output, /admin-token reset/);
    assert.match(overview.output, /--version/);
    for (const command of ['serve', 'migrate', 'seed', 'admin', 'admin-token']) {
      const help = await runCli(['help', command], {});
      assert.equal(help.code, 0, help.output);
      assert.match(help.output, new RegExp(`^Usage: codehost ${command}`));
      assert.equal(help.output, (await runCli([command, '--help'], {})).output);
    }
    const unknown = await runCli(['help', 'frobnicate'], {});
    assert.equal(unknown.code, 1);
    assert.match(unknown.output, /unknown command "frobnicate"/);
  });
});

describe('startup errors', () => {
  /** Asserts one line on stderr naming `pattern`, exit status 1, no stack, nothing created. */
  async function failsWith(args: string[], env: Record<string, string>, pattern: RegExp, dataDir?: string) {
    const { code, output } = await runCli(args, env);
    assert.equal(code, 1, output);
    const lines = output.trim().split('\n');
    assert.equal(lines.length, 1, `one line expected:\n${output}`);
    assert.match(lines[0]!, pattern);
    assert.doesNotMatch(output, /\n\s+at /);
    if (dataDir) assert.equal(existsSync(join(dataDir, 'codehost.db')), false, 'nothing is created before the settings are checked');
    return lines[0]!;
  }

  /** SQLite in a data directory of its own, so "nothing was touched" can be seen. */
  function sqliteEnv(name: string, extra: Record<string, string> = {}) {
    const dataDir = join(scratch, name);
    return { dataDir, env: { CODEHOST_DATA_DIR: dataDir, CODEHOST_DEMO: '0', CODEHOST_LOG_LEVEL: 'info', ...extra } };
  }

  test('an unknown log level, a malformed host or port, a bad URL setting', async () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ CODEHOST_LOG_LEVEL: 'loud' }, /CODEHOST_LOG_LEVEL .*debug.*"loud"/],
      [{ CODEHOST_HOST: 'not a host' }, /CODEHOST_HOST .*"not a host"/],
      [{ CODEHOST_PORT: '70000' }, /CODEHOST_PORT .*65535/],
      [{ CODEHOST_API_URL: 'localhost:3000/api' }, /CODEHOST_API_URL .*http/],
      [{ DATABASE_URL: 'not-a-url' }, /DATABASE_URL .*postgres:\/\//],
      [{ DATABASE_URL: 'mysql://user:hunter2@127.0.0.1/db' }, /DATABASE_URL .*postgres:\/\//],
    ];
    for (const [i, [extra, pattern]] of cases.entries()) {
      const { dataDir, env } = sqliteEnv(`settings-${i}`, { CODEHOST_PORT: String(await freePort()), ...extra });
      const line = await failsWith(['serve'], env, pattern, dataDir);
      assert.doesNotMatch(line, /hunter2/);
    }
  });

  test('the port in use: names CODEHOST_PORT and creates nothing', async () => {
    const busy = createNetServer();
    const port = await freePort();
    await new Promise<void>((resolve) => busy.listen(port, '127.0.0.1', resolve));
    try {
      const { dataDir, env } = sqliteEnv('busy', { CODEHOST_PORT: String(port) });
      await failsWith(['serve'], env, new RegExp(`CODEHOST_PORT.*${port}.*in use`), dataDir);
      // At debug the stack follows the line.
      const debug = await runCli(['serve'], { ...env, CODEHOST_LOG_LEVEL: 'debug' });
      assert.equal(debug.code, 1);
      assert.match(debug.output, /CODEHOST_PORT.*in use/);
      assert.match(debug.output, /\n\s+at /);
    } finally {
      busy.close();
    }
  });

  test('a host that is not an address of this machine: names CODEHOST_HOST', async () => {
    const { dataDir, env } = sqliteEnv('host', { CODEHOST_HOST: '192.0.2.1', CODEHOST_PORT: String(await freePort()) });
    await failsWith(['serve'], env, /CODEHOST_HOST.*192\.0\.2\.1/, dataDir);
  });

  test('a PostgreSQL server that does not answer: names DATABASE_URL, never its password', async () => {
    const closed = await freePort();
    const { env } = sqliteEnv('pg', { DATABASE_URL: `postgres://codehost:hunter2@127.0.0.1:${closed}/codehost`, CODEHOST_PORT: String(await freePort()) });
    const line = await failsWith(['serve'], env, /DATABASE_URL.*127\.0\.0\.1/);
    assert.doesNotMatch(line, /hunter2/);
    await failsWith(['migrate'], env, /DATABASE_URL/);
  });

  test('a data directory that is a file, or that cannot be written', async () => {
    const file = join(scratch, 'a-file');
    writeFileSync(file, 'not a directory');
    await failsWith(['serve'], { ...sqliteEnv('x').env, CODEHOST_DATA_DIR: file, CODEHOST_PORT: String(await freePort()) }, /CODEHOST_DATA_DIR.*not a directory/);
    await failsWith(['migrate'], { ...sqliteEnv('x').env, CODEHOST_DATA_DIR: join(file, 'below') }, /CODEHOST_DATA_DIR.*not a directory/);

    const readOnly = join(scratch, 'read-only');
    mkdirSync(readOnly);
    chmodSync(readOnly, 0o555);
    // root writes anywhere: run the CLI as nobody then.
    const asRoot = process.getuid?.() === 0;
    const cli = startCli(['serve'], {
      env: { ...sqliteEnv('x').env, CODEHOST_DATA_DIR: join(readOnly, 'data'), CODEHOST_PORT: String(await freePort()) },
      ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
    });
    assert.equal(await cli.exited(), 1, cli.output());
    assert.match(cli.output().trim(), /^CODEHOST_DATA_DIR.*read-only.*not writable|^CODEHOST_DATA_DIR.*not writable/);
    assert.equal(cli.output().trim().split('\n').length, 1, cli.output());
  });

  test('a seed file that does not exist, for `serve --seed` and `seed`', async () => {
    const missing = join(scratch, 'missing.yaml');
    const { dataDir, env } = sqliteEnv('seed', { CODEHOST_PORT: String(await freePort()) });
    await failsWith(['serve', '--seed', missing], env, /missing\.yaml/, dataDir);
    await failsWith(['seed', missing], env, /missing\.yaml/, dataDir);
  });

  test('`codehost admin` with no server running says so and how to start one', async () => {
    const port = await freePort();
    await failsWith(['admin', 'GET', '/clock'], { CODEHOST_ADMIN_TOKEN: 'x', CODEHOST_URL: `http://127.0.0.1:${port}` }, new RegExp(`127\\.0\\.0\\.1:${port}.*bin/codehost\\.js serve`));
    await failsWith(['admin', 'GET', '/clock'], { CODEHOST_ADMIN_TOKEN: 'x', CODEHOST_URL: 'nowhere' }, /CODEHOST_URL/);
  });
});

describe('serve', () => {
  test('the banner comes first, then the JSON log lines', async () => {
    const port = await freePort();
    const cli = startCli(['serve'], { env: serverEnv(port, { CODEHOST_LOG_LEVEL: 'info' }) });
    try {
      await cli.waitFor(/codehost is listening/);
      await fetch(`http://127.0.0.1:${port}/healthz`);
      await cli.waitFor(/"msg":"request completed"/);
      const output = cli.output();
      const banner = output.indexOf('codehost is listening');
      const firstLog = output.indexOf('{"level"');
      assert.ok(banner >= 0 && firstLog > banner, output);
      assert.match(output, /"msg":"Server listening at/);
      // The banner's lines are together, not split by a log line.
      const bannerBlock = output.slice(banner, firstLog);
      assert.match(bannerBlock, /admin token/);
    } finally {
      await stopped(cli);
    }
  });

  test('a .env file in the working directory is read; real environment variables win', async () => {
    const cwd = join(scratch, 'dotenv');
    mkdirSync(cwd);
    writeFileSync(join(cwd, '.env'), [
      '# settings for this checkout',
      'CODEHOST_DATA_DIR=./from-dotenv',
      'CODEHOST_LOG_LEVEL="nonsense"',
      'CODEHOST_DEMO=0',
      '',
    ].join('\n'));
    // The environment's CODEHOST_LOG_LEVEL wins over the file's (which is not a level).
    const { code, output } = await runCli(['migrate'], { CODEHOST_LOG_LEVEL: 'warn' }, { cwd });
    assert.equal(code, 0, output);
    assert.match(output, /applied: 0001_core/);
    assert.ok(existsSync(join(cwd, 'from-dotenv', 'codehost.db')));
    const env = await runCli(['migrate'], {}, { cwd });
    assert.equal(env.code, 1);
    assert.match(env.output, /CODEHOST_LOG_LEVEL .*"nonsense"/);
  });
});

describe('signals reach the server', () => {
  /** The server's own pid, from its first JSON log line. */
  async function serverPid(cli: CliProcess): Promise<number> {
    return Number((await cli.waitFor(/"pid":(\d+)/))[1]);
  }

  async function assertStops(cli: CliProcess, pid: number, port: number) {
    const state = () => {
      const ps = spawnSync('ps', ['-o', 'pid,ppid,stat,etime,args', '-p', String(pid)], { encoding: 'utf8' }).stdout;
      const listening = spawnSync('ss', ['-ltnp', `sport = :${port}`], { encoding: 'utf8' }).stdout;
      return `${ps}\n${listening}\n${cli.output()}`;
    };
    try {
      assert.ok(await eventually(async () => !(await portOpen(port)), 20), `the port is still open:\n${state()}`);
      assert.ok(await eventually(() => !processAlive(pid), 20), `the server (pid ${pid}) still runs:\n${state()}`);
      await cli.exited();
    } finally {
      if (processAlive(pid)) process.kill(pid, 'SIGKILL');
    }
  }

  test('`npx codehost serve` then SIGTERM to npx: the server stops, no orphan', { timeout: 60_000 }, async () => {
    const port = await freePort();
    const cli = startCli(['--offline', 'codehost', 'serve'], { command: 'npx', env: serverEnv(port, { CODEHOST_LOG_LEVEL: 'info' }) });
    try {
      const pid = await serverPid(cli);
      assert.notEqual(pid, cli.child.pid);
      assert.ok(await portOpen(port));
      cli.child.kill('SIGTERM');
      await assertStops(cli, pid, port);
    } finally {
      await stopped(cli);
    }
  });

  test('`npm start` then SIGTERM to npm: the server stops, no orphan', { timeout: 60_000 }, async () => {
    const port = await freePort();
    const cli = startCli(['start'], { command: 'npm', env: serverEnv(port, { CODEHOST_LOG_LEVEL: 'info' }) });
    try {
      const pid = await serverPid(cli);
      cli.child.kill('SIGTERM');
      await assertStops(cli, pid, port);
    } finally {
      await stopped(cli);
    }
  });

  test('Ctrl-C (SIGINT to the process group of `npx codehost serve`) stops it cleanly', { timeout: 60_000 }, async () => {
    const port = await freePort();
    const cli = startCli(['--offline', 'codehost', 'serve'], { command: 'npx', env: serverEnv(port, { CODEHOST_LOG_LEVEL: 'info' }), detached: true });
    try {
      const pid = await serverPid(cli);
      process.kill(-cli.child.pid!, 'SIGINT');
      await assertStops(cli, pid, port);
      assert.match(cli.output(), /"signal":"SIGINT"/);
      assert.doesNotMatch(cli.output(), /"level":50|\n\s+at /);
    } finally {
      await stopped(cli);
    }
  });

  test('SIGTERM to `codehost serve` itself: exits 0', async () => {
    const port = await freePort();
    const cli = startCli(['serve'], { env: serverEnv(port) });
    try {
      await cli.waitFor(/codehost is listening/);
      cli.child.kill('SIGTERM');
      assert.equal(await cli.exited(), 0);
      assert.equal(await portOpen(port), false);
    } finally {
      await stopped(cli);
    }
  });
});

describe('the README stays true', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');

  test('its configuration table lists exactly the settings src/config.ts (and src/config/) reads', () => {
    const names = (text: string, pattern: RegExp) => [...new Set([...text.matchAll(pattern)].map((m) => m[1]!))].sort();
    const files = ['src/config.ts', ...readdirSync(join(ROOT, 'src/config')).filter((name) => !name.endsWith('.test.ts')).map((name) => `src/config/${name}`)];
    const source = files.map((file) => readFileSync(join(ROOT, file), 'utf8')).join('\n');
    const read = names(source, /(?:'|env\.)(CODEHOST_[A-Z_]+|DATABASE_URL)\b/g);
    const documented = names(readme, /^\| `(CODEHOST_[A-Z_]+|DATABASE_URL)`/gm);
    assert.deepEqual(documented, read);
  });

  test('it names every command of `codehost help`, and the licence', async () => {
    const { output } = await runCli(['help'], {});
    const commands = [...output.matchAll(/^ {2}([a-z-]+(?: reset)?)\s/gm)].map((m) => m[1]!).filter((c) => c !== 'help');
    assert.ok(commands.length >= 5, output);
    for (const command of commands) assert.ok(readme.includes(command), `README does not mention ${command}`);
    assert.match(readme, /--version/);
    assert.match(readme, /MIT/);
    assert.equal((JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { license: string }).license, 'MIT');
    assert.match(readFileSync(join(ROOT, 'LICENSE'), 'utf8'), /^MIT License/);
  });
});
