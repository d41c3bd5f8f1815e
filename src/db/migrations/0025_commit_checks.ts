import { sql, type Kysely } from 'kysely';
import { isPostgres, withId } from './helpers.ts';

// Commit statuses and check runs on the commits of a repository's git data (issue 39). Additive:
// three new tables. A check run belongs to its app's check suite for its commit (one per app and
// head commit, made with the first run, as the platform makes it).
export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('commit_statuses'))
    .addColumn('repository_id', 'integer', (c) => c.notNull().references('repositories.id').onDelete('cascade'))
    .addColumn('sha', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('context', 'text', (c) => c.notNull())
    .addColumn('target_url', 'text')
    .addColumn('description', 'text')
    .addColumn('creator_id', 'integer', (c) => c.notNull().references('users.id'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('commit_statuses_commit').on('commit_statuses').columns(['repository_id', 'sha', 'id']).execute();
  await db.schema.createIndex('commit_statuses_creator').on('commit_statuses').columns(['creator_id']).execute();
  await withId(db, db.schema.createTable('check_suites'))
    .addColumn('repository_id', 'integer', (c) => c.notNull().references('repositories.id').onDelete('cascade'))
    .addColumn('app_id', 'integer', (c) => c.notNull().references('apps.id').onDelete('cascade'))
    .addColumn('head_sha', 'text', (c) => c.notNull())
    .addColumn('head_branch', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('check_suites_app_commit', ['repository_id', 'app_id', 'head_sha'])
    .execute();
  await db.schema.createIndex('check_suites_app').on('check_suites').columns(['app_id']).execute();
  await withId(db, db.schema.createTable('check_runs'))
    .addColumn('check_suite_id', 'integer', (c) => c.notNull().references('check_suites.id').onDelete('cascade'))
    .addColumn('repository_id', 'integer', (c) => c.notNull().references('repositories.id').onDelete('cascade'))
    .addColumn('head_sha', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('conclusion', 'text')
    .addColumn('external_id', 'text')
    .addColumn('details_url', 'text')
    .addColumn('started_at', 'text')
    .addColumn('completed_at', 'text')
    .addColumn('output_title', 'text')
    .addColumn('output_summary', 'text')
    .addColumn('output_text', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('check_runs_commit').on('check_runs').columns(['repository_id', 'head_sha', 'id']).execute();
  await db.schema.createIndex('check_runs_suite').on('check_runs').columns(['check_suite_id']).execute();
  // Their changes notify every process, as every table's a kept read may depend on (0021_change_notifications).
  if (isPostgres(db)) {
    for (const table of ['commit_statuses', 'check_suites', 'check_runs']) {
      await sql`create trigger codehost_changes after insert or update or delete or truncate on ${sql.table(table)}
        for each statement execute function codehost_changed()`.execute(db);
    }
  }
}
