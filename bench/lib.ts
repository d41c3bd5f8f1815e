// Shared pieces of the benchmarks: the real server in its own process (so load generation and
// serving do not share an event loop), a bare node:http baseline answering fixed bytes, and
// autocannon runs. Every figure is reported beside a baseline measured in the same run.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { createTestDatabase } from '../test/helpers/database.ts';
import { freePort } from '../test/helpers/process.ts';

export const ADMIN_TOKEN = 'bench-admin-token';
const NODE = process.execPath;
const ROOT = new URL('..', import.meta.url).pathname;

/** A loaded machine (other work on the same cores) starts a server in tens of seconds: wait up to 2 minutes. */
async function waitFor(url: string, child: ChildProcess, timeoutMs = 120_000, ready = (response: Response) => response.ok): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`process exited with ${child.exitCode} before answering ${url}`);
    try {
      if (ready(await fetch(url))) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`);
}

export interface ServerProcess {
  url: string;
  apiUrl: string;
  pid: number;
  child: ChildProcess;
  dataDir: string;
  admin<T = any>(method: string, path: string, body?: unknown): Promise<T>;
  /** Peak resident set size of the server process so far, in bytes (Linux VmHWM). */
  peakRss(): number;
  stop(): Promise<void>;
}

/**
 * A server process on SQLite, or, when `env` names DATABASE_URL, on a PostgreSQL database of its own
 * there (like the test suite: never the database DATABASE_URL names); `stop` also drops that database.
 */
export async function startServerOnOwnDatabase(env: Record<string, string> = {}): Promise<ServerProcess & { databaseUrl: string | null }> {
  const database = env.DATABASE_URL ? await createTestDatabase() : null;
  try {
    const server = await startServerProcess({ ...env, ...(database ? { DATABASE_URL: database.databaseUrl! } : {}) });
    return {
      ...server,
      databaseUrl: database?.databaseUrl ?? null,
      stop: async () => {
        await server.stop();
        await database?.drop();
      },
    };
  } catch (error) {
    await database?.drop();
    throw error;
  }
}

/** Starts `codehost serve` in a child process on SQLite (or DATABASE_URL when `postgres`). */
export async function startServerProcess(env: Record<string, string> = {}): Promise<ServerProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), 'codehost-bench-'));
  const port = await freePort();
  const child = spawn(NODE, ['src/main.ts', 'serve'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      CODEHOST_PORT: String(port),
      CODEHOST_DATA_DIR: dataDir,
      CODEHOST_ADMIN_TOKEN: ADMIN_TOKEN,
      CODEHOST_DEMO: '0',
      CODEHOST_LOG_LEVEL: 'warn',
      CODEHOST_RATE_LIMIT: '100000000',
      CODEHOST_RATE_LIMIT_CONTENT_PER_MINUTE: '100000000',
      CODEHOST_RATE_LIMIT_CONTENT_PER_HOUR: '100000000',
      // Measured as production runs: the request journal (on by default in laptop mode) is off unless
      // BENCH_JOURNAL=1 asks to measure its cost (docs/performance.md, "The request journal's cost").
      CODEHOST_JOURNAL: process.env.BENCH_JOURNAL === '1' ? '1' : '0',
      // BENCH_CPU_PROF_DIR=dir: every server process writes a V8 CPU profile of each of its threads
      // there when it (or the thread) ends.
      ...(process.env.BENCH_CPU_PROF_DIR ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}` } : {}),
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitFor(`${url}/readyz`, child);
  } catch (error) {
    child.kill('SIGKILL'); // never left running behind a failed start
    throw error;
  }
  const admin = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${url}/_admin${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: body === undefined ? (method === 'GET' ? undefined : '{}') : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`admin ${method} ${path}: ${response.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
  return {
    url,
    apiUrl: `${url}/api/v3`,
    pid: child.pid!,
    child,
    dataDir,
    admin,
    peakRss: () => {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
      return kb * 1024;
    },
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface Baseline {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** A bare node:http server in its own process answering every request with the same status, headers and body. */
export async function startBaseline(
  response: { status: number; headers: Record<string, string>; body: string },
  server: 'node:http' | 'fastify' = 'node:http',
): Promise<Baseline> {
  const port = await freePort();
  // The response arrives on stdin: a large body does not fit in a command-line argument. `fastify`:
  // the framework codehost is built on, with one route and no hook, answering the same bytes (what
  // the framework alone costs on top of node:http: a floor under any route of codehost's).
  const serve = server === 'fastify'
    ? `const app = require('fastify')({ logger: false });
       app.removeAllContentTypeParsers();
       app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
       app.all('/*', (request, reply) => { reply.code(r.status).headers(r.headers); return reply.send(r.body === '' ? undefined : r.body); });
       app.listen({ port: ${port}, host: '127.0.0.1' });`
    : `require('node:http').createServer((req, res) => { req.resume(); req.on('end', () => { res.writeHead(r.status, r.headers); res.end(r.body); }); })
        .listen(${port}, '127.0.0.1');`;
  const script = `
    let input = '';
    process.stdin.setEncoding('utf8').on('data', (chunk) => { input += chunk; }).on('end', () => {
      const r = JSON.parse(input);
      ${serve}
    });
  `;
  const child = spawn(NODE, ['-e', script], { cwd: ROOT, stdio: ['pipe', 'ignore', 'inherit'] });
  child.stdin!.end(JSON.stringify(response));
  const url = `http://127.0.0.1:${port}`;
  try {
    // Any answer will do: a baseline may answer 304 (a poll) or an error status.
    await waitFor(url, child, undefined, () => true);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    url,
    pid: child.pid!,
    stop: async () => {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The response of a real request, minus hop-by-hop headers, for a baseline to replay. */
export async function capture(url: string, init: RequestInit): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const response = await fetch(url, init);
  const body = await response.text();
  const headers: Record<string, string> = {};
  response.headers.forEach((value, key) => {
    if (!['connection', 'keep-alive', 'date', 'transfer-encoding', 'content-length'].includes(key)) headers[key] = value;
  });
  return { status: response.status, headers, body };
}

export interface LoadResult {
  requestsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  non2xx: number;
  errors: number;
}

export async function load(options: { url: string; method?: string; headers?: Record<string, string>; body?: string; seconds: number; connections?: number }): Promise<LoadResult> {
  const result = await autocannon({
    url: options.url,
    method: (options.method ?? 'GET') as 'GET',
    headers: options.headers,
    body: options.body,
    duration: options.seconds,
    connections: options.connections ?? 20,
  });
  return {
    requestsPerSecond: result.requests.average,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

type Target = Omit<Parameters<typeof load>[0], 'seconds'>;

/**
 * Loads each target briefly and throws the figures away: a measurement that is the first its
 * process serves would otherwise pay for the compiler's warm-up (measured: the first of the polls
 * cost twice the CPU per request of the same poll measured second). The bare server for 1 s, the
 * others for 2 s. Call it before reading the CPU counters of a measurement.
 */
export async function warmUp(bare: Target, ...others: Target[]): Promise<void> {
  await load({ ...bare, seconds: 1 });
  for (const other of others) await load({ ...other, seconds: 2 });
}

export const ratio = (value: number, baseline: number) => (baseline > 0 ? Number((value / baseline).toFixed(3)) : 0);

/**
 * Loads a baseline and the real server in turns (`rounds` of each, `seconds` in all for each), so a
 * machine whose load changes during the run (other processes on a shared box) weighs on both alike.
 * Returns each side's figures over all its rounds and the ratio of their requests per second.
 */
export async function compareLoads(
  bare: Parameters<typeof load>[0],
  real: Parameters<typeof load>[0],
  rounds = 3,
): Promise<{ bare: LoadResult; real: LoadResult; ratio: number }> {
  const sides: [LoadResult[], LoadResult[]] = [[], []];
  for (let round = 0; round < rounds; round++) {
    sides[0].push(await load({ ...bare, seconds: Math.max(1, Math.round(bare.seconds / rounds)) }));
    sides[1].push(await load({ ...real, seconds: Math.max(1, Math.round(real.seconds / rounds)) }));
  }
  const combine = (results: LoadResult[]): LoadResult => ({
    requestsPerSecond: results.reduce((sum, r) => sum + r.requestsPerSecond, 0) / results.length,
    latencyP50Ms: Math.max(...results.map((r) => r.latencyP50Ms)),
    latencyP99Ms: Math.max(...results.map((r) => r.latencyP99Ms)),
    non2xx: results.reduce((sum, r) => sum + r.non2xx, 0),
    errors: results.reduce((sum, r) => sum + r.errors, 0),
  });
  const [b, r] = [combine(sides[0]), combine(sides[1])];
  return { bare: b, real: r, ratio: ratio(r.requestsPerSecond, b.requestsPerSecond) };
}

/** CPU seconds (user + system) that processes on this host have used so far; a process gone counts 0. */
export function cpuSeconds(pids: readonly number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // exited
    }
  }
  return ticks / 100; // USER_HZ
}
