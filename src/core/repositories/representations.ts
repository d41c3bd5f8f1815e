// The Repository representations: minimal (the core and link fields) and full (everything the
// migration and notification responses carry). The full one is built only from the repository's
// facts (its counts), loaded in one batch by ./facts.ts: no count defaults to zero here.
import type { Selectable } from 'kysely';
import { Type, type Static } from 'typebox';
import type { LabelsTable, RepositoriesTable } from '../../db/tables/repositories.ts';
import { isoSeconds } from '../../platform/clock.ts';
import { nodeId, type Urls } from '../../platform/urls.ts';
import { SimpleUser, simpleUser } from '../accounts/representations.ts';
import type { UserRow } from '../accounts/store.ts';

export type RepositoryRow = Selectable<RepositoriesTable>;

const LINK_TEMPLATES = {
  archive_url: '/{archive_format}{/ref}',
  assignees_url: '/assignees{/user}',
  blobs_url: '/git/blobs{/sha}',
  branches_url: '/branches{/branch}',
  collaborators_url: '/collaborators{/collaborator}',
  comments_url: '/comments{/number}',
  commits_url: '/commits{/sha}',
  compare_url: '/compare/{base}...{head}',
  contents_url: '/contents/{+path}',
  contributors_url: '/contributors',
  deployments_url: '/deployments',
  downloads_url: '/downloads',
  events_url: '/events',
  forks_url: '/forks',
  git_commits_url: '/git/commits{/sha}',
  git_refs_url: '/git/refs{/sha}',
  git_tags_url: '/git/tags{/sha}',
  issue_comment_url: '/issues/comments{/number}',
  issue_events_url: '/issues/events{/number}',
  issues_url: '/issues{/number}',
  keys_url: '/keys{/key_id}',
  labels_url: '/labels{/name}',
  languages_url: '/languages',
  merges_url: '/merges',
  milestones_url: '/milestones{/number}',
  notifications_url: '/notifications{?since,all,participating}',
  pulls_url: '/pulls{/number}',
  releases_url: '/releases{/id}',
  stargazers_url: '/stargazers',
  statuses_url: '/statuses/{sha}',
  subscribers_url: '/subscribers',
  subscription_url: '/subscription',
  tags_url: '/tags',
  teams_url: '/teams',
  trees_url: '/git/trees{/sha}',
  hooks_url: '/hooks',
} as const;

type LinkField = keyof typeof LINK_TEMPLATES;
const linkFields = Object.fromEntries(Object.keys(LINK_TEMPLATES).map((k) => [k, Type.String()])) as Record<LinkField, ReturnType<typeof Type.String>>;

export const MinimalRepository = Type.Object({
  id: Type.Integer(),
  node_id: Type.String(),
  name: Type.String(),
  full_name: Type.String(),
  owner: SimpleUser,
  private: Type.Boolean(),
  html_url: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  fork: Type.Boolean(),
  url: Type.String(),
  ...linkFields,
});
export type MinimalRepository = Static<typeof MinimalRepository>;

const Status = Type.Object({ status: Type.String() });
export const SecurityAndAnalysis = Type.Object({
  advanced_security: Type.Optional(Status),
  code_security: Type.Optional(Status),
  secret_scanning: Type.Optional(Status),
  secret_scanning_push_protection: Type.Optional(Status),
  secret_scanning_non_provider_patterns: Type.Optional(Status),
  secret_scanning_ai_detection: Type.Optional(Status),
  secret_scanning_validity_checks: Type.Optional(Status),
  updater_security_updates: Type.Optional(Status),
});

const NullableString = Type.Union([Type.String(), Type.Null()]);

