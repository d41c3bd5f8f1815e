import { sql, type Kysely } from 'kysely';
import { withId } from './helpers.ts';

// The tables of the app webhooks area (see src/db/tables/app-webhooks.ts).
export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('app_webhooks'))
    .addColumn('app_id', 'integer', (c) => c.notNull().unique().references('apps.id').onDelete('cascade'))
    .addColumn('url', 'text')
    .addColumn('content_type', 'text', (c) => c.notNull().defaultTo('json'))
    .addColumn('secret', 'text')
    .addColumn('insecure_ssl', 'text', (c) => c.notNull().defaultTo('0'))
    .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('throttle_next_at', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // Apps created before this migration get an empty configuration, as new apps do.
  await db
    .insertInto('app_webhooks')
    .columns(['app_id', 'content_type', 'insecure_ssl', 'active', 'throttle_next_at', 'created_at', 'updated_at'])
    .expression(db.selectFrom('apps').select(['id', sql.lit('json').as('content_type'), sql.lit('0').as('insecure_ssl'), sql.lit(1).as('active'), sql.lit(0).as('throttle_next_at'), 'created_at', 'updated_at']))
    .execute();

  await withId(db, db.schema.createTable('webhook_messages'))
    .addColumn('app_id', 'integer', (c) => c.notNull().references('apps.id').onDelete('cascade'))
    .addColumn('guid', 'text', (c) => c.notNull().unique())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('action', 'text')
    .addColumn('installation_id', 'integer')
    .addColumn('repository_id', 'integer')
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_messages_created').on('webhook_messages').columns(['created_at']).execute();

  await withId(db, db.schema.createTable('webhook_deliveries'))
    .addColumn('message_id', 'integer', (c) => c.notNull().references('webhook_messages.id').onDelete('cascade'))
    .addColumn('app_id', 'integer', (c) => c.notNull().references('apps.id').onDelete('cascade'))
    .addColumn('redelivery', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('retry_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('generation', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('throttled_at', 'text')
    .addColumn('throttle_slot_at', 'bigint')
    .addColumn('delivered_at', 'text')
    .addColumn('status', 'text')
    .addColumn('status_code', 'integer')
    .addColumn('duration', 'double precision')
    .addColumn('url', 'text')
    .addColumn('request_headers', 'text')
    .addColumn('response_headers', 'text')
    .addColumn('response_body', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  // The list: an app's deliveries newest first; the retention sweep: by delivery time.
  await db.schema.createIndex('webhook_deliveries_app').on('webhook_deliveries').columns(['app_id', 'id']).execute();
  await db.schema.createIndex('webhook_deliveries_message').on('webhook_deliveries').columns(['message_id']).execute();
  await db.schema.createIndex('webhook_deliveries_delivered').on('webhook_deliveries').columns(['delivered_at']).execute();
}
