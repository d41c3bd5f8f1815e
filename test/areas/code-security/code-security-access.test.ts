// Who may call the code security configuration endpoints: every operation against every credential
// kind (classic and OAuth with and without the scope, fine-grained personal tokens with and without
// the permission and for another resource owner, app user and installation tokens, app JWTs,
// anonymous) and every role (owner, security manager, member, billing manager, outsider), plus the
// X-Accepted-* headers each operation announces.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  appJwt, appUserToken, classicToken, createApp, fineGrainedToken, installationToken, oauthToken, type TestApp,
} from '../../helpers/credentials.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

let server: TestServer;
/** Tokens by case name; `null` is anonymous. */
const tokens: Record<string, string | null> = {};
let setupToken: string;
let enterpriseSetupToken: string;
let privateRepoId: number;
let publicRepoId: number;
let configurationId: number;
let enterpriseConfigurationId: number;
let counter = 0;

before(async () => {
  server = await startServer();
  for (const login of ['ana', 'secman', 'member', 'billing', 'outsider', 'entowner']) await server.admin('POST', '/users', { login });
  await server.admin('POST', '/enterprises', { slug: 'matrix-ent', owners: ['entowner'] });
  await server.admin('POST', '/orgs', { login: 'ent-org', owners: ['ana'], enterprise: 'matrix-ent' });
  await server.admin('POST', '/orgs', { login: 'matrix', owners: ['ana'], members: ['member'], security_managers: ['secman'], billing_managers: ['billing'] });
  await server.admin('POST', '/orgs', { login: 'elsewhere', owners: ['ana'] });
  privateRepoId = (await server.admin('POST', '/repos', { owner: 'matrix', name: 'private-repo', visibility: 'private' })).id;
  publicRepoId = (await server.admin('POST', '/repos', { owner: 'matrix', name: 'public-repo' })).id;

  setupToken = await classicToken(server, 'ana', ['admin:org', 'repo']);
  enterpriseSetupToken = await classicToken(server, 'entowner', ['admin:enterprise']);
  const created = await server.api('POST', '/orgs/matrix/code-security/configurations', { token: setupToken, body: { name: 'Matrix' } });
  configurationId = created.body.id;
  enterpriseConfigurationId = (await server.api('POST', '/enterprises/matrix-ent/code-security/configurations', { token: enterpriseSetupToken, body: { name: 'Matrix enterprise' } })).body.id;
  await server.api('POST', '/orgs/matrix/code-security/configurations/1/attach', { token: setupToken, body: { scope: 'selected', selected_repository_ids: [privateRepoId] } });
  await server.drain();

  const writer = await createApp(server, 'writer-app', { organization_administration: 'write', administration: 'read' });
  const reader = await createApp(server, 'reader-app', { organization_administration: 'read', administration: 'read' });
  const plain = await createApp(server, 'plain-app', { metadata: 'read' });
  const stranger = await createApp(server, 'stranger-app', { organization_administration: 'write', administration: 'read' });
  const oauthApp: TestApp = await createApp(server, 'oauth-app', {});

  Object.assign(tokens, {
    anonymous: null,
    'classic owner admin:org': await classicToken(server, 'ana', ['admin:org']),
    'classic owner write:org': await classicToken(server, 'ana', ['write:org']),
    'classic owner read:org': await classicToken(server, 'ana', ['read:org']),
    'classic owner repo': await classicToken(server, 'ana', ['repo']),
    'classic owner no scope': await classicToken(server, 'ana', []),
    'classic security manager write:org': await classicToken(server, 'secman', ['write:org', 'repo']),
    'classic member write:org': await classicToken(server, 'member', ['write:org', 'repo']),
    'classic billing manager write:org': await classicToken(server, 'billing', ['write:org']),
    'classic outsider write:org': await classicToken(server, 'outsider', ['write:org', 'repo']),
    'oauth owner write:org': await oauthToken(server, oauthApp, 'ana', ['write:org', 'repo']),
    'oauth security manager read:org': await oauthToken(server, oauthApp, 'secman', ['read:org']),
    'oauth billing manager no scope': await oauthToken(server, oauthApp, 'billing', []),
    'fine-grained owner organization_administration write': await fineGrainedToken(server, 'ana', 'matrix', { organization_administration: 'write', administration: 'read' }),
    'fine-grained owner organization_administration read': await fineGrainedToken(server, 'ana', 'matrix', { organization_administration: 'read' }),
    'fine-grained owner repository administration only': await fineGrainedToken(server, 'ana', 'matrix', { administration: 'write' }),
    'fine-grained owner metadata only': await fineGrainedToken(server, 'ana', 'matrix', { metadata: 'read' }),
    'fine-grained owner for another resource owner': await fineGrainedToken(server, 'ana', 'elsewhere', { organization_administration: 'write', administration: 'read' }),
    'fine-grained member organization_administration write': await fineGrainedToken(server, 'member', 'matrix', { organization_administration: 'write', administration: 'read' }),
    'app user owner, app with write': await appUserToken(server, writer, 'ana'),
    'app user owner, app with read': await appUserToken(server, reader, 'ana'),
    'app user owner, app with metadata only': await appUserToken(server, plain, 'ana'),
    'app user owner, app not installed': await appUserToken(server, stranger, 'ana'),
    'app user outsider, app with write': await appUserToken(server, writer, 'outsider'),
    'installation with write': await installationToken(server, writer, 'matrix'),
    'installation with read': await installationToken(server, reader, 'matrix'),
    'installation with metadata only': await installationToken(server, plain, 'matrix'),
    'installation on another account': await installationToken(server, stranger, 'elsewhere'),
    'app JWT': await appJwt(server, writer),
    'classic enterprise owner admin:enterprise': await classicToken(server, 'entowner', ['admin:enterprise']),
    'classic enterprise owner read:enterprise': await classicToken(server, 'entowner', ['read:enterprise']),
    'classic enterprise owner admin:org': await classicToken(server, 'entowner', ['admin:org']),
    'classic organization owner in the enterprise admin:enterprise': await classicToken(server, 'ana', ['admin:enterprise']),
    'classic outsider admin:enterprise': await classicToken(server, 'outsider', ['admin:enterprise']),
    'oauth enterprise owner admin:enterprise': await oauthToken(server, oauthApp, 'entowner', ['admin:enterprise']),
    'oauth enterprise owner read:enterprise': await oauthToken(server, oauthApp, 'entowner', ['read:enterprise']),
    'fine-grained enterprise owner': await fineGrainedToken(server, 'entowner', 'ent-org', { organization_administration: 'write' }),
    'app user enterprise owner': await appUserToken(server, writer, 'entowner'),
  });
  // The writer app on the enterprise's organization, so its app user token reaches it.
  await server.admin('POST', '/apps/writer-app/installations', { account: 'ent-org', repositories: 'all' });
});
after(() => server.close());

