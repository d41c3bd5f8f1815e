// `codehost serve` as a real child process on a test database: for tests that kill the server and
// start it again on the same data.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer as createNetServer } from 'node:net';
import type { TestDatabase } from './database.ts';

const ROOT = new URL('../..', import.meta.url).pathname;

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createNetServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/**
 * Starts `codehost serve` on `port` with the test database. A dead worker's jobs are taken over
 * soon (lease 2 s; PostgreSQL: pg-boss's 10 s minimum heartbeat). `env` adds or overrides settings.
 */
export function spawnServe(options: { port: number; database: TestDatabase; adminToken: string; env?: Record<string, string> }): ChildProcess {
  return spawn(process.execPath, ['src/main.ts', 'serve'], {
    cwd: ROOT,
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
