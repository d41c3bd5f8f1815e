import { Kysely, Migrator, sql } from 'kysely';
import type { Database } from './schema.ts';
import type { Db } from './index.ts';
import { migrations } from './migrations/index.ts';

const migrator = (db: Db | { kysely: Kysely<Database> }) =>
  new Migrator({ db: db.kysely, provider: { getMigrations: async () => migrations } });

/**
 * On PostgreSQL the pending migrations run in one transaction on a connection of their own whose
 * statements wait at most LOCK_TIMEOUT for a lock: a migration beside a release still serving
 * (CONTRIBUTING.md, "Migrations expand") takes locks on the tables it references, and a long wait
 * in the lock queue would hold every request behind it. A transaction that met a deadlock or waited
 * too long is rolled back whole (nothing of it applied) and runs again after a pause, for about
 * MIGRATION_PATIENCE_MS in all.
 */
const LOCK_TIMEOUT = '2s';
const MIGRATION_PATIENCE_MS = 120_000;
const RETRIED_CODES = new Set(['40P01', '55P03']); // deadlock_detected, lock_not_available

async function migratePostgres(db: Db): Promise<{ error?: unknown; results?: { status: string; migrationName: string }[] }> {
  const deadline = Date.now() + MIGRATION_PATIENCE_MS;
  for (let attempt = 1; ; attempt++) {
    const outcome = await db.kysely.connection().execute(async (connection) => {
      await sql`set lock_timeout = ${sql.lit(LOCK_TIMEOUT)}`.execute(connection);
      try {
        return await migrator({ kysely: connection }).migrateToLatest();
      } finally {
        await sql`reset lock_timeout`.execute(connection);
      }
    });
    const code = (outcome.error as { code?: string } | undefined)?.code;
    if (!code || !RETRIED_CODES.has(code) || Date.now() > deadline) return outcome;
    await new Promise((resolve) => setTimeout(resolve, Math.min(2000, attempt * 200) * (0.5 + Math.random())));
  }
}

/**
 * True when the database has recorded every migration this code knows: nothing to apply. One query,
 * where Kysely's Migrator first reads every table's columns (25 to 95 ms on SQLite, the most of a
 * testing helper's start from a migrated template). Recorded migrations this code does not know are
 * a newer release's: every migration only adds (expand; what a release removes goes in a later one:
 * CONTRIBUTING.md), so this release serves the database as it is, as a process of the previous
 * release does during a rolling upgrade. Anything else (no table yet, a pending migration) is the
 * Migrator's to handle and report.
 */
async function upToDate(db: Db): Promise<boolean> {
  try {
    const recorded = new Set((await sql<{ name: string }>`SELECT name FROM kysely_migration`.execute(db.kysely)).rows.map((row) => row.name));
    return Object.keys(migrations).every((name) => recorded.has(name));
  } catch {
    return false;
  }
}

/** Applies every pending migration. Several processes may start at once: PostgreSQL serializes them with an advisory lock. */
export async function migrateToLatest(db: Db): Promise<string[]> {
  if (await upToDate(db)) return [];
  const { error, results } = db.dialect === 'postgres' ? await migratePostgres(db) : await migrator(db).migrateToLatest();
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
