import type { Kysely } from 'kysely';

// Updater repository access: one access list per organization and per enterprise (see src/db/tables/updater-access.ts).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('updater_access_settings')
    .addColumn('owner_type', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'integer', (c) => c.notNull())
    .addColumn('default_level', 'text')
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('updater_access_settings_pk', ['owner_type', 'owner_id'])
    .execute();

  await db.schema
    .createTable('updater_access_repositories')
    .addColumn('owner_type', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'integer', (c) => c.notNull())
    .addColumn('repository_id', 'integer', (c) => c.notNull().references('repositories.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('updater_access_repositories_pk', ['owner_type', 'owner_id', 'repository_id'])
    .execute();
  await db.schema.createIndex('updater_access_repositories_repository').on('updater_access_repositories').columns(['repository_id']).execute();
}
