// Credentials → principal on a real database (SQLite, or PostgreSQL when DATABASE_URL is set), no
// server: tokens issued by store.ts and looked up by their hash (`principalFromToken`), each
// kind's facts and permissions, app user tokens' installations, app JWTs (`principalFromJwt`), and
// the Authorization header's forms (`authenticate`). The clock is held still.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, test } from 'node:test';
import { importPKCS8, SignJWT } from 'jose';
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/database.ts';
import { openDatabase, type Db } from '../../db/index.ts';
import { migrateToLatest } from '../../db/migrate.ts';
import { ApiError } from '../../platform/errors.ts';
import { generateToken, hashSecret } from '../../platform/tokens.ts';
import { ANONYMOUS, authenticate, ClientCredentialsRejected, principalFromToken, type InstallationPrincipal, type Principal, type UserPrincipal } from './principal.ts';
import { issueToken, type IssueTokenInput } from './store.ts';
import { StillClock } from '../../../test/helpers/unit.ts';

const clock = new StillClock();
const NOW = new Date(clock.ms).toISOString();
const seconds = (s: number) => new Date(clock.ms + s * 1000).toISOString();

let testDatabase: TestDatabase;
let db: Db;
const id: Record<string, number> = {};
const CLIENT_SECRET = 'the app client secret';
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
const other = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });

/** What the app requests, and what its installations grant (one of them suspended). */
const APP_PERMISSIONS = { issues: 'write', contents: 'read', metadata: 'read' };
const ACME_GRANT = { issues: 'read', contents: 'write', metadata: 'read', pull_requests: 'write' };

async function account(login: string, type: 'User' | 'Organization', suspended = false) {
  const row = await db.kysely.insertInto('users')
    .values({ login, login_lower: login.toLowerCase(), type, name: `${login} name`, email: `${login}@example.com`, site_admin: 0, created_at: seconds(-100), updated_at: seconds(-50), suspended_at: suspended ? seconds(-10) : null, suspended_reason: suspended ? 'spam' : null } as never)
    .returning('id').executeTakeFirstOrThrow();
  id[login] = row.id;
}

before(async () => {
  testDatabase = await createTestDatabase();
  db = openDatabase({ databaseUrl: testDatabase.databaseUrl, sqlitePath: `${testDatabase.dataDir}/codehost.db` });
  await migrateToLatest(db);
  const k = db.kysely;
  await account('Alice', 'User');
  await account('bob', 'User', true);
  for (const login of ['acme', 'other', 'nowhere']) await account(login, 'Organization');
  // An id of several digits, a client id that ends in digits; and an app whose client id starts with digits.
  const app = await k.insertInto('apps').values({
    id: 4321, slug: 'the-app', name: 'The App', owner_id: null, client_id: 'Iv1.theapp42', client_secret_hash: hashSecret(CLIENT_SECRET),
    public_key_pem: publicKey, permissions: JSON.stringify(APP_PERMISSIONS), events: '[]', created_at: NOW, updated_at: NOW,
  } as never).returning('id').executeTakeFirstOrThrow();
  id.app = app.id;
  id.digitsApp = (await k.insertInto('apps').values({
    slug: 'digits-app', name: 'Digits', owner_id: null, client_id: '42digits', client_secret_hash: hashSecret(CLIENT_SECRET),
    public_key_pem: publicKey, permissions: '{}', events: '[]', created_at: NOW, updated_at: NOW,
  } as never).returning('id').executeTakeFirstOrThrow()).id;
  id.authorization = (await k.insertInto('app_authorizations').values({ app_id: app.id, user_id: id.Alice!, scopes: '[]', note: null, note_url: null, created_at: NOW, updated_at: NOW } as never)
    .returning('id').executeTakeFirstOrThrow()).id;
  const installation = (account: string, permissions: object, suspended: boolean, selection: string) =>
    k.insertInto('installations').values({ app_id: app.id, account_id: id[account]!, repository_selection: selection, permissions: JSON.stringify(permissions), created_at: NOW, updated_at: NOW, suspended_at: suspended ? NOW : null } as never)
      .returning('id').executeTakeFirstOrThrow();
  id.acmeInstallation = (await installation('acme', ACME_GRANT, false, 'selected')).id;
  id.otherInstallation = (await installation('other', ACME_GRANT, true, 'all')).id;
});

after(async () => {
  await db?.close();
  await testDatabase?.drop();
});

/** Issues a token and resolves it through the Authorization header. */
async function resolve(input: IssueTokenInput, scheme = 'Bearer'): Promise<Principal> {
  const { token } = await issueToken(db.kysely, clock, input);
  return authenticate(db.kysely, clock, `${scheme} ${token}`, { basicApp: false });
}

