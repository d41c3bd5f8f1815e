import { sql, type Kysely } from 'kysely';
import { isPostgres, withId } from './helpers.ts';
import { DEFAULT_LABELS } from '../tables/repositories.ts';

// A repository's labels and the labels of its issues (issue 39). Additive: two new tables, and the
// platform's default labels given to every repository there is, as a new one gets them.
export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('labels'))
    .addColumn('repository_id', 'integer', (c) => c.notNull().references('repositories.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_lower', 'text', (c) => c.notNull())
    .addColumn('color', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('is_default', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('labels_repository_name', ['repository_id', 'name_lower'])
    .execute();
  await db.schema
    .createTable('issue_labels')
    .addColumn('issue_id', 'integer', (c) => c.notNull().references('issues.id').onDelete('cascade'))
    .addColumn('label_id', 'integer', (c) => c.notNull().references('labels.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('issue_labels_pk', ['issue_id', 'label_id'])
    .execute();
  await db.schema.createIndex('issue_labels_label').on('issue_labels').columns(['label_id']).execute();
  // Their changes notify every process, as every table's a kept read may depend on (0021_change_notifications).
  if (isPostgres(db)) {
    for (const table of ['labels', 'issue_labels']) {
      await sql`create trigger codehost_changes after insert or update or delete or truncate on ${sql.table(table)}
        for each statement execute function codehost_changed()`.execute(db);
    }
  }
  const now = new Date().toISOString();
  const repositories = (await db.selectFrom('repositories').select('id').execute()) as { id: number }[];
  for (const { id } of repositories) {
    await db.insertInto('labels').values(DEFAULT_LABELS.map((label) => ({
      repository_id: id, name: label.name, name_lower: label.name.toLowerCase(), color: label.color, description: label.description, is_default: 1, created_at: now, updated_at: now,
    }))).execute();
  }
}