type Expectation = 'ok' | 401 | 403 | 404;

interface Operation {
  name: string;
  kind: 'read' | 'write';
  method: string;
  /** The path; a fresh one per call where the operation consumes its target (delete). */
  path: () => Promise<string>;
  body?: () => unknown;
  success: number;
}

async function check(operations: Operation[], cases: Record<string, { read: Expectation; write: Expectation }>, headers: { read: [string, string]; write: [string, string] }) {
  for (const operation of operations) {
    for (const [name, expected] of Object.entries(cases)) {
      const want = expected[operation.kind];
      const token = tokens[name];
      assert.notEqual(token, undefined, `no token for ${name}`);
      const response = await server.api(operation.method, await operation.path(), { token: token ?? undefined, body: operation.body?.() });
      const status = want === 'ok' ? operation.success : want;
      assert.equal(response.status, status, `${operation.name} as ${name}: ${response.status} ${response.text.slice(0, 200)}`);
      if (want === 403 && name.startsWith('fine-grained') && operation.name.startsWith('enterprise')) {
        assert.equal(response.body.message, 'Resource not accessible by personal access token');
      }
      if (token && (status !== 401)) {
        const [scopes, permissions] = headers[operation.kind];
        assert.equal(response.headers.get('x-accepted-oauth-scopes'), scopes, `${operation.name} scopes header`);
        assert.equal(response.headers.get('x-accepted-vendor-permissions'), permissions, `${operation.name} permissions header`);
      }
    }
  }
}

