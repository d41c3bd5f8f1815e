// What the client tests need from the machine (PyGithub, Chromium) and a `codehost serve` started as
// a new user starts it: defaults (no CODEHOST_API_URL, CODEHOST_HOST or CODEHOST_WEB_URL), the demo
// data, its own data directory and port.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startCli, type CliProcess } from '../helpers/process.ts';

/**
 * Why a client test cannot run here, or false when it can. Outside CI a missing tool skips the test
 * with this message; in CI (`CI` set) it is a failure. The tests use the demo data, which only the
 * embedded database gets: the PostgreSQL pass skips them (the SQLite pass runs them).
 */
export function skipReason(tool: string | null, missing: string): string | false {
  if (process.env.DATABASE_URL) return 'client compatibility runs once, in the SQLite pass (the demo data is loaded into a new embedded database only)';
  if (!tool && !process.env.CI) return missing;
  return false;
}

/** A Python 3 that has PyGithub: Debian's /usr/bin/python3 first (another python3 on PATH may lack it). */
export function pythonWithPyGithub(): string | null {
  for (const candidate of ['/usr/bin/python3', 'python3']) {
    if (spawnSync(candidate, ['-c', 'import github'], { stdio: 'ignore' }).status === 0) return candidate;
  }
  return null;
}

export function chromiumPath(): string | null {
  return ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) => existsSync(path)) ?? null;
}

export const ADMIN_TOKEN = 'client-test-admin-token';

export interface DemoServer {
  /** The address the server printed, e.g. http://127.0.0.1:PORT. */
  address: string;
  /** The API root it printed. */
  apiUrl: string;
  cli: CliProcess;
  admin(method: string, path: string, body?: unknown): Promise<any>;
  stop(): Promise<void>;
}

/** `codehost serve` with the defaults and the demo data; resolves once it printed where it listens. */
export async function startDemoServer(): Promise<DemoServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'codehost-client-'));
  const port = await freePort();
  const cli = startCli(['serve'], {
    env: { CODEHOST_PORT: String(port), CODEHOST_DATA_DIR: dataDir, CODEHOST_ADMIN_TOKEN: ADMIN_TOKEN, CODEHOST_DEMO: '1', CODEHOST_LOG_LEVEL: 'warn' },
  });
  const [, address, apiUrl] = await cli.waitFor(/codehost is listening on (\S+) \(API at (\S+),/, 60);
  const admin = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${address}/_admin${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`admin ${method} ${path}: ${response.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
  return {
    address: address!,
    apiUrl: apiUrl!,
    cli,
    admin,
    async stop() {
      if (cli.child.exitCode === null && cli.child.signalCode === null) {
        cli.child.kill('SIGTERM');
        await cli.exited();
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Waits until `check` holds (polled), failing with `what` and what the page logged. */
export async function until(what: string, check: () => Promise<boolean>, seen: string[], timeoutMs = 15_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 50))) {
    if (await check()) return;
  }
  assert.fail(`${what}: not seen in ${timeoutMs} ms\n${seen.join('\n')}`);
}
