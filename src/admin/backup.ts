// `codehost backup DIR`: an online backup of a running (or stopped) server's data into a new
// directory laid out as a data directory, so that restoring is copying it to CODEHOST_DATA_DIR.
//
// The parts and their order, for a consistent copy: the files first (git data, finished migration
// archives), then the database (SQLite: `VACUUM INTO`, one read transaction, so one instant;
// PostgreSQL: pg_dump, one snapshot), then the files again, adding only what appeared meanwhile. Every
// file a row of the database copy names is then in the backup: a file deleted after the first pass is
// in it from that pass, one created before the database copy is in it from the second. Files no row
// names (a repository deleted meanwhile) are harmless. Unfinished archives (`.partial`) are skipped.
import { execFile } from 'node:child_process';
import { chmod, cp, mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The directories of the data directory that hold data (the rest is caches). */
export const FILE_PARTS = ['git', 'migration-archives'] as const;

/** The PostgreSQL dump's name in a backup (pg_dump's custom format, for pg_restore). */
export const PG_DUMP_FILE = 'codehost.pgdump';

export interface BackupReport {
  database: string;
  files: number;
  bytes: number;
  ms: number;
}

async function copyFiles(from: string, to: string): Promise<void> {
  for (const part of FILE_PARTS) {
    if (!existsSync(join(from, part))) continue;
    await cp(join(from, part), join(to, part), {
      recursive: true,
      force: false,
      errorOnExist: false,
      preserveTimestamps: true,
      filter: (source) => !source.endsWith('.partial'),
    });
  }
}

/** DATABASE_URL as libpq's variables (PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE, PGSSLMODE). */
function libpqEnvironment(databaseUrl: string): Record<string, string> {
  const url = new URL(databaseUrl);
  const env: Record<string, string> = {};
  const host = url.hostname || url.searchParams.get('host');
  if (host) env.PGHOST = host;
  if (url.port) env.PGPORT = url.port;
  if (url.username) env.PGUSER = decodeURIComponent(url.username);
  if (url.password) env.PGPASSWORD = decodeURIComponent(url.password);
  if (url.pathname.length > 1) env.PGDATABASE = decodeURIComponent(url.pathname.slice(1));
  const sslmode = url.searchParams.get('sslmode');
  if (sslmode) env.PGSSLMODE = sslmode;
  return env;
}

/**
 * What the backup holds is its owner's only, whatever the umask or the modes of the data directory
 * it copied: every file 0600, every directory 0700 (a restore's `cp -a` keeps them). Nothing in it
 * is run (a bare repository's hooks are git's samples).
 */
async function restrictModes(target: string): Promise<void> {
  for (const entry of await readdir(target, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name);
    if (entry.isDirectory()) await chmod(path, 0o700);
    else if (entry.isFile()) await chmod(path, 0o600);
  }
}

async function sizeOf(path: string): Promise<{ files: number; bytes: number }> {
  let files = 0;
  let bytes = 0;
  for (const entry of await readdir(path, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    files += 1;
    bytes += (await stat(join(entry.parentPath, entry.name))).size;
  }
  return { files, bytes };
}

/**
 * Backs the data up into `target`, a directory that must not exist yet (made 0700: it holds the
 * database, and with it the stored secret key when CODEHOST_SECRET_KEY is not set).
 */
export async function backup(options: { dataDir: string; databaseUrl: string | null; target: string }): Promise<BackupReport> {
  const { dataDir, databaseUrl, target } = options;
  const started = performance.now();
  if (existsSync(target)) throw new Error(`${target} exists already; give a new directory`);
  await mkdir(target, { recursive: true, mode: 0o700 });
  await chmod(target, 0o700);

  await copyFiles(dataDir, target);
  let database: string;
  // The database copy is made into an empty file of mode 0600 (pg_dump and VACUUM INTO would create
  // theirs under the umask, 0644 under the usual 022): never readable by others, not even while written.
  const createPrivate = (path: string) => writeFile(path, '', { mode: 0o600, flag: 'wx' }).then(() => chmod(path, 0o600));
  if (databaseUrl) {
    database = join(target, PG_DUMP_FILE);
    await createPrivate(database);
    // The URL's parts go in the environment, not the arguments: `ps` shows arguments, passwords included.
    await run('pg_dump', ['--format=custom', '--no-owner', '--file', database], { env: { ...process.env, ...libpqEnvironment(databaseUrl) } }).catch((error: Error & { stderr?: string; code?: string }) => {
      const why = error.code === 'ENOENT' ? 'pg_dump is not installed (Debian: apt-get install postgresql-client)' : (error.stderr?.trim() || error.message);
      throw new Error(`pg_dump failed: ${why}`);
    });
  } else {
    const source = join(dataDir, 'codehost.db');
    if (!existsSync(source)) throw new Error(`no database at ${source}; is CODEHOST_DATA_DIR the server's data directory?`);
    database = join(target, 'codehost.db');
    // VACUUM INTO writes into a file that does not exist or is empty.
    await createPrivate(database);
    const db = new DatabaseSync(source);
    try {
      db.exec('PRAGMA busy_timeout = 5000');
      db.prepare('VACUUM INTO ?').run(database);
    } finally {
      db.close();
    }
  }
  await copyFiles(dataDir, target);
  await restrictModes(target);
  const { files, bytes } = await sizeOf(target);
  return { database, files, bytes, ms: Math.round(performance.now() - started) };
}
