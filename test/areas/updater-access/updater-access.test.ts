// Updater repository access end to end, organization and enterprise forms: the list with its
// pagination and owner profile fields, all-or-nothing updates, the default level, and the permission
// matrix (roles, classic scopes, fine-grained permissions, each token kind).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Octokit } from '@octokit/core';
import {
  appJwt, appUserToken, classicToken, createApp, fineGrainedToken, installationToken, oauthToken, type TestApp,
} from '../../helpers/credentials.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

let server: TestServer;
const repo: Record<string, number> = {};
const token: Record<string, string> = {};
let adminApp: TestApp;

const ORG = '/orgs/acme/updater/repository-access';
const ENT = '/enterprises/acme-corp/updater/repository-access';

async function reset(prefix: string, ids: number[]) {
  const current = await server.api('GET', `${prefix}?per_page=100`, { token: prefix === ORG ? token.owner : token.entOwner });
  const held = current.body.accessible_repositories.map((r: { id: number }) => r.id);
  const response = await server.api('PATCH', prefix, {
    token: prefix === ORG ? token.owner : token.entOwner,
    body: { repository_ids_to_remove: held.filter((id: number) => !ids.includes(id)), repository_ids_to_add: ids },
  });
  assert.equal(response.status, 204, response.text);
}

before(async () => {
  server = await startServer();
  for (const login of ['mona', 'hubot', 'octo', 'enty', 'stranger']) {
    await server.admin('POST', '/users', { login, name: `${login} name`, email: `${login}@example.com` });
  }
  await server.admin('POST', '/enterprises', { slug: 'acme-corp', owners: ['enty'] });
  await server.admin('POST', '/orgs', { login: 'acme', enterprise: 'acme-corp', owners: ['mona'], members: ['hubot'], billing_managers: ['octo'] });
  await server.admin('POST', '/orgs', { login: 'sister', enterprise: 'acme-corp', owners: ['enty'] });
  await server.admin('POST', '/orgs', { login: 'outside', owners: ['mona', 'enty'] });
  for (const [owner, name, visibility] of [
    ['acme', 'widgets', 'public'], ['acme', 'secret', 'private'], ['acme', 'handbook', 'internal'],
    ['sister', 'tools', 'private'], ['outside', 'elsewhere', 'public'], ['mona', 'dotfiles', 'public'],
  ] as const) {
    repo[`${owner}/${name}`] = (await server.admin('POST', '/repos', { owner, name, visibility })).id;
  }
  token.owner = await classicToken(server, 'mona', ['admin:org']);
  token.entOwner = await classicToken(server, 'enty', ['admin:enterprise']);
  adminApp = await createApp(server, 'updater-app', { organization_administration: 'write' });
});
after(() => server.close());

