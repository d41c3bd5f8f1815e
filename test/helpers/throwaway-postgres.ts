// A PostgreSQL instance of the test's own, for fault tests that stop, restart or kill it: initdb in a
// temporary directory as the `postgres` user, pg_ctl on a free port. Never the shared cluster.
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './process.ts';

/** Whether `dir` holds the two programs the instance needs. */
const hasServerPrograms = (dir: string) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'));

/**
 * The PostgreSQL server programs of the installed version: CODEHOST_TEST_PG_BIN when set, else
 * `pg_config --bindir` when initdb is there, else the newest version under /usr/lib/postgresql
 * (Debian keeps the server programs there, off PATH); null when none is found.
 */
export function postgresBinDir(env: NodeJS.ProcessEnv = process.env, root = '/usr/lib/postgresql'): string | null {
  if (env.CODEHOST_TEST_PG_BIN) return env.CODEHOST_TEST_PG_BIN;
  try {
    const dir = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    if (dir && hasServerPrograms(dir)) return dir;
  } catch {
    // no pg_config: look under root
  }
  const versions = existsSync(root) ? readdirSync(root).filter((name) => /^\d+(\.\d+)?$/.test(name)) : [];
  versions.sort((a, b) => Number(b) - Number(a));
  const newest = versions.map((version) => join(root, version, 'bin')).find(hasServerPrograms);
  return newest ?? null;
}

const BIN = postgresBinDir() ?? '/usr/lib/postgresql/bin';

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

/**
 * Why the throwaway instance cannot run on this machine (PostgreSQL's server programs, root, the
 * postgres user), or null when it can. Not a skip by design: see helpers/skips.ts.
 */
export function throwawayPostgresUnavailable(): string | null {
  if (!hasServerPrograms(BIN)) return `no initdb/pg_ctl found (pg_config --bindir, /usr/lib/postgresql/*/bin; or set CODEHOST_TEST_PG_BIN): the PostgreSQL fault tests are skipped`;
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
