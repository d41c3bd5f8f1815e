// The operator's lists: users, orgs, an org's teams, repos, apps, an app's installations and tokens, paginated with `Link`, in the create
// answers' representations, never with a secret (token values, hashes, client secrets, private keys).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let tokenValue: string;

before(async () => {
  server = await startServer();
  for (const login of ['mona', 'hubot', 'octo', 'lisa', 'bob']) await server.admin('POST', '/users', { login, name: login.toUpperCase() });
  await server.admin('POST', '/users', { login: 'robot', type: 'Bot' });
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'] });
  await server.admin('POST', '/orgs', { login: 'globex', owners: ['hubot'] });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
  await server.admin('POST', '/repos', { owner: 'mona', name: 'dotfiles', visibility: 'private' });
  await server.admin('POST', '/apps', { slug: 'ci-bot', owner: 'acme', permissions: { issues: 'read' }, events: ['issues'] });
  await server.admin('POST', '/orgs/acme/teams', { slug: 'reviewers', name: 'Reviewers', members: ['mona'] });
  await server.admin('POST', '/orgs/acme/teams', { slug: 'ops' });
  await server.admin('POST', '/apps', { slug: 'deployer', permissions: { contents: 'read' } });
  tokenValue = (await server.admin('POST', '/tokens', { login: 'mona', kind: 'classic', scopes: ['repo'] })).token;
  await server.admin('POST', '/tokens', { login: 'mona', kind: 'fine_grained', permissions: { issues: 'write' }, expires_at: '2099-01-01T00:00:00Z' });
  await server.admin('POST', '/tokens', { login: 'hubot', kind: 'classic', scopes: [] });
});
after(() => server.close());

/** Every page of an admin list, following `Link: rel="next"`. */
async function allPages(path: string): Promise<{ items: any[]; pages: number }> {
  const items: any[] = [];
  let url: string | null = `${server.url}/_admin${path}`;
  let pages = 0;
  while (url) {
    const response = await fetch(url, { headers: { authorization: 'Bearer test-admin-token' } });
    assert.equal(response.status, 200, url);
    items.push(...((await response.json()) as any[]));
    pages++;
    url = /<([^>]+)>; rel="next"/.exec(response.headers.get('link') ?? '')?.[1] ?? null;
  }
  return { items, pages };
}

