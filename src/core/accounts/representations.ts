// Account representations: the simple user, the user with profile fields, the organization.
import { Type, type Static } from 'typebox';
import { isoSeconds } from '../../platform/clock.ts';
import { nodeId, type Urls } from '../../platform/urls.ts';
import type { EnterpriseRow, UserRow } from './store.ts';
import type { OrgRole } from '../access/index.ts';

// --- User ----------------------------------------------------------------------------------------

export const SimpleUser = Type.Object({
  login: Type.String(),
  id: Type.Integer(),
  node_id: Type.String(),
  avatar_url: Type.String(),
  gravatar_id: Type.String(),
  url: Type.String(),
  html_url: Type.String(),
  followers_url: Type.String(),
  following_url: Type.String(),
  gists_url: Type.String(),
  starred_url: Type.String(),
  subscriptions_url: Type.String(),
  organizations_url: Type.String(),
  repos_url: Type.String(),
  events_url: Type.String(),
  received_events_url: Type.String(),
  type: Type.String(),
  site_admin: Type.Boolean(),
  user_view_type: Type.Optional(Type.String()),
  name: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  email: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  starred_at: Type.Optional(Type.String()),
});
export type SimpleUser = Static<typeof SimpleUser>;

export function simpleUser(urls: Urls, user: Pick<UserRow, 'id' | 'login' | 'type' | 'site_admin'>): SimpleUser {
  // An app's bot account (`<slug>[bot]`): its brackets encoded in its URLs, its page the app's, as on the platform.
  const bot = user.type === 'Bot' && user.login.endsWith('[bot]');
  const base = `${urls.api}/users/${encodeURIComponent(user.login)}`;
  return {
    login: user.login,
    id: user.id,
    node_id: nodeId(user.type === 'Organization' ? 'Organization' : bot ? 'Bot' : 'User', user.id),
    avatar_url: `${urls.web}/avatars/u/${user.id}?v=4`,
    gravatar_id: '',
    url: base,
    html_url: bot ? `${urls.web}/apps/${user.login.slice(0, -'[bot]'.length)}` : `${urls.web}/${user.login}`,
    followers_url: `${base}/followers`,
    following_url: `${base}/following{/other_user}`,
    gists_url: `${base}/gists{/gist_id}`,
    starred_url: `${base}/starred{/owner}{/repo}`,
    subscriptions_url: `${base}/subscriptions`,
    organizations_url: `${base}/orgs`,
    repos_url: `${base}/repos`,
    events_url: `${base}/events{/privacy}`,
    received_events_url: `${base}/received_events`,
    type: user.type,
    site_admin: Boolean(user.site_admin),
  };
}

/** The access-list form of a user: the simple user plus `name`, `email` and `user_view_type`. */
export function userWithProfile(urls: Urls, user: UserRow): SimpleUser {
  return { ...simpleUser(urls, user), name: user.name, email: user.email, user_view_type: 'public' };
}

/** The organization representation (the admin API's answer, migration archives). */
export function organization(urls: Urls, org: UserRow) {
  const url = `${urls.api}/orgs/${org.login}`;
  return {
    login: org.login,
    id: org.id,
    node_id: nodeId('Organization', org.id),
    url,
    repos_url: `${url}/repos`,
    events_url: `${url}/events`,
    hooks_url: `${url}/hooks`,
    issues_url: `${url}/issues`,
    members_url: `${url}/members{/member}`,
    public_members_url: `${url}/public_members{/member}`,
    avatar_url: `${urls.web}/avatars/u/${org.id}?v=4`,
    description: null,
    name: org.name,
    html_url: `${urls.web}/${org.login}`,
    type: 'Organization',
    created_at: isoSeconds(org.created_at),
    updated_at: isoSeconds(org.updated_at),
  };
}

/** The organization as lists show it (GET /users/{username}/orgs): its links and description. */
export function organizationSimple(urls: Urls, org: UserRow) {
  const { login, id, node_id, url, repos_url, events_url, hooks_url, issues_url, members_url, public_members_url, avatar_url, description } = organization(urls, org);
  return { login, id, node_id, url, repos_url, events_url, hooks_url, issues_url, members_url, public_members_url, avatar_url, description };
}