const ORG_CASES: Record<string, { read: Expectation; write: Expectation }> = {
  anonymous: { read: 401, write: 401 },
  'classic owner admin:org': { read: 'ok', write: 'ok' },
  'classic owner write:org': { read: 'ok', write: 'ok' },
  'classic owner read:org': { read: 'ok', write: 403 },
  'classic owner repo': { read: 403, write: 403 },
  'classic owner no scope': { read: 403, write: 403 },
  'classic security manager write:org': { read: 'ok', write: 'ok' },
  'classic member write:org': { read: 403, write: 403 },
  'classic billing manager write:org': { read: 403, write: 403 },
  'classic outsider write:org': { read: 404, write: 404 },
  'oauth owner write:org': { read: 'ok', write: 'ok' },
  'oauth security manager read:org': { read: 'ok', write: 403 },
  'oauth billing manager no scope': { read: 403, write: 403 },
  'fine-grained owner organization_administration write': { read: 'ok', write: 'ok' },
  'fine-grained owner organization_administration read': { read: 'ok', write: 403 },
  'fine-grained owner repository administration only': { read: 403, write: 403 },
  'fine-grained owner for another resource owner': { read: 404, write: 404 },
  'fine-grained member organization_administration write': { read: 403, write: 403 },
  'app user owner, app with write': { read: 'ok', write: 'ok' },
  'app user owner, app with read': { read: 'ok', write: 403 },
  'app user owner, app with metadata only': { read: 403, write: 403 },
  'app user owner, app not installed': { read: 404, write: 404 },
  'app user outsider, app with write': { read: 404, write: 404 },
  'installation with write': { read: 'ok', write: 'ok' },
  'installation with read': { read: 'ok', write: 403 },
  'installation with metadata only': { read: 403, write: 403 },
  'installation on another account': { read: 404, write: 404 },
  'app JWT': { read: 403, write: 403 },
};

const ENTERPRISE_CASES: Record<string, { read: Expectation; write: Expectation }> = {
  anonymous: { read: 401, write: 401 },
  'classic enterprise owner admin:enterprise': { read: 'ok', write: 'ok' },
  'classic enterprise owner read:enterprise': { read: 'ok', write: 403 },
  'classic enterprise owner admin:org': { read: 403, write: 403 },
  'classic organization owner in the enterprise admin:enterprise': { read: 403, write: 403 },
  'classic outsider admin:enterprise': { read: 404, write: 404 },
  'oauth enterprise owner admin:enterprise': { read: 'ok', write: 'ok' },
  'oauth enterprise owner read:enterprise': { read: 'ok', write: 403 },
  'fine-grained enterprise owner': { read: 403, write: 403 },
  'app user enterprise owner': { read: 403, write: 403 },
  'installation with write': { read: 403, write: 403 },
  'app JWT': { read: 403, write: 403 },
};

const orgBase = '/orgs/matrix/code-security/configurations';
const enterpriseBase = '/enterprises/matrix-ent/code-security/configurations';

async function freshConfiguration(base: string, token: string): Promise<number> {
  const response = await server.api('POST', base, { token, body: { name: `fresh ${++counter}` } });
  assert.equal(response.status, 201, response.text);
  return response.body.id;
}

describe('organization endpoints', () => {
  const operations: Operation[] = [
    { name: 'list', kind: 'read', method: 'GET', path: async () => orgBase, success: 200 },
    { name: 'list defaults', kind: 'read', method: 'GET', path: async () => `${orgBase}/defaults`, success: 200 },
    { name: 'retrieve', kind: 'read', method: 'GET', path: async () => `${orgBase}/${configurationId}`, success: 200 },
    { name: 'repositories', kind: 'read', method: 'GET', path: async () => `${orgBase}/1/repositories`, success: 200 },
    { name: 'create', kind: 'write', method: 'POST', path: async () => orgBase, body: () => ({ name: `created ${++counter}` }), success: 201 },
    { name: 'update', kind: 'write', method: 'PATCH', path: async () => `${orgBase}/${configurationId}`, body: () => ({ description: `described ${++counter}` }), success: 200 },
    { name: 'delete', kind: 'write', method: 'DELETE', path: async () => `${orgBase}/${await freshConfiguration(orgBase, setupToken)}`, success: 204 },
    { name: 'attach', kind: 'write', method: 'POST', path: async () => `${orgBase}/${configurationId}/attach`, body: () => ({ scope: 'selected', selected_repository_ids: [publicRepoId] }), success: 202 },
    { name: 'detach', kind: 'write', method: 'DELETE', path: async () => `${orgBase}/detach`, body: () => ({ selected_repository_ids: [publicRepoId] }), success: 204 },
    { name: 'set default', kind: 'write', method: 'PUT', path: async () => `${orgBase}/${configurationId}/defaults`, body: () => ({ default_for_new_repos: 'none' }), success: 200 },
  ];
  for (const operation of operations) {
    test(`${operation.name}: every credential kind and role`, async () => {
      await check([operation], ORG_CASES, {
        read: ['admin:org, read:org, write:org', 'organization_administration=read'],
        write: ['admin:org, write:org', 'organization_administration=write'],
      });
    });
  }

  test('an unknown organization is a 404 for everyone', async () => {
    const response = await server.api('GET', '/orgs/no-such-org/code-security/configurations', { token: tokens['classic owner admin:org']! });
    assert.equal(response.status, 404);
    assert.equal((await server.api('GET', `/orgs/${'ana'}/code-security/configurations`, { token: tokens['classic owner admin:org']! })).status, 404, 'a user is not an organization');
  });
});