const plain = (permissions: object) => ({ ...permissions });
const refusedWith = (status: number, message: string) => (error: unknown) => error instanceof ApiError && error.status === status && error.message === message;
const badCredentials = refusedWith(401, 'Bad credentials');

/** The user row a user token carries. */
function alice() {
  return {
    id: id.Alice!, login: 'Alice', login_lower: 'alice', type: 'User', name: 'Alice name', email: 'Alice@example.com',
    site_admin: 0, created_at: seconds(-100), updated_at: seconds(-50), suspended_at: null, suspended_reason: null,
  };
}

test('issueToken: the stored row keeps the hash and the last eight characters, never the token; defaults; a value taken twice or a bad expiry is 422', async () => {
  const { row, token } = await issueToken(db.kysely, clock, { kind: 'classic', user_id: id.Alice! });
  assert.match(token, /^chp_[A-Za-z0-9]{36}$/);
  const { id: tokenId, ...stored } = row;
  assert.ok(tokenId > 0);
  assert.deepEqual(stored, {
    kind: 'classic', hashed_token: hashSecret(token), token_last_eight: token.slice(-8), user_id: id.Alice, app_id: null, installation_id: null,
    authorization_id: null, scopes: '[]', permissions: '{}', resource_owner_id: null, repository_selection: 'all', repository_ids: '[]',
    note: null, note_url: null, fingerprint: null, expires_at: null, created_at: NOW, updated_at: NOW,
  });
  const value = generateToken('fine_grained');
  const full = await issueToken(db.kysely, clock, {
    kind: 'fine_grained', value, user_id: id.Alice!, scopes: ['x'], permissions: { issues: 'read' }, resource_owner_id: id.acme!,
    repository_selection: 'selected', repository_ids: [3], expires_at: '2026-06-02T12:00:00+02:00', note: 'n', note_url: 'https://example.com/n',
  });
  assert.equal(full.token, value);
  assert.equal((await issueToken(db.kysely, clock, { kind: 'oauth', user_id: id.Alice!, app_id: id.app!, authorization_id: id.authorization! })).row.authorization_id, id.authorization);
  assert.deepEqual(
    [full.row.hashed_token, full.row.scopes, full.row.permissions, full.row.resource_owner_id, full.row.repository_selection, full.row.repository_ids, full.row.expires_at, full.row.note, full.row.note_url],
    [hashSecret(value), '["x"]', '{"issues":"read"}', id.acme, 'selected', '[3]', '2026-06-02T10:00:00.000Z', 'n', 'https://example.com/n'],
  );
  const invalid = (field: string, code: string) => (error: unknown) =>
    error instanceof ApiError && error.status === 422 && JSON.stringify(error.errors) === JSON.stringify([{ resource: 'Token', field, code }]);
  await assert.rejects(issueToken(db.kysely, clock, { kind: 'fine_grained', value, user_id: id.Alice! }), invalid('value', 'already_exists'));
  await assert.rejects(issueToken(db.kysely, clock, { kind: 'classic', user_id: id.Alice!, expires_at: 'tomorrow' }), invalid('expires_at', 'invalid'));
  assert.equal((await issueToken(db.kysely, clock, { kind: 'classic', user_id: id.Alice!, expires_at: null })).row.expires_at, null);
});

test('a classic token: its user, scopes, no permissions, no installation', async () => {
  const principal = await resolve({ kind: 'classic', user_id: id.Alice!, scopes: ['repo', 'read:org'] }) as UserPrincipal;
  const { tokenId, user, installationOn, permissionsOn, ...facts } = principal;
  assert.ok(tokenId > 0);
  assert.deepEqual({ ...user, site_admin: Number(user.site_admin) }, alice());
  assert.deepEqual(facts, {
    type: 'user', kind: 'classic', scopes: ['repo', 'read:org'], appId: null, resourceOwnerId: null,
    repositorySelection: 'all', repositoryIds: [], expiresAt: null, route: null, permissions: {},
  });
  assert.equal(await installationOn(id.acme!), null);
  assert.deepEqual(await permissionsOn(id.Alice!), {});
  // `token` and `Bearer`, any case, and Basic with any user name: the same token.
  const { token } = await issueToken(db.kysely, clock, { kind: 'classic', user_id: id.Alice!, scopes: [] });
  for (const header of [`token ${token}`, `BEARER ${token}`, `Basic ${Buffer.from(`anyone:${token}`).toString('base64')}`]) {
    const found = await authenticate(db.kysely, clock, header, { basicApp: false }) as UserPrincipal;
    assert.deepEqual([found.type, found.kind, found.user.id], ['user', 'classic', id.Alice], header);
  }
});

