// Tables of user migrations; the migration that creates them is src/db/migrations/0009_user_migrations.ts.
import type { Generated } from 'kysely';
import type { Bool } from './columns.ts';

export interface UserMigrationsTable {
  id: Generated<number>;
  guid: string;
  owner_id: number;
  /** `pending`, `exporting`, `exported` or `failed` */
  state: string;
  lock_repositories: Bool;
  exclude_metadata: Bool;
  exclude_git_data: Bool;
  exclude_attachments: Bool;
  exclude_releases: Bool;
  exclude_owner_projects: Bool;
  org_metadata_only: Bool;
  /**
   * The export run that may finish the migration. Each run (a retry after a dead process included)
   * takes a new one, so a run that lost its job to another worker cannot overwrite the outcome.
   */
  export_run: string | null;
  /** The archive's key in archive storage while it is downloadable; null before export and once deleted. */
  archive_key: string | null;
  archive_size: number | null;
  /** Records written so far by the current run (progress for operators). */
  records_exported: number;
  /** Why the export failed, for operators; never shown on the public API. */
  failure: string | null;
  exported_at: string | null;
  archive_deleted_at: string | null;
  created_at: string;
  updated_at: string;
}

/** The repositories a migration exports, in the order the request named them. */
export interface UserMigrationRepositoriesTable {
  migration_id: number;
  repository_id: number;
  position: number;
}

export interface UserMigrationTables {
  user_migrations: UserMigrationsTable;
  user_migration_repositories: UserMigrationRepositoriesTable;
}
