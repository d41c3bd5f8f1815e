// The access rules that read the database, on a real one (SQLite, or PostgreSQL when DATABASE_URL is
// set), no server: which repositories a credential reaches and reads (`reachesRepository`,
// `canReadRepository`, `requireReadableRepository`), and whether it acts for an organization in a role
// (`actsForOrganization`). The principals are real: tokens issued and resolved by their hash.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/database.ts';
import { openDatabase, type Db } from '../../db/index.ts';
import { migrateToLatest } from '../../db/migrate.ts';
import { Clock } from '../../platform/clock.ts';
import { ApiError } from '../../platform/errors.ts';
import { hashSecret } from '../../platform/tokens.ts';
import type { RepositoryRow } from '../repositories/representations.ts';
import { actsForOrganization, callerRepositoryPermissions, canReadRepository, reachesRepository, requireAccess, requireReadableRepository, requireWritableRepository, type RepositoryWrite } from './access.ts';
import type { AccessRule } from './rule.ts';
import type { Permissions } from './permissions.ts';
import { ANONYMOUS, authenticate, principalFromToken, type Principal } from './principal.ts';
import { issueToken, type IssueTokenInput } from './store.ts';

const clock = new Clock();
const NOW = clock.now().toISOString();
const CLIENT_SECRET = 'access test client secret';

let testDatabase: TestDatabase;
let db: Db;
const id: Record<string, number> = {};
const repos: Record<string, RepositoryRow> = {};

async function account(login: string, type: 'User' | 'Organization', enterprise?: string) {
  const row = await db.kysely.insertInto('users')
    .values({ login, login_lower: login, type, site_admin: 0, created_at: NOW, updated_at: NOW } as never)
    .returning('id').executeTakeFirstOrThrow();
  id[login] = row.id;
  if (type === 'Organization') await db.kysely.insertInto('organizations').values({ id: row.id, enterprise_id: enterprise ? id[enterprise]! : null } as never).execute();
}

before(async () => {
  testDatabase = await createTestDatabase();
  db = openDatabase({ databaseUrl: testDatabase.databaseUrl, sqlitePath: `${testDatabase.dataDir}/codehost.db` });
  await migrateToLatest(db);
  const k = db.kysely;
  id.ent = (await k.insertInto('enterprises').values({ slug: 'ent', slug_lower: 'ent', name: 'ent', created_at: NOW, updated_at: NOW } as never).returning('id').executeTakeFirstOrThrow()).id;
  for (const login of ['ana', 'bob', 'olga', 'eve', 'carl', 'bill']) await account(login, 'User');
  await account('acme', 'Organization', 'ent');
  await account('sister', 'Organization', 'ent');
  await account('globex', 'Organization');
  const role = (org: string, login: string, r: string) => ({ org_id: id[org]!, user_id: id[login]!, role: r });
  await k.insertInto('org_memberships').values([
    role('acme', 'ana', 'owner'), role('acme', 'bob', 'member'), role('acme', 'bill', 'billing_manager'), role('sister', 'eve', 'member'), role('globex', 'ana', 'owner'),
  ] as never).execute();
  for (const [owner, name, visibility] of [['acme', 'secret', 'private'], ['acme', 'open', 'public'], ['acme', 'inner', 'internal'], ['acme', 'vault', 'private'], ['globex', 'plans', 'private'], ['ana', 'diary', 'private']] as const) {
    repos[name] = await k.insertInto('repositories')
      .values({ owner_id: id[owner]!, name, name_lower: name, visibility, created_at: NOW, updated_at: NOW } as never)
      .returningAll().executeTakeFirstOrThrow() as RepositoryRow;
  }
  await k.insertInto('repository_collaborators').values({ repository_id: repos.secret!.id, user_id: id.carl!, permission: 'pull', created_at: NOW } as never).execute();
  // The app: installed on acme with secret selected (granting issues: read only), and on globex with every repository.
  id.app = (await k.insertInto('apps').values({
    slug: 'app', name: 'App', owner_id: null, client_id: 'Iv1.access', client_secret_hash: hashSecret(CLIENT_SECRET), public_key_pem: 'none',
    permissions: JSON.stringify({ issues: 'write', metadata: 'read' }), events: '[]', created_at: NOW, updated_at: NOW,
  } as never).returning('id').executeTakeFirstOrThrow()).id;
  const install = async (account: string, selection: string, permissions: object) =>
    (await k.insertInto('installations').values({ app_id: id.app!, account_id: id[account]!, repository_selection: selection, permissions: JSON.stringify(permissions), created_at: NOW, updated_at: NOW } as never)
      .returning('id').executeTakeFirstOrThrow()).id;
  id.acmeInstallation = await install('acme', 'selected', { issues: 'read', metadata: 'read' });
  id.globexInstallation = await install('globex', 'all', { issues: 'write', metadata: 'read' });
  await k.insertInto('installation_repositories').values({ installation_id: id.acmeInstallation, repository_id: repos.secret!.id } as never).execute();
});

