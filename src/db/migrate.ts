import { Migrator, sql } from 'kysely';
import type { Db } from './index.ts';
import { migrations } from './migrations/index.ts';

const migrator = (db: Db) =>
  new Migrator({ db: db.kysely, provider: { getMigrations: async () => migrations } });

/**
 * True when the database has recorded exactly the migrations this code knows: nothing to apply.
 * One query, where Kysely's Migrator first reads every table's columns (25 to 95 ms on SQLite, the
 * most of a testing helper's start from a migrated template). Anything else (no table yet, a pending
 * migration, one this code does not know) is the Migrator's to handle and report.
 */
async function upToDate(db: Db): Promise<boolean> {
  try {
    const recorded = (await sql<{ name: string }>`SELECT name FROM kysely_migration`.execute(db.kysely)).rows.map((row) => row.name);
    const known = Object.keys(migrations);
    return recorded.length === known.length && known.every((name) => recorded.includes(name));
  } catch {
    return false;
  }
}

/** Applies every pending migration. Several processes may start at once: PostgreSQL serializes them with an advisory lock. */
export async function migrateToLatest(db: Db): Promise<string[]> {
  if (await upToDate(db)) return [];
  const { error, results } = await migrator(db).migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** The migrations this code knows that the database has not recorded, in order (`codehost migrate --check`). */
export async function pendingMigrations(db: Db): Promise<string[]> {
  if (await upToDate(db)) return [];
  return (await migrator(db).getMigrations()).filter((m) => m.executedAt === undefined).map((m) => m.name);
}

/** True when the database answers and every migration is applied (for /readyz). */
export async function isMigrated(db: Db): Promise<boolean> {
  const applied = await migrator(db).getMigrations();
  return applied.every((m) => m.executedAt !== undefined);
}

export async function ping(db: Db): Promise<void> {
  await sql`select 1`.execute(db.kysely);
}
