import { sql, type Kysely } from 'kysely';
import { isPostgres, withId } from './helpers.ts';

// Reactions to issues (and pull requests) and to issue comments (issue 39). Additive: one new table.
// A reaction is on an issue or on a comment (exactly one of the two), and goes with it; a user
// reacts to a subject once with each content. A deleted user's reactions are ghost's
// (src/core/accounts/store.ts `reassignAuthorship`), so `user_id` does not cascade.
export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('reactions'))
    .addColumn('issue_id', 'integer', (c) => c.references('issues.id').onDelete('cascade'))
    .addColumn('comment_id', 'integer', (c) => c.references('issue_comments.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addCheckConstraint('reactions_one_subject', sql`(issue_id is null) <> (comment_id is null)`)
    // A null subject column never conflicts (nulls are distinct), so each constraint holds for its subject's rows only.
    .addUniqueConstraint('reactions_issue_user_content', ['issue_id', 'user_id', 'content'])
    .addUniqueConstraint('reactions_comment_user_content', ['comment_id', 'user_id', 'content'])
    .execute();
  // A deleted user's reactions are found by user (reassigned to ghost).
  await db.schema.createIndex('reactions_user').on('reactions').columns(['user_id']).execute();
  // Its changes notify every process, as every table's a kept read may depend on (0021_change_notifications).
  if (isPostgres(db)) {
    await sql`create trigger codehost_changes after insert or update or delete or truncate on reactions
      for each statement execute function codehost_changed()`.execute(db);
  }
}
