import type { Kysely } from 'kysely';

// Locked conversations (issue 39): whether an issue is locked and why. Additive: two columns with
// defaults (an issue there is stays unlocked); the issues table already notifies its changes.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('issues').addColumn('locked', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('issues').addColumn('active_lock_reason', 'text').execute();
}
