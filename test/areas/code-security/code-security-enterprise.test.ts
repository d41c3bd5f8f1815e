// Code security configurations of an enterprise, end to end: list, create, list defaults, set
// default, retrieve, update, delete, attach and repositories across the enterprise's organizations;
// enterprise configurations seen from an organization; default precedence for new repositories;
// and, on a server without a background worker, the `attaching` state and the 409 while it lasts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { classicToken } from '../../helpers/credentials.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

let server: TestServer;
let token: string;
let orgToken: string;
const ids: Record<string, number> = {};

before(async () => {
  server = await startServer();
  for (const login of ['eve', 'olga']) await server.admin('POST', '/users', { login });
  token = await classicToken(server, 'eve', ['admin:enterprise', 'repo']);
  orgToken = await classicToken(server, 'olga', ['admin:org', 'repo']);
});
after(() => server.close());

/** An enterprise owned by eve with organizations owned by olga, and their repositories. */
async function enterprise(slug: string, orgs: Record<string, Record<string, 'public' | 'private' | 'internal'>>) {
  await server.admin('POST', '/enterprises', { slug, owners: ['eve'] });
  for (const [org, repos] of Object.entries(orgs)) {
    await server.admin('POST', '/orgs', { login: org, owners: ['olga'], enterprise: slug });
    for (const [name, visibility] of Object.entries(repos)) ids[`${org}/${name}`] = (await server.admin('POST', '/repos', { owner: org, name, visibility })).id;
  }
}

const call = (method: string, path: string, body?: unknown, as = token, headers?: Record<string, string>) => server.api(method, path, { token: as, body, headers });

async function create(slug: string, body: Record<string, unknown>) {
  const response = await call('POST', `/enterprises/${slug}/code-security/configurations`, body);
  assert.equal(response.status, 201, response.text);
  return response.body;
}

async function repositoryConfiguration(fullName: string) {
  const response = await call('GET', `/repos/${fullName}/code-security-configuration`, undefined, orgToken);
  if (response.status === 204) return null;
  assert.equal(response.status, 200, response.text);
  return { status: response.body.status as string, id: response.body.configuration.id as number };
}

async function attachedNames(slug: string, id: number, query = '') {
  const response = await call('GET', `/enterprises/${slug}/code-security/configurations/${id}/repositories${query}`);
  assert.equal(response.status, 200, response.text);
  return response.body.map((r: any) => `${r.repository.full_name}:${r.status}`);
}