after(async () => {
  await db?.close();
  await testDatabase?.drop();
});

/** A principal from a token issued now. */
async function principal(input: IssueTokenInput): Promise<Principal> {
  return principalFromToken(db.kysely, clock, (await issueToken(db.kysely, clock, input)).token);
}
const classic = (login: string, scopes = ['repo', 'admin:org']) => principal({ kind: 'classic', user_id: id[login]!, scopes });
const appPrincipal = () => authenticate(db.kysely, clock, `Basic ${Buffer.from(`Iv1.access:${CLIENT_SECRET}`).toString('base64')}`, { basicApp: true });

/** The repositories (by name) a principal reads, and those it reaches, of all of them. */
async function reads(p: Principal): Promise<string[]> {
  const names = [];
  for (const [name, repo] of Object.entries(repos)) if (await canReadRepository(db.kysely, p, repo)) names.push(name);
  return names;
}
async function reaches(p: Principal): Promise<string[]> {
  const names = [];
  for (const [name, repo] of Object.entries(repos)) if (await reachesRepository(db.kysely, p, repo)) names.push(name);
  return names;
}

const ALL = ['secret', 'open', 'inner', 'vault', 'plans', 'diary'];

test('classic tokens read what their user reads: own, organization roles, collaborator, the enterprise\'s internal ones, public ones', async () => {
  assert.deepEqual(await reads(await classic('ana')), ALL);
  assert.deepEqual(await reaches(await classic('ana')), ALL);
  assert.deepEqual(await reads(await classic('bob')), ['secret', 'open', 'inner', 'vault']);
  assert.deepEqual(await reads(await classic('carl')), ['secret', 'open']);
  assert.deepEqual(await reads(await classic('eve')), ['open', 'inner']);
  assert.deepEqual(await reads(await classic('bill')), ['open']);
  assert.deepEqual(await reads(await classic('olga')), ['open']);
  assert.deepEqual(await reads(ANONYMOUS), ['open']);
  assert.deepEqual(await reads(await appPrincipal()), []);
});

test('fine-grained personal tokens: their user\'s access, on their resource owner\'s repositories, within their selection', async () => {
  const all = await principal({ kind: 'fine_grained', user_id: id.ana!, resource_owner_id: id.acme!, permissions: { metadata: 'read' } });
  assert.deepEqual(await reaches(all), ['secret', 'open', 'inner', 'vault']);
  assert.deepEqual(await reads(all), ['secret', 'open', 'inner', 'vault']);
  const some = await principal({ kind: 'fine_grained', user_id: id.ana!, resource_owner_id: id.acme!, repository_selection: 'selected', repository_ids: [repos.secret!.id, repos.plans!.id] });
  assert.deepEqual(await reaches(some), ['secret']);
  assert.deepEqual(await reads(some), ['secret', 'open']);
  const bobs = await principal({ kind: 'fine_grained', user_id: id.bob!, resource_owner_id: id.acme! });
  assert.deepEqual(await reads(bobs), ['secret', 'open', 'inner', 'vault']);
  const olgas = await principal({ kind: 'fine_grained', user_id: id.olga!, resource_owner_id: id.acme! });
  assert.deepEqual(await reads(olgas), ['open']);
});

