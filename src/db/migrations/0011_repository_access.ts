import type { Kysely } from 'kysely';

// Repository access beyond ownership and organization membership: direct collaborators and the
// repositories a team grants (see src/core/access/repository-permissions.ts), and the archived flag.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('repository_collaborators')
    .addColumn('repository_id', 'integer', (c) => c.notNull().references('repositories.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('permission', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('repository_collaborators_pk', ['repository_id', 'user_id'])
    .execute();
  // A user's direct access (the primary key serves a repository's collaborators).
  await db.schema.createIndex('repository_collaborators_user').on('repository_collaborators').columns(['user_id', 'repository_id']).execute();

  await db.schema
    .createTable('team_repositories')
    .addColumn('team_id', 'integer', (c) => c.notNull().references('teams.id').onDelete('cascade'))
    .addColumn('repository_id', 'integer', (c) => c.notNull().references('repositories.id').onDelete('cascade'))
    .addColumn('permission', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('team_repositories_pk', ['team_id', 'repository_id'])
    .execute();
  // The teams that reach a repository; then team_members' primary key (team_id, user_id) finds the user.
  await db.schema.createIndex('team_repositories_repository').on('team_repositories').columns(['repository_id', 'team_id']).execute();
  // A user's teams (team_members' primary key starts with the team).
  await db.schema.createIndex('team_members_user').on('team_members').columns(['user_id', 'team_id']).execute();

  // The organizations of an enterprise (internal repositories are read by all their members).
  await db.schema.createIndex('organizations_enterprise').on('organizations').columns(['enterprise_id']).execute();

  await db.schema.alterTable('repositories').addColumn('archived', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}