describe('enterprise configurations', () => {
  test('create fills in the defaults; list shows the global and the enterprise configurations only', async () => {
    await enterprise('e-list', { 'e-list-org': {} });
    const created = await create('e-list', { name: 'Enterprise baseline', description: 'For all' });
    assert.equal(created.target_type, 'enterprise');
    assert.equal(created.dependency_graph, 'enabled');
    assert.equal(created.secret_scanning, 'disabled');
    assert.equal(created.enforcement, 'enforced');
    assert.equal(created.url, `${server.server.ctx.urls.api}/enterprises/e-list/code-security/configurations/${created.id}`);
    assert.match(created.html_url, /\/enterprises\/e-list\/settings\/security_analysis\/configurations\/\d+\/edit$/);
    const orgOwn = await call('POST', '/orgs/e-list-org/code-security/configurations', { name: 'Org only' }, orgToken);
    assert.equal(orgOwn.status, 201);

    const list = await call('GET', '/enterprises/e-list/code-security/configurations');
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.map((c: any) => c.target_type), ['global', 'enterprise']);
    const paged = await call('GET', '/enterprises/e-list/code-security/configurations?per_page=1');
    assert.equal(paged.body.length, 1);
    assert.match(paged.headers.get('link')!, /after=/);
    assert.equal((await call('GET', '/enterprises/e-list/code-security/configurations?per_page=-1')).status, 422);

    // The organization sees the enterprise configuration too, and may read it but not change it.
    const fromOrg = await call('GET', '/orgs/e-list-org/code-security/configurations', undefined, orgToken);
    assert.deepEqual(fromOrg.body.map((c: any) => c.target_type), ['global', 'enterprise', 'organization']);
    assert.equal(fromOrg.body[1].url, `${server.server.ctx.urls.api}/orgs/e-list-org/code-security/configurations/${created.id}`);
  });

  test('create refuses a duplicate name, bad combinations and bad values with 400 (its status table lists no 422)', async () => {
    await enterprise('e-create', {});
    await create('e-create', { name: 'Taken' });
    const duplicate = await call('POST', '/enterprises/e-create/code-security/configurations', { name: 'taken' });
    assert.equal(duplicate.status, 400);
    assert.equal(duplicate.body.errors[0].code, 'already_exists');
    const blank = await call('POST', '/enterprises/e-create/code-security/configurations', { name: ' ' });
    assert.equal(blank.status, 400);
    const runner = await call('POST', '/enterprises/e-create/code-security/configurations', { name: 'R', code_scanning_default_setup_options: { runner_type: 'labeled' } });
    assert.equal(runner.status, 400);
    for (const body of [{}, { name: 'X', advanced_security: 'maybe' }, { name: 'X', updater_delegated_alert_dismissal: 'enabled' }, { name: 'X', secret_scanning_delegated_bypass: 'enabled' }]) {
      const response = await call('POST', '/enterprises/e-create/code-security/configurations', body);
      assert.equal(response.status, 400, JSON.stringify(body));
    }
    assert.equal((await call('GET', '/enterprises/e-create/code-security/configurations')).body.length, 2);
    assert.equal((await call('POST', '/enterprises/no-such/code-security/configurations', { name: 'A' })).status, 404);
  });

  test('retrieve: 200, 304, and 404 for organization configurations and unknown ids', async () => {
    await enterprise('e-get', { 'e-get-org': {} });
    const created = await create('e-get', { name: 'A' });
    const path = `/enterprises/e-get/code-security/configurations/${created.id}`;
    const first = await call('GET', path);
    assert.equal(first.status, 200);
    assert.deepEqual(first.body, created);
    assert.equal((await call('GET', path, undefined, token, { 'if-none-match': first.headers.get('etag')! })).status, 304);
    assert.equal((await call('GET', '/enterprises/e-get/code-security/configurations/1')).body.target_type, 'global');
    const orgConfiguration = await call('POST', '/orgs/e-get-org/code-security/configurations', { name: 'Org' }, orgToken);
    assert.equal((await call('GET', `/enterprises/e-get/code-security/configurations/${orgConfiguration.body.id}`)).status, 404);
    assert.equal((await call('GET', '/enterprises/e-get/code-security/configurations/987654')).status, 404);
  });

  test('update answers 200 (also when nothing changes), 409 for a taken name or the global configuration', async () => {
    await enterprise('e-upd', {});
    const a = await create('e-upd', { name: 'A' });
    await create('e-upd', { name: 'B' });
    const path = `/enterprises/e-upd/code-security/configurations/${a.id}`;
    const changed = await call('PATCH', path, { description: 'now described', secret_scanning: 'enabled' });
    assert.equal(changed.status, 200);
    assert.equal(changed.body.description, 'now described');
    const unchanged = await call('PATCH', path, {});
    assert.equal(unchanged.status, 200);
    assert.deepEqual(unchanged.body, changed.body);
    const taken = await call('PATCH', path, { name: 'B' });
    assert.equal(taken.status, 409);
    assert.match(taken.body.message, /taken/);
    assert.equal((await call('PATCH', '/enterprises/e-upd/code-security/configurations/1', { description: 'x' })).status, 409);
    assert.equal((await call('PATCH', path, { updater_delegated_alert_dismissal: 'enabled' })).status, 422);
    assert.equal((await call('PATCH', path, { name: 7 })).status, 422);
    assert.equal((await call('PATCH', '/enterprises/e-upd/code-security/configurations/999', { name: 'C' })).status, 404);
  });

  test('attach all and all_without_configurations across the organizations; repositories with the status filter', async () => {
    await enterprise('e-att', { 'e-att-a': { one: 'public', two: 'private' }, 'e-att-b': { three: 'internal' } });
    await server.admin('POST', '/orgs', { login: 'e-att-outside', owners: ['olga'] });
    await server.admin('POST', '/repos', { owner: 'e-att-outside', name: 'away' });
    const orgConfiguration = await call('POST', '/orgs/e-att-a/code-security/configurations', { name: 'Org' }, orgToken);
    assert.equal((await call('POST', `/orgs/e-att-a/code-security/configurations/${orgConfiguration.body.id}/attach`, { scope: 'selected', selected_repository_ids: [ids['e-att-a/one']] }, orgToken)).status, 202);
    await server.drain();

    const configuration = await create('e-att', { name: 'Everywhere', secret_scanning: 'enabled', enforcement: 'unenforced' });
    const attach = `/enterprises/e-att/code-security/configurations/${configuration.id}/attach`;
    const withoutConfigurations = await call('POST', attach, { scope: 'all_without_configurations' });
    assert.equal(withoutConfigurations.status, 202);
    await server.drain();
    assert.deepEqual(await attachedNames('e-att', configuration.id), ['e-att-a/two:attached', 'e-att-b/three:attached']);
    assert.deepEqual(await repositoryConfiguration('e-att-a/one'), { status: 'enforced', id: orgConfiguration.body.id });

    assert.equal((await call('POST', attach, { scope: 'all' })).status, 202);
    await server.drain();
    assert.deepEqual(await attachedNames('e-att', configuration.id), ['e-att-a/one:attached', 'e-att-a/two:attached', 'e-att-b/three:attached']);
    assert.equal(await repositoryConfiguration('e-att-outside/away'), null, 'organizations outside the enterprise are left alone');
    assert.deepEqual(await attachedNames('e-att', configuration.id, '?status=attached&per_page=1'), ['e-att-a/one:attached']);
    assert.deepEqual(await attachedNames('e-att', configuration.id, '?status=failed'), []);
    assert.equal((await call('GET', `/enterprises/e-att/code-security/configurations/${configuration.id}/repositories?status=nope`)).status, 422);

    // The organization's view of the enterprise configuration: its own repositories only.
    const fromOrg = await call('GET', `/orgs/e-att-b/code-security/configurations/${configuration.id}/repositories`, undefined, orgToken);
    assert.deepEqual(fromOrg.body.map((r: any) => r.repository.full_name), ['e-att-b/three']);

    for (const body of [{}, { scope: 'public' }, { scope: 'selected', selected_repository_ids: [ids['e-att-a/one']] }]) {
      assert.equal((await call('POST', attach, body)).status, 422, JSON.stringify(body));
    }
    assert.equal((await call('POST', '/enterprises/e-att/code-security/configurations/4321/attach', { scope: 'all' })).status, 404);
  });

  test('delete detaches across organizations; a default or the global configuration is a 409', async () => {
    await enterprise('e-del', { 'e-del-org': { one: 'public' } });
    const configuration = await create('e-del', { name: 'Gone soon', secret_scanning: 'enabled' });
    const path = `/enterprises/e-del/code-security/configurations/${configuration.id}`;
    assert.equal((await call('POST', `${path}/attach`, { scope: 'all' })).status, 202);
    await server.drain();
    assert.equal((await call('PUT', `${path}/defaults`, { default_for_new_repos: 'all' })).status, 200);
    assert.equal((await call('DELETE', path)).status, 409);
    assert.equal((await call('PUT', `${path}/defaults`, { default_for_new_repos: 'none' })).status, 200);
    // A default set by an organization counts too.
    assert.equal((await call('PUT', `/orgs/e-del-org/code-security/configurations/${configuration.id}/defaults`, { default_for_new_repos: 'public' }, orgToken)).status, 200);
    assert.equal((await call('DELETE', path)).status, 409);
    assert.equal((await call('PUT', `/orgs/e-del-org/code-security/configurations/${configuration.id}/defaults`, { default_for_new_repos: 'none' }, orgToken)).status, 200);
    const removed = await call('DELETE', path);
    assert.equal(removed.status, 204);
    assert.equal(removed.text, '');
    assert.equal(await repositoryConfiguration('e-del-org/one'), null);
    const repository = await server.admin('GET', '/repos/e-del-org/one');
    assert.deepEqual(repository.security_and_analysis.secret_scanning, { status: 'enabled' }, 'settings stay');
    assert.equal((await call('DELETE', path)).status, 404);
    assert.equal((await call('DELETE', '/enterprises/e-del/code-security/configurations/1')).status, 409);
  });
});

