import { Migrator, sql } from 'kysely';
import type { Db } from './index.ts';
import { migrations } from './migrations/index.ts';

const migrator = (db: Db) =>
  new Migrator({ db: db.kysely, provider: { getMigrations: async () => migrations } });

/** Applies every pending migration. Several processes may start at once: PostgreSQL serializes them with an advisory lock. */
export async function migrateToLatest(db: Db): Promise<string[]> {
  const { error, results } = await migrator(db).migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** True when the database answers and every migration is applied (for /readyz). */
export async function isMigrated(db: Db): Promise<boolean> {
  const applied = await migrator(db).getMigrations();
  return applied.every((m) => m.executedAt !== undefined);
}

export async function ping(db: Db): Promise<void> {
  await sql`select 1`.execute(db.kysely);
}