describe('organization form', () => {
  test('an organization starts with no default level and no repositories', async () => {
    const response = await server.api('GET', ORG, { token: token.owner });
    assert.equal(response.status, 200);
    assert.deepEqual(response.body, { default_level: null, accessible_repositories: [] });
    assert.equal(response.headers.get('link'), null);
  });

  test('PATCH adds and removes repositories; the list shows them with the owner profile fields', async () => {
    let response = await server.api('PATCH', ORG, { token: token.owner, body: { repository_ids_to_add: [repo['acme/secret']!, repo['acme/widgets']!, repo['acme/handbook']!] } });
    assert.equal(response.status, 204);
    assert.equal(response.text, '');
    response = await server.api('PATCH', ORG, { token: token.owner, body: { repository_ids_to_remove: [repo['acme/handbook']!], repository_ids_to_add: [repo['acme/widgets']!] } });
    assert.equal(response.status, 204);

    response = await server.api('GET', ORG.replace('acme', 'ACME'), { token: token.owner });
    assert.equal(response.status, 200);
    const list = response.body.accessible_repositories;
    assert.deepEqual(list.map((r: { full_name: string }) => r.full_name), ['acme/widgets', 'acme/secret']);
    const [widgets, secret] = list;
    assert.equal(widgets.private, false);
    assert.equal(secret.private, true);
    assert.match(widgets.url, /\/api\/v3\/repos\/acme\/widgets$/);
    assert.equal(widgets.owner.login, 'acme');
    assert.equal(widgets.owner.type, 'Organization');
    assert.ok('name' in widgets.owner && 'email' in widgets.owner, 'the owner carries name and email');
    assert.equal(widgets.owner.user_view_type, 'public');
    for (const field of ['id', 'node_id', 'name', 'full_name', 'html_url', 'description', 'fork', 'hooks_url', 'archive_url']) {
      assert.ok(field in widgets, field);
    }
  });

  test('ids outside the organization are a 404 and nothing of the request is applied', async () => {
    await reset(ORG, [repo['acme/widgets']!]);
    for (const foreign of [repo['sister/tools']!, repo['outside/elsewhere']!, repo['mona/dotfiles']!, 999_999, 2 ** 40, -3]) {
      const response = await server.api('PATCH', ORG, {
        token: token.owner,
        body: { repository_ids_to_add: [repo['acme/secret']!, foreign], repository_ids_to_remove: [repo['acme/widgets']!] },
      });
      assert.equal(response.status, 404, String(foreign));
      assert.match(response.body.message, /Repository not found/);
    }
    const list = await server.api('GET', ORG, { token: token.owner });
    assert.deepEqual(list.body.accessible_repositories.map((r: { id: number }) => r.id), [repo['acme/widgets']]);
  });

  test('invalid PATCH bodies are refused without changes', async () => {
    await reset(ORG, [repo['acme/widgets']!]);
    const cases: [unknown, number][] = [
      [{ repository_ids_to_add: ['1'] }, 422],
      [{ repository_ids_to_add: 5 }, 422],
      [{ repository_ids_to_add: [1.5] }, 422],
      [{ repository_ids_to_add: [repo['acme/secret']], repository_ids_to_remove: [repo['acme/secret']] }, 422],
      [[1, 2], 400],
    ];
    for (const [body, status] of cases) {
      const response = await server.api('PATCH', ORG, { token: token.owner, body });
      assert.equal(response.status, status, JSON.stringify(body));
    }
    const malformed = await server.api('PATCH', ORG, { token: token.owner, rawBody: '{', headers: { 'content-type': 'application/json' } });
    assert.equal(malformed.status, 400);
    assert.equal(malformed.body.message, 'Problems parsing JSON');
    const empty = await server.api('PATCH', ORG, { token: token.owner, body: {} });
    assert.equal(empty.status, 204);
    const list = await server.api('GET', ORG, { token: token.owner });
    assert.deepEqual(list.body.accessible_repositories.map((r: { id: number }) => r.id), [repo['acme/widgets']]);
  });

  test('PUT default-level sets public or internal; anything else is a 422', async () => {
    for (const level of ['internal', 'public']) {
      const response = await server.api('PUT', `${ORG}/default-level`, { token: token.owner, body: { default_level: level } });
      assert.equal(response.status, 204);
      assert.equal((await server.api('GET', ORG, { token: token.owner })).body.default_level, level);
    }
    for (const body of [{}, { default_level: 'private' }, { default_level: null }, { default_level: 1 }]) {
      const response = await server.api('PUT', `${ORG}/default-level`, { token: token.owner, body });
      assert.equal(response.status, 422, JSON.stringify(body));
      assert.equal(response.body.message, 'Validation Failed');
    }
    assert.equal((await server.api('GET', ORG, { token: token.owner })).body.default_level, 'public');
  });

  test('pages: per_page defaults to 30 and caps at 100, with Link', async () => {
    await reset(ORG, [repo['acme/widgets']!, repo['acme/secret']!, repo['acme/handbook']!]);
    const first = await server.api('GET', `${ORG}?per_page=2`, { token: token.owner });
    assert.equal(first.status, 200);
    assert.equal(first.body.accessible_repositories.length, 2);
    const link = first.headers.get('link') ?? '';
    assert.match(link, /<http:\/\/[^>]+\/orgs\/acme\/updater\/repository-access\?per_page=2&page=2>; rel="next"/);
    assert.match(link, /page=2>; rel="last"/);
    const second = await server.api('GET', `${ORG}?per_page=2&page=2`, { token: token.owner });
    assert.deepEqual(second.body.accessible_repositories.map((r: { id: number }) => r.id), [repo['acme/handbook']]);
    assert.match(second.headers.get('link') ?? '', /rel="prev".*rel="first"/);
    const capped = await server.api('GET', `${ORG}?per_page=1000`, { token: token.owner });
    assert.equal(capped.body.accessible_repositories.length, 3);
    const beyond = await server.api('GET', `${ORG}?page=5`, { token: token.owner });
    assert.deepEqual(beyond.body.accessible_repositories, []);
    for (const query of ['per_page=0', 'per_page=abc', 'page=0', 'page=-1']) {
      const response = await server.api('GET', `${ORG}?${query}`, { token: token.owner });
      assert.equal(response.status, 422, query);
    }
  });

  test('@octokit/core reads and updates the list', async () => {
    const octokit = new Octokit({ baseUrl: server.apiUrl, auth: token.owner, request: { fetch } });
    await octokit.request('PATCH /orgs/{org}/updater/repository-access', { org: 'acme', repository_ids_to_add: [repo['acme/widgets']!] });
    await octokit.request('PUT /orgs/{org}/updater/repository-access/default-level', { org: 'acme', default_level: 'internal' });
    const response = await octokit.request('GET /orgs/{org}/updater/repository-access', { org: 'acme', per_page: 100 });
    assert.equal(response.status, 200);
    const body = response.data as { default_level: string; accessible_repositories: { id: number }[] };
    assert.equal(body.default_level, 'internal');
    assert.ok(body.accessible_repositories.some((r) => r.id === repo['acme/widgets']));
    assert.equal(response.headers['x-accepted-oauth-scopes'], 'admin:org, read:org, write:org');
    assert.equal(response.headers['x-accepted-vendor-permissions'], 'organization_administration=read');
  });
});

