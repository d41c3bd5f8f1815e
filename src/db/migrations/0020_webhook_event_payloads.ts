import { sql, type Kysely } from 'kysely';
import { isPostgres, withId } from './helpers.ts';

// An event's webhook body stored once, not once per app (docs/performance.md, "Sixth round, one
// payload per event"): `webhook_event_payloads` holds the body as JSON text, and each message names
// it (`event_payload_id`) with what is its own, its `installation` member as JSON text (null: none).
// The bytes an attempt sends are composed from the two (src/areas/app-webhooks/payloads.ts,
// `messagePayload`). The messages stored before keep their bytes: each one's payload becomes a
// payload row of its own (same id as the message) with no installation member of its own.
// A payload goes with its last message: a trigger deletes it in the transaction that deletes that
// message (the retention sweep, or an app's or an account's deletion by cascade).
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = isPostgres(db);
  await withId(db, db.schema.createTable('webhook_event_payloads'))
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  // The retention sweep's catch-all for payloads left without messages reads by age.
  await db.schema.createIndex('webhook_event_payloads_created').on('webhook_event_payloads').columns(['created_at']).execute();
  await db.schema.alterTable('webhook_messages').addColumn('event_payload_id', 'integer', (c) => c.references('webhook_event_payloads.id')).execute();
  await db.schema.alterTable('webhook_messages').addColumn('installation', 'text').execute();

  // The messages already stored: their payloads moved, bytes unchanged.
  await sql`insert into webhook_event_payloads (id, body, created_at) select id, payload, created_at from webhook_messages`.execute(db);
  await sql`update webhook_messages set event_payload_id = id`.execute(db);
  if (postgres) {
    // Ids given explicitly: the identity goes on after the highest.
    await sql`select setval(pg_get_serial_sequence('webhook_event_payloads', 'id'), coalesce((select max(id) from webhook_event_payloads), 0) + 1, false)`.execute(db);
    await sql`alter table webhook_messages alter column event_payload_id set not null`.execute(db);
  }
  await db.schema.alterTable('webhook_messages').dropColumn('payload').execute();
  await db.schema.createIndex('webhook_messages_event_payload').on('webhook_messages').columns(['event_payload_id']).execute();

  if (postgres) {
    await sql`
      create function codehost_webhook_message_deleted() returns trigger language plpgsql as $$
      begin
        delete from webhook_event_payloads p where p.id = old.event_payload_id
          and not exists (select 1 from webhook_messages m where m.event_payload_id = old.event_payload_id);
        return null;
      end $$`.execute(db);
    await sql`create trigger webhook_event_payloads_last_message after delete on webhook_messages for each row execute function codehost_webhook_message_deleted()`.execute(db);
  } else {
    await sql`
      create trigger webhook_event_payloads_last_message after delete on webhook_messages for each row begin
        delete from webhook_event_payloads where id = old.event_payload_id
          and not exists (select 1 from webhook_messages m where m.event_payload_id = old.event_payload_id);
      end`.execute(db);
  }
}
