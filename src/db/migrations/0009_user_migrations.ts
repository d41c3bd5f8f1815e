import type { Kysely } from 'kysely';
import { withId } from './helpers.ts';

// The tables of user migrations (see src/db/tables/user-migrations.ts).
export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('user_migrations'))
    .addColumn('guid', 'text', (c) => c.notNull().unique())
    .addColumn('owner_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('lock_repositories', 'integer', (c) => c.notNull())
    .addColumn('exclude_metadata', 'integer', (c) => c.notNull())
    .addColumn('exclude_git_data', 'integer', (c) => c.notNull())
    .addColumn('exclude_attachments', 'integer', (c) => c.notNull())
    .addColumn('exclude_releases', 'integer', (c) => c.notNull())
    .addColumn('exclude_owner_projects', 'integer', (c) => c.notNull())
    .addColumn('org_metadata_only', 'integer', (c) => c.notNull())
    .addColumn('export_run', 'text')
    .addColumn('archive_key', 'text')
    .addColumn('archive_size', 'bigint')
    .addColumn('records_exported', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('failure', 'text')
    .addColumn('exported_at', 'text')
    .addColumn('archive_deleted_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('user_migrations_owner').on('user_migrations').columns(['owner_id', 'id']).execute();
  // The expiry sweep looks for downloadable archives by export time.
  await db.schema.createIndex('user_migrations_exported').on('user_migrations').columns(['exported_at']).execute();

  await db.schema
    .createTable('user_migration_repositories')
    .addColumn('migration_id', 'integer', (c) => c.notNull().references('user_migrations.id').onDelete('cascade'))
    .addColumn('repository_id', 'integer', (c) => c.notNull().references('repositories.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('user_migration_repositories_pk', ['migration_id', 'repository_id'])
    .execute();
}