describe('enterprise form', () => {
  test('lists, updates and sets the default level of the enterprise list', async () => {
    let response = await server.api('GET', ENT, { token: token.entOwner });
    assert.equal(response.status, 200);
    assert.deepEqual(response.body, { default_level: null, accessible_repositories: [] });
    response = await server.api('PATCH', ENT, { token: token.entOwner, body: { repository_ids_to_add: [repo['sister/tools']!, repo['acme/secret']!] } });
    assert.equal(response.status, 204);
    response = await server.api('PUT', `${ENT}/default-level`, { token: token.entOwner, body: { default_level: 'internal' } });
    assert.equal(response.status, 204);
    response = await server.api('GET', ENT.replace('acme-corp', 'ACME-CORP'), { token: token.entOwner });
    assert.equal(response.body.default_level, 'internal');
    assert.deepEqual(response.body.accessible_repositories.map((r: { full_name: string }) => r.full_name), ['acme/secret', 'sister/tools']);
    assert.equal(response.headers.get('x-accepted-oauth-scopes'), 'admin:enterprise, manage_billing:enterprise, read:enterprise');
    assert.equal(response.headers.get('x-accepted-vendor-permissions'), 'enterprise_administration=read');
  });

  test('the enterprise list and the organization list are separate', async () => {
    await reset(ORG, []);
    const org = await server.api('GET', ORG, { token: token.owner });
    assert.deepEqual(org.body.accessible_repositories, []);
    const enterprise = await server.api('GET', ENT, { token: token.entOwner });
    assert.equal(enterprise.body.accessible_repositories.length, 2);
  });

  test('repositories outside the enterprise are a 404 and nothing is applied', async () => {
    await reset(ENT, [repo['sister/tools']!]);
    const response = await server.api('PATCH', ENT, {
      token: token.entOwner,
      body: { repository_ids_to_add: [repo['acme/widgets']!, repo['outside/elsewhere']!], repository_ids_to_remove: [repo['sister/tools']!] },
    });
    assert.equal(response.status, 404);
    const list = await server.api('GET', ENT, { token: token.entOwner });
    assert.deepEqual(list.body.accessible_repositories.map((r: { id: number }) => r.id), [repo['sister/tools']]);
  });
});