test('an OAuth token: its app, its scopes', async () => {
  const principal = await resolve({ kind: 'oauth', user_id: id.Alice!, app_id: id.app!, scopes: ['user'] }) as UserPrincipal;
  assert.deepEqual([principal.kind, principal.appId, principal.scopes, plain(principal.permissions)], ['oauth', id.app, ['user'], {}]);
  assert.deepEqual(await principal.permissionsOn(id.acme!), {});
});

test('a fine-grained token: its own permissions on its resource owner only, its repository selection, its expiry', async () => {
  const principal = await resolve({
    kind: 'fine_grained', user_id: id.Alice!, resource_owner_id: id.acme!, permissions: { issues: 'write' },
    repository_selection: 'selected', repository_ids: [5, 6], expires_at: seconds(1),
  }) as UserPrincipal;
  assert.deepEqual(
    [principal.kind, principal.resourceOwnerId, principal.repositorySelection, principal.repositoryIds, principal.expiresAt, principal.scopes],
    ['fine_grained', id.acme, 'selected', [5, 6], seconds(1), []],
  );
  assert.deepEqual(plain(principal.permissions), { issues: 'write' });
  assert.deepEqual(plain(await principal.permissionsOn(id.acme!)), { issues: 'write' });
  assert.deepEqual(await principal.permissionsOn(id.other!), {});
  assert.deepEqual(await principal.permissionsOn(id.Alice!), {});
  assert.equal(await principal.installationOn(id.acme!), null);
});

test('an installation token: the grant ∩ what the app requests ∩ its own, on its account only', async () => {
  const principal = await resolve({
    kind: 'installation', app_id: id.app!, installation_id: id.acmeInstallation!, permissions: { issues: 'write', metadata: 'read', contents: 'read' },
    repository_selection: 'selected', repository_ids: [9], expires_at: seconds(3600),
  }) as InstallationPrincipal;
  const { tokenId, permissions, permissionsOn, ...facts } = principal;
  assert.ok(tokenId > 0);
  assert.deepEqual(facts, {
    type: 'installation', kind: 'installation', installationId: id.acmeInstallation, appId: id.app, accountId: id.acme,
    repositorySelection: 'selected', repositoryIds: [9], expiresAt: seconds(3600), route: null,
  });
  assert.deepEqual(plain(permissions), { issues: 'read', metadata: 'read', contents: 'read' });
  assert.deepEqual(plain(await permissionsOn(id.acme!)), { issues: 'read', metadata: 'read', contents: 'read' });
  assert.deepEqual(await permissionsOn(id.other!), {});
});

test('an installation token of a suspended installation is refused (403); one without its installation or app is bad credentials', async () => {
  await assert.rejects(resolve({ kind: 'installation', app_id: id.app!, installation_id: id.otherInstallation!, permissions: { issues: 'read' } }), refusedWith(403, 'This installation has been suspended'));
  await assert.rejects(resolve({ kind: 'installation', app_id: id.app!, installation_id: null }), badCredentials);
  await assert.rejects(resolve({ kind: 'installation', app_id: null, installation_id: id.acmeInstallation! }), badCredentials);
});

test('an app user token: what the app requests now, narrowed on each account by its installation there (looked up once)', async () => {
  // Unscoped: the permissions stored with the token (the app's request at creation) are not used.
  const principal = await resolve({ kind: 'app_user', user_id: id.Alice!, app_id: id.app!, permissions: { pull_requests: 'write' } }) as UserPrincipal;
  assert.deepEqual([principal.kind, principal.appId, principal.resourceOwnerId, principal.user.id], ['app_user', id.app, null, id.Alice]);
  assert.deepEqual(plain(principal.permissions), APP_PERMISSIONS);
  const onAcme = principal.installationOn(id.acme!);
  assert.equal(principal.installationOn(id.acme!), onAcme);
  const acme = await onAcme;
  assert.deepEqual({ ...acme, permissions: plain(acme!.permissions) }, { id: id.acmeInstallation, repositorySelection: 'selected', permissions: { issues: 'read', contents: 'read', metadata: 'read' } });
  assert.deepEqual(plain(await principal.permissionsOn(id.acme!)), { issues: 'read', contents: 'read', metadata: 'read' });
  // Suspended there, or not installed there: nothing.
  assert.equal(await principal.installationOn(id.other!), null);
  assert.equal(await principal.installationOn(id.nowhere!), null);
  assert.deepEqual(await principal.permissionsOn(id.other!), {});
  assert.deepEqual(await principal.permissionsOn(id.nowhere!), {});
});

