import { sql, type Kysely } from 'kysely';
import { isPostgres, withId } from './helpers.ts';

// Reviews of pull requests (issue 39). Additive: one new table. A review belongs to its pull request
// (an issue row with `is_pull_request`) and goes with it; codehost keeps no review comments on lines.
// `state` is the platform's (APPROVED, CHANGES_REQUESTED, COMMENTED, PENDING, DISMISSED);
// `submitted_at` is null while it is PENDING; `commit_id` the head commit it reviewed (null for a
// repository without git data). A deleted user's reviews are ghost's (src/core/accounts/store.ts
// `reassignAuthorship`), so `user_id` does not cascade.
export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('pull_request_reviews'))
    .addColumn('issue_id', 'integer', (c) => c.notNull().references('issues.id').onDelete('cascade'))
    .addColumn('repository_id', 'integer', (c) => c.notNull().references('repositories.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('commit_id', 'text')
    .addColumn('submitted_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('pull_request_reviews_issue').on('pull_request_reviews').columns(['issue_id', 'id']).execute();
  // A deleted user's reviews are found by user (reassigned to ghost).
  await db.schema.createIndex('pull_request_reviews_user').on('pull_request_reviews').columns(['user_id']).execute();
  // Its changes notify every process, as every table's a kept read may depend on (0021_change_notifications).
  if (isPostgres(db)) {
    await sql`create trigger codehost_changes after insert or update or delete or truncate on pull_request_reviews
      for each statement execute function codehost_changed()`.execute(db);
  }
}