test('installation tokens: the repositories their installation covers, on its account; every public one', async () => {
  const acme = await principal({ kind: 'installation', app_id: id.app!, installation_id: id.acmeInstallation!, permissions: { issues: 'read', metadata: 'read' } });
  assert.deepEqual(await reaches(acme), ['secret']);
  assert.deepEqual(await reads(acme), ['secret', 'open']);
  const globex = await principal({ kind: 'installation', app_id: id.app!, installation_id: id.globexInstallation!, permissions: { issues: 'write' } });
  assert.deepEqual(await reaches(globex), ['plans']);
  assert.deepEqual(await reads(globex), ['open', 'plans']);
  // Narrowed to selected repositories: those only, even where the installation covers more.
  const narrowed = await principal({ kind: 'installation', app_id: id.app!, installation_id: id.globexInstallation!, repository_selection: 'selected', repository_ids: [repos.secret!.id] });
  assert.deepEqual(await reaches(narrowed), []);
  assert.deepEqual(await reads(narrowed), ['open']);
});

test('app user tokens: what their user reads, where the app\'s installation on the owner covers it', async () => {
  const ana = await principal({ kind: 'app_user', user_id: id.ana!, app_id: id.app! });
  assert.deepEqual(await reaches(ana), ['secret', 'plans']);
  assert.deepEqual(await reads(ana), ['secret', 'open', 'plans']);
  const bob = await principal({ kind: 'app_user', user_id: id.bob!, app_id: id.app! });
  assert.deepEqual(await reads(bob), ['secret', 'open']);
  const olga = await principal({ kind: 'app_user', user_id: id.olga!, app_id: id.app! });
  assert.deepEqual(await reads(olga), ['open']);
  // Scoped to globex: its repositories only.
  const scoped = await principal({ kind: 'app_user', user_id: id.ana!, app_id: id.app!, resource_owner_id: id.globex!, permissions: { issues: 'write' } });
  assert.deepEqual(await reaches(scoped), ['plans']);
  // Narrowed to selected repositories.
  const some = await principal({ kind: 'app_user', user_id: id.ana!, app_id: id.app!, repository_selection: 'selected', repository_ids: [repos.plans!.id] });
  assert.deepEqual(await reaches(some), ['plans']);
});

test('callerRepositoryPermissions: the user\'s, read once per request; other callers get what anyone gets', async () => {
  const bob = await classic('bob');
  const first = callerRepositoryPermissions(db.kysely, bob, repos.secret!);
  assert.equal(callerRepositoryPermissions(db.kysely, bob, repos.secret!), first);
  assert.deepEqual(await first, { admin: false, push: true, pull: true });
  assert.deepEqual(await callerRepositoryPermissions(db.kysely, bob, repos.open!), { admin: false, push: true, pull: true });
  assert.deepEqual(await callerRepositoryPermissions(db.kysely, await classic('olga'), repos.open!), { admin: false, push: false, pull: true });
  assert.deepEqual(await callerRepositoryPermissions(db.kysely, await classic('carl'), repos.secret!), { admin: false, push: false, pull: true });
  assert.deepEqual(await callerRepositoryPermissions(db.kysely, ANONYMOUS, repos.open!), { admin: false, push: false, pull: true });
  const installation = await principal({ kind: 'installation', app_id: id.app!, installation_id: id.acmeInstallation! });
  assert.deepEqual(await callerRepositoryPermissions(db.kysely, installation, repos.secret!), { admin: false, push: false, pull: false });
  assert.deepEqual(await callerRepositoryPermissions(db.kysely, ANONYMOUS, repos.inner!), { admin: false, push: false, pull: false });
  assert.deepEqual(await callerRepositoryPermissions(db.kysely, await classic('ana'), repos.diary!), { admin: true, push: true, pull: true });
  assert.deepEqual(await callerRepositoryPermissions(db.kysely, await classic('eve'), repos.inner!), { admin: false, push: false, pull: true });
  // A repository that is not there (deleted meanwhile): what its visibility gives anyone.
  const gone = { id: 2 ** 31 - 1, owner_id: id.acme!, visibility: 'public' } as RepositoryRow;
  assert.deepEqual(await callerRepositoryPermissions(db.kysely, await classic('bob'), gone), { admin: false, push: false, pull: true });
  assert.deepEqual(await callerRepositoryPermissions(db.kysely, await classic('bob'), { ...gone, visibility: 'private' }), { admin: false, push: false, pull: false });
});