describe('defaults for new repositories', () => {
  test('the enterprise default applies to organizations without their own default for that repository type', async () => {
    await enterprise('e-dflt', { 'e-dflt-own': {}, 'e-dflt-plain': {} });
    const enterpriseDefault = await create('e-dflt', { name: 'Enterprise default', enforcement: 'unenforced' });
    const set = await call('PUT', `/enterprises/e-dflt/code-security/configurations/${enterpriseDefault.id}/defaults`, { default_for_new_repos: 'all' });
    assert.equal(set.status, 200);
    assert.deepEqual(Object.keys(set.body), ['default_for_new_repos', 'configuration']);
    assert.equal(set.body.default_for_new_repos, 'all');
    const listed = await call('GET', '/enterprises/e-dflt/code-security/configurations/defaults');
    assert.deepEqual(listed.body.map((d: any) => [d.default_for_new_repos, d.configuration.id]), [['all', enterpriseDefault.id]]);

    const own = await call('POST', '/orgs/e-dflt-own/code-security/configurations', { name: 'Own public default' }, orgToken);
    assert.equal((await call('PUT', `/orgs/e-dflt-own/code-security/configurations/${own.body.id}/defaults`, { default_for_new_repos: 'public' }, orgToken)).status, 200);
    const orgDefaults = await call('GET', '/orgs/e-dflt-own/code-security/configurations/defaults', undefined, orgToken);
    assert.deepEqual(orgDefaults.body.map((d: any) => [d.default_for_new_repos, d.configuration.target_type]), [
      ['private_and_internal', 'enterprise'],
      ['public', 'organization'],
    ], 'the enterprise default shows for the repository type the organization has none for');

    for (const [org, name, visibility] of [
      ['e-dflt-own', 'pub', 'public'], ['e-dflt-own', 'priv', 'private'], ['e-dflt-plain', 'pub', 'public'], ['e-dflt-plain', 'int', 'internal'],
    ] as const) {
      await server.admin('POST', '/repos', { owner: org, name, visibility });
    }
    await server.drain();
    assert.deepEqual(await repositoryConfiguration('e-dflt-own/pub'), { status: 'enforced', id: own.body.id });
    assert.deepEqual(await repositoryConfiguration('e-dflt-own/priv'), { status: 'attached', id: enterpriseDefault.id });
    assert.deepEqual(await repositoryConfiguration('e-dflt-plain/pub'), { status: 'attached', id: enterpriseDefault.id });
    assert.deepEqual(await repositoryConfiguration('e-dflt-plain/int'), { status: 'attached', id: enterpriseDefault.id });

    // `public` on the configuration that was the default for all leaves private repositories without one.
    assert.equal((await call('PUT', `/enterprises/e-dflt/code-security/configurations/${enterpriseDefault.id}/defaults`, { default_for_new_repos: 'public' })).status, 200);
    await server.admin('POST', '/repos', { owner: 'e-dflt-plain', name: 'later', visibility: 'private' });
    await server.drain();
    assert.equal(await repositoryConfiguration('e-dflt-plain/later'), null);
    const global = await call('PUT', '/enterprises/e-dflt/code-security/configurations/1/defaults', { default_for_new_repos: 'private_and_internal' });
    assert.equal(global.status, 200);
    const both = await call('GET', '/enterprises/e-dflt/code-security/configurations/defaults');
    assert.deepEqual(both.body.map((d: any) => [d.default_for_new_repos, d.configuration.id]), [['private_and_internal', 1], ['public', enterpriseDefault.id]]);
    for (const body of [{}, { default_for_new_repos: 'internal' }]) {
      assert.equal((await call('PUT', `/enterprises/e-dflt/code-security/configurations/${enterpriseDefault.id}/defaults`, body)).status, 422);
    }
  });
});