// --- Profiles (GET /user, /users/{username}, /orgs/{org}) ------------------------------------------

/** What a profile counts: the account's repositories by visibility (codehost keeps no gists or followers). */
export interface AccountFacts {
  public_repos: number;
  private_repos: number;
}

/** The public profile of a user or organization, as GET /users/{username} shows it. */
export function publicUser(urls: Urls, user: UserRow, facts: AccountFacts) {
  return {
    ...simpleUser(urls, user),
    user_view_type: 'public',
    name: user.name,
    company: null,
    blog: '',
    location: null,
    email: user.email,
    hireable: null,
    bio: null,
    twitter_username: null,
    public_repos: facts.public_repos,
    public_gists: 0,
    followers: 0,
    following: 0,
    created_at: isoSeconds(user.created_at),
    updated_at: isoSeconds(user.updated_at),
  };
}

/** The authenticated user's own profile: the public one plus what only they see. */
export function privateUser(urls: Urls, user: UserRow, facts: AccountFacts) {
  return {
    ...publicUser(urls, user, facts),
    user_view_type: 'private',
    private_gists: 0,
    total_private_repos: facts.private_repos,
    owned_private_repos: facts.private_repos,
    disk_usage: 0,
    collaborators: 0,
    two_factor_authentication: false,
    plan: { name: 'free', space: 976562499, collaborators: 0, private_repos: 10000 },
  };
}

/** The organization as GET /orgs/{org} shows it; its owners also see its private repository counts. */
export function organizationProfile(urls: Urls, org: UserRow, facts: AccountFacts, owner: boolean) {
  return {
    ...organization(urls, org),
    company: null,
    blog: '',
    location: null,
    email: org.email,
    twitter_username: null,
    is_verified: false,
    has_organization_projects: true,
    has_repository_projects: true,
    public_repos: facts.public_repos,
    public_gists: 0,
    followers: 0,
    following: 0,
    archived_at: null,
    ...(owner ? { total_private_repos: facts.private_repos, owned_private_repos: facts.private_repos } : {}),
  };
}

// --- Team ----------------------------------------------------------------------------------------

type TeamFields = { id: number; slug: string; name: string };

/** A team as a pull request's `requested_teams` (and a webhook's `requested_team`) shows it. */
export function teamRepresentation(urls: Urls, org: Pick<UserRow, 'login'>, team: TeamFields) {
  return {
    id: team.id,
    node_id: nodeId('Team', team.id),
    name: team.name,
    slug: team.slug,
    url: `${urls.api}/orgs/${org.login}/teams/${team.slug}`,
    html_url: `${urls.web}/orgs/${org.login}/teams/${team.slug}`,
  };
}

/** The Team (the admin API's answer): the reference plus privacy, permission and its link templates. */
export function team(urls: Urls, org: Pick<UserRow, 'login'>, row: TeamFields) {
  const reference = teamRepresentation(urls, org, row);
  return {
    id: reference.id,
    node_id: reference.node_id,
    url: reference.url,
    html_url: reference.html_url,
    name: reference.name,
    slug: reference.slug,
    description: null,
    privacy: 'closed',
    notification_setting: 'notifications_enabled',
    permission: 'pull',
    members_url: `${reference.url}/members{/member}`,
    repositories_url: `${reference.url}/repos`,
    parent: null,
    type: 'organization',
  };
}

/** An enterprise as webhook payloads show it (`enterprise`). */
export function enterpriseRepresentation(urls: Urls, row: Pick<EnterpriseRow, 'id' | 'slug' | 'name' | 'created_at' | 'updated_at'>) {
  return {
    id: row.id,
    node_id: nodeId('Enterprise', row.id),
    slug: row.slug,
    name: row.name,
    description: null,
    website_url: null,
    html_url: `${urls.web}/enterprises/${row.slug}`,
    avatar_url: `${urls.web}/avatars/b/${row.id}?v=4`,
    created_at: isoSeconds(row.created_at),
    updated_at: isoSeconds(row.updated_at),
  };
}