const notFound = (error: unknown) => error instanceof ApiError && error.status === 404 && error.message === 'Not Found';
const notAccessible = (message: string) => (error: unknown) => error instanceof ApiError && error.status === 403 && error.message === message;

test('requireReadableRepository: 404 for what the caller may not read, or without the route\'s scope on a private one; 403 for a grant too small there', async () => {
  const rule = (extra: Partial<AccessRule>): AccessRule => ({ credentials: ['classic', 'oauth', 'fine_grained', 'app_user', 'installation'], privateOnly: true, ...extra });
  const withRoute = <P extends Principal>(p: P, route: AccessRule): P => (p.type === 'user' || p.type === 'installation' ? Object.assign(p, { route }) : p);
  await assert.rejects(requireReadableRepository(db.kysely, await classic('ana'), undefined), notFound);
  await assert.rejects(requireReadableRepository(db.kysely, await classic('olga'), repos.secret), notFound);
  assert.equal(await requireReadableRepository(db.kysely, await classic('olga'), repos.open), repos.open);
  // A classic token without `repo`: a private or internal repository is not there for it; a public one is.
  const scopeless = withRoute(await classic('ana', ['read:org']), rule({ scopes: ['repo'] }));
  await assert.rejects(requireReadableRepository(db.kysely, scopeless, repos.secret), notFound);
  await assert.rejects(requireReadableRepository(db.kysely, scopeless, repos.inner), notFound);
  assert.equal(await requireReadableRepository(db.kysely, scopeless, repos.open), repos.open);
  assert.equal(await requireReadableRepository(db.kysely, withRoute(await classic('ana', ['repo']), rule({ scopes: ['repo'] })), repos.secret), repos.secret);
  assert.equal(await requireReadableRepository(db.kysely, withRoute(await classic('ana', ['read:org']), rule({})), repos.secret), repos.secret);
  assert.equal(await requireReadableRepository(db.kysely, await classic('ana', ['read:org']), repos.secret), repos.secret);
  // An OAuth token answers to scopes as a classic one does; a fine-grained token to permissions only.
  const oauth = withRoute(await principal({ kind: 'oauth', user_id: id.ana!, app_id: id.app!, scopes: ['read:org'] }), rule({ scopes: ['repo'] }));
  await assert.rejects(requireReadableRepository(db.kysely, oauth, repos.secret), notFound);
  const fineGrained = withRoute(await principal({ kind: 'fine_grained', user_id: id.ana!, resource_owner_id: id.acme!, permissions: { issues: 'read' } }), rule({ scopes: ['repo'], permissions: [{ issues: 'read' }] }));
  assert.equal(await requireReadableRepository(db.kysely, fineGrained, repos.secret), repos.secret);
  // An app user token whose app's installation on acme grants issues: read only, on a route that writes issues.
  const writer = rule({ permissions: [{ issues: 'write' }] });
  const appUser = withRoute(await principal({ kind: 'app_user', user_id: id.ana!, app_id: id.app! }), writer);
  await assert.rejects(requireReadableRepository(db.kysely, appUser, repos.secret), notAccessible('Resource not accessible by integration'));
  assert.equal(await requireReadableRepository(db.kysely, appUser, repos.open), repos.open);
  const onGlobex = withRoute(await principal({ kind: 'app_user', user_id: id.ana!, app_id: id.app! }), writer);
  assert.equal(await requireReadableRepository(db.kysely, onGlobex, repos.plans), repos.plans);
});