describe('while an attach is in progress', () => {
  test('repositories show attaching, and enterprise changes are a 409', async () => {
    const idle = await startServer({ CODEHOST_WORKER: '0' });
    try {
      await idle.admin('POST', '/users', { login: 'eve' });
      await idle.admin('POST', '/enterprises', { slug: 'busy', owners: ['eve'] });
      await idle.admin('POST', '/orgs', { login: 'busy-org', owners: ['eve'], enterprise: 'busy' });
      await idle.admin('POST', '/repos', { owner: 'busy-org', name: 'one' });
      const busyToken = await classicToken(idle, 'eve', ['admin:enterprise', 'admin:org', 'repo']);
      const as = (method: string, path: string, body?: unknown) => idle.api(method, path, { token: busyToken, body });
      const created = await as('POST', '/enterprises/busy/code-security/configurations', { name: 'Busy' });
      const path = `/enterprises/busy/code-security/configurations/${created.body.id}`;
      assert.equal((await as('POST', `${path}/attach`, { scope: 'all' })).status, 202);

      const listed = await as('GET', `${path}/repositories`);
      assert.deepEqual(listed.body.map((r: any) => r.status), ['attaching']);
      assert.equal((await as('GET', '/repos/busy-org/one/code-security-configuration')).body.status, 'attaching');
      for (const [method, suffix, body] of [['PATCH', '', { description: 'x' }], ['DELETE', '', undefined], ['POST', '/attach', { scope: 'all' }]] as const) {
        const response = await as(method, `${path}${suffix}`, body);
        assert.equal(response.status, 409, `${method} ${suffix}`);
        assert.match(response.body.message, /in progress/);
      }
      const orgConfiguration = await as('POST', '/orgs/busy-org/code-security/configurations', { name: 'Org' });
      assert.equal((await as('DELETE', `/orgs/busy-org/code-security/configurations/${orgConfiguration.body.id}`)).status, 409);
    } finally {
      await idle.close();
    }
  });
});
