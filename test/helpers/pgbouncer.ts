// A PgBouncer of the test's own in transaction pool mode, in front of the PostgreSQL that DATABASE_URL
// names (issue 22): an ini in a temporary directory, `/usr/sbin/pgbouncer` in the foreground on a
// free loopback port, run as the `postgres` user (PgBouncer refuses to run as root), killed by
// `stop()`. Few server connections for many clients, so that a transaction of one client runs on a
// server connection another client's transaction used before it.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort, portOpen, waitFor } from './process.ts';

export const PGBOUNCER = process.env.CODEHOST_TEST_PGBOUNCER ?? '/usr/sbin/pgbouncer';

function postgresIds(): { uid: number; gid: number } | null {
  try {
    const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    return null;
  }
}

/**
 * Why PgBouncer cannot run here (not installed; root without a postgres user to run it as), or
 * null when it can. Not a skip by design: see helpers/skips.ts.
 */
export function pgbouncerUnavailable(): string | null {
  if (!existsSync(PGBOUNCER)) return `${PGBOUNCER} is not installed (Debian: apt-get install pgbouncer; .ci/run installs it): the PgBouncer tests are skipped`;
  if (process.getuid?.() === 0 && !postgresIds()) return 'running as root with no postgres user to run PgBouncer as (it refuses root): the PgBouncer tests are skipped';
  return null;
}

export interface PgBouncer {
  port: number;
  /** PgBouncer's process id (its CPU time is in /proc/PID/stat). */
  pid: number;
  /** A connection string for `database` through PgBouncer (the user of the server URL). */
  url(database: string): string;
  /** One row per pool of PgBouncer's `SHOW POOLS`/`SHOW STATS`, through its admin console. */
  show(what: 'POOLS' | 'STATS' | 'SERVERS'): Promise<Array<Record<string, string>>>;
  /** What PgBouncer wrote (its log goes to stderr). */
  log(): string;
  stop(): Promise<void>;
}

export interface PgBouncerOptions {
  /** The PostgreSQL server behind it: a connection string (its host, port and user are used). */
  serverUrl: string;
  /** The databases it serves, by name (each to the same name on the server). */
  databases: string[];
  /** Server connections per database (default_pool_size). */
  poolSize?: number;
  /** PgBouncer's pool_mode (default transaction). */
  poolMode?: 'transaction' | 'session';
}

/** Starts PgBouncer (transaction pooling unless `poolMode` says otherwise, trust authentication, loopback only) and waits until it accepts connections. */
export async function startPgBouncer(options: PgBouncerOptions): Promise<PgBouncer> {
  const server = new URL(options.serverUrl);
  const user = decodeURIComponent(server.username || 'postgres');
  const dir = mkdtempSync(join(tmpdir(), 'codehost-pgbouncer-'));
  const port = await freePort();
  const ids = process.getuid?.() === 0 ? postgresIds() : null;
  const host = server.hostname.replace(/^\[|\]$/g, '');
  const target = `host=${host} port=${server.port || '5432'} user=${user}${server.password ? ` password=${decodeURIComponent(server.password)}` : ''}`;
  writeFileSync(join(dir, 'userlist.txt'), `"${user}" ""\n`);
  writeFileSync(join(dir, 'pgb.ini'), [
    '[databases]',
    ...options.databases.map((name) => `${name} = ${target} dbname=${name}`),
    '',
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    `pool_mode = ${options.poolMode ?? 'transaction'}`,
    'auth_type = trust',
    `auth_file = ${join(dir, 'userlist.txt')}`,
    `admin_users = ${user}`,
    `default_pool_size = ${options.poolSize ?? 8}`,
    'max_client_conn = 500',
    // A client waiting this long for a server connection gets an error, not a hang.
    'query_wait_timeout = 30',
    'server_check_delay = 0',
    'ignore_startup_parameters = extra_float_digits,options',
    '',
  ].join('\n'));
  // PgBouncer runs as postgres (it refuses root): its folder and files are its own, whatever the
  // umask of the process that wrote them (codehost's app sets 077: a benchmark that built one in
  // process made the files unreadable to PgBouncer).
  if (ids) for (const path of [dir, join(dir, 'userlist.txt'), join(dir, 'pgb.ini')]) chownSync(path, ids.uid, ids.gid);
  let output = '';
  const child: ChildProcess = spawn(PGBOUNCER, [join(dir, 'pgb.ini')], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(ids ? { uid: ids.uid, gid: ids.gid } : {}),
  });
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      // SIGINT: PgBouncer's "safe shutdown" waits for clients; SIGTERM closes at once.
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor('PgBouncer to accept connections', 20, async () => {
      if (child.exitCode !== null) throw new Error(`pgbouncer exited with ${child.exitCode}:\n${output}`);
      return (await portOpen(port)) ? true : undefined;
    });
  } catch (error) {
    await stop();
    throw error;
  }
  const url = (database: string) => `postgres://${encodeURIComponent(user)}@127.0.0.1:${port}/${database}`;
  return {
    port,
    pid: child.pid!,
    url,
    async show(what) {
      // The admin console speaks the simple query protocol only: a query without parameters.
      const client = new pg.Client({ connectionString: url('pgbouncer') });
      await client.connect();
      try {
        return (await client.query(`SHOW ${what}`)).rows as Array<Record<string, string>>;
      } finally {
        await client.end();
      }
    },
    log: () => output,
    stop,
  };
}
