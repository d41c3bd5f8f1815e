import type { Kysely } from 'kysely';

// A suspended user (spec/admin-api.md "Lifecycle"): since when and why; null when active.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').addColumn('suspended_at', 'text').execute();
  await db.schema.alterTable('users').addColumn('suspended_reason', 'text').execute();
}