describe('enterprise endpoints', () => {
  const operations: Operation[] = [
    { name: 'enterprise list', kind: 'read', method: 'GET', path: async () => enterpriseBase, success: 200 },
    { name: 'enterprise list defaults', kind: 'read', method: 'GET', path: async () => `${enterpriseBase}/defaults`, success: 200 },
    { name: 'enterprise retrieve', kind: 'read', method: 'GET', path: async () => `${enterpriseBase}/${enterpriseConfigurationId}`, success: 200 },
    { name: 'enterprise repositories', kind: 'read', method: 'GET', path: async () => `${enterpriseBase}/${enterpriseConfigurationId}/repositories`, success: 200 },
    { name: 'enterprise create', kind: 'write', method: 'POST', path: async () => enterpriseBase, body: () => ({ name: `created ${++counter}` }), success: 201 },
    { name: 'enterprise update', kind: 'write', method: 'PATCH', path: async () => `${enterpriseBase}/${enterpriseConfigurationId}`, body: () => ({ description: `described ${++counter}` }), success: 200 },
    { name: 'enterprise delete', kind: 'write', method: 'DELETE', path: async () => `${enterpriseBase}/${await freshConfiguration(enterpriseBase, enterpriseSetupToken)}`, success: 204 },
    { name: 'enterprise attach', kind: 'write', method: 'POST', path: async () => `${enterpriseBase}/${enterpriseConfigurationId}/attach`, body: () => ({ scope: 'all' }), success: 202 },
    { name: 'enterprise set default', kind: 'write', method: 'PUT', path: async () => `${enterpriseBase}/${enterpriseConfigurationId}/defaults`, body: () => ({ default_for_new_repos: 'none' }), success: 200 },
  ];
  for (const operation of operations) {
    test(`${operation.name}: every credential kind and role`, async () => {
      await check([operation], ENTERPRISE_CASES, { read: ['admin:enterprise, manage_billing:enterprise, read:enterprise', ''], write: ['admin:enterprise', ''] });
    });
  }

  test('an unknown enterprise is a 404', async () => {
    const response = await server.api('GET', '/enterprises/no-such/code-security/configurations', { token: tokens['classic enterprise owner admin:enterprise']! });
    assert.equal(response.status, 404);
  });
});

describe('repository endpoint', () => {
  const privateCases: Record<string, Expectation> = {
    anonymous: 401,
    'classic owner admin:org': 403,
    'classic owner repo': 'ok',
    'classic security manager write:org': 'ok',
    'classic member write:org': 403,
    'classic outsider write:org': 404,
    'oauth owner write:org': 'ok',
    'oauth security manager read:org': 403,
    'fine-grained owner organization_administration write': 'ok',
    'fine-grained owner metadata only': 403,
    'fine-grained owner for another resource owner': 404,
    'app user owner, app with write': 'ok',
    'app user owner, app with metadata only': 403,
    'app user owner, app not installed': 404,
    'installation with read': 'ok',
    'installation with metadata only': 403,
    'installation on another account': 404,
    'app JWT': 403,
  };
  const publicCases: Record<string, Expectation> = {
    'classic owner repo': 'ok',
    'classic member write:org': 403,
    'classic outsider write:org': 403,
    'fine-grained owner for another resource owner': 403,
    // A public repository is there for every installation, as for anyone; this one's token does not
    // reach it, so it is refused like the fine-grained token of another owner.
    'installation on another account': 403,
  };

  test('private repository: every credential kind and role', async () => {
    for (const [name, want] of Object.entries(privateCases)) {
      const response = await server.api('GET', '/repos/matrix/private-repo/code-security-configuration', { token: tokens[name] ?? undefined });
      assert.equal(response.status, want === 'ok' ? 200 : want, `${name}: ${response.text.slice(0, 200)}`);
      if (want === 'ok') assert.equal(response.body.configuration.id, 1);
      if (tokens[name]) {
        assert.equal(response.headers.get('x-accepted-oauth-scopes'), 'repo');
        assert.equal(response.headers.get('x-accepted-vendor-permissions'), 'administration=read');
      }
    }
  });

  test('public repository: visible to all, readable by its administrators only', async () => {
    for (const [name, want] of Object.entries(publicCases)) {
      const response = await server.api('GET', '/repos/matrix/public-repo/code-security-configuration', { token: tokens[name] ?? undefined });
      assert.equal(response.status, want === 'ok' ? 204 : want, `${name}: ${response.text.slice(0, 200)}`);
    }
  });
});
