import { sql, type Kysely } from 'kysely';

// The typed activity's name (`event.action`) on each outbox row, so its consumers read the payload
// with the type its name was recorded with; raw events (POST /_admin/events) have none. Issue rows
// already recorded (the only typed ones before) get theirs; every other row was a raw event.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('activity_outbox').addColumn('name', 'text').execute();
  await sql`update activity_outbox set name = event || '.' || action where issue_id is not null and action is not null`.execute(db);
}