test('requireWritableRepository: 404 for what the caller may not see (public_repo on a private one); 403 archived, for a role or a permission missing, for a public one out of reach', async () => {
  const route: AccessRule = { credentials: ['classic', 'oauth', 'fine_grained', 'app_user', 'installation'], scopes: ['repo', 'public_repo'], permissions: [{ issues: 'write' }] };
  const on = async <P extends Principal>(p: P | Promise<P>): Promise<P> => Object.assign(await p, { route });
  const write = (role: 'pull' | 'push'): RepositoryWrite => ({ role, permissions: [{ issues: 'write' }] });
  const byToken = notAccessible('Resource not accessible by personal access token');
  const byIntegration = notAccessible('Resource not accessible by integration');
  const k = db.kysely;
  await assert.rejects(requireWritableRepository(k, await on(classic('ana')), undefined, write('pull')), notFound);
  // Classic and OAuth tokens: `public_repo` writes in public repositories only; `repo` in any.
  assert.equal(await requireWritableRepository(k, await on(classic('ana', ['public_repo'])), repos.open, write('push')), repos.open);
  await assert.rejects(requireWritableRepository(k, await on(classic('ana', ['public_repo'])), repos.secret, write('pull')), notFound);
  await assert.rejects(requireWritableRepository(k, await on(classic('ana', ['public_repo'])), repos.inner, write('pull')), notFound);
  await assert.rejects(requireWritableRepository(k, await on(principal({ kind: 'oauth', user_id: id.ana!, app_id: id.app!, scopes: ['public_repo'] })), repos.secret, write('pull')), notFound);
  assert.equal(await requireWritableRepository(k, await on(classic('ana', ['repo'])), repos.secret, write('push')), repos.secret);
  // The user's role: a reader may do what `pull` allows, a writer (bob: acme's base permission) what `push` does.
  assert.equal(await requireWritableRepository(k, await on(classic('olga')), repos.open, write('pull')), repos.open);
  await assert.rejects(requireWritableRepository(k, await on(classic('olga')), repos.open, write('push')), byToken);
  await assert.rejects(requireWritableRepository(k, await on(classic('olga')), repos.secret, write('pull')), notFound);
  assert.equal(await requireWritableRepository(k, await on(classic('carl')), repos.secret, write('pull')), repos.secret);
  await assert.rejects(requireWritableRepository(k, await on(classic('carl')), repos.secret, write('push')), byToken);
  assert.equal(await requireWritableRepository(k, await on(classic('bob')), repos.secret, write('push')), repos.secret);
  await assert.rejects(requireWritableRepository(k, await on(principal({ kind: 'oauth', user_id: id.olga!, app_id: id.app!, scopes: ['repo'] })), repos.open, write('push')), byIntegration);
  // Fine-grained credentials: their reach, and one of the write's permission sets on the repository's owner.
  const fine = (owner: string, permissions: Permissions) => on(principal({ kind: 'fine_grained', user_id: id.ana!, resource_owner_id: id[owner]!, permissions }));
  assert.equal(await requireWritableRepository(k, await fine('acme', { issues: 'write' }), repos.secret, write('push')), repos.secret);
  assert.equal(await requireWritableRepository(k, await fine('acme', { issues: 'write' }), repos.open, write('pull')), repos.open);
  await assert.rejects(requireWritableRepository(k, await fine('acme', { issues: 'read' }), repos.open, write('pull')), byToken);
  await assert.rejects(requireWritableRepository(k, await fine('globex', { issues: 'write' }), repos.open, write('pull')), byToken);
  assert.equal(await requireWritableRepository(k, await fine('acme', { issues: 'read' }), repos.open, { role: 'pull', permissions: [{ issues: 'write' }, { issues: 'read' }] }), repos.open);
  // Its repository selection too: a public repository of its owner it does not select is seen, not changed.
  const selected = await on(principal({ kind: 'fine_grained', user_id: id.ana!, resource_owner_id: id.acme!, permissions: { issues: 'write' }, repository_selection: 'selected', repository_ids: [repos.secret!.id] }));
  assert.equal(await requireWritableRepository(k, selected, repos.secret, write('push')), repos.secret);
  await assert.rejects(requireWritableRepository(k, selected, repos.open, write('pull')), byToken);
  const acme = await on(principal({ kind: 'installation', app_id: id.app!, installation_id: id.acmeInstallation!, permissions: { issues: 'read', metadata: 'read' } }));
  await assert.rejects(requireWritableRepository(k, acme, repos.secret, write('push')), byIntegration);
  const globex = await on(principal({ kind: 'installation', app_id: id.app!, installation_id: id.globexInstallation!, permissions: { issues: 'write' } }));
  assert.equal(await requireWritableRepository(k, globex, repos.plans, write('push')), repos.plans);
  await assert.rejects(requireWritableRepository(k, globex, repos.open, write('pull')), byIntegration);
  const appUser = await on(principal({ kind: 'app_user', user_id: id.ana!, app_id: id.app! }));
  assert.equal(await requireWritableRepository(k, appUser, repos.plans, write('push')), repos.plans);
  await assert.rejects(requireWritableRepository(k, appUser, repos.open, write('pull')), byIntegration);
  // An archived repository refuses whoever may write in it; a locked one likewise.
  await assert.rejects(requireWritableRepository(k, await on(classic('ana')), { ...repos.vault!, archived: 1 }, write('pull')), notAccessible('Repository was archived so is read-only.'));
  await assert.rejects(requireWritableRepository(k, await on(classic('ana')), { ...repos.vault!, locked_by_migration_id: 1 }, write('pull')), notAccessible('Repository is locked for migration'));
});

