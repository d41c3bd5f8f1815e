// App credentials beyond test/helpers/credentials.ts: an installation with a chosen grant, an
// installation token of a given installation, Basic client credentials, and a scoped user token
// (POST /applications/{client_id}/token/scoped).
import { appJwt, type Permissions, type TestApp } from './credentials.ts';
import type { TestServer } from './server.ts';

/** An app as the admin API creates it, with its one-time client secret. */
export interface TestAppWithSecret extends TestApp {
  client_secret: string;
}

/** Installs the app on the account; `permissions` is the grant (default: everything the app requests). */
export async function install(
  server: TestServer,
  app: TestApp,
  account: string,
  options: { permissions?: Permissions; repositories?: 'all' | string[] } = {},
): Promise<number> {
  const installation = await server.admin('POST', `/apps/${app.slug}/installations`, {
    account,
    repositories: options.repositories ?? 'all',
    ...(options.permissions ? { permissions: options.permissions } : {}),
  });
  return installation.id;
}

/** An installation token of an existing installation, minted with the app's JWT (60 minutes). */
export async function mintInstallationToken(server: TestServer, app: TestApp, installationId: number, body: Record<string, unknown> = {}): Promise<string> {
  const minted = await server.api('POST', `/app/installations/${installationId}/access_tokens`, { authorization: `Bearer ${await appJwt(server, app)}`, body });
  if (minted.status !== 201) throw new Error(`installation token: ${minted.status} ${minted.text}`);
  return minted.body.token;
}

/** The Authorization header of the app's client id and secret. */
export function basicAuthorization(app: TestAppWithSecret): string {
  return `Basic ${Buffer.from(`${app.client_id}:${app.client_secret}`).toString('base64')}`;
}

/** A user token of the app narrowed to a target account (and optionally repositories and permissions). */
export async function scopedToken(
  server: TestServer,
  app: TestAppWithSecret,
  userToken: string,
  scope: { target: string; repositories?: string[]; permissions?: Permissions },
): Promise<string> {
  const response = await server.api('POST', `/applications/${app.client_id}/token/scoped`, {
    authorization: basicAuthorization(app),
    body: { access_token: userToken, ...scope },
  });
  if (response.status !== 200) throw new Error(`scoped token: ${response.status} ${response.text}`);
  return response.body.token;
}
