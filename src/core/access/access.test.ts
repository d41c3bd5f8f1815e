// The caller rules that need no database, on their own (no server): implied scopes, permission
// levels, the endpoint rule (kind, scopes, permission sets), the 401/403 messages and headers, the
// Authorization header's forms, what counts as a failed login, and the calling app or installation.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../platform/errors.ts';
import {
  acceptedHeaders, acceptedScopes, actingUser, assertRepositoryWritable, checkRule, expandScopes, hasPermissions, hasScope,
  isFineGrained, notAccessible, permittedOn, reachesAccount, requirePermittedOn, requireScopes,
} from './access.ts';
import type { AccessRule } from './rule.ts';
import { callingApp, callingInstallation } from './app.ts';
import {
  ANONYMOUS, ClientCredentialsRejected, isFailedLogin, parseAuthorization,
  type AppPrincipal, type InstallationPrincipal, type Principal, type UserPrincipal,
} from './principal.ts';
import type { Permissions } from './permissions.ts';

const USER = { id: 5, login: 'mona' } as UserPrincipal['user'];

function user(kind: UserPrincipal['kind'], extra: Partial<UserPrincipal> = {}): UserPrincipal {
  return {
    type: 'user', kind, user: USER, scopes: [], appId: null, resourceOwnerId: null, tokenId: 1, permissions: {},
    repositorySelection: 'all', repositoryIds: [], expiresAt: null, route: null,
    permissionsOn: async () => ({}), installationOn: async () => null, ...extra,
  };
}

function installation(extra: Partial<InstallationPrincipal> = {}): InstallationPrincipal {
  return {
    type: 'installation', kind: 'installation', installationId: 3, appId: 2, accountId: 9, tokenId: 1, permissions: {},
    repositorySelection: 'all', repositoryIds: [], expiresAt: null, route: null, permissionsOn: async () => ({}), ...extra,
  };
}

const APP_ROW = { id: 2, client_id: 'Iv1.abc' } as AppPrincipal['app'];
const app = (kind: AppPrincipal['kind'] = 'jwt'): AppPrincipal => ({ type: 'app', kind, app: APP_ROW });

/** The 403 `error` must be, with its message. */
function is403(error: unknown, message: string): boolean {
  assert.ok(error instanceof ApiError);
  assert.equal(error.status, 403);
  assert.equal(error.message, message);
  return true;
}
const PAT = 'Resource not accessible by personal access token';
const INTEGRATION = 'Resource not accessible by integration';

test('expandScopes: each scope with what it implies, transitively, and nothing else', () => {
  assert.deepEqual([...expandScopes([])], []);
  assert.deepEqual([...expandScopes(['repo'])].sort(), ['public_repo', 'repo', 'repo:invite', 'repo:status', 'repo_deployment', 'security_events']);
  assert.deepEqual([...expandScopes(['admin:org'])].sort(), ['admin:org', 'manage_runners:org', 'read:org', 'write:org']);
  assert.deepEqual([...expandScopes(['write:org'])].sort(), ['read:org', 'write:org']);
  assert.deepEqual([...expandScopes(['admin:enterprise'])].sort(), ['admin:enterprise', 'manage_billing:enterprise', 'manage_runners:enterprise', 'read:enterprise', 'scim:enterprise']);
  assert.deepEqual([...expandScopes(['manage_billing:enterprise'])].sort(), ['manage_billing:enterprise', 'read:enterprise']);
  assert.deepEqual([...expandScopes(['user'])].sort(), ['read:user', 'user', 'user:email', 'user:follow']);
  assert.deepEqual([...expandScopes(['admin:repo_hook'])].sort(), ['admin:repo_hook', 'read:repo_hook', 'write:repo_hook']);
  assert.deepEqual([...expandScopes(['write:repo_hook'])].sort(), ['read:repo_hook', 'write:repo_hook']);
  assert.deepEqual([...expandScopes(['admin:org_hook'])], ['admin:org_hook']);
  assert.deepEqual([...expandScopes(['read:org', 'gist'])].sort(), ['gist', 'read:org']);
  assert.deepEqual([...expandScopes(['toString', '__proto__'])].sort(), ['__proto__', 'toString']);
  assert.deepEqual([...expandScopes(['write:org', 'admin:org', 'write:org'])].sort(), ['admin:org', 'manage_runners:org', 'read:org', 'write:org']);
});

