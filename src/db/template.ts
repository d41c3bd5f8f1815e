// A migrated, empty database to start from: the testing helper (src/testing-helper.ts) copies it instead of
// running every migration on each start (docs/performance.md, "The helper's start"). On SQLite a
// file in a directory of the user's own under the system's temporary directory (`codehost-<uid>`,
// mode 0700), copied into the helper's data directory; on PostgreSQL a database on the server that
// the connecting role owns, copied by CREATE DATABASE … TEMPLATE. Each is named by a hash of the
// migrations' source files: a changed or added migration makes a new one. It holds no setting and
// no secret: the secret key is made by the server that starts on a copy. A template is used only
// from a place nobody else can write: on a shared CI host another user could otherwise plant a
// token or a secret key in it (docs/testing.md).
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, constants, copyFileSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { openDatabase } from './index.ts';
import { migrateToLatest } from './migrate.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

/** A hash of every migration's source (names and contents), in name order. */
export function migrationsHash(): string {
  const hash = createHash('sha256');
  for (const file of readdirSync(MIGRATIONS_DIR).sort()) hash.update(file).update('\0').update(readFileSync(join(MIGRATIONS_DIR, file))).update('\0');
  return hash.digest('hex').slice(0, 16);
}

/** Where the template of the present migrations is (made or not): in the user's own directory. */
export function templatePath(): string {
  return join(tmpdir(), `codehost-${process.getuid?.() ?? 'user'}`, `migrated-${migrationsHash()}.db`);
}

/** Only the user may have written it: theirs, no symbolic link, and no write bit for others (a directory: no bit at all). */
function ownedAlone(path: string, kind: 'directory' | 'file'): boolean {
  try {
    const stat = lstatSync(path);
    const uid = process.getuid?.();
    return (kind === 'directory' ? stat.isDirectory() : stat.isFile()) && (uid === undefined || stat.uid === uid) && (stat.mode & (kind === 'directory' ? 0o077 : 0o022)) === 0;
  } catch {
    return false;
  }
}

/** Whether the template's directory is the user's own (made here, mode 0700, when missing): not when another user made it, or opened it. */
function ownTemplateDirectory(template: string): boolean {
  try {
    mkdirSync(dirname(template), { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return false;
  }
  return ownedAlone(dirname(template), 'directory');
}

/** Migrates a new database file at `path`: made under another name, mode 0600, renamed into place when whole. */
async function migrateInto(path: string): Promise<void> {
  const partial = `${path}.${process.pid}-${randomBytes(4).toString('hex')}.partial`;
  const db = openDatabase({ databaseUrl: null, sqlitePath: partial });
  try {
    await migrateToLatest(db);
  } finally {
    // Closing the last connection writes the WAL back into the file and removes it.
    await db.close();
  }
  for (const suffix of ['-wal', '-shm']) rmSync(`${partial}${suffix}`, { force: true });
  chmodSync(partial, 0o600);
  renameSync(partial, path);
}

/**
 * Makes `target` a copy of the migrated template, making the template first when there is none, or
 * when the one there is not the user's alone (it is replaced). Several processes may make it at
 * once: each migrates its own file and renames it into place (the same content), so none reads a
 * half-made template. When the directory is not the user's own, nothing there is read or written:
 * `target` is migrated by itself.
 */
export async function copyMigratedTemplate(target: string): Promise<void> {
  const template = templatePath();
  if (!ownTemplateDirectory(template)) return migrateInto(target);
  if (!ownedAlone(template, 'file')) {
    rmSync(template, { force: true });
    await migrateInto(template);
  }
  copyFileSync(template, target, constants.COPYFILE_FICLONE);
}

/** A fresh PostgreSQL database made for one testing helper start, and how to drop it. */
export interface FreshDatabase {
  databaseUrl: string;
  drop(): Promise<void>;
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** `serverUrl` naming another database on the same server. */
function databaseOn(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Runs `action` with a connection to `serverUrl`'s database, closed afterwards. */
async function withClient<T>(serverUrl: string, action: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return await action(client);
  } finally {
    await client.end();
  }
}

/** The name of the PostgreSQL template of the present migrations for the role `role`. */
export function templateDatabaseName(role: string): string {
  return `codehost_template_${migrationsHash()}_${createHash('sha256').update(role).digest('hex').slice(0, 8)}`;
}

/**
 * PostgreSQL: a new database on the server `serverUrl` names (connected to as given, for CREATE and
 * DROP DATABASE only), a copy (`CREATE DATABASE … TEMPLATE`) of `codehost_template_<hash of the
 * migrations>_<hash of the role>`, used only when the connecting role owns it (another role's
 * database of that name is never copied: this start then migrates a database of its own). The
 * template is made on first use: a database `prepare` brings to what a started server leaves (the
 * migrations, the job queue's schema and queues), without its settings (the secret key is the
 * copy's own). One process makes it at a time (an advisory lock, among those connected to the same
 * database), under another name, renamed into place when it is whole; so no copy is made of a
 * half-made template.
 */
export async function createFromTemplateDatabase(serverUrl: string, prepare: (databaseUrl: string) => Promise<void>): Promise<FreshDatabase> {
  const name = `codehost_testing_${randomBytes(8).toString('hex')}`;
  await withClient(serverUrl, async (client) => {
    const role = (await client.query<{ role: string }>('SELECT current_user AS role')).rows[0]!.role;
    const template = templateDatabaseName(role);
    /** Whether the template is there, and the role's own; a template another role made is not the helper's. */
    const state = async () => {
      const owner = (await client.query<{ owner: string }>('SELECT pg_get_userbyid(datdba) AS owner FROM pg_database WHERE datname = $1', [template])).rows[0]?.owner;
      return owner === undefined ? 'missing' : owner === role ? 'own' : 'another role\'s';
    };
    if ((await state()) === 'missing') {
      await client.query("SELECT pg_advisory_lock(hashtext('codehost_template'))");
      try {
        if ((await state()) === 'missing') {
          const partial = `${template}_partial_${randomBytes(4).toString('hex')}`;
          await client.query(`CREATE DATABASE ${quote(partial)}`);
          try {
            await prepare(databaseOn(serverUrl, partial));
            await withClient(databaseOn(serverUrl, partial), (made) => made.query('DELETE FROM settings'));
            // A connection the stopped server's pools have not closed yet would block the rename.
            await client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [partial]);
            await client.query(`ALTER DATABASE ${quote(partial)} RENAME TO ${quote(template)}`);
          } catch (error) {
            await client.query(`DROP DATABASE IF EXISTS ${quote(partial)} WITH (FORCE)`);
            // Advisory locks are per database: a process connected to another database of the
            // server may have made the template meanwhile, and that one serves.
            if ((await state()) === 'missing') throw error;
          }
        }
      } finally {
        await client.query("SELECT pg_advisory_unlock(hashtext('codehost_template'))");
      }
    }
    if ((await state()) === 'own') {
      await client.query(`CREATE DATABASE ${quote(name)} TEMPLATE ${quote(template)}`);
      return;
    }
    await client.query(`CREATE DATABASE ${quote(name)}`);
    await prepare(databaseOn(serverUrl, name));
    await withClient(databaseOn(serverUrl, name), (made) => made.query('DELETE FROM settings'));
  });
  return {
    databaseUrl: databaseOn(serverUrl, name),
    drop: () => withClient(serverUrl, async (client) => {
      await client.query(`DROP DATABASE IF EXISTS ${quote(name)} WITH (FORCE)`);
    }),
  };
}
