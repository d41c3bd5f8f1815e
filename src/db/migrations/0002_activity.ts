import type { Kysely } from 'kysely';
import { withId } from './helpers.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('issues'))
    .addColumn('repository_id', 'integer', (c) => c.notNull().references('repositories.id').onDelete('cascade'))
    .addColumn('number', 'integer', (c) => c.notNull())
    .addColumn('author_id', 'integer', (c) => c.notNull().references('users.id'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('body', 'text')
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('state_reason', 'text')
    .addColumn('is_pull_request', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('merged_at', 'text')
    .addColumn('closed_at', 'text')
    .addColumn('issue_type_id', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('issues_repository_number', ['repository_id', 'number'])
    .execute();

  await db.schema
    .createTable('issue_assignees')
    .addColumn('issue_id', 'integer', (c) => c.notNull().references('issues.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('issue_assignees_pk', ['issue_id', 'user_id'])
    .execute();

  await withId(db, db.schema.createTable('issue_review_requests'))
    .addColumn('issue_id', 'integer', (c) => c.notNull().references('issues.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('team_id', 'integer', (c) => c.references('teams.id').onDelete('cascade'))
    .execute();
  await db.schema.createIndex('issue_review_requests_issue').on('issue_review_requests').columns(['issue_id']).execute();

  await withId(db, db.schema.createTable('issue_comments'))
    .addColumn('issue_id', 'integer', (c) => c.notNull().references('issues.id').onDelete('cascade'))
    .addColumn('repository_id', 'integer', (c) => c.notNull().references('repositories.id').onDelete('cascade'))
    .addColumn('author_id', 'integer', (c) => c.notNull().references('users.id'))
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('issue_comments_issue').on('issue_comments').columns(['issue_id', 'id']).execute();
  await db.schema.createIndex('issue_comments_repository').on('issue_comments').columns(['repository_id', 'id']).execute();

  await withId(db, db.schema.createTable('issue_events'))
    .addColumn('issue_id', 'integer', (c) => c.notNull().references('issues.id').onDelete('cascade'))
    .addColumn('repository_id', 'integer', (c) => c.notNull().references('repositories.id').onDelete('cascade'))
    .addColumn('actor_id', 'integer', (c) => c.notNull().references('users.id'))
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('subject_user_id', 'integer')
    .addColumn('subject_team_id', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('issue_events_repository').on('issue_events').columns(['repository_id', 'id']).execute();

  await withId(db, db.schema.createTable('activity_outbox'))
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('action', 'text')
    .addColumn('repository_id', 'integer')
    .addColumn('account_id', 'integer')
    .addColumn('actor_id', 'integer')
    .addColumn('issue_id', 'integer')
    .addColumn('comment_id', 'integer')
    .addColumn('payload', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('activity_consumptions')
    .addColumn('outbox_id', 'integer', (c) => c.notNull().references('activity_outbox.id').onDelete('cascade'))
    .addColumn('consumer', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('activity_consumptions_pk', ['consumer', 'outbox_id'])
    .execute();
}
