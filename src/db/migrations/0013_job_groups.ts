import type { Kysely } from 'kysely';

// The group of a job in the SQLite queue (SendOptions.group): a queue worked with a group limit runs
// at most that many jobs of one group at once (user exports share the workers between users).
// PostgreSQL's queue (pg-boss) keeps groups in its own tables; the column is unused there.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('jobs').addColumn('group_key', 'text').execute();
}