/** The full Team of GET /orgs/{org}/teams/{team_slug}: counts, times and its organization. */
export function teamProfile(
  urls: Urls,
  org: UserRow,
  row: TeamFields & { created_at: string; updated_at: string },
  facts: { members: number; repositories: number },
  orgFacts: AccountFacts,
) {
  return {
    ...team(urls, org, row),
    members_count: facts.members,
    repos_count: facts.repositories,
    created_at: isoSeconds(row.created_at),
    updated_at: isoSeconds(row.updated_at),
    organization: organizationProfile(urls, org, orgFacts, false),
  };
}

// --- Schemas of the profile shapes -----------------------------------------------------------------

const NullableText = Type.Union([Type.String(), Type.Null()]);

export const PublicUser = Type.Object({
  ...SimpleUser.properties,
  name: NullableText,
  company: NullableText,
  blog: NullableText,
  location: NullableText,
  email: NullableText,
  hireable: Type.Union([Type.Boolean(), Type.Null()]),
  bio: NullableText,
  twitter_username: NullableText,
  public_repos: Type.Integer(),
  public_gists: Type.Integer(),
  followers: Type.Integer(),
  following: Type.Integer(),
  created_at: Type.String(),
  updated_at: Type.String(),
});

export const PrivateUser = Type.Object({
  ...PublicUser.properties,
  private_gists: Type.Integer(),
  total_private_repos: Type.Integer(),
  owned_private_repos: Type.Integer(),
  disk_usage: Type.Integer(),
  collaborators: Type.Integer(),
  two_factor_authentication: Type.Boolean(),
  plan: Type.Object({ name: Type.String(), space: Type.Integer(), collaborators: Type.Integer(), private_repos: Type.Integer() }),
});

export const OrganizationSimple = Type.Object({
  login: Type.String(),
  id: Type.Integer(),
  node_id: Type.String(),
  url: Type.String(),
  repos_url: Type.String(),
  events_url: Type.String(),
  hooks_url: Type.String(),
  issues_url: Type.String(),
  members_url: Type.String(),
  public_members_url: Type.String(),
  avatar_url: Type.String(),
  description: NullableText,
});

export const OrganizationProfile = Type.Object({
  ...OrganizationSimple.properties,
  name: NullableText,
  company: NullableText,
  blog: NullableText,
  location: NullableText,
  email: NullableText,
  twitter_username: NullableText,
  is_verified: Type.Boolean(),
  has_organization_projects: Type.Boolean(),
  has_repository_projects: Type.Boolean(),
  public_repos: Type.Integer(),
  public_gists: Type.Integer(),
  followers: Type.Integer(),
  following: Type.Integer(),
  html_url: Type.String(),
  type: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
  archived_at: NullableText,
  total_private_repos: Type.Optional(Type.Integer()),
  owned_private_repos: Type.Optional(Type.Integer()),
});

/** The Team of `team()`. */
export const Team = Type.Object({
  id: Type.Integer(),
  node_id: Type.String(),
  url: Type.String(),
  html_url: Type.String(),
  name: Type.String(),
  slug: Type.String(),
  description: NullableText,
  privacy: Type.String(),
  notification_setting: Type.String(),
  permission: Type.String(),
  members_url: Type.String(),
  repositories_url: Type.String(),
  parent: Type.Null(),
  type: Type.String(),
});

export const TeamProfile = Type.Object({
  ...Team.properties,
  members_count: Type.Integer(),
  repos_count: Type.Integer(),
  created_at: Type.String(),
  updated_at: Type.String(),
  organization: OrganizationProfile,
});

/**
 * A user's membership of an organization, as GET /orgs/{org}/memberships/{username} and the
 * `organization` webhook events show it (without the `organization` the former adds): an owner is
 * `admin`, a billing manager who is not a member `billing_manager`, anyone else `member`.
 */
export function orgMembership(urls: Urls, org: Pick<UserRow, 'login'>, user: Pick<UserRow, 'id' | 'login' | 'type' | 'site_admin'>, roles: ReadonlySet<OrgRole>) {
  const role = roles.has('owner') ? 'admin' as const : roles.has('billing_manager') && !roles.has('member') ? 'billing_manager' as const : 'member' as const;
  return {
    url: `${urls.api}/orgs/${org.login}/memberships/${user.login}`,
    state: 'active' as const,
    role,
    organization_url: `${urls.api}/orgs/${org.login}`,
    user: simpleUser(urls, user),
  };
}