test('hasScope: only classic and OAuth tokens, any one scope, implied ones count', () => {
  assert.equal(hasScope(user('classic', { scopes: ['repo'] }), ['public_repo']), true);
  assert.equal(hasScope(user('oauth', { scopes: ['repo'] }), ['public_repo']), true);
  assert.equal(hasScope(user('classic', { scopes: ['read:org'] }), ['write:org', 'read:org']), true);
  assert.equal(hasScope(user('classic', { scopes: ['read:org'] }), ['write:org']), false);
  assert.equal(hasScope(user('classic', { scopes: ['repo'] }), []), false);
  assert.equal(hasScope(user('fine_grained', { scopes: ['repo'] }), ['repo']), false);
  assert.equal(hasScope(user('app_user', { scopes: ['repo'] }), ['repo']), false);
  assert.equal(hasScope(installation(), ['repo']), false);
  assert.equal(hasScope(app(), ['repo']), false);
  assert.equal(hasScope(ANONYMOUS, ['repo']), false);
});

test('hasPermissions: write reaches read and write, read only read, any one set', () => {
  const yes = (held: Permissions, sets: Permissions[]) => assert.equal(hasPermissions(held, sets), true, JSON.stringify([held, sets]));
  const no = (held: Permissions, sets: Permissions[]) => assert.equal(hasPermissions(held, sets), false, JSON.stringify([held, sets]));
  yes({ issues: 'write' }, [{ issues: 'write' }]);
  yes({ issues: 'write' }, [{ issues: 'read' }]);
  yes({ issues: 'read' }, [{ issues: 'read' }]);
  no({ issues: 'read' }, [{ issues: 'write' }]);
  no({}, [{ issues: 'read' }]);
  no({ contents: 'write' }, [{ issues: 'read' }]);
  yes({ issues: 'read', contents: 'write' }, [{ issues: 'read', contents: 'read' }]);
  no({ issues: 'read' }, [{ issues: 'read', contents: 'read' }]);
  yes({ contents: 'read' }, [{ issues: 'read' }, { contents: 'read' }]);
  no({}, []);
  yes({}, [{}]);
  // Only the token's own entries: an inherited name is no permission.
  no({}, [{ toString: 'read' } as Permissions]);
  no(Object.create({ issues: 'write' }) as Permissions, [{ issues: 'read' }]);
});

test('isFineGrained and actingUser: by kind and type', () => {
  assert.equal(isFineGrained(user('fine_grained')), true);
  assert.equal(isFineGrained(user('app_user')), true);
  assert.equal(isFineGrained(installation()), true);
  assert.equal(isFineGrained(user('classic')), false);
  assert.equal(isFineGrained(user('oauth')), false);
  assert.equal(isFineGrained(app()), false);
  assert.equal(isFineGrained(ANONYMOUS), false);
  assert.equal(actingUser(user('classic')), USER);
  assert.equal(actingUser(installation()), null);
  assert.equal(actingUser(app()), null);
  assert.equal(actingUser(ANONYMOUS), null);
});

test('acceptedHeaders: the scopes and permission sets, worked out once per rule', () => {
  const rule: AccessRule = { credentials: ['classic'], scopes: ['repo', 'public_repo'], permissions: [{ issues: 'write', metadata: 'read' }, { pull_requests: 'write' }] };
  const headers = acceptedHeaders(rule);
  assert.deepEqual(headers, {
    'x-accepted-oauth-scopes': 'public_repo, repo',
    'x-accepted-vendor-permissions': 'issues=write,metadata=read; pull_requests=write',
  });
  assert.equal(acceptedHeaders(rule), headers);
  assert.deepEqual(acceptedHeaders({ credentials: ['classic'] }), { 'x-accepted-oauth-scopes': '', 'x-accepted-vendor-permissions': '' });
  assert.deepEqual(acceptedHeaders({ credentials: ['oauth'], scopes: ['write:org'] }), { 'x-accepted-oauth-scopes': 'admin:org, write:org', 'x-accepted-vendor-permissions': '' });
  // No classic or OAuth token may call it (Basic, a JWT, an installation token): no scope header at all.
  for (const credentials of [['basic'], ['jwt'], ['installation'], ['fine_grained', 'app_user', 'installation']] as const) {
    assert.deepEqual(acceptedHeaders({ credentials, scopes: ['repo'] }), { 'x-accepted-vendor-permissions': '' }, credentials.join());
  }
});

