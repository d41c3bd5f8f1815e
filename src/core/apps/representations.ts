// App representations: the app (GitHub's `integration` shape; `installations_count` only for the app
// itself) and the installation.
import type { Selectable } from 'kysely';
import { Type, type Static } from 'typebox';
import type { AppAuthorizationsTable, TokensTable } from '../../db/tables/apps.ts';
import { isoSeconds } from '../../platform/clock.ts';
import { nodeId, type Urls } from '../../platform/urls.ts';
import { SimpleUser, simpleUser } from '../accounts/representations.ts';
import type { UserRow } from '../accounts/store.ts';
import type { AccountFacts, AppRow, InstallationRow } from './store.ts';

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
  suspended_at: Type.Union([Type.String(), Type.Null()]),
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
    suspended_at: installation.suspended_at && isoSeconds(installation.suspended_at),
    suspended_by: null,
  };
}

// --- Authorization: a user's token of an app -------------------------------------------------------

export const Authorization = Type.Object({
  id: Type.Integer(),
  url: Type.String(),
  scopes: Type.Array(Type.String()),
  token: Type.String(),
  token_last_eight: Type.String(),
  hashed_token: Type.String(),
  app: Type.Object({ url: Type.String(), name: Type.String(), client_id: Type.String() }),
  note: Type.Union([Type.String(), Type.Null()]),
  note_url: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  updated_at: Type.String(),
  fingerprint: Type.Union([Type.String(), Type.Null()]),
  expires_at: Type.Union([Type.String(), Type.Null()]),
  user: SimpleUser,
  installation: Type.Null(),
});
export type Authorization = Static<typeof Authorization>;

/** The app authorization representation of a token (check, reset, scoped, and the admin create). */
export function authorizationBody(
  urls: Urls,
  parts: { token: Selectable<TokensTable>; app: AppRow; user: UserRow; authorization?: Selectable<AppAuthorizationsTable> },
  tokenValue: string,
): Authorization {
  const { token, app, user, authorization } = parts;
  return {
    id: token.id,
    url: `${urls.api}/authorizations/${token.id}`,
    scopes: JSON.parse(token.scopes) as string[],
    token: tokenValue,
    token_last_eight: token.token_last_eight,
    hashed_token: token.hashed_token,
    app: { url: `${urls.web}/apps/${app.slug}`, name: app.name, client_id: app.client_id },
    note: token.note ?? authorization?.note ?? null,
    note_url: token.note_url ?? authorization?.note_url ?? null,
    created_at: isoSeconds(token.created_at),
    updated_at: isoSeconds(token.updated_at),
    fingerprint: token.fingerprint,
    expires_at: token.expires_at ? isoSeconds(token.expires_at) : null,
    user: simpleUser(urls, user),
    installation: null,
  };
}
