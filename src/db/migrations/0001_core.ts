import type { Kysely } from 'kysely';
import { withId } from './helpers.ts';

// The core tables, in this order: the accounts', the repositories', the apps' and tokens', then the
// jobs, rate limit and settings tables.
export async function up(db: Kysely<any>): Promise<void> {
  await accountTables(db);
  await repositoryTables(db);
  await appTables(db);
  await platformTables(db);
}

async function accountTables(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('users'))
    .addColumn('login', 'text', (c) => c.notNull())
    .addColumn('login_lower', 'text', (c) => c.notNull().unique())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('email', 'text')
    .addColumn('site_admin', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await withId(db, db.schema.createTable('enterprises'))
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('slug_lower', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('enterprise_members')
    .addColumn('enterprise_id', 'integer', (c) => c.notNull().references('enterprises.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('role', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('enterprise_members_pk', ['enterprise_id', 'user_id', 'role'])
    .execute();

  await db.schema
    .createTable('organizations')
    .addColumn('id', 'integer', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('enterprise_id', 'integer', (c) => c.references('enterprises.id').onDelete('set null'))
    .execute();

  await db.schema
    .createTable('org_memberships')
    .addColumn('org_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('role', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('org_memberships_pk', ['org_id', 'user_id', 'role'])
    .execute();
  await db.schema.createIndex('org_memberships_user').on('org_memberships').columns(['user_id']).execute();

  await withId(db, db.schema.createTable('teams'))
    .addColumn('org_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('teams_org_slug', ['org_id', 'slug'])
    .execute();

  await db.schema
    .createTable('team_members')
    .addColumn('team_id', 'integer', (c) => c.notNull().references('teams.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('team_members_pk', ['team_id', 'user_id'])
    .execute();
}

async function repositoryTables(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('repositories'))
    .addColumn('owner_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_lower', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('visibility', 'text', (c) => c.notNull())
    .addColumn('language', 'text')
    .addColumn('topics', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('default_branch', 'text', (c) => c.notNull().defaultTo('main'))
    .addColumn('git_path', 'text')
    .addColumn('locked_by_migration_id', 'integer')
    .addColumn('security_and_analysis', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('pushed_at', 'text')
    .addUniqueConstraint('repositories_owner_name', ['owner_id', 'name_lower'])
    .execute();

  await db.schema
    .createTable('repository_subscriptions')
    .addColumn('repository_id', 'integer', (c) => c.notNull().references('repositories.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('subscribed', 'integer', (c) => c.notNull())
    .addColumn('ignored', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('repository_subscriptions_pk', ['repository_id', 'user_id'])
    .execute();
}

async function appTables(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('apps'))
    .addColumn('slug', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('client_id', 'text', (c) => c.notNull().unique())
    .addColumn('client_secret_hash', 'text', (c) => c.notNull())
    .addColumn('public_key_pem', 'text', (c) => c.notNull())
    .addColumn('permissions', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('events', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await withId(db, db.schema.createTable('installations'))
    .addColumn('app_id', 'integer', (c) => c.notNull().references('apps.id').onDelete('cascade'))
    .addColumn('account_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('repository_selection', 'text', (c) => c.notNull())
    .addColumn('permissions', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('installations_app_account', ['app_id', 'account_id'])
    .execute();
  await db.schema.createIndex('installations_account').on('installations').columns(['account_id']).execute();

  await db.schema
    .createTable('installation_repositories')
    .addColumn('installation_id', 'integer', (c) => c.notNull().references('installations.id').onDelete('cascade'))
    .addColumn('repository_id', 'integer', (c) => c.notNull().references('repositories.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('installation_repositories_pk', ['installation_id', 'repository_id'])
    .execute();

  await withId(db, db.schema.createTable('app_authorizations'))
    .addColumn('app_id', 'integer', (c) => c.notNull().references('apps.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('scopes', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('note', 'text')
    .addColumn('note_url', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('app_authorizations_app_user', ['app_id', 'user_id'])
    .execute();

  await withId(db, db.schema.createTable('tokens'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('hashed_token', 'text', (c) => c.notNull().unique())
    .addColumn('token_last_eight', 'text', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('app_id', 'integer', (c) => c.references('apps.id').onDelete('cascade'))
    .addColumn('installation_id', 'integer', (c) => c.references('installations.id').onDelete('cascade'))
    .addColumn('authorization_id', 'integer', (c) => c.references('app_authorizations.id').onDelete('cascade'))
    .addColumn('scopes', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('permissions', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('resource_owner_id', 'integer', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('repository_selection', 'text', (c) => c.notNull().defaultTo('all'))
    .addColumn('repository_ids', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('note', 'text')
    .addColumn('note_url', 'text')
    .addColumn('fingerprint', 'text')
    .addColumn('expires_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('tokens_authorization').on('tokens').columns(['authorization_id']).execute();
  await db.schema.createIndex('tokens_user').on('tokens').columns(['user_id']).execute();
}

async function platformTables(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('jobs'))
    .addColumn('queue', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('singleton_key', 'text')
    .addColumn('run_after', 'text', (c) => c.notNull())
    .addColumn('locked_until', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('retry_limit', 'integer', (c) => c.notNull().defaultTo(2))
    .addColumn('retry_delay_seconds', 'integer', (c) => c.notNull().defaultTo(5))
    .addColumn('retry_backoff', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('jobs_queue_singleton', ['queue', 'singleton_key'])
    .execute();
  await db.schema.createIndex('jobs_ready').on('jobs').columns(['queue', 'run_after']).execute();

  await db.schema
    .createTable('rate_limits')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('window_start', 'integer', (c) => c.notNull())
    .addColumn('used', 'integer', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('settings')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();
}