test('acceptedScopes: every scope that includes one asked for, sorted', () => {
  assert.equal(acceptedScopes([]), '');
  assert.equal(acceptedScopes(['write:org']), 'admin:org, write:org');
  assert.equal(acceptedScopes(['read:org']), 'admin:org, read:org, write:org');
  assert.equal(acceptedScopes(['notifications', 'repo']), 'notifications, repo');
  assert.equal(acceptedScopes(['repo', 'notifications']), 'notifications, repo');
  assert.equal(acceptedScopes(['admin:org']), 'admin:org');
  assert.equal(acceptedScopes(['read:enterprise']), 'admin:enterprise, manage_billing:enterprise, read:enterprise');
  assert.equal(acceptedScopes(['public_repo']), 'public_repo, repo');
  // A scope nothing implies, and one no token names, stand alone.
  assert.equal(acceptedScopes(['manage_billing:assistant']), 'manage_billing:assistant');
  assert.equal(acceptedScopes(['toString']), 'toString');
});

test('notAccessible and requireScopes: the 403 of each kind, with the scopes needed', () => {
  assert.ok(is403(notAccessible(user('classic')), PAT));
  assert.ok(is403(notAccessible(user('fine_grained')), PAT));
  assert.ok(is403(notAccessible(user('oauth')), INTEGRATION));
  assert.ok(is403(notAccessible(user('app_user')), INTEGRATION));
  assert.ok(is403(notAccessible(installation()), INTEGRATION));
  assert.ok(is403(notAccessible(app()), INTEGRATION));

  requireScopes(user('classic', { scopes: ['repo'] }), ['repo']);
  assert.throws(() => requireScopes(user('classic', { scopes: ['gist'] }), ['repo', 'public_repo']), (error) => {
    assert.ok(is403(error, PAT));
    assert.deepEqual((error as ApiError).headers, { 'x-accepted-oauth-scopes': 'public_repo, repo' });
    return true;
  });
  assert.throws(() => requireScopes(user('oauth'), ['repo']), (error) => is403(error, INTEGRATION));
});

test('checkRule: anonymous, credential kinds, scopes, permission sets, privateOnly', () => {
  const ok = (rule: AccessRule, principal: Principal) => assert.doesNotThrow(() => checkRule(rule, principal));
  const refused = (rule: AccessRule, principal: Principal, status: number, message: string) =>
    assert.throws(() => checkRule(rule, principal), (error) => {
      assert.ok(error instanceof ApiError);
      assert.equal(error.status, status);
      assert.equal(error.message, message);
      return true;
    });
  const classic = { credentials: ['classic', 'oauth'] } as const satisfies AccessRule;
  ok({ ...classic, anonymous: true }, ANONYMOUS);
  refused(classic, ANONYMOUS, 401, 'Requires authentication');
  refused({ ...classic, anonymous: false }, ANONYMOUS, 401, 'Requires authentication');
  ok(classic, user('classic'));
  refused(classic, user('fine_grained'), 403, PAT);
  refused(classic, installation(), 403, INTEGRATION);
  refused({ credentials: ['classic'], anonymous: true }, app(), 403, INTEGRATION);

  const scoped: AccessRule = { credentials: ['classic', 'oauth', 'fine_grained', 'installation', 'jwt'], scopes: ['write:org'], permissions: [{ members: 'write' }] };
  ok(scoped, user('classic', { scopes: ['admin:org'] }));
  ok(scoped, user('oauth', { scopes: ['write:org'] }));
  refused(scoped, user('classic', { scopes: ['read:org'] }), 403, PAT);
  refused(scoped, user('oauth', { scopes: [] }), 403, INTEGRATION);
  ok({ ...scoped, scopes: [] }, user('classic'));
  ok({ ...scoped, privateOnly: true }, user('classic', { scopes: [] }));
  ok({ ...scoped, privateOnly: true }, user('fine_grained', { permissions: {} }));
  ok(scoped, user('fine_grained', { permissions: { members: 'write' } }));
  refused(scoped, user('fine_grained', { permissions: { members: 'read' } }), 403, PAT);
  ok(scoped, installation({ permissions: { members: 'write' } }));
  refused(scoped, installation({ permissions: {} }), 403, INTEGRATION);
  ok({ ...scoped, permissions: [] }, installation());
  ok({ credentials: ['installation', 'fine_grained'] }, installation());
  ok({ credentials: ['installation', 'fine_grained'] }, user('fine_grained'));
  // A classic token answers to scopes, not to the permission sets; an app JWT to neither.
  ok(scoped, user('classic', { scopes: ['write:org'], permissions: {} }));
  ok(scoped, app('jwt'));
  // A fine-grained token answers to permission sets, not scopes.
  ok({ ...scoped, credentials: ['fine_grained'], permissions: [{ members: 'read' }] }, user('fine_grained', { scopes: [], permissions: { members: 'read' } }));
});

