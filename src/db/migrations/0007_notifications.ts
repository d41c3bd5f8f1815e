import type { Kysely } from 'kysely';
import { withId } from './helpers.ts';

// Notification subjects, threads, thread subscriptions and each user's last-change time.
// The thread indices lead with user_id, so listing a user's threads costs the same whether the table
// holds their thousand threads or a million of other users'; `id` ends each one so the
// "newest update first" order (updated_at, id) comes straight from the index.
export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('notification_subjects'))
    .addColumn('repository_id', 'integer', (c) => c.notNull().references('repositories.id').onDelete('cascade'))
    .addColumn('issue_id', 'integer', (c) => c.references('issues.id').onDelete('cascade'))
    .addColumn('subject_key', 'text', (c) => c.notNull().unique())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('url', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await withId(db, db.schema.createTable('notification_threads'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('subject_id', 'integer', (c) => c.notNull().references('notification_subjects.id').onDelete('cascade'))
    .addColumn('repository_id', 'integer', (c) => c.notNull().references('repositories.id').onDelete('cascade'))
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('unread', 'integer', (c) => c.notNull())
    .addColumn('done', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('last_read_at', 'text')
    .addColumn('latest_comment_id', 'integer')
    .addColumn('last_activity_id', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('notification_threads_user_subject', ['user_id', 'subject_id'])
    .execute();
  await db.schema.createIndex('notification_threads_unread').on('notification_threads').columns(['user_id', 'unread', 'updated_at', 'id']).execute();
  await db.schema.createIndex('notification_threads_done').on('notification_threads').columns(['user_id', 'done', 'updated_at', 'id']).execute();
  await db.schema.createIndex('notification_threads_repository').on('notification_threads').columns(['user_id', 'repository_id', 'updated_at', 'id']).execute();

  await db.schema
    .createTable('thread_subscriptions')
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('subject_id', 'integer', (c) => c.notNull().references('notification_subjects.id').onDelete('cascade'))
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('thread_subscriptions_pk', ['user_id', 'subject_id'])
    .execute();
  await db.schema.createIndex('thread_subscriptions_subject').on('thread_subscriptions').columns(['subject_id']).execute();

  await db.schema
    .createTable('notification_inboxes')
    .addColumn('user_id', 'integer', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('modified_at', 'text', (c) => c.notNull())
    .execute();
}
