import type { Kysely } from 'kysely';
import { withId } from './helpers.ts';

// Issue types: an organization's types, and the repositories that disable one (see src/db/tables/issue-types.ts).
export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('issue_types'))
    .addColumn('org_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_lower', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('color', 'text')
    .addColumn('is_enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('issue_types_org_name', ['org_id', 'name_lower'])
    .execute();

  await db.schema
    .createTable('issue_type_disabled_repositories')
    .addColumn('issue_type_id', 'integer', (c) => c.notNull().references('issue_types.id').onDelete('cascade'))
    .addColumn('repository_id', 'integer', (c) => c.notNull().references('repositories.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('issue_type_disabled_repositories_pk', ['issue_type_id', 'repository_id'])
    .execute();
  await db.schema.createIndex('issue_type_disabled_repositories_repository').on('issue_type_disabled_repositories').columns(['repository_id']).execute();
}
