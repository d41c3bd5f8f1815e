import type { Kysely } from 'kysely';

// A renamed or transferred repository's former names (owner login + name, lower case) → its id, so
// the old /repos/{owner}/{repo} redirects to /repositories/{id}; a row goes when a repository takes
// that name again, and with its repository.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('repository_former_names')
    .addColumn('owner_login_lower', 'text', (c) => c.notNull())
    .addColumn('name_lower', 'text', (c) => c.notNull())
    .addColumn('repository_id', 'integer', (c) => c.notNull().references('repositories.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('repository_former_names_pk', ['owner_login_lower', 'name_lower'])
    .execute();
  await db.schema.createIndex('repository_former_names_repository').on('repository_former_names').columns(['repository_id']).execute();
}
