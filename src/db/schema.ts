// Table types. Conventions on both databases: integer ids, booleans as 0/1 integers, timestamps as
// ISO-8601 text with milliseconds (sortable), JSON as text. Each area declares its own tables in
// its `tables.ts`; this file joins them into the one Database type Kysely sees.
import type { Generated } from 'kysely';
import type { ActivityTables } from '../activity/tables.ts';
import type { IssueTables } from '../core/issues/tables.ts';
import type { AppWebhookTables } from '../areas/app-webhooks/tables.ts';
import type { AssistantMetricsTables } from '../areas/assistant-metrics/tables.ts';
import type { CodeSecurityTables } from '../areas/code-security/tables.ts';
import type { IssueTypeTables } from '../areas/issue-types/tables.ts';
import type { NotificationTables } from '../areas/notifications/tables.ts';
import type { UpdaterAccessTables } from '../areas/updater-access/tables.ts';
import type { UserMigrationTables } from '../areas/user-migrations/tables.ts';

export type Bool = number;

export interface UsersTable {
  id: Generated<number>;
  login: string;
  login_lower: string;
  /** `User`, `Bot` or `Organization`: users and organizations share one id and login space. */
  type: string;
  name: string | null;
  email: string | null;
  site_admin: Bool;
  created_at: string;
  updated_at: string;
  /** Set while the user is suspended: every credential of theirs is refused (403). */
  suspended_at: string | null;
  suspended_reason: string | null;
}

export interface EnterprisesTable {
  id: Generated<number>;
  slug: string;
  slug_lower: string;
  name: string;
  created_at: string;
  updated_at: string;
}

export interface EnterpriseMembersTable {
  enterprise_id: number;
  user_id: number;
  /** `owner` (owners are administrators too) */
  role: string;
}

/** Organization-only facts; the organization's account row lives in `users`. */
export interface OrganizationsTable {
  id: number;
  enterprise_id: number | null;
}

export interface OrgMembershipsTable {
  org_id: number;
  user_id: number;
  /** `owner`, `member`, `security_manager` or `billing_manager`; a user may hold several. */
  role: string;
}

export interface TeamsTable {
  id: Generated<number>;
  org_id: number;
  slug: string;
  name: string;
  created_at: string;
  updated_at: string;
}

export interface TeamMembersTable {
  team_id: number;
  user_id: number;
}

/** A deleted repository's git data path (`git/{id}.git`) to remove, recorded in the deleting transaction. */
export interface GitDataRemovalsTable {
  path: string;
  recorded_at: string;
}

export interface RepositoriesTable {
  id: Generated<number>;
  owner_id: number;
  name: string;
  name_lower: string;
  description: string | null;
  /** `public`, `private` or `internal` */
  visibility: string;
  language: string | null;
  topics: string;
  default_branch: string;
  /** Path of the bare git data under the data directory, when the repository has any. */
  git_path: string | null;
  /** The user migration that locked the repository; a locked repository refuses writes. */
  locked_by_migration_id: number | null;
  /** JSON: the effective security_and_analysis statuses. */
  security_and_analysis: string;
  created_at: string;
  updated_at: string;
  pushed_at: string | null;
  /** Archived: read-only, shown as `archived`. */
  archived: Generated<Bool>;
}

/**
 * A repository's version: moved forward, in the writing transaction, by database triggers on every
 * write its full representation is made of (its row, its owner's login/type/site_admin, its issues'
 * states, its watchers); migration 0014_versions.
 */
/** A renamed or transferred repository's former names (lower case) → its id. */
export interface RepositoryFormerNamesTable {
  owner_login_lower: string;
  name_lower: string;
  repository_id: number;
}

export interface RepositoryVersionsTable {
  repository_id: number;
  version: number;
}

/**
 * Repository permissions, weakest first: `pull` and `triage` read, `push` and `maintain` write,
 * `admin` administers (src/core/repositories/permissions.ts).
 */
export type RepositoryPermission = 'pull' | 'triage' | 'push' | 'maintain' | 'admin';

/** A user's direct access to one repository. */
export interface RepositoryCollaboratorsTable {
  repository_id: number;
  user_id: number;
  /** A RepositoryPermission. */
  permission: string;
  created_at: string;
}

/** A team's access to one repository of its organization; its members get it. */
export interface TeamRepositoriesTable {
  team_id: number;
  repository_id: number;
  /** A RepositoryPermission. */
  permission: string;
}