test('an app user token scoped to a target: its own narrowed permissions, and only the target\'s installation', async () => {
  const principal = await resolve({ kind: 'app_user', user_id: id.Alice!, app_id: id.app!, resource_owner_id: id.acme!, permissions: { issues: 'write', contents: 'read' } }) as UserPrincipal;
  assert.deepEqual(plain(principal.permissions), { issues: 'write', contents: 'read' });
  assert.deepEqual(plain(await principal.permissionsOn(id.acme!)), { issues: 'read', contents: 'read' });
  const scopedElsewhere = await resolve({ kind: 'app_user', user_id: id.Alice!, app_id: id.app!, resource_owner_id: id.other!, permissions: { issues: 'write' } }) as UserPrincipal;
  assert.equal(await scopedElsewhere.installationOn(id.acme!), null);
  await assert.rejects(resolve({ kind: 'app_user', user_id: id.Alice!, app_id: null }), badCredentials);
});

test('bad credentials: malformed, unknown, of another kind than stored, expired, without a user; a suspended user\'s: 403', async () => {
  const token = generateToken('classic');
  await assert.rejects(authenticate(db.kysely, clock, `Bearer ${token}`, { basicApp: false }), badCredentials);
  await assert.rejects(authenticate(db.kysely, clock, `Bearer ${token.slice(0, -1)}${token.at(-1) === 'a' ? 'b' : 'a'}`, { basicApp: false }), badCredentials);
  await assert.rejects(principalFromToken(db.kysely, clock, 'not a token'), badCredentials);
  // A classic token's value stored as an OAuth token.
  await assert.rejects(resolve({ kind: 'oauth', value: generateToken('classic'), user_id: id.Alice!, app_id: id.app! }), badCredentials);
  // Expired: at its expiry it is refused; a second before, it is not.
  const expiring = await issueToken(db.kysely, clock, { kind: 'classic', user_id: id.Alice!, expires_at: seconds(1) });
  assert.equal((await principalFromToken(db.kysely, clock, expiring.token)).kind, 'classic');
  clock.ms += 1000;
  try {
    await assert.rejects(principalFromToken(db.kysely, clock, expiring.token), badCredentials);
  } finally {
    clock.ms -= 1000;
  }
  await assert.rejects(resolve({ kind: 'classic', user_id: null }), badCredentials);
  await assert.rejects(resolve({ kind: 'classic', user_id: id.bob! }), refusedWith(403, 'Sorry. Your account was suspended.'));
  await assert.rejects(resolve({ kind: 'app_user', user_id: id.bob!, app_id: id.app! }), refusedWith(403, 'Sorry. Your account was suspended.'));
});

test('authenticate: no header or a blank one is anonymous; an unreadable one is bad credentials', async () => {
  for (const header of [undefined, '', '   ']) assert.equal(await authenticate(db.kysely, clock, header, { basicApp: false }), ANONYMOUS);
  for (const header of ['Bearer', 'Bearer a b', 'Digest abc', 'Basic bm9jb2xvbg==']) {
    await assert.rejects(authenticate(db.kysely, clock, header, { basicApp: false }), badCredentials, header);
  }
});