export const FullRepository = Type.Object({
  ...MinimalRepository.properties,
  git_url: Type.String(),
  ssh_url: Type.String(),
  clone_url: Type.String(),
  mirror_url: NullableString,
  svn_url: Type.String(),
  homepage: NullableString,
  language: NullableString,
  forks_count: Type.Integer(),
  stargazers_count: Type.Integer(),
  watchers_count: Type.Integer(),
  size: Type.Integer(),
  open_issues_count: Type.Integer(),
  subscribers_count: Type.Integer(),
  network_count: Type.Integer(),
  forks: Type.Integer(),
  open_issues: Type.Integer(),
  watchers: Type.Integer(),
  default_branch: Type.String(),
  is_template: Type.Boolean(),
  has_issues: Type.Boolean(),
  has_projects: Type.Boolean(),
  has_wiki: Type.Boolean(),
  has_pages: Type.Boolean(),
  has_downloads: Type.Boolean(),
  has_discussions: Type.Boolean(),
  archived: Type.Boolean(),
  disabled: Type.Boolean(),
  allow_rebase_merge: Type.Boolean(),
  allow_squash_merge: Type.Boolean(),
  allow_auto_merge: Type.Boolean(),
  delete_branch_on_merge: Type.Boolean(),
  allow_merge_commit: Type.Boolean(),
  topics: Type.Array(Type.String()),
  visibility: Type.String(),
  pushed_at: NullableString,
  created_at: Type.String(),
  updated_at: Type.String(),
  permissions: Type.Optional(Type.Object({ admin: Type.Boolean(), push: Type.Boolean(), pull: Type.Boolean() })),
  template_repository: Type.Null(),
  temp_clone_token: Type.Optional(Type.String()),
  license: Type.Null(),
  /** Only for those who may read the repository's code security configuration (`fullRepository`'s `showSecurity`). */
  security_and_analysis: Type.Optional(Type.Union([SecurityAndAnalysis, Type.Null()])),
});
export type FullRepository = Static<typeof FullRepository>;

export type RepositoryOwner = Pick<UserRow, 'id' | 'login' | 'type' | 'site_admin'>;

export function minimalRepository(urls: Urls, repo: RepositoryRow, owner: RepositoryOwner): MinimalRepository {
  const url = `${urls.api}/repos/${owner.login}/${repo.name}`;
  const links = Object.fromEntries(Object.entries(LINK_TEMPLATES).map(([k, suffix]) => [k, url + suffix])) as Record<LinkField, string>;
  return {
    id: repo.id,
    node_id: nodeId('Repository', repo.id),
    name: repo.name,
    full_name: `${owner.login}/${repo.name}`,
    owner: simpleUser(urls, owner),
    private: repo.visibility !== 'public',
    html_url: `${urls.web}/${owner.login}/${repo.name}`,
    description: repo.description,
    fork: false,
    url,
    ...links,
  };
}

/** What the full representation counts: see ./facts.ts. */
export interface RepositoryFacts {
  /** Open issues and pull requests. */
  open_issues: number;
  /** Users watching the repository. */
  subscribers: number;
  stargazers: number;
  forks: number;
}

export function fullRepository(
  urls: Urls,
  repo: RepositoryRow,
  owner: RepositoryOwner,
  facts: RepositoryFacts,
  permissions?: { admin: boolean; push: boolean; pull: boolean },
  /** The viewer may read the repository's code security configuration: the platform then shows `security_and_analysis`. */
  showSecurity = false,
): FullRepository {
  const minimal = minimalRepository(urls, repo, owner);
  const host = new URL(urls.web).host;
  return {
    ...minimal,
    git_url: `git://${host}/${owner.login}/${repo.name}.git`,
    ssh_url: `git@${host}:${owner.login}/${repo.name}.git`,
    clone_url: `${urls.web}/${owner.login}/${repo.name}.git`,
    mirror_url: null,
    svn_url: `${urls.web}/${owner.login}/${repo.name}`,
    homepage: null,
    language: repo.language,
    forks_count: facts.forks,
    // The platform's `watchers` fields count stars (its watchers are `subscribers`).
    stargazers_count: facts.stargazers,
    watchers_count: facts.stargazers,
    size: 0,
    open_issues_count: facts.open_issues,
    subscribers_count: facts.subscribers,
    network_count: facts.forks,
    forks: facts.forks,
    open_issues: facts.open_issues,
    watchers: facts.stargazers,
    default_branch: repo.default_branch,
    is_template: false,
    has_issues: true,
    has_projects: true,
    has_wiki: true,
    has_pages: false,
    has_downloads: true,
    has_discussions: false,
    archived: Boolean(repo.archived),
    disabled: false,
    allow_rebase_merge: true,
    allow_squash_merge: true,
    allow_auto_merge: false,
    delete_branch_on_merge: false,
    allow_merge_commit: true,
    topics: JSON.parse(repo.topics) as string[],
    visibility: repo.visibility,
    // A repository never pushed to shows its creation, as on the platform (its schema needs a time).
    pushed_at: isoSeconds(repo.pushed_at ?? repo.created_at),
    created_at: isoSeconds(repo.created_at),
    updated_at: isoSeconds(repo.updated_at),
    ...(permissions ? { permissions } : {}),
    template_repository: null,
    license: null,
    ...(showSecurity ? { security_and_analysis: securityAndAnalysis(repo) } : {}),
  };
}

