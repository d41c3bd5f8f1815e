// The authorization holes of issue 10 that concern the caller's effective permissions: app user and
// installation tokens get what the installation grants ∩ what the app requests (1), scoped tokens stay
// on their target (3), and a classic token needs `repo` to export private repositories (4).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { appJwt, appUserToken, classicToken, createApp, oauthToken, type TestApp } from '../../helpers/credentials.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

let server: TestServer;

const basic = (clientId: string, secret: string) => `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`;

before(async () => {
  server = await startServer();
  for (const login of ['mona', 'hubot']) await server.admin('POST', '/users', { login });
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'], members: ['hubot'] });
  await server.admin('POST', '/orgs', { login: 'globex', owners: ['mona'] });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets', visibility: 'private' });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'gadgets', visibility: 'private' });
  await server.admin('POST', '/repos', { owner: 'globex', name: 'things', visibility: 'private' });
});
after(() => server.close());

/** Installs an app and mints an installation token (body: the narrowing asked for). */
async function install(app: TestApp, account: string, options: Record<string, unknown> = {}) {
  return server.admin('POST', `/apps/${app.slug}/installations`, { account, repositories: 'all', ...options });
}

async function mint(app: TestApp, installationId: number, body: Record<string, unknown> = {}) {
  return server.api('POST', `/app/installations/${installationId}/access_tokens`, { authorization: `Bearer ${await appJwt(server, app)}`, body });
}

let created = 0;
const createConfiguration = (org: string, token: string) =>
  server.api('POST', `/orgs/${org}/code-security/configurations`, { token, body: { name: `Configuration ${++created}` } });
const listConfigurations = (org: string, token: string) => server.api('GET', `/orgs/${org}/code-security/configurations`, { token });
/** A repository's configuration: 200, or 204 when none is attached; what matters here is the refusals. */
const repositoryConfiguration = async (full: string, token: string) => {
  const response = await server.api('GET', `/repos/${full}/code-security-configuration`, { token });
  return response.status === 204 ? 200 : response.status;
};

