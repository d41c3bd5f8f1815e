// Tables of the repositories: their rows, versions, former names, watchers and access grants.
import type { Generated } from 'kysely';
import type { Bool } from './columns.ts';

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

/** A renamed or transferred repository's former names (lower case) → its id. */
export interface RepositoryFormerNamesTable {
  owner_login_lower: string;
  name_lower: string;
  repository_id: number;
}

/**
 * A repository's version: moved forward, in the writing transaction, by database triggers on every
 * write its full representation is made of (its row, its owner's login/type/site_admin, its issues'
 * states, its watchers); migration 0014_versions.
 */
export interface RepositoryVersionsTable {
  repository_id: number;
  version: number;
}

/**
 * Repository permissions, weakest first: `pull` and `triage` read, `push` and `maintain` write,
 * `admin` administers (src/core/access/repository-permissions.ts).
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

/** A repository's label (src/db/migrations/0023_labels.ts); `name_lower` is unique in the repository. */
export interface LabelsTable {
  id: Generated<number>;
  repository_id: number;
  name: string;
  name_lower: string;
  /** Six hexadecimal digits, lowercase, without `#`. */
  color: string;
  description: string | null;
  /** One of the platform's default labels, given to the repository when it was made. */
  is_default: Bool;
  created_at: string;
  updated_at: string;
}

/** The labels the platform gives every new repository. */
export const DEFAULT_LABELS: readonly { name: string; color: string; description: string }[] = [
  { name: 'bug', color: 'd73a4a', description: 'Something isn\'t working' },
  { name: 'documentation', color: '0075ca', description: 'Improvements or additions to documentation' },
  { name: 'duplicate', color: 'cfd3d7', description: 'This issue or pull request already exists' },
  { name: 'enhancement', color: 'a2eeef', description: 'New feature or request' },
  { name: 'good first issue', color: '7057ff', description: 'Good for newcomers' },
  { name: 'help wanted', color: '008672', description: 'Extra attention is needed' },
  { name: 'invalid', color: 'e4e669', description: 'This doesn\'t seem right' },
  { name: 'question', color: 'd876e3', description: 'Further information is requested' },
  { name: 'wontfix', color: 'ffffff', description: 'This will not be worked on' },
];

export interface RepositoryTables {
  repositories: RepositoriesTable;
  labels: LabelsTable;
  git_data_removals: GitDataRemovalsTable;
  repository_versions: RepositoryVersionsTable;
  repository_former_names: RepositoryFormerNamesTable;
  repository_subscriptions: RepositorySubscriptionsTable;
  repository_collaborators: RepositoryCollaboratorsTable;
  team_repositories: TeamRepositoriesTable;
}