describe('admin lists', () => {
  test('users: every user and bot (not organizations), as the user create answers plus the suspension, paged with Link', async () => {
    const first = await server.adminRaw('GET', '/users?per_page=2');
    assert.equal(first.status, 200);
    assert.deepEqual(first.body.map((u: any) => u.login), ['mona', 'hubot']);
    const link = first.headers.get('link')!;
    assert.match(link, new RegExp(`<${server.server.ctx.urls.web}/_admin/users\\?per_page=2&page=2>; rel="next"`));
    assert.match(link, /page=3>; rel="last"/);
    const { items, pages } = await allPages('/users?per_page=2');
    assert.equal(pages, 3);
    assert.deepEqual(items.map((u) => u.login), ['mona', 'hubot', 'octo', 'lisa', 'bob', 'robot']);
    const created = await server.admin('POST', '/users', { login: 'newcomer', name: 'New' });
    const listed = (await allPages('/users?per_page=100')).items.find((u) => u.login === 'newcomer');
    // The list adds the operator's view of the account: whether (and why) it is suspended.
    assert.deepEqual(listed, { ...created, suspended_at: null, suspended_reason: null });
  });

  test('orgs and repos in their create representations', async () => {
    const orgs = await server.admin('GET', '/orgs');
    assert.deepEqual(orgs.map((o: any) => [o.login, o.type]), [['acme', 'Organization'], ['globex', 'Organization']]);
    const repos = await server.admin('GET', '/repos');
    assert.deepEqual(repos.map((r: any) => [r.full_name, r.private, r.owner.login]), [['acme/widgets', false, 'acme'], ['mona/dotfiles', true, 'mona']]);
    const one = await server.admin('GET', '/repos/acme/widgets');
    assert.deepEqual(repos[0], one);
    const second = await server.adminRaw('GET', '/repos?per_page=1&page=2');
    assert.deepEqual(second.body.map((r: any) => r.full_name), ['mona/dotfiles']);
    assert.match(second.headers.get('link')!, /page=1>; rel="prev"/);
  });

  test('apps: without client secret or private key', async () => {
    const apps = (await server.admin('GET', '/apps')).filter((a: any) => a.slug === 'ci-bot');
    assert.equal(apps.length, 1);
    const [listed] = apps;
    assert.deepEqual(
      { slug: listed.slug, owner: listed.owner, permissions: listed.permissions, events: listed.events },
      { slug: 'ci-bot', owner: 'acme', permissions: { issues: 'read' }, events: ['issues'] },
    );
    assert.equal(typeof listed.id, 'number');
    assert.equal(typeof listed.client_id, 'string');
    assert.equal('client_secret' in listed || 'private_key' in listed, false);
  });

  test("teams: an organization's, oldest first, as the team create answers; 404 for an unknown org or a user", async () => {
    const created = await server.admin('POST', '/orgs/globex/teams', { slug: 'sales', name: 'Sales' });
    assert.deepEqual(await server.admin('GET', '/orgs/globex/teams'), [created]);
    const first = await server.adminRaw('GET', '/orgs/acme/teams?per_page=1');
    assert.deepEqual(first.body.map((t: any) => [t.slug, t.name]), [['reviewers', 'Reviewers']]);
    assert.match(first.headers.get('link')!, new RegExp(`<${server.server.ctx.urls.web}/_admin/orgs/acme/teams\\?per_page=1&page=2>; rel="next"`));
    assert.deepEqual((await allPages('/orgs/acme/teams?per_page=1')).items.map((t) => t.slug), ['reviewers', 'ops']);
    assert.equal((await server.adminRaw('GET', '/orgs/nowhere/teams')).status, 404);
    assert.equal((await server.adminRaw('GET', '/orgs/mona/teams')).status, 404);
  });

  test("installations: an app's, oldest first, as the installation create answers plus the suspension; 404 for an unknown app", async () => {
    const onAcme = await server.admin('POST', '/apps/deployer/installations', { account: 'acme', repositories: 'all' });
    const onMona = await server.admin('POST', '/apps/deployer/installations', { account: 'mona', repositories: ['dotfiles'] });
    await server.admin('PUT', `/apps/deployer/installations/${onMona.id}/suspended`);
    const listed = await server.admin('GET', '/apps/deployer/installations');
    assert.deepEqual(listed[0], { ...onAcme, suspended_at: null });
    assert.equal(listed[1].id, onMona.id);
    assert.equal(listed[1].account.login, 'mona');
    assert.equal(listed[1].repository_selection, 'selected');
    assert.match(listed[1].suspended_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.deepEqual((await allPages('/apps/deployer/installations?per_page=1')).items.map((i) => i.id), [onAcme.id, onMona.id]);
    assert.deepEqual(await server.admin('GET', '/apps/ci-bot/installations'), []);
    assert.equal((await server.adminRaw('GET', '/apps/nothing/installations')).status, 404);
  });

  test('tokens: by owner, never the secret or its hash', async () => {
    const response = await server.adminRaw('GET', '/tokens?login=mona');
    assert.equal(response.status, 200);
    const tokens = response.body;
    assert.deepEqual(tokens.map((t: any) => [t.kind, t.login]), [['classic', 'mona'], ['fine_grained', 'mona']]);
    assert.deepEqual(Object.keys(tokens[0]).sort(), ['app', 'created_at', 'expires_at', 'id', 'kind', 'login', 'note', 'permissions', 'scopes', 'token_last_eight']);
    assert.deepEqual(tokens[0].scopes, ['repo']);
    assert.equal(tokens[0].token_last_eight, tokenValue.slice(-8));
    assert.deepEqual(tokens[1].permissions, { issues: 'write' });
    assert.equal(tokens[1].expires_at, '2099-01-01T00:00:00Z');
    assert.match(tokens[0].created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.ok(!response.text.includes(tokenValue), 'the token value is never listed');
    assert.ok(!/hash/i.test(response.text));
    assert.deepEqual((await server.admin('GET', '/tokens?login=hubot')).map((t: any) => t.login), ['hubot']);
    assert.equal((await server.admin('GET', '/tokens')).length, 3);
    assert.deepEqual(await server.admin('GET', '/tokens?login=octo'), []);
    assert.equal((await server.adminRaw('GET', '/tokens?login=ghost')).status, 404);
  });

  test('bad paging is a 422; the lists need the admin token', async () => {
    for (const path of ['/users', '/orgs', '/orgs/acme/teams', '/repos', '/apps', '/apps/deployer/installations', '/tokens']) {
      for (const query of ['per_page=0', 'per_page=abc', 'page=0', 'page=1.5']) {
        const response = await server.adminRaw('GET', `${path}?${query}`);
        assert.equal(response.status, 422, `${path}?${query}`);
      }
      assert.equal((await server.admin('GET', `${path}?page=99`)).length, 0);
      const anonymous = await fetch(`${server.url}/_admin${path}`);
      assert.equal(anonymous.status, 401, path);
    }
    assert.equal((await server.admin('GET', '/users?per_page=500')).length, 7);
  });
});