test('reachesAccount and permittedOn: the token\'s account and its permissions there', async () => {
  assert.equal(await reachesAccount(null as never, installation({ accountId: 9 }), 9), true);
  assert.equal(await reachesAccount(null as never, installation({ accountId: 9 }), 8), false);
  assert.equal(await reachesAccount(null as never, app(), 9), false);
  assert.equal(await reachesAccount(null as never, ANONYMOUS, 9), false);
  assert.equal(await reachesAccount(null as never, user('fine_grained', { resourceOwnerId: 9 }), 9), true);
  assert.equal(await reachesAccount(null as never, user('fine_grained', { resourceOwnerId: 9 }), 8), false);
  const grant = { id: 1, repositorySelection: 'all' as const, permissions: {} };
  const appUser = user('app_user', { installationOn: async (account) => (account === 9 ? grant : null) });
  assert.equal(await reachesAccount(null as never, appUser, 9), true);
  assert.equal(await reachesAccount(null as never, appUser, 8), false);
  assert.equal(await reachesAccount(null as never, user('classic'), 8), true);
  assert.equal(await reachesAccount(null as never, user('oauth'), 8), true);

  const route: AccessRule = { credentials: ['app_user', 'installation', 'fine_grained'], permissions: [{ issues: 'write' }] };
  const on = async (account: number): Promise<Permissions> => (account === 9 ? { issues: 'write' } : { issues: 'read' });
  for (const principal of [user('app_user', { route, permissionsOn: on }), user('fine_grained', { route, permissionsOn: on }), installation({ route, permissionsOn: on })]) {
    assert.equal(await permittedOn(principal, 9), true);
    assert.equal(await permittedOn(principal, 8), false);
    await requirePermittedOn(principal, 9);
    await assert.rejects(requirePermittedOn(principal, 8), (error) => is403(error, notAccessible(principal).message));
  }
  // Without permission sets on the route, or for other kinds: permitted.
  assert.equal(await permittedOn(user('app_user', { route: { credentials: ['app_user'] }, permissionsOn: on }), 8), true);
  assert.equal(await permittedOn(user('app_user', { route: { credentials: ['app_user'], permissions: [] }, permissionsOn: on }), 8), true);
  assert.equal(await permittedOn(user('app_user', { route: null, permissionsOn: on }), 8), true);
  assert.equal(await permittedOn(user('classic', { route, permissionsOn: on }), 8), true);
  assert.equal(await permittedOn(user('oauth', { route, permissionsOn: on }), 8), true);
  assert.equal(await permittedOn(app(), 8), true);
  assert.equal(await permittedOn(ANONYMOUS, 8), true);
});

