// Tables of updater repository access; the migration is src/db/migrations/0003_updater_access.ts.
// An access list belongs to an organization or an enterprise (`owner_type` `organization` or
// `enterprise`, `owner_id` the organization's account id or the enterprise id).

export interface UpdaterAccessSettingsTable {
  owner_type: string;
  owner_id: number;
  /** `public` or `internal`; null until set. */
  default_level: string | null;
  updated_at: string;
}

/** A repository the dependency updater may access, granted by the owner of the list. */
export interface UpdaterAccessRepositoriesTable {
  owner_type: string;
  owner_id: number;
  repository_id: number;
  created_at: string;
}

export interface UpdaterAccessTables {
  updater_access_settings: UpdaterAccessSettingsTable;
  updater_access_repositories: UpdaterAccessRepositoriesTable;
}
