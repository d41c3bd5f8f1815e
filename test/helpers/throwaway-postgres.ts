// A PostgreSQL instance of the test's own, for fault tests that stop, restart or kill it: initdb in a
// temporary directory as the `postgres` user, pg_ctl on a free port. Never the shared cluster.
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './process.ts';

const BIN = process.env.CODEHOST_TEST_PG_BIN ?? '/usr/lib/postgresql/15/bin';

export interface ThrowawayPostgres {
  /** postgres://postgres@127.0.0.1:PORT/postgres */
  databaseUrl: string;
  port: number;
  /** Stops the instance (if running): `immediate` is a crash (no checkpoint), `fast` a clean shutdown that disconnects everyone. */
  stop(mode?: 'immediate' | 'fast'): void;
  /** Starts it again (if stopped). */
  start(): void;
  /** Stops it and removes its directory. */
  destroy(): void;
}

function postgresUid(): { uid: number; gid: number } | null {
  try {
    const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    return null;
  }
}

/** Why the throwaway instance cannot run here, or null when it can. */
export function throwawayPostgresUnavailable(): string | null {
  if (!process.env.DATABASE_URL) return 'DATABASE_URL is not set (a SQLite-only run): the PostgreSQL fault tests are skipped';
  if (!existsSync(join(BIN, 'initdb')) || !existsSync(join(BIN, 'pg_ctl'))) return `no initdb/pg_ctl in ${BIN} (set CODEHOST_TEST_PG_BIN): the PostgreSQL fault tests are skipped`;
  if (process.getuid?.() !== 0) return 'not running as root (initdb must run as the postgres user): the PostgreSQL fault tests are skipped';
  if (!postgresUid()) return 'no postgres user: the PostgreSQL fault tests are skipped';
  return null;
}

function asPostgres(args: string[]): void {
  execFileSync('runuser', ['-u', 'postgres', '--', ...args], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 60_000 });
}

export async function startThrowawayPostgres(): Promise<ThrowawayPostgres> {
  const ids = postgresUid()!;
  const root = mkdtempSync(join(tmpdir(), 'codehost-pg-'));
  chownSync(root, ids.uid, ids.gid);
  const data = join(root, 'data');
  const log = join(root, 'postgres.log');
  const port = await freePort();
  asPostgres([join(BIN, 'initdb'), '--no-sync', '--auth=trust', '--username=postgres', '-D', data]);
  // fsync off: an immediate stop is a crash of PostgreSQL, not of the machine, so nothing committed is lost.
  const options = `-p ${port} -k /tmp -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`;
  let running = false;
  const instance: ThrowawayPostgres = {
    databaseUrl: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    start() {
      if (running) return;
      asPostgres([join(BIN, 'pg_ctl'), 'start', '-w', '-t', '30', '-D', data, '-l', log, '-o', options]);
      running = true;
    },
    stop(mode = 'fast') {
      if (!running) return;
      asPostgres([join(BIN, 'pg_ctl'), 'stop', '-w', '-t', '30', '-m', mode, '-D', data]);
      running = false;
    },
    destroy() {
      try {
        if (running) instance.stop('immediate');
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
  };
  try {
    instance.start();
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
  return instance;
}