test('actsForOrganization: a user in one of the roles through a token that reaches the organization; an installation on it', async () => {
  const acme = id.acme!;
  const acts = async (p: Principal, org: number, roles: ('owner' | 'member' | 'billing_manager')[]) => actsForOrganization(db.kysely, p, org, roles);
  assert.equal(await acts(await classic('ana'), acme, ['owner']), true);
  assert.equal(await acts(await classic('bob'), acme, ['owner']), false);
  assert.equal(await acts(await classic('bob'), acme, ['owner', 'member']), true);
  assert.equal(await acts(await classic('bill'), acme, ['member']), false);
  assert.equal(await acts(await classic('bill'), acme, ['billing_manager']), true);
  assert.equal(await acts(await classic('eve'), acme, ['owner', 'member']), false);
  assert.equal(await acts(ANONYMOUS, acme, ['owner', 'member']), false);
  assert.equal(await acts(await appPrincipal(), acme, ['owner', 'member']), false);
  const installation = await principal({ kind: 'installation', app_id: id.app!, installation_id: id.acmeInstallation! });
  assert.equal(await acts(installation, acme, ['owner']), true);
  assert.equal(await acts(installation, id.globex!, ['owner']), false);
  // A fine-grained token of ana's for globex does not act for acme, where she is an owner.
  assert.equal(await acts(await principal({ kind: 'fine_grained', user_id: id.ana!, resource_owner_id: id.globex! }), acme, ['owner']), false);
  assert.equal(await acts(await principal({ kind: 'fine_grained', user_id: id.ana!, resource_owner_id: acme }), acme, ['owner']), true);
  // An app user token on a route that writes issues: its app's installation on acme grants read only (403); on globex, write.
  const appUser = Object.assign(await principal({ kind: 'app_user', user_id: id.ana!, app_id: id.app! }), { route: { credentials: ['app_user'], permissions: [{ issues: 'write' }] } as AccessRule });
  await assert.rejects(acts(appUser, acme, ['owner']), notAccessible('Resource not accessible by integration'));
  assert.equal(await acts(appUser, id.globex!, ['owner']), true);
});

test('requireAccess: reading a repository answers it or the 404; acting for an organization in a role answers nothing or the 404', async () => {
  assert.equal(await requireAccess(db.kysely, await classic('olga'), 'read', { repository: repos.open }), repos.open);
  await assert.rejects(requireAccess(db.kysely, await classic('olga'), 'read', { repository: repos.secret }), notFound);
  await assert.rejects(requireAccess(db.kysely, ANONYMOUS, 'read', { repository: undefined }), notFound);
  assert.equal(await requireAccess(db.kysely, await classic('ana'), ['owner'], { organization: id.acme! }), undefined);
  await assert.rejects(requireAccess(db.kysely, await classic('bob'), ['owner'], { organization: id.acme! }), notFound);
  assert.equal(await requireAccess(db.kysely, await classic('bob'), ['owner', 'member'], { organization: id.acme! }), undefined);
  await assert.rejects(requireAccess(db.kysely, ANONYMOUS, ['owner', 'member'], { organization: id.acme! }), notFound);
  // An app user token whose app's installation there grants too little: the 403 of actsForOrganization.
  const appUser = Object.assign(await principal({ kind: 'app_user', user_id: id.ana!, app_id: id.app! }), { route: { credentials: ['app_user'], permissions: [{ issues: 'write' }] } as AccessRule });
  await assert.rejects(requireAccess(db.kysely, appUser, ['owner'], { organization: id.acme! }), notAccessible('Resource not accessible by integration'));
});
