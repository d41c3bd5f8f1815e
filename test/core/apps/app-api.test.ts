// The app API an app framework drives: the app itself (GET /app with its JWT, GET /apps/{slug} for
// anyone), its installations (list, get, and the installation covering a repository, an
// organization or a user), an installation token's repositories, and revoking that token. Each
// route's shape, and its 401 / 403 / 404 cases.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { appJwt, classicToken, type TestApp } from '../../helpers/credentials.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

let server: TestServer;
let app: TestApp;
let other: TestApp;
let jwt: string;
let otherJwt: string;
let classic: string;
const installations: Record<string, number> = {};
const repositories: Record<string, number> = {};

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function mint(installationId: number, body: Record<string, unknown> = {}, as = jwt): Promise<string> {
  const minted = await server.api('POST', `/app/installations/${installationId}/access_tokens`, { ...{ authorization: `Bearer ${as}` }, body });
  assert.equal(minted.status, 201, minted.text);
  return minted.body.token;
}

before(async () => {
  server = await startServer();
  await server.admin('POST', '/users', { login: 'mona' });
  await server.admin('POST', '/users', { login: 'hubot' });
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'] });
  await server.admin('POST', '/orgs', { login: 'globex', owners: ['mona'] });
  for (const [owner, name, visibility] of [
    ['acme', 'widgets', 'public'], ['acme', 'secret', 'private'], ['acme', 'inner', 'internal'],
    ['hubot', 'tools', 'private'], ['hubot', 'diary', 'private'], ['globex', 'plans', 'private'],
  ] as const) {
    repositories[`${owner}/${name}`] = (await server.admin('POST', '/repos', { owner, name, visibility })).id;
  }
  await server.admin('POST', '/repos/acme/secret/issues', { author: 'mona', title: 'Open one' });
  app = await server.admin('POST', '/apps', {
    slug: 'api-app',
    name: 'API App',
    owner: 'mona',
    permissions: { metadata: 'read', issues: 'write', organization_administration: 'read' },
    events: ['issues'],
  });
  other = await server.admin('POST', '/apps', { slug: 'other-api-app', permissions: { metadata: 'read' } });
  installations.acme = (await server.admin('POST', '/apps/api-app/installations', { account: 'acme', repositories: 'all' })).id;
  installations.hubot = (await server.admin('POST', '/apps/api-app/installations', { account: 'hubot', repositories: ['tools'] })).id;
  installations.globex = (await server.admin('POST', '/apps/other-api-app/installations', { account: 'globex', repositories: 'all' })).id;
  jwt = await appJwt(server, app);
  otherJwt = await appJwt(server, other);
  classic = await classicToken(server, 'mona', ['repo', 'admin:org']);
});
after(() => server.close());

/** The 401s and 403s of a route that takes only an app JWT. */
async function assertJwtOnly(method: string, path: string) {
  const anonymous = await server.api(method, path);
  assert.equal(anonymous.status, 401, `${path} anonymous`);
  assert.equal(anonymous.body.message, 'Requires authentication');
  const personal = await server.api(method, path, { token: classic });
  assert.equal(personal.status, 403, `${path} classic token`);
  assert.equal(personal.body.message, 'Resource not accessible by personal access token');
  const installation = await server.api(method, path, { token: await mint(installations.acme!) });
  assert.equal(installation.status, 403, `${path} installation token`);
  assert.equal(installation.body.message, 'Resource not accessible by integration');
  const forged = await server.api(method, path, bearer(`${jwt.slice(0, -4)}AAAA`));
  assert.equal(forged.status, 401, `${path} forged JWT`);
}

const APP_KEYS = [
  'client_id', 'created_at', 'description', 'events', 'external_url', 'html_url', 'id', 'name', 'node_id', 'owner', 'permissions', 'slug',
  'updated_at',
];
const INSTALLATION_KEYS = [
  'access_tokens_url', 'account', 'app_id', 'app_slug', 'created_at', 'events', 'html_url', 'id', 'permissions', 'repositories_url',
  'repository_selection', 'single_file_name', 'suspended_at', 'suspended_by', 'target_id', 'target_type', 'updated_at',
];