test('assertRepositoryWritable: an archived repository, or one locked by a migration, is a 403', () => {
  assertRepositoryWritable({ archived: 0, locked_by_migration_id: null });
  assert.throws(() => assertRepositoryWritable({ archived: 0, locked_by_migration_id: 4 }), (error) => is403(error, 'Repository is locked for migration'));
  assert.throws(() => assertRepositoryWritable({ archived: 0, locked_by_migration_id: 0 }), (error) => is403(error, 'Repository is locked for migration'));
  assert.throws(() => assertRepositoryWritable({ archived: 1, locked_by_migration_id: null }), (error) => is403(error, 'Repository was archived so is read-only.'));
  // Archived first: unarchiving is what the operator must do before any unlock helps.
  assert.throws(() => assertRepositoryWritable({ archived: 1, locked_by_migration_id: 4 }), (error) => is403(error, 'Repository was archived so is read-only.'));
});

test('parseAuthorization: bearer, token and basic forms; anything else unreadable is Bad credentials', () => {
  assert.equal(parseAuthorization(undefined), null);
  assert.equal(parseAuthorization(''), null);
  assert.equal(parseAuthorization('   '), null);
  assert.deepEqual(parseAuthorization('Bearer abc'), { scheme: 'bearer', credential: 'abc' });
  assert.deepEqual(parseAuthorization('bearer abc'), { scheme: 'bearer', credential: 'abc' });
  assert.deepEqual(parseAuthorization('TOKEN  abc  '), { scheme: 'token', credential: 'abc' });
  const basic = (text: string) => `Basic ${Buffer.from(text).toString('base64')}`;
  assert.deepEqual(parseAuthorization(basic('mona:s3:cret')), { scheme: 'basic', username: 'mona', credential: 's3:cret' });
  assert.deepEqual(parseAuthorization(basic(':x')), { scheme: 'basic', username: '', credential: 'x' });
  assert.deepEqual(parseAuthorization(basic('x:')), { scheme: 'basic', username: 'x', credential: '' });
  const bad = (header: string) => assert.throws(() => parseAuthorization(header), (error) => {
    assert.ok(error instanceof ApiError);
    assert.equal(error.status, 401);
    assert.equal(error.message, 'Bad credentials');
    return true;
  }, header);
  bad('Bearer');
  bad('Bearer a b');
  bad(' Bearer abc');
  bad('Digest abc');
  bad(`Digest ${Buffer.from('user:secret').toString('base64')}`);
  bad(basic('no-colon'));
});

test('isFailedLogin: a refused client credential or a 401, nothing else', () => {
  assert.equal(isFailedLogin(new ClientCredentialsRejected()), true);
  const rejected = new ClientCredentialsRejected();
  assert.equal(rejected.status, 404);
  assert.equal(rejected.message, 'Not Found');
  assert.equal(isFailedLogin(new ApiError(401, 'Bad credentials')), true);
  assert.equal(isFailedLogin(new ApiError(404, 'Not Found')), false);
  assert.equal(isFailedLogin(new ApiError(403, 'x')), false);
  assert.equal(isFailedLogin(Object.assign(new Error('x'), { status: 401 })), false);
  assert.equal(isFailedLogin(undefined), false);
});

test('callingApp and callingInstallation: the credential the rule admitted, else a 404', () => {
  const request = (principal: Principal) => ({ principal }) as unknown as FastifyRequest;
  const notFound = (error: unknown) => error instanceof ApiError && error.status === 404 && error.message === 'Not Found';
  assert.equal(callingApp(request(app('jwt'))), APP_ROW);
  assert.equal(callingApp(request(app('basic')), 'Iv1.abc'), APP_ROW);
  assert.throws(() => callingApp(request(app('basic')), 'Iv1.other'), notFound);
  assert.throws(() => callingApp(request(installation())), notFound);
  assert.throws(() => callingApp(request(ANONYMOUS), 'Iv1.abc'), notFound);
  const token = installation();
  assert.equal(callingInstallation(request(token)), token);
  assert.throws(() => callingInstallation(request(app())), notFound);
  assert.throws(() => callingInstallation(request(user('app_user'))), notFound);
});
