// `codehost serve` as a real child process on a test database: for tests that kill the server and
// start it again on the same data.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect, createServer as createNetServer } from 'node:net';
import type { TestDatabase } from './database.ts';

const ROOT = new URL('../..', import.meta.url).pathname;

/**
 * The ports tests hand to servers they start: below Linux's ephemeral range (32768–60999), where
 * the system picks the local ports of outgoing connections. A port from listen(0) is in that range:
 * between the probe's close and the server's bind, a client connection of another test (a fetch, a
 * database connection) could take it, and the server would find it in use.
 */
const PORTS = { from: 20_000, to: 32_000 };

/** A port free on 127.0.0.1 now, outside the ephemeral range, chosen at random. */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < 50; tries++) {
    const port = PORTS.from + Math.floor(Math.random() * (PORTS.to - PORTS.from));
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port between ${PORTS.from} and ${PORTS.to}`);
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createNetServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/**
 * Starts `codehost serve` on `port` with the test database. A dead worker's jobs are taken over
 * soon (lease 2 s; PostgreSQL: pg-boss's 10 s minimum heartbeat). `env` adds or overrides settings.
 */
export function spawnServe(options: { port: number; database: TestDatabase; adminToken: string; env?: Record<string, string>; root?: string }): ChildProcess {
  return spawn(process.execPath, ['src/main.ts', 'serve'], {
    cwd: options.root ?? ROOT,
    env: {
      PATH: process.env.PATH,
      CODEHOST_PORT: String(options.port),
      CODEHOST_DATA_DIR: options.database.dataDir,
      CODEHOST_ADMIN_TOKEN: options.adminToken,
      CODEHOST_DEMO: '0',
      CODEHOST_LOG_LEVEL: 'error',
      CODEHOST_JOB_LEASE_SECONDS: '2',
      CODEHOST_JOB_POLL_MS: '50',
      ...(options.database.databaseUrl ? { DATABASE_URL: options.database.databaseUrl } : {}),
      ...options.env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** A `codehost serve` child (spawnServe) once it answers: its URL, its admin API, and a SIGKILL. */
export interface ServeChild {
  url: string;
  child: ChildProcess;
  /** An admin API request as sent (its response, whatever the status). */
  call(method: string, path: string, body?: unknown): Promise<Response>;
  /** An admin API request that must succeed: its JSON body (null when empty). */
  admin(method: string, path: string, body?: unknown): Promise<any>;
  /** SIGKILL, then waits for the process's end (at once if it has ended). */
  kill(): Promise<void>;
}

/**
 * Starts `codehost serve` on a free port with the test database and waits until it is ready; from
 * another checkout (`root`: a release checked out from git) and with more settings, when given.
 */
export async function startServe(database: TestDatabase, adminToken: string, options: { root?: string; env?: Record<string, string> } = {}): Promise<ServeChild> {
  const port = await freePort();
  const child = spawnServe({ port, database, adminToken, ...options });
  const url = `http://127.0.0.1:${port}`;
  const kill = () => {
    if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    return exited;
  };
  // A GET or HEAD carries no body (fetch refuses one).
  const call = (method: string, path: string, body: unknown = {}) =>
    fetch(`${url}/_admin${path}`, { method, headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' }, body: ['GET', 'HEAD'].includes(method) ? undefined : JSON.stringify(body) });
  await waitFor('the server to answer', 60, async () => ((await fetch(`${url}/readyz`).catch(() => null))?.ok ? true : undefined)).catch(async (error: unknown) => {
    await kill();
    throw error;
  });
  return {
    url,
    child,
    call,
    kill,
    async admin(method, path, body) {
      const response = await call(method, path, body);
      const text = await response.text();
      if (!response.ok) throw new Error(`admin ${method} ${path}: ${response.status} ${text}`);
      return text ? JSON.parse(text) : null;
    },
  };
}

/** A CLI process started by a test, with everything it printed (stdout and stderr, in order). */
export interface CliProcess {
  child: ChildProcess;
  /** stdout and stderr together, as they arrived. */
  output(): string;
  /** Resolves once the output matches `pattern`; rejects if the process exits first or time runs out. */
  waitFor(pattern: RegExp, seconds?: number): Promise<RegExpExecArray>;
  /** Resolves with the exit code (or the signal's name) once the process has exited. */
  exited(): Promise<number | string>;
}

/**
 * Starts `command args` (default: `node bin/codehost.js`) with exactly `env` (plus PATH and HOME),
 * collecting its output. `detached` puts it in its own process group (for a Ctrl-C to the group);
 * `uid`/`gid` run it as another user (root can write anywhere).
 */
export function startCli(
  args: string[],
  options: { env: Record<string, string>; cwd?: string; command?: string; detached?: boolean; uid?: number; gid?: number },
): CliProcess {
  const [command, prefix] = options.command ? [options.command, []] : [process.execPath, [`${ROOT}bin/codehost.js`]];
  const child = spawn(command, [...prefix, ...args], {
    cwd: options.cwd ?? ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached ?? false,
    ...(options.uid !== undefined ? { uid: options.uid, gid: options.gid } : {}),
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exit = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  return {
    child,
    output: () => output,
    exited: () => exit,
    async waitFor(pattern, seconds = 30) {
      const deadline = Date.now() + seconds * 1000;
      for (;;) {
        const match = pattern.exec(output);
        if (match) return match;
        if (child.exitCode !== null || child.signalCode !== null) {
          await new Promise((r) => setTimeout(r, 50)); // the last chunks of output
          const late = pattern.exec(output);
          if (late) return late;
          throw new Error(`exited (${child.exitCode ?? child.signalCode}) before printing ${pattern}:\n${output}`);
        }
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}:\n${output}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

/**
 * Runs the CLI (`node bin/codehost.js args`) to its end: exit code, stdout and stderr together. A CLI
 * that has not ended within `timeoutMs` (a server that started where a refusal was expected, say) is
 * killed, and the call fails with what it printed.
 */
export async function runCli(args: string[], env: Record<string, string>, options: { cwd?: string; timeoutMs?: number } = {}): Promise<{ code: number | string; output: string }> {
  const cli = startCli(args, { env, cwd: options.cwd });
  let timer: NodeJS.Timeout | undefined;
  const LATE = Symbol('late');
  const late = new Promise<typeof LATE>((resolve) => (timer = setTimeout(() => resolve(LATE), options.timeoutMs ?? 120_000)));
  const code = await Promise.race([cli.exited(), late]).finally(() => clearTimeout(timer));
  if (code === LATE) {
    await stopped(cli);
    throw new Error(`codehost ${args.join(' ')} did not end within ${options.timeoutMs ?? 120_000} ms:\n${cli.output()}`);
  }
  await new Promise((r) => setTimeout(r, 20));
  return { code, output: cli.output() };
}

/** Kills a CLI process if it still runs, and waits for its end. */
export async function stopped(cli: CliProcess): Promise<void> {
  if (cli.child.exitCode === null && cli.child.signalCode === null) {
    cli.child.kill('SIGKILL');
    await cli.exited();
  }
}

/** Whether something accepts TCP connections on 127.0.0.1:port. */
export function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Whether a process with this pid still runs (a zombie waiting to be reaped counts as gone). */
export function processAlive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
}

/** Polls `probe` until it answers a value (not undefined), then returns it; throws after `seconds`. */
export async function waitFor<T>(what: string, seconds: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Polls `probe` every 50 ms until it is true; false if `seconds` pass first. */
export async function eventually(probe: () => boolean | Promise<boolean>, seconds: number): Promise<boolean> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    if (await probe()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}
