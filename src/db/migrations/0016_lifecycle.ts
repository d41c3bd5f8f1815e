import type { Kysely } from 'kysely';

// Lifecycle (spec/admin-api.md "Lifecycle"): a suspended user (since when and why) and a suspended
// installation (since when); null when active.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').addColumn('suspended_at', 'text').execute();
  await db.schema.alterTable('users').addColumn('suspended_reason', 'text').execute();
  await db.schema.alterTable('installations').addColumn('suspended_at', 'text').execute();
}