describe('hole 1: app user and installation tokens act with the installation grant ∩ the app request', () => {
  let app: TestApp;
  let acmeInstallation: number;
  let globexInstallation: number;

  before(async () => {
    app = await createApp(server, 'grant-app', { organization_administration: 'write', administration: 'read', metadata: 'read', organization_issue_types: 'write' });
    // acme grants only read; globex grants everything the app requests.
    acmeInstallation = (await install(app, 'acme', { permissions: { organization_administration: 'read', administration: 'read', metadata: 'read', organization_issue_types: 'read' } })).id;
    globexInstallation = (await install(app, 'globex')).id;
  });

  test("an org owner's app user token cannot write where the installation grants only read", async () => {
    const token = await appUserToken(server, app, 'mona');
    const refused = await createConfiguration('acme', token);
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.body.message, 'Resource not accessible by integration');
    assert.equal((await listConfigurations('acme', token)).status, 200);
    // Where the installation grants write, the same token writes.
    assert.equal((await createConfiguration('globex', token)).status, 201);
  });

  test('the same holds on the other organization endpoints that check the grant', async () => {
    const token = await appUserToken(server, app, 'mona');
    const issueType = await server.api('POST', '/orgs/acme/issue-types', { token, body: { name: 'Chore', is_enabled: true } });
    assert.equal(issueType.status, 403, issueType.text);
    assert.equal((await server.api('GET', '/orgs/acme/issue-types', { token })).status, 200);
    assert.equal((await server.api('POST', '/orgs/globex/issue-types', { token, body: { name: 'Chore', is_enabled: true } })).status, 200);
    const level = await server.api('PUT', '/orgs/acme/updater/repository-access/default-level', { token, body: { default_level: 'public' } });
    assert.equal(level.status, 403, level.text);
    assert.equal((await server.api('GET', '/orgs/acme/updater/repository-access', { token })).status, 200);
    assert.equal((await server.api('PUT', '/orgs/globex/updater/repository-access/default-level', { token, body: { default_level: 'public' } })).status, 204);
    // What the user may not do stays refused whatever the grant: a member is no owner.
    const member = await appUserToken(server, app, 'hubot');
    assert.equal((await createConfiguration('globex', member)).status, 404);
  });

  test('an installation token gets the grant, not the request', async () => {
    const minted = await mint(app, acmeInstallation);
    assert.equal(minted.status, 201, minted.text);
    assert.deepEqual(minted.body.permissions, { organization_administration: 'read', administration: 'read', metadata: 'read', organization_issue_types: 'read' });
    const refused = await createConfiguration('acme', minted.body.token);
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.body.message, 'Resource not accessible by integration');
    assert.equal((await listConfigurations('acme', minted.body.token)).status, 200);
    // Asking for more than the grant is a 422.
    const wider = await mint(app, acmeInstallation, { permissions: { organization_administration: 'write' } });
    assert.equal(wider.status, 422, wider.text);
    const full = await mint(app, globexInstallation);
    assert.equal((await createConfiguration('globex', full.body.token)).status, 201);
  });

  test('the app requesting less than the installation granted limits both token kinds', async () => {
    const narrow = await createApp(server, 'narrowing-app', { organization_administration: 'write', metadata: 'read' });
    const installation = (await install(narrow, 'acme')).id;
    const before = (await mint(narrow, installation)).body.token as string;
    const userToken = await appUserToken(server, narrow, 'mona');
    assert.equal((await createConfiguration('acme', before)).status, 201);
    assert.equal((await createConfiguration('acme', userToken)).status, 201);
    // The app now requests only read; the installation's stored grant still says write.
    await server.server.ctx.db.kysely.updateTable('apps').set({ permissions: JSON.stringify({ organization_administration: 'read', metadata: 'read' }) }).where('id', '=', narrow.id).execute();
    for (const [label, token] of [['installation token minted before', before], ['app user token', userToken]] as const) {
      const refused = await createConfiguration('acme', token);
      assert.equal(refused.status, 403, `${label}: ${refused.text}`);
      assert.equal((await listConfigurations('acme', token)).status, 200, label);
    }
    const after = await mint(narrow, installation);
    assert.equal(after.status, 201);
    assert.deepEqual(after.body.permissions, { organization_administration: 'read', metadata: 'read' });
    assert.equal((await createConfiguration('acme', after.body.token)).status, 403);
    assert.equal((await mint(narrow, installation, { permissions: { organization_administration: 'write' } })).status, 422);
  });

  test("an app user token does not read a private repository's configuration where the grant lacks administration", async () => {
    const bare = await createApp(server, 'bare-app', { administration: 'read', metadata: 'read' });
    await install(bare, 'acme', { permissions: { metadata: 'read' } });
    await install(bare, 'globex');
    const token = await appUserToken(server, bare, 'mona');
    assert.equal(await repositoryConfiguration('acme/widgets', token), 403);
    assert.equal(await repositoryConfiguration('globex/things', token), 200);
  });

  test("a private repository's issue types need metadata in the grant on its owner", async () => {
    const types = await createApp(server, 'types-app', { metadata: 'read', organization_administration: 'read' });
    const acme = await install(types, 'acme', { permissions: { organization_administration: 'read' } });
    await install(types, 'globex');
    const token = await appUserToken(server, types, 'mona');
    const refused = await server.api('GET', '/repos/acme/widgets/issue-types', { token });
    assert.equal(refused.status, 403, refused.text);
    assert.equal((await server.api('GET', '/repos/globex/things/issue-types', { token })).status, 200);
    const installationToken = (await mint(types, acme.id)).body.token;
    assert.equal((await server.api('GET', '/repos/acme/widgets/issue-types', { token: installationToken })).status, 403);
  });
});