describe('permission matrix', () => {
  // Each case: a credential, and the statuses of GET, PATCH and PUT default-level.
  type Case = { name: string; credential: () => Promise<{ token?: string; authorization?: string }>; expect: [number, number, number] };

  async function check(prefix: string, cases: Case[]) {
    for (const { name, credential, expect } of cases) {
      const auth = await credential();
      const get = await server.api('GET', prefix, auth);
      const patch = await server.api('PATCH', prefix, { ...auth, body: { repository_ids_to_add: [] } });
      const put = await server.api('PUT', `${prefix}/default-level`, { ...auth, body: { default_level: 'public' } });
      assert.deepEqual([get.status, patch.status, put.status], expect, name);
      for (const response of [get, patch, put]) {
        if (response.status >= 400) assert.equal(typeof response.body.message, 'string', name);
      }
    }
  }

  const classic = (login: string, scopes: string[]) => async () => ({ token: await classicToken(server, login, scopes) });
  const fine = (login: string, owner: string, permissions: Record<string, 'read' | 'write'>) => async () => ({ token: await fineGrainedToken(server, login, owner, permissions) });

  test('organization form', async () => {
    const installedApp = await createApp(server, 'installed-admin', { organization_administration: 'write' });
    const installedToken = await installationToken(server, installedApp, 'acme');
    const readApp = await createApp(server, 'installed-reader', { organization_administration: 'read' });
    const readInstallation = await installationToken(server, readApp, 'acme');
    const otherApp = await createApp(server, 'installed-metadata', { metadata: 'read' });
    const metadataInstallation = await installationToken(server, otherApp, 'acme');
    const elsewhereApp = await createApp(server, 'installed-elsewhere', { organization_administration: 'write' });
    const elsewhere = await installationToken(server, elsewhereApp, 'outside');
    const oauthApp = await createApp(server, 'oauth-app', {});

    await check(ORG, [
      { name: 'anonymous', credential: async () => ({}), expect: [401, 401, 401] },
      { name: 'classic owner admin:org', credential: classic('mona', ['admin:org']), expect: [200, 204, 204] },
      { name: 'classic owner write:org', credential: classic('mona', ['write:org']), expect: [200, 204, 204] },
      { name: 'classic owner read:org', credential: classic('mona', ['read:org']), expect: [200, 403, 403] },
      { name: 'classic owner without org scopes', credential: classic('mona', ['repo']), expect: [403, 403, 403] },
      { name: 'classic member', credential: classic('hubot', ['admin:org']), expect: [404, 404, 404] },
      { name: 'classic billing manager', credential: classic('octo', ['admin:org']), expect: [404, 404, 404] },
      { name: 'classic stranger', credential: classic('stranger', ['admin:org']), expect: [404, 404, 404] },
      { name: 'oauth owner', credential: async () => ({ token: await oauthToken(server, oauthApp, 'mona', ['admin:org']) }), expect: [200, 204, 204] },
      { name: 'oauth owner read:org', credential: async () => ({ token: await oauthToken(server, oauthApp, 'mona', ['read:org']) }), expect: [200, 403, 403] },
      { name: 'fine-grained owner write', credential: fine('mona', 'acme', { organization_administration: 'write' }), expect: [200, 204, 204] },
      { name: 'fine-grained owner read', credential: fine('mona', 'acme', { organization_administration: 'read' }), expect: [200, 403, 403] },
      { name: 'fine-grained owner without the permission', credential: fine('mona', 'acme', { metadata: 'read' }), expect: [403, 403, 403] },
      { name: 'fine-grained owner for another resource owner', credential: fine('mona', 'outside', { organization_administration: 'write' }), expect: [404, 404, 404] },
      { name: 'fine-grained member', credential: fine('hubot', 'acme', { organization_administration: 'write' }), expect: [404, 404, 404] },
      { name: 'installation with write', credential: async () => ({ token: installedToken }), expect: [200, 204, 204] },
      { name: 'installation with read', credential: async () => ({ token: readInstallation }), expect: [200, 403, 403] },
      { name: 'installation without the permission', credential: async () => ({ token: metadataInstallation }), expect: [403, 403, 403] },
      { name: 'installation on another organization', credential: async () => ({ token: elsewhere }), expect: [404, 404, 404] },
      { name: 'app user owner', credential: async () => ({ token: await appUserToken(server, installedApp, 'mona') }), expect: [200, 204, 204] },
      { name: 'app user member', credential: async () => ({ token: await appUserToken(server, installedApp, 'hubot') }), expect: [404, 404, 404] },
      { name: 'app user owner, app not installed on the organization', credential: async () => ({ token: await appUserToken(server, elsewhereApp, 'mona') }), expect: [404, 404, 404] },
      { name: 'app user owner, app without the permission', credential: async () => ({ token: await appUserToken(server, otherApp, 'mona') }), expect: [403, 403, 403] },
      { name: 'app JWT', credential: async () => ({ authorization: `Bearer ${await appJwt(server, adminApp)}` }), expect: [403, 403, 403] },
      { name: 'bad credentials', credential: async () => ({ token: 'chp_notavalidtoken' }), expect: [401, 401, 401] },
    ]);
    for (const [path, tokenValue] of [['/orgs/nope/updater/repository-access', token.owner], ['/orgs/mona/updater/repository-access', token.owner]] as const) {
      assert.equal((await server.api('GET', path, { token: tokenValue })).status, 404, path);
    }
  });

  test('enterprise form', async () => {
    const entApp = await createApp(server, 'enterprise-app', { enterprise_administration: 'write' });
    const entInstallation = await installationToken(server, entApp, 'acme');
    await check(ENT, [
      { name: 'anonymous', credential: async () => ({}), expect: [401, 401, 401] },
      { name: 'classic enterprise owner admin:enterprise', credential: classic('enty', ['admin:enterprise']), expect: [200, 204, 204] },
      { name: 'classic enterprise owner read:enterprise', credential: classic('enty', ['read:enterprise']), expect: [200, 403, 403] },
      { name: 'classic enterprise owner admin:org only', credential: classic('enty', ['admin:org']), expect: [403, 403, 403] },
      { name: 'classic organization owner, not an enterprise owner', credential: classic('mona', ['admin:enterprise']), expect: [404, 404, 404] },
      { name: 'classic stranger', credential: classic('stranger', ['admin:enterprise']), expect: [404, 404, 404] },
      { name: 'fine-grained enterprise owner write (own account)', credential: fine('enty', 'enty', { enterprise_administration: 'write' }), expect: [200, 204, 204] },
      { name: 'fine-grained enterprise owner write (an enterprise organization)', credential: fine('enty', 'sister', { enterprise_administration: 'write' }), expect: [200, 204, 204] },
      { name: 'fine-grained enterprise owner read', credential: fine('enty', 'enty', { enterprise_administration: 'read' }), expect: [200, 403, 403] },
      { name: 'fine-grained enterprise owner without the permission', credential: fine('enty', 'enty', { organization_administration: 'write' }), expect: [403, 403, 403] },
      { name: 'fine-grained for an organization outside the enterprise', credential: fine('enty', 'outside', { enterprise_administration: 'write' }), expect: [404, 404, 404] },
      { name: 'fine-grained non-owner', credential: fine('mona', 'acme', { enterprise_administration: 'write' }), expect: [404, 404, 404] },
      { name: 'installation', credential: async () => ({ token: entInstallation }), expect: [403, 403, 403] },
      { name: 'app user enterprise owner', credential: async () => ({ token: await appUserToken(server, entApp, 'enty') }), expect: [200, 204, 204] },
      { name: 'app user non-owner', credential: async () => ({ token: await appUserToken(server, entApp, 'mona') }), expect: [404, 404, 404] },
      { name: 'app JWT', credential: async () => ({ authorization: `Bearer ${await appJwt(server, entApp)}` }), expect: [403, 403, 403] },
    ]);
    assert.equal((await server.api('GET', '/enterprises/nope/updater/repository-access', { token: token.entOwner })).status, 404);
  });
});
