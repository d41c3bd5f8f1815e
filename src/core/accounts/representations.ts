// Account representations: the simple user, the user with profile fields, the organization.
import { Type, type Static } from 'typebox';
import { isoSeconds } from '../../platform/clock.ts';
import { nodeId, type Urls } from '../../platform/urls.ts';
import type { UserRow } from './store.ts';

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
  const base = `${urls.api}/users/${user.login}`;
  return {
    login: user.login,
    id: user.id,
    node_id: nodeId(user.type === 'Organization' ? 'Organization' : 'User', user.id),
    avatar_url: `${urls.web}/avatars/u/${user.id}?v=4`,
    gravatar_id: '',
    url: base,
    html_url: `${urls.web}/${user.login}`,
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