test('authenticate: Basic client credentials where the route takes them (an app); a wrong one is the platform\'s 404', async () => {
  const basic = (user: string, secret: string) => `Basic ${Buffer.from(`${user}:${secret}`).toString('base64')}`;
  const principal = await authenticate(db.kysely, clock, basic('Iv1.theapp42', CLIENT_SECRET), { basicApp: true });
  assert.deepEqual(principal.type === 'app' ? [principal.kind, principal.app.id] : principal, ['basic', id.app]);
  for (const [user, secret] of [['Iv1.theapp42', 'wrong'], ['Iv1.nobody', CLIENT_SECRET], ['Iv1.the\0app', CLIENT_SECRET]] as const) {
    await assert.rejects(authenticate(db.kysely, clock, basic(user, secret), { basicApp: true }), (error) => error instanceof ClientCredentialsRejected && (error as ApiError).status === 404);
  }
  // The app is a kept read (src/db/changes.ts): a secret changed through the same database is seen by the next request.
  const kept = openDatabase({ databaseUrl: testDatabase.databaseUrl, sqlitePath: `${testDatabase.dataDir}/codehost.db`, lookupCacheMs: 60_000 });
  try {
    for (const deadline = Date.now() + 10_000; !kept.feed.fresh(); ) {
      assert.ok(Date.now() < deadline, 'the change feed never became fresh');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    for (let i = 0; i < 2; i++) assert.equal((await authenticate(kept.kysely, clock, basic('Iv1.theapp42', CLIENT_SECRET), { basicApp: true })).type, 'app');
    await kept.kysely.updateTable('apps').set({ client_secret_hash: hashSecret('a new secret') }).where('id', '=', id.app!).execute();
    await assert.rejects(authenticate(kept.kysely, clock, basic('Iv1.theapp42', CLIENT_SECRET), { basicApp: true }), ClientCredentialsRejected);
    assert.equal((await authenticate(kept.kysely, clock, basic('Iv1.theapp42', 'a new secret'), { basicApp: true })).type, 'app');
  } finally {
    await kept.kysely.updateTable('apps').set({ client_secret_hash: hashSecret(CLIENT_SECRET) }).where('id', '=', id.app!).execute();
    await kept.close();
  }
  // Elsewhere Basic carries a token: client credentials are no token.
  await assert.rejects(authenticate(db.kysely, clock, basic('Iv1.theapp42', CLIENT_SECRET), { basicApp: false }), badCredentials);
});

/** An app JWT signed with `key` (the app's, unless another), `iat` and `exp` relative to now. */
async function jwt(claims: { iss?: string | number; iat?: number | null; exp?: number | null } = {}, key = privateKey, alg = 'RS256'): Promise<string> {
  const now = Math.floor(clock.ms / 1000);
  // `iss` as given: a number stays a number (as Octokit sends an app id).
  const token = new SignJWT(claims.iss === undefined ? {} : { iss: claims.iss } as never).setProtectedHeader({ alg });
  if (claims.iat !== null) token.setIssuedAt(now + (claims.iat ?? -30));
  if (claims.exp !== null) token.setExpirationTime(now + (claims.exp ?? 540));
  return token.sign(await importPKCS8(key, alg));
}

test('app JWTs: by app id or client id, signed with the app\'s key, issued at most 60 s ahead, for at most 10 minutes', async () => {
  const app = (p: Principal) => (p.type === 'app' ? [p.kind, p.app.id] : p);
  const bearer = async (token: string) => authenticate(db.kysely, clock, `Bearer ${token}`, { basicApp: false });
  assert.deepEqual(app(await bearer(await jwt({ iss: id.app! }))), ['jwt', id.app]);
  assert.deepEqual(app(await bearer(await jwt({ iss: String(id.app) }))), ['jwt', id.app]);
  assert.deepEqual(app(await bearer(await jwt({ iss: 'Iv1.theapp42' }))), ['jwt', id.app]);
  assert.deepEqual(app(await bearer(await jwt({ iss: '42digits' }))), ['jwt', id.digitsApp]);
  assert.deepEqual(app(await bearer(await jwt({ iss: id.app!, iat: 60, exp: 600 }))), ['jwt', id.app]);
  assert.deepEqual(app(await bearer(await jwt({ iss: id.app!, iat: -60, exp: 540 }))), ['jwt', id.app]);
  const refused = async (token: string, message: string) => assert.rejects(bearer(token), refusedWith(401, message), message);
  await refused(await jwt({ iss: id.app!, iat: 61, exp: 600 }), "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued");
  await refused(await jwt({ iss: id.app!, iat: -61, exp: 540 }), "'Expiration time' claim ('exp') is too far in the future");
  await refused(await jwt({ iss: id.app!, iat: -600, exp: -1 }), "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires");
  await refused(await jwt({ iss: id.app! }, other.privateKey), 'A JSON web token could not be decoded');
  await refused(await jwt({}), "'Issuer' claim ('iss') must be an Integer or the app's client ID");
  await refused(await jwt({ iss: '' }), "'Issuer' claim ('iss') must be an Integer or the app's client ID");
  for (const claims of [{ iat: null }, { exp: null }, { iat: null, exp: null }]) {
    await refused(await jwt({ iss: id.app!, ...claims }), "Missing 'issued at' ('iat') or 'expiration time' ('exp') claim");
  }
  for (const iss of [999_999, 'Iv1.nobody', '99999999999999999999']) await refused(await jwt({ iss }), 'Integration not found');
  await refused('a.b.c', 'A JSON web token could not be decoded');
  // Only a whole credential of three dot-separated base64url parts is taken for a JWT; anything else is a token.
  for (const credential of ['=a.b.c', 'a.b.c=', 'a.b']) await refused(credential, 'Bad credentials');
  // A JWT goes with Bearer only.
  await assert.rejects(authenticate(db.kysely, clock, `token ${await jwt({ iss: id.app! })}`, { basicApp: false }), badCredentials);
});
