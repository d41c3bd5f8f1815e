import type { Kysely } from 'kysely';

// The git data a deletion leaves to remove (src/core/repositories/git-sweep.ts): a repository's or a
// user's deletion records the paths of its git data in its own transaction and removes them (and
// their rows) once it has committed. A process killed in between leaves the rows, and the next
// start removes exactly those paths: the start-up costs what was left, not what exists.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('git_data_removals')
    .addColumn('path', 'text', (c) => c.primaryKey())
    .addColumn('recorded_at', 'text', (c) => c.notNull())
    .execute();
}
