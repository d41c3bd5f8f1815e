// App representations: the app (GitHub's `integration` shape; `installations_count` only for the app
// itself) and the installation.
import { Type, type Static } from 'typebox';
import { isoSeconds } from '../../platform/clock.ts';
import { nodeId, type Urls } from '../../platform/urls.ts';
import { SimpleUser, simpleUser } from '../accounts/representations.ts';
import type { AppRow } from '../callers/principal.ts';
import type { AccountFacts, InstallationRow } from './store.ts';

const Permissions = Type.Record(Type.String(), Type.String(), { description: 'Permission name → `read` or `write`' });

export const App = Type.Object({
  id: Type.Integer(),
  slug: Type.String(),
  node_id: Type.String(),
  client_id: Type.String(),
  owner: Type.Union([SimpleUser, Type.Null()]),
  name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  external_url: Type.String(),
  html_url: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
  permissions: Permissions,
  events: Type.Array(Type.String()),
  installations_count: Type.Optional(Type.Integer({ description: 'Only on GET /app, for the app itself' })),
});
export type App = Static<typeof App>;

export function appRepresentation(urls: Urls, app: AppRow, owner: AccountFacts | undefined, installationsCount?: number): App {
  const htmlUrl = `${urls.web}/apps/${app.slug}`;
  return {
    id: app.id,
    slug: app.slug,
    node_id: nodeId('Integration', app.id),
    client_id: app.client_id,
    owner: owner ? simpleUser(urls, owner) : null,
    name: app.name,
    description: null,
    external_url: htmlUrl,
    html_url: htmlUrl,
    created_at: isoSeconds(app.created_at),
    updated_at: isoSeconds(app.updated_at),
    permissions: JSON.parse(app.permissions) as Record<string, string>,
    events: JSON.parse(app.events) as string[],
    ...(installationsCount === undefined ? {} : { installations_count: installationsCount }),
  };
}

export const Installation = Type.Object({
  id: Type.Integer(),
  account: SimpleUser,
  repository_selection: Type.Union([Type.Literal('all'), Type.Literal('selected')]),
  access_tokens_url: Type.String(),
  repositories_url: Type.String(),
  html_url: Type.String(),
  app_id: Type.Integer(),
  app_slug: Type.String(),
  target_id: Type.Integer(),
  target_type: Type.String({ description: '`User` or `Organization`' }),
  permissions: Permissions,
  events: Type.Array(Type.String()),
  created_at: Type.String(),
  updated_at: Type.String(),
  single_file_name: Type.Null(),
  suspended_at: Type.Null(),
  suspended_by: Type.Null(),
});
export type Installation = Static<typeof Installation>;

export function installationRepresentation(
  urls: Urls,
  app: Pick<AppRow, 'id' | 'slug' | 'events'>,
  installation: InstallationRow,
  account: AccountFacts,
): Installation {
  const organization = account.type === 'Organization';
  return {
    id: installation.id,
    account: simpleUser(urls, account),
    repository_selection: installation.repository_selection === 'selected' ? 'selected' : 'all',
    access_tokens_url: `${urls.api}/app/installations/${installation.id}/access_tokens`,
    repositories_url: `${urls.api}/installation/repositories`,
    html_url: organization
      ? `${urls.web}/organizations/${account.login}/settings/installations/${installation.id}`
      : `${urls.web}/settings/installations/${installation.id}`,
    app_id: app.id,
    app_slug: app.slug,
    target_id: account.id,
    target_type: organization ? 'Organization' : 'User',
    permissions: JSON.parse(installation.permissions) as Record<string, string>,
    events: JSON.parse(app.events) as string[],
    created_at: isoSeconds(installation.created_at),
    updated_at: isoSeconds(installation.updated_at),
    single_file_name: null,
    suspended_at: null,
    suspended_by: null,
  };
}
