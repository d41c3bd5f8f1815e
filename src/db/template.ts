// A migrated, empty SQLite database to start from: the testing helper (src/testing.ts) copies it
// into its fresh data directory instead of running every migration on each start (docs/performance.md,
// "The helper's start"). The template lives in the system's temporary directory, named by a hash
// of the migrations' source files: a changed or added migration makes a new one. It holds the
// tables only (no setting, no secret: the secret key is made by the server that starts on a copy).
import { createHash, randomBytes } from 'node:crypto';
import { constants, copyFileSync, existsSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDatabase } from './index.ts';
import { migrateToLatest } from './migrate.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

/** A hash of every migration's source (names and contents), in name order. */
export function migrationsHash(): string {
  const hash = createHash('sha256');
  for (const file of readdirSync(MIGRATIONS_DIR).sort()) hash.update(file).update('\0').update(readFileSync(join(MIGRATIONS_DIR, file))).update('\0');
  return hash.digest('hex').slice(0, 16);
}

/** Where the template of the present migrations is (made or not). */
export function templatePath(): string {
  return join(tmpdir(), `codehost-migrated-${migrationsHash()}.db`);
}

/**
 * Makes `target` a copy of the migrated template, making the template first when there is none.
 * Several processes may make it at once: each migrates its own file and renames it into place
 * (the same content), so none reads a half-made template.
 */
export async function copyMigratedTemplate(target: string): Promise<void> {
  const template = templatePath();
  if (!existsSync(template)) {
    const partial = `${template}.${process.pid}-${randomBytes(4).toString('hex')}.partial`;
    const db = openDatabase({ databaseUrl: null, sqlitePath: partial });
    try {
      await migrateToLatest(db);
    } finally {
      // Closing the last connection writes the WAL back into the file and removes it.
      await db.close();
    }
    for (const suffix of ['-wal', '-shm']) rmSync(`${partial}${suffix}`, { force: true });
    renameSync(partial, template);
  }
  copyFileSync(template, target, constants.COPYFILE_FICLONE);
}