describe('GET /app', () => {
  test('answers the calling app with its installation count', async () => {
    const response = await server.api('GET', '/app', bearer(jwt));
    assert.equal(response.status, 200, response.text);
    const body = response.body;
    assert.deepEqual(Object.keys(body).sort(), [...APP_KEYS, 'installations_count'].sort());
    assert.equal(body.id, app.id);
    assert.equal(body.slug, 'api-app');
    assert.equal(body.name, 'API App');
    assert.equal(body.client_id, app.client_id);
    assert.equal(body.owner.login, 'mona');
    assert.equal(body.html_url, `${server.server.ctx.urls.web}/apps/api-app`);
    assert.deepEqual(body.permissions, { metadata: 'read', issues: 'write', organization_administration: 'read' });
    assert.deepEqual(body.events, ['issues']);
    assert.equal(body.installations_count, 2);
    assert.match(body.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    assert.ok(response.headers.get('etag'));
    const cached = await server.api('GET', '/app', { ...bearer(jwt), headers: { 'if-none-match': response.headers.get('etag')! } });
    assert.equal(cached.status, 304);
  });

  test('another app sees itself', async () => {
    const response = await server.api('GET', '/app', bearer(otherJwt));
    assert.equal(response.status, 200);
    assert.equal(response.body.slug, 'other-api-app');
    assert.equal(response.body.owner, null);
    assert.equal(response.body.installations_count, 1);
  });

  test('takes only an app JWT', () => assertJwtOnly('GET', '/app'));
});

describe('GET /apps/{app_slug}', () => {
  test('answers anyone, without the installation count', async () => {
    const installation = await mint(installations.acme!);
    for (const options of [{}, { token: classic }, bearer(jwt), bearer(otherJwt), { token: installation }]) {
      const response = await server.api('GET', '/apps/api-app', options);
      assert.equal(response.status, 200, response.text);
      assert.deepEqual(Object.keys(response.body).sort(), APP_KEYS);
      assert.equal(response.body.id, app.id);
      assert.equal(response.body.owner.login, 'mona');
    }
  });

  test('an unknown app is a 404', async () => {
    assert.equal((await server.api('GET', '/apps/no-such-app')).status, 404);
    assert.equal((await server.api('GET', '/apps/no-such-app', { token: classic })).status, 404);
  });

  test('bad credentials are a 401', async () => {
    assert.equal((await server.api('GET', '/apps/api-app', { token: 'ghp_nothing' })).status, 401);
  });
});

describe('GET /app/installations', () => {
  test('lists the app’s installations only', async () => {
    const response = await server.api('GET', '/app/installations', bearer(jwt));
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(response.body.map((i: { id: number }) => i.id), [installations.acme, installations.hubot]);
    const [acme, hubot] = response.body;
    assert.deepEqual(Object.keys(acme).sort(), INSTALLATION_KEYS);
    assert.equal(acme.account.login, 'acme');
    assert.equal(acme.target_type, 'Organization');
    assert.equal(acme.target_id, acme.account.id);
    assert.equal(acme.repository_selection, 'all');
    assert.equal(acme.app_id, app.id);
    assert.equal(acme.app_slug, 'api-app');
    assert.equal(acme.access_tokens_url, `${server.server.ctx.urls.api}/app/installations/${installations.acme}/access_tokens`);
    assert.equal(acme.repositories_url, `${server.server.ctx.urls.api}/installation/repositories`);
    assert.equal(acme.html_url, `${server.server.ctx.urls.web}/organizations/acme/settings/installations/${installations.acme}`);
    assert.deepEqual(acme.permissions, { metadata: 'read', issues: 'write', organization_administration: 'read' });
    assert.deepEqual(acme.events, ['issues']);
    assert.equal(acme.single_file_name, null);
    assert.equal(acme.suspended_at, null);
    assert.equal(acme.suspended_by, null);
    assert.equal(hubot.target_type, 'User');
    assert.equal(hubot.repository_selection, 'selected');
    assert.equal(hubot.html_url, `${server.server.ctx.urls.web}/settings/installations/${installations.hubot}`);

    const others = await server.api('GET', '/app/installations', bearer(otherJwt));
    assert.deepEqual(others.body.map((i: { id: number }) => i.id), [installations.globex]);
  });

  test('pages with per_page and page, and Link', async () => {
    const first = await server.api('GET', '/app/installations?per_page=1', bearer(jwt));
    assert.equal(first.status, 200);
    assert.deepEqual(first.body.map((i: { id: number }) => i.id), [installations.acme]);
    const link = first.headers.get('link') ?? '';
    assert.match(link, /<[^>]*\/app\/installations\?per_page=1&page=2>; rel="next"/);
    assert.match(link, /rel="last"/);
    const second = await server.api('GET', '/app/installations?per_page=1&page=2', bearer(jwt));
    assert.deepEqual(second.body.map((i: { id: number }) => i.id), [installations.hubot]);
    assert.match(second.headers.get('link') ?? '', /rel="prev"/);
    assert.equal((await server.api('GET', '/app/installations?per_page=0', bearer(jwt))).status, 422);
  });

  test('takes only an app JWT', () => assertJwtOnly('GET', '/app/installations'));
});

describe('GET /app/installations/{installation_id}', () => {
  test('answers the app’s installation', async () => {
    const response = await server.api('GET', `/app/installations/${installations.hubot}`, bearer(jwt));
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(Object.keys(response.body).sort(), INSTALLATION_KEYS);
    assert.equal(response.body.account.login, 'hubot');
  });

  test('another app’s installation, or none, is a 404', async () => {
    assert.equal((await server.api('GET', `/app/installations/${installations.globex}`, bearer(jwt))).status, 404);
    assert.equal((await server.api('GET', `/app/installations/${installations.acme}`, bearer(otherJwt))).status, 404);
    assert.equal((await server.api('GET', '/app/installations/999999', bearer(jwt))).status, 404);
    const malformed = await server.api('GET', '/app/installations/abc', bearer(jwt));
    assert.ok(malformed.status >= 400 && malformed.status < 500, String(malformed.status));
  });

  test('takes only an app JWT', () => assertJwtOnly('GET', `/app/installations/${installations.acme}`));
});

describe('the installation covering a repository, an organization or a user', () => {
  test('GET /repos/{owner}/{repo}/installation', async () => {
    for (const name of ['acme/widgets', 'acme/secret', 'acme/inner']) {
      const response = await server.api('GET', `/repos/${name}/installation`, bearer(jwt));
      assert.equal(response.status, 200, name);
      assert.equal(response.body.id, installations.acme);
      assert.deepEqual(Object.keys(response.body).sort(), INSTALLATION_KEYS);
    }
    assert.equal((await server.api('GET', '/repos/hubot/tools/installation', bearer(jwt))).body.id, installations.hubot);
    // Not among the selected repositories, another app's account, nothing there.
    for (const name of ['hubot/diary', 'globex/plans', 'acme/nothing', 'nobody/nothing']) {
      assert.equal((await server.api('GET', `/repos/${name}/installation`, bearer(jwt))).status, 404, name);
    }
    assert.equal((await server.api('GET', '/repos/globex/plans/installation', bearer(otherJwt))).body.id, installations.globex);
    await assertJwtOnly('GET', '/repos/acme/secret/installation');
  });

  test('GET /orgs/{org}/installation', async () => {
    const response = await server.api('GET', '/orgs/acme/installation', bearer(jwt));
    assert.equal(response.status, 200);
    assert.equal(response.body.id, installations.acme);
    for (const org of ['globex', 'hubot', 'nobody']) {
      assert.equal((await server.api('GET', `/orgs/${org}/installation`, bearer(jwt))).status, 404, org);
    }
    await assertJwtOnly('GET', '/orgs/acme/installation');
  });

  test('GET /users/{username}/installation', async () => {
    const response = await server.api('GET', '/users/hubot/installation', bearer(jwt));
    assert.equal(response.status, 200);
    assert.equal(response.body.id, installations.hubot);
    assert.equal((await server.api('GET', '/users/HUBOT/installation', bearer(jwt))).body.id, installations.hubot);
    for (const user of ['mona', 'globex', 'nobody']) {
      assert.equal((await server.api('GET', `/users/${user}/installation`, bearer(jwt))).status, 404, user);
    }
    await assertJwtOnly('GET', '/users/hubot/installation');
  });
});

describe('GET /installation/repositories', () => {
  test('lists the repositories the installation token reaches, in full', async () => {
    const token = await mint(installations.acme!);
    const response = await server.api('GET', '/installation/repositories', { token });
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(Object.keys(response.body).sort(), ['repositories', 'repository_selection', 'total_count']);
    assert.equal(response.body.total_count, 3);
    assert.equal(response.body.repository_selection, 'all');
    const names = response.body.repositories.map((r: { full_name: string }) => r.full_name);
    assert.deepEqual(names, ['acme/widgets', 'acme/secret', 'acme/inner']);
    const secret = response.body.repositories[1];
    assert.equal(secret.id, repositories['acme/secret']);
    assert.equal(secret.private, true);
    assert.equal(secret.visibility, 'private');
    assert.equal(secret.owner.login, 'acme');
    assert.equal(secret.open_issues_count, 1);
    assert.ok('clone_url' in secret && 'default_branch' in secret);
  });

  test('pages with per_page and page, and Link', async () => {
    const token = await mint(installations.acme!);
    const first = await server.api('GET', '/installation/repositories?per_page=2', { token });
    assert.equal(first.body.total_count, 3);
    assert.equal(first.body.repositories.length, 2);
    assert.match(first.headers.get('link') ?? '', /\/installation\/repositories\?per_page=2&page=2>; rel="next"/);
    const second = await server.api('GET', '/installation/repositories?per_page=2&page=2', { token });
    assert.deepEqual(second.body.repositories.map((r: { name: string }) => r.name), ['inner']);
    assert.equal(second.body.total_count, 3);
  });

  test('a selected installation, and a token narrowed to some repositories', async () => {
    const hubot = await server.api('GET', '/installation/repositories', { token: await mint(installations.hubot!) });
    assert.equal(hubot.body.total_count, 1);
    assert.equal(hubot.body.repository_selection, 'selected');
    assert.deepEqual(hubot.body.repositories.map((r: { full_name: string }) => r.full_name), ['hubot/tools']);
    const narrowed = await server.api('GET', '/installation/repositories', { token: await mint(installations.acme!, { repositories: ['secret'] }) });
    assert.equal(narrowed.body.total_count, 1);
    assert.equal(narrowed.body.repository_selection, 'selected');
    assert.deepEqual(narrowed.body.repositories.map((r: { name: string }) => r.name), ['secret']);
  });

  test('takes only an installation token', async () => {
    assert.equal((await server.api('GET', '/installation/repositories')).status, 401);
    const personal = await server.api('GET', '/installation/repositories', { token: classic });
    assert.equal(personal.status, 403);
    assert.equal(personal.body.message, 'Resource not accessible by personal access token');
    assert.equal((await server.api('GET', '/installation/repositories', bearer(jwt))).status, 403);
    assert.equal((await server.api('GET', '/installation/repositories', { token: 'ghs_nothing' })).status, 401);
  });
});

describe('DELETE /installation/token', () => {
  test('revokes the token at once; others keep working', async () => {
    const token = await mint(installations.acme!);
    const kept = await mint(installations.acme!);
    assert.equal((await server.api('GET', '/installation/repositories', { token })).status, 200);
    const deleted = await server.api('DELETE', '/installation/token', { token });
    assert.equal(deleted.status, 204);
    assert.equal(deleted.text, '');
    const after = await server.api('GET', '/installation/repositories', { token });
    assert.equal(after.status, 401);
    assert.equal(after.body.message, 'Bad credentials');
    assert.equal((await server.api('DELETE', '/installation/token', { token })).status, 401);
    assert.equal((await server.api('GET', '/installation/repositories', { token: kept })).status, 200);
  });

  test('takes only an installation token', async () => {
    assert.equal((await server.api('DELETE', '/installation/token')).status, 401);
    assert.equal((await server.api('DELETE', '/installation/token', { token: classic })).status, 403);
    assert.equal((await server.api('DELETE', '/installation/token', bearer(jwt))).status, 403);
    // The classic token still works: it was refused, not revoked.
    assert.equal((await server.api('GET', '/apps/api-app', { token: classic })).status, 200);
  });
});
