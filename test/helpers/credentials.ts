// Credentials of every kind for permission-matrix tests, made through the admin API: classic and
// fine-grained personal tokens, OAuth and app user tokens, app JWTs and installation tokens.
import { createPrivateKey } from 'node:crypto';
import { SignJWT, importPKCS8 } from 'jose';
import type { TestServer } from './server.ts';

export type Permissions = Record<string, 'read' | 'write'>;

export interface TestApp {
  id: number;
  slug: string;
  client_id: string;
  private_key: string;
}

export async function classicToken(server: TestServer, login: string, scopes: string[]): Promise<string> {
  return (await server.admin('POST', '/tokens', { login, kind: 'classic', scopes })).token;
}

export async function fineGrainedToken(server: TestServer, login: string, resourceOwner: string, permissions: Permissions): Promise<string> {
  return (await server.admin('POST', '/tokens', { login, kind: 'fine_grained', resource_owner: resourceOwner, permissions })).token;
}

export async function createApp(server: TestServer, slug: string, permissions: Permissions): Promise<TestApp> {
  return server.admin('POST', '/apps', { slug, permissions });
}

/** An OAuth token of the app for the user, with classic scopes. */
export async function oauthToken(server: TestServer, app: TestApp, login: string, scopes: string[]): Promise<string> {
  return (await server.admin('POST', `/apps/${app.slug}/authorizations`, { login, scopes })).token;
}

/** An app user token: the user acting through the app, with the app's permissions. */
export async function appUserToken(server: TestServer, app: TestApp, login: string): Promise<string> {
  return (await server.admin('POST', `/apps/${app.slug}/authorizations`, { login, kind: 'app_user' })).token;
}

/** An app JWT valid at the server's (test) clock. */
export async function appJwt(server: TestServer, app: TestApp): Promise<string> {
  return signAppJwt(app, Math.floor(Date.parse((await server.admin('GET', '/clock')).now) / 1000));
}

/** The app's JWT as of `now` (seconds): for a server without the test clock (`codehost serve` in production mode). */
export async function signAppJwt(app: TestApp, now = Math.floor(Date.now() / 1000)): Promise<string> {
  const pkcs8 = createPrivateKey(app.private_key).export({ type: 'pkcs8', format: 'pem' }).toString();
  const key = await importPKCS8(pkcs8, 'RS256');
  return new SignJWT({}).setProtectedHeader({ alg: 'RS256' }).setIssuer(String(app.id)).setIssuedAt(now - 30).setExpirationTime(now + 540).sign(key);
}

/** Installs the app on the account (all repositories) and mints an installation token (60 minutes). */
export async function installationToken(server: TestServer, app: TestApp, account: string): Promise<string> {
  const installation = await server.admin('POST', `/apps/${app.slug}/installations`, { account, repositories: 'all' });
  const minted = await server.api('POST', `/app/installations/${installation.id}/access_tokens`, { authorization: `Bearer ${await appJwt(server, app)}`, body: {} });
  if (minted.status !== 201) throw new Error(`installation token: ${minted.status} ${minted.text}`);
  return minted.body.token;
}

/** One token of every kind a user holds (classic, fine-grained, OAuth, app user), by kind. */
export async function everyUserToken(server: TestServer, app: TestApp, login: string): Promise<Record<string, string>> {
  return {
    classic: await classicToken(server, login, ['repo']),
    fine_grained: await fineGrainedToken(server, login, login, { metadata: 'read' }),
    oauth: await oauthToken(server, app, login, ['repo']),
    app_user: await appUserToken(server, app, login),
  };
}