/** A user's watch state of a repository. */
export interface RepositorySubscriptionsTable {
  repository_id: number;
  user_id: number;
  subscribed: Bool;
  ignored: Bool;
  created_at: string;
}

export interface AppsTable {
  id: Generated<number>;
  slug: string;
  name: string;
  owner_id: number | null;
  client_id: string;
  /** SHA-256 of the client secret, base64. The secret itself is shown once at creation. */
  client_secret_hash: string;
  /** The public half of the app's RS256 key pair; the private key is shown once and never stored. */
  public_key_pem: string;
  permissions: string;
  events: string;
  created_at: string;
  updated_at: string;
}

export interface InstallationsTable {
  id: Generated<number>;
  app_id: number;
  account_id: number;
  /** `all` or `selected` */
  repository_selection: string;
  permissions: string;
  created_at: string;
  updated_at: string;
  /** Set while suspended: its tokens are refused (403), none is minted, nothing is delivered for it. */
  suspended_at: string | null;
}

export interface InstallationRepositoriesTable {
  installation_id: number;
  repository_id: number;
}

/** A user's grant to an app: deleting it revokes every token of that app for that user. */
export interface AppAuthorizationsTable {
  id: Generated<number>;
  app_id: number;
  user_id: number;
  scopes: string;
  note: string | null;
  note_url: string | null;
  created_at: string;
  updated_at: string;
}

export interface TokensTable {
  id: Generated<number>;
  /** `classic`, `fine_grained`, `oauth`, `app_user` or `installation` */
  kind: string;
  /** base64 SHA-256 of the token: the only form in which a token is stored. */
  hashed_token: string;
  token_last_eight: string;
  user_id: number | null;
  app_id: number | null;
  installation_id: number | null;
  authorization_id: number | null;
  scopes: string;
  permissions: string;
  /** Fine-grained personal tokens: the account whose resources the token reaches. */
  resource_owner_id: number | null;
  /** `all` or `selected` (with `repository_ids`), for fine-grained and installation tokens. */
  repository_selection: string;
  repository_ids: string;
  note: string | null;
  note_url: string | null;
  fingerprint: string | null;
  expires_at: string | null;
  created_at: string;
  updated_at: string;
}

/** The durable job table the SQLite queue polls (PostgreSQL uses pg-boss's own tables). */
export interface JobsTable {
  id: Generated<number>;
  queue: string;
  data: string;
  /** Deduplicates sends: a second job with the same queue and key is not created. */
  singleton_key: string | null;
  run_after: string;
  /** Set while a worker holds the job; a job whose lease ran out (its worker died) runs again. */
  locked_until: string | null;
  attempts: number;
  retry_limit: number;
  retry_delay_seconds: number;
  /** 1: the retry delay doubles after each failure. */
  retry_backoff: number;
  last_error: string | null;
  created_at: string;
  /** SendOptions.group: a queue worked with a group limit runs at most that many jobs of a group at once. */
  group_key: string | null;
}

/** Request counters of the rate limits, shared by every process. Times in epoch seconds. */
export interface RateLimitsTable {
  key: string;
  window_start: number;
  used: number;
}

export interface SettingsTable {
  key: string;
  value: string;
}

export interface CoreTables {
  users: UsersTable;
  enterprises: EnterprisesTable;
  enterprise_members: EnterpriseMembersTable;
  organizations: OrganizationsTable;
  org_memberships: OrgMembershipsTable;
  teams: TeamsTable;
  team_members: TeamMembersTable;
  repositories: RepositoriesTable;
  git_data_removals: GitDataRemovalsTable;
  repository_versions: RepositoryVersionsTable;
  repository_former_names: RepositoryFormerNamesTable;
  repository_subscriptions: RepositorySubscriptionsTable;
  repository_collaborators: RepositoryCollaboratorsTable;
  team_repositories: TeamRepositoriesTable;
  apps: AppsTable;
  installations: InstallationsTable;
  installation_repositories: InstallationRepositoriesTable;
  app_authorizations: AppAuthorizationsTable;
  tokens: TokensTable;
  jobs: JobsTable;
  rate_limits: RateLimitsTable;
  settings: SettingsTable;
}

export interface Database
  extends CoreTables,
    ActivityTables,
    IssueTables,
    UpdaterAccessTables,
    CodeSecurityTables,
    AssistantMetricsTables,
    IssueTypeTables,
    NotificationTables,
    AppWebhookTables,
    UserMigrationTables {}