export function securityAndAnalysis(repo: Pick<RepositoryRow, 'security_and_analysis'>): Static<typeof SecurityAndAnalysis> {
  const stored = JSON.parse(repo.security_and_analysis) as Record<string, string>;
  const status = (key: string) => ({ status: stored[key] === 'enabled' ? 'enabled' : 'disabled' });
  return {
    advanced_security: status('advanced_security'),
    secret_scanning: status('secret_scanning'),
    secret_scanning_push_protection: status('secret_scanning_push_protection'),
    secret_scanning_non_provider_patterns: status('secret_scanning_non_provider_patterns'),
  };
}

// --- Repository subscription (GET /repos/{owner}/{repo}/subscription) ------------------------------

export const RepositorySubscription = Type.Object({
  subscribed: Type.Boolean(),
  ignored: Type.Boolean(),
  reason: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  url: Type.String(),
  repository_url: Type.String(),
});
export type RepositorySubscription = Static<typeof RepositorySubscription>;

/** A user's watch state of a repository, as the platform shows it (codehost records no reason). */
export function repositorySubscription(
  urls: Urls,
  repository: Pick<RepositoryRow, 'name'> & { owner: Pick<UserRow, 'login'> },
  row: { subscribed: number | boolean; ignored: number | boolean; created_at: string },
): RepositorySubscription {
  const repositoryUrl = `${urls.api}/repos/${repository.owner.login}/${repository.name}`;
  return {
    subscribed: Boolean(row.subscribed),
    ignored: Boolean(row.ignored),
    reason: null,
    created_at: isoSeconds(row.created_at),
    url: `${repositoryUrl}/subscription`,
    repository_url: repositoryUrl,
  };
}

/** A label as the platform shows it, in a repository's list and in an issue's `labels`. */
export const Label = Type.Object({
  id: Type.Integer(),
  node_id: Type.String(),
  url: Type.String(),
  name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  color: Type.String(),
  default: Type.Boolean(),
});
export type Label = Static<typeof Label>;

/** `url` names the label by its name, encoded (`good%20first%20issue`). */
export function labelRepresentation(
  urls: Urls,
  owner: Pick<RepositoryOwner, 'login'>,
  repository: Pick<RepositoryRow, 'name'>,
  label: Pick<LabelsTable, 'name' | 'color' | 'description'> & { id: number; is_default: number },
): Label {
  return {
    id: label.id,
    node_id: nodeId('Label', label.id),
    url: `${urls.api}/repos/${owner.login}/${repository.name}/labels/${encodeURIComponent(label.name)}`,
    name: label.name,
    description: label.description,
    color: label.color,
    default: Boolean(label.is_default),
  };
}


/** The five levels of a repository permission, as a collaborator's `permissions` shows them. */
const CollaboratorLevels = Type.Object({ pull: Type.Boolean(), triage: Type.Boolean(), push: Type.Boolean(), maintain: Type.Boolean(), admin: Type.Boolean() });

/** A user as a collaborator of a repository: the simple user, their permission's levels and its role name. */
export const Collaborator = Type.Object({ ...SimpleUser.properties, permissions: CollaboratorLevels, role_name: Type.String() });

/**
 * GET /repos/{owner}/{repo}/collaborators/{username}/permission: the legacy `permission` (`admin`,
 * `write`, `read`, `none`), the role's name and the user as a collaborator.
 */
export const CollaboratorPermission = Type.Object({
  permission: Type.Union([Type.Literal('admin'), Type.Literal('write'), Type.Literal('read'), Type.Literal('none')]),
  role_name: Type.String({ description: '`admin`, `maintain`, `write`, `triage`, `read` or `none`' }),
  user: Collaborator,
});
export type CollaboratorPermission = Static<typeof CollaboratorPermission>;