describe('hole 3: a scoped token works only on its target', () => {
  let app: TestApp & { client_secret: string };

  before(async () => {
    app = await server.admin('POST', '/apps', { slug: 'scoped-app', permissions: { organization_administration: 'write', administration: 'read', metadata: 'read' } });
    await install(app, 'acme');
    await install(app, 'globex');
  });

  const scope = (body: Record<string, unknown>) =>
    server.api('POST', `/applications/${app.client_id}/token/scoped`, { authorization: basic(app.client_id, app.client_secret), body });

  test('a token scoped to acme reaches acme, not globex where the same app is installed', async () => {
    const token = await appUserToken(server, app, 'mona');
    assert.equal((await listConfigurations('globex', token)).status, 200, 'the unscoped token reaches both');
    for (const target of [{ target: 'acme' }, { target_id: (await server.admin('GET', '/repos/acme/widgets')).owner.id }]) {
      const scoped = await scope({ access_token: token, ...target });
      assert.equal(scoped.status, 200, scoped.text);
      assert.equal((await listConfigurations('acme', scoped.body.token)).status, 200);
      assert.equal((await createConfiguration('acme', scoped.body.token)).status, 201);
      const elsewhere = await listConfigurations('globex', scoped.body.token);
      assert.equal(elsewhere.status, 404, elsewhere.text);
      assert.equal(await repositoryConfiguration('globex/things', scoped.body.token), 404);
    }
  });

  test('repositories and permissions narrow the scoped token', async () => {
    const token = await appUserToken(server, app, 'mona');
    const scoped = await scope({ access_token: token, target: 'acme', repositories: ['widgets'], permissions: { organization_administration: 'read', administration: 'read' } });
    assert.equal(scoped.status, 200, scoped.text);
    const narrow = scoped.body.token as string;
    assert.equal((await listConfigurations('acme', narrow)).status, 200);
    assert.equal((await createConfiguration('acme', narrow)).status, 403, 'read only');
    assert.equal(await repositoryConfiguration('acme/widgets', narrow), 200);
    assert.equal(await repositoryConfiguration('acme/gadgets', narrow), 404, 'a repository outside the selection is not seen');
    const byId = await scope({ access_token: token, target: 'acme', repository_ids: [(await server.admin('GET', '/repos/acme/gadgets')).id] });
    assert.equal(byId.status, 200, byId.text);
    assert.equal(await repositoryConfiguration('acme/gadgets', byId.body.token), 200);
    assert.equal(await repositoryConfiguration('acme/widgets', byId.body.token), 404);
  });

  test('a scoped token never widens: beyond the grant on the target is a 422', async () => {
    const limited = await server.admin('POST', '/apps', { slug: 'limited-scope-app', permissions: { organization_administration: 'write', metadata: 'read' } });
    await install(limited, 'acme', { permissions: { organization_administration: 'read', metadata: 'read' } });
    await install(limited, 'globex');
    const token = await appUserToken(server, limited, 'mona');
    const call = (body: Record<string, unknown>) =>
      server.api('POST', `/applications/${limited.client_id}/token/scoped`, { authorization: basic(limited.client_id, limited.client_secret), body: { access_token: token, ...body } });
    assert.equal((await call({ target: 'acme', permissions: { organization_administration: 'write' } })).status, 422);
    assert.equal((await call({ target: 'acme', permissions: { administration: 'read' } })).status, 422);
    assert.equal((await call({ target: 'globex', permissions: { organization_administration: 'write' } })).status, 200);
    assert.equal((await call({ target: 'acme', repositories: ['nope'] })).status, 422);
    assert.equal((await call({ target: 'acme', repository_ids: [(await server.admin('GET', '/repos/globex/things')).id] })).status, 422);
    // Without permissions, the token gets the grant on the target.
    const plain = await call({ target: 'acme' });
    assert.equal(plain.status, 200);
    assert.equal((await createConfiguration('acme', plain.body.token)).status, 403);
    // A scoped token scoped again stays within the first narrowing.
    const readOnly = await call({ target: 'globex', permissions: { organization_administration: 'read' } });
    const again = await server.api('POST', `/applications/${limited.client_id}/token/scoped`, {
      authorization: basic(limited.client_id, limited.client_secret),
      body: { access_token: readOnly.body.token, target: 'globex', permissions: { organization_administration: 'write' } },
    });
    assert.equal(again.status, 422);
    const elsewhere = await server.api('POST', `/applications/${limited.client_id}/token/scoped`, {
      authorization: basic(limited.client_id, limited.client_secret),
      body: { access_token: readOnly.body.token, target: 'acme' },
    });
    assert.equal(elsewhere.status, 422, 'a token scoped to globex cannot be rescoped to acme');
  });
});

describe('hole 4: exporting private repositories needs the repo scope', () => {
  before(async () => {
    await server.admin('POST', '/repos', { owner: 'mona', name: 'secret', visibility: 'private' });
    await server.admin('POST', '/repos', { owner: 'mona', name: 'open' });
  });

  test('a classic token with no scopes cannot export a private repository', async () => {
    const token = await classicToken(server, 'mona', []);
    for (const repositories of [['secret'], ['open', 'mona/secret']]) {
      const refused = await server.api('POST', '/user/migrations', { token, body: { repositories } });
      assert.equal(refused.status, 403, refused.text);
      assert.equal(refused.body.message, 'Resource not accessible by personal access token');
      assert.equal(refused.headers.get('x-accepted-oauth-scopes'), 'repo');
    }
    const oauth = await oauthToken(server, await createApp(server, 'migration-oauth-app', {}), 'mona', ['read:user']);
    const refused = await server.api('POST', '/user/migrations', { token: oauth, body: { repositories: ['secret'] } });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.message, 'Resource not accessible by integration');
    assert.equal(refused.headers.get('x-accepted-oauth-scopes'), 'repo');
  });

  test('public repositories need no scope; repo exports private ones', async () => {
    const none = await classicToken(server, 'mona', []);
    const open = await server.api('POST', '/user/migrations', { token: none, body: { repositories: ['open'] } });
    assert.equal(open.status, 201, open.text);
    const publicOnly = await classicToken(server, 'mona', ['public_repo']);
    assert.equal((await server.api('POST', '/user/migrations', { token: publicOnly, body: { repositories: ['secret'] } })).status, 403);
    const repo = await classicToken(server, 'mona', ['repo']);
    const exported = await server.api('POST', '/user/migrations', { token: repo, body: { repositories: ['secret', 'open'] } });
    assert.equal(exported.status, 201, exported.text);
    await server.drain();
  });
});
