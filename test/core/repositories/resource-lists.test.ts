// The lists the representations' `*_url` fields name, in the platform's shapes: an issue's comments
// and events (and one event), a repository's watchers, the caller's watch state and the repository's
// teams, an account's repositories and organizations. Paginated with `per_page` / `page` and `Link`,
// ETag / 304, and the repository read rule: a private repository is 404 for those who may not read it,
// and a list of repositories shows the private ones only to those who read them through a
// credential that reaches them.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { appUserToken, classicToken, createApp, fineGrainedToken, installationToken } from '../../helpers/credentials.ts';
import { startServer, type TestServer, links as linkUrls } from '../../helpers/server.ts';

let server: TestServer;
const t: Record<string, string> = {};
const numbers: Record<string, number> = {};

const get = (path: string, token?: string, headers?: Record<string, string>) => server.api('GET', path, { token, headers });

/** The `Link` header as {rel: url path and query under the API}. */
/** The paths of a `Link` header's URLs by their rel. */
function links(header: string | null): Record<string, string> {
  return Object.fromEntries(Object.entries(linkUrls(header)).map(([rel, url]) => [rel, url.slice(server.apiUrl.length)]));
}

before(async () => {
  server = await startServer();
  for (const login of ['mona', 'lisa', 'stranger', 'hubot']) await server.admin('POST', '/users', { login });
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'], members: ['lisa'] });
  await server.admin('POST', '/orgs', { login: 'other', owners: ['stranger'], members: ['lisa'] });
  await server.admin('POST', '/orgs', { login: 'solo', owners: ['mona'] });
  await server.admin('POST', '/orgs/acme/teams', { slug: 'core', name: 'Core', members: ['mona', 'lisa'] });
  await server.admin('POST', '/orgs/acme/teams', { slug: 'docs', name: 'Docs', members: ['lisa'] });
  // Created one second apart, so `sort=created` has an order of its own.
  for (const [owner, name, visibility] of [
    ['acme', 'open', 'public'], ['acme', 'secret', 'private'], ['acme', 'beta', 'public'], ['acme', 'inner', 'internal'],
    ['mona', 'mine', 'private'], ['mona', 'blog', 'public'], ['other', 'plans', 'private'], ['stranger', 'shared', 'private'],
  ] as const) {
    await server.admin('POST', '/repos', { owner, name, visibility });
    await server.advance(1);
  }
  await server.admin('PUT', '/orgs/acme/teams/core/repos/acme/secret', { permission: 'push' });
  await server.admin('PUT', '/orgs/acme/teams/docs/repos/acme/secret', { permission: 'pull' });
  await server.admin('PUT', '/orgs/acme/teams/core/repos/acme/open', { permission: 'admin' });
  await server.admin('PUT', '/repos/stranger/shared/collaborators/mona', { permission: 'pull' });

  for (const repo of ['open', 'secret']) {
    const issue = await server.admin('POST', `/repos/acme/${repo}/issues`, { author: 'mona', title: `${repo} issue`, body: 'cc @lisa' });
    numbers[`${repo}-issue`] = issue.number;
    for (const body of ['first', 'second', 'third']) {
      await server.advance(60);
      await server.admin('POST', `/repos/acme/${repo}/issues/${issue.number}/comments`, { author: 'lisa', body });
    }
  }
  await server.advance(60);
  await server.admin('PATCH', `/repos/acme/secret/issues/${numbers['secret-issue']}`, { actor: 'mona', assignees: ['lisa'] });
  await server.admin('PATCH', `/repos/acme/secret/issues/${numbers['secret-issue']}`, { actor: 'mona', state: 'closed' });
  const pull = await server.admin('POST', '/repos/acme/secret/issues', { author: 'lisa', title: 'A fix', pull_request: true, reviewers: ['mona'], team_reviewers: ['core'] });
  numbers['secret-pull'] = pull.number;
  await server.admin('POST', `/repos/acme/secret/issues/${pull.number}/comments`, { author: 'mona', body: 'looks good' });

  for (const login of ['mona', 'lisa']) await server.admin('PUT', '/repos/acme/secret/subscription', { login, subscribed: true });
  await server.admin('PUT', '/repos/acme/open/subscription', { login: 'hubot', subscribed: true });
  await server.admin('PUT', '/repos/acme/open/subscription', { login: 'stranger', subscribed: false, ignored: true });
  // hubot watched the private repository while a collaborator, then lost access: no longer listed.
  await server.admin('PUT', '/repos/acme/secret/collaborators/hubot', { permission: 'pull' });
  await server.admin('PUT', '/repos/acme/secret/subscription', { login: 'hubot', subscribed: true });
  await server.admin('DELETE', '/repos/acme/secret/collaborators/hubot');
  await server.drain();

  Object.assign(t, {
    mona: await classicToken(server, 'mona', ['repo', 'read:org']),
    monaBare: await classicToken(server, 'mona', []),
    monaPublic: await classicToken(server, 'mona', ['public_repo']),
    lisa: await classicToken(server, 'lisa', ['repo', 'read:org']),
    stranger: await classicToken(server, 'stranger', ['repo', 'read:org']),
    hubot: await classicToken(server, 'hubot', ['repo', 'read:org']),
    fgAcme: await fineGrainedToken(server, 'mona', 'acme', { metadata: 'read', issues: 'read' }),
    fgAcmeNoRead: await fineGrainedToken(server, 'mona', 'acme', { organization_administration: 'read' }),
  });
  const lister = await createApp(server, 'lister', { metadata: 'read', issues: 'read' });
  t.installation = await installationToken(server, lister, 'acme');
  t.appUser = await appUserToken(server, lister, 'mona');
  // picker: installed on acme for acme/secret only.
  const picker = await createApp(server, 'picker', { metadata: 'read' });
  await server.admin('POST', '/apps/picker/installations', { account: 'acme', repositories: ['secret'] });
  t.appUserSelected = await appUserToken(server, picker, 'mona');
  t.fgSelected = (await server.admin('POST', '/tokens', { login: 'mona', kind: 'fine_grained', resource_owner: 'acme', repositories: ['inner'], permissions: { metadata: 'read' } })).token;
});
after(() => server.close());

describe('issue comments', () => {
  const path = () => `/repos/acme/secret/issues/${numbers['secret-issue']}/comments`;

  test('oldest first, in the Issue comment shape', async () => {
    const list = await get(path(), t.lisa);
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(list.body.map((c: any) => c.body), ['first', 'second', 'third']);
    const [first] = list.body;
    assert.equal(first.user.login, 'lisa');
    assert.ok(first.url.endsWith(`/repos/acme/secret/issues/comments/${first.id}`));
    assert.ok(first.issue_url.endsWith(`/repos/acme/secret/issues/${numbers['secret-issue']}`));
    assert.equal((await get(first.url.slice(server.apiUrl.length), t.lisa)).body.body, 'first', 'each url resolves');
  });

  test('a pull request\'s comments through the issues path', async () => {
    const list = await get(`/repos/acme/secret/issues/${numbers['secret-pull']}/comments`, t.mona);
    assert.deepEqual(list.body.map((c: any) => c.body), ['looks good']);
  });

  test('since: those updated at or after it; a bad timestamp is a 422', async () => {
    const all = (await get(path(), t.lisa)).body;
    const since = all[1].updated_at;
    const later = await get(`${path()}?since=${encodeURIComponent(since)}`, t.lisa);
    assert.deepEqual(later.body.map((c: any) => c.body), ['second', 'third']);
    const offset = new Date(Date.parse(since)).toISOString().replace('Z', '+00:00');
    assert.equal((await get(`${path()}?since=${encodeURIComponent(offset)}`, t.lisa)).body.length, 2);
    const bad = await get(`${path()}?since=yesterday`, t.lisa);
    assert.equal(bad.status, 422, bad.text);
  });

  test('paginated with Link', async () => {
    const first = await get(`${path()}?per_page=2`, t.lisa);
    assert.equal(first.body.length, 2);
    const rel = links(first.headers.get('link'));
    assert.equal(rel.next, `${path()}?per_page=2&page=2`);
    assert.equal(rel.last, `${path()}?per_page=2&page=2`);
    const second = await get(rel.next!, t.lisa);
    assert.deepEqual(second.body.map((c: any) => c.body), ['third']);
    assert.equal(links(second.headers.get('link')).prev, `${path()}?per_page=2&page=1`);
    assert.equal((await get(`${path()}?per_page=0`, t.lisa)).status, 422);
  });

  test('a private repository is 404 for those who may not read it; an unknown issue 404', async () => {
    assert.equal((await get(path())).status, 404);
    assert.equal((await get(path(), t.stranger)).status, 404);
    assert.equal((await get(path(), t.monaBare)).status, 404, 'a classic token needs repo');
    assert.equal((await get(path(), t.fgAcme)).status, 200);
    assert.equal((await get(path(), t.fgAcmeNoRead)).status, 403);
    assert.equal((await get(path(), t.installation)).status, 200);
    assert.equal((await get('/repos/acme/secret/issues/999/comments', t.mona)).status, 404);
    assert.equal((await get(`/repos/acme/open/issues/${numbers['open-issue']}/comments`)).status, 200, 'a public one answers anyone');
  });

  test('ETag and 304', async () => {
    const first = await get(path(), t.lisa);
    const again = await get(path(), t.lisa, { 'if-none-match': first.headers.get('etag')! });
    assert.equal(again.status, 304);
  });
});

describe('issue events', () => {
  test('the timeline in the platform\'s issue event shape', async () => {
    const list = await get(`/repos/acme/secret/issues/${numbers['secret-issue']}/events`, t.lisa);
    assert.equal(list.status, 200, list.text);
    const byEvent = Object.fromEntries(list.body.map((e: any) => [e.event, e]));
    assert.deepEqual(list.body.map((e: any) => e.event), ['mentioned', 'assigned', 'closed']);
    assert.equal(byEvent.mentioned.actor.login, 'lisa', 'the actor of a mention is the user mentioned');
    assert.equal(byEvent.assigned.actor.login, 'mona');
    assert.equal(byEvent.assigned.assignee.login, 'lisa');
    assert.equal(byEvent.assigned.assigner.login, 'mona');
    assert.equal(byEvent.closed.commit_id, null);
    assert.equal(byEvent.closed.commit_url, null);
    assert.equal(byEvent.closed.assignee, undefined);
    for (const event of list.body) {
      assert.match(event.node_id, /^[A-Za-z0-9_-]+$/);
      assert.match(event.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      const one = await get(event.url.slice(server.apiUrl.length), t.lisa);
      assert.equal(one.status, 200, event.url);
      assert.deepEqual(one.body, event);
    }
  });

  test('review requests name the reviewer or the team', async () => {
    const list = await get(`/repos/acme/secret/issues/${numbers['secret-pull']}/events`, t.mona);
    const requested = list.body.filter((e: any) => e.event === 'review_requested');
    assert.equal(requested.length, 2);
    assert.equal(requested.find((e: any) => e.requested_reviewer)?.requested_reviewer.login, 'mona');
    assert.equal(requested.find((e: any) => e.requested_team)?.requested_team.slug, 'core');
    for (const event of requested) assert.equal(event.review_requester.login, 'lisa');
  });

  test('paginated; private 404; an event of another repository 404', async () => {
    const path = `/repos/acme/secret/issues/${numbers['secret-issue']}/events`;
    const page = await get(`${path}?per_page=1&page=2`, t.lisa);
    assert.deepEqual(page.body.map((e: any) => e.event), ['assigned']);
    const rel = links(page.headers.get('link'));
    assert.equal(rel.next, `${path}?per_page=1&page=3`);
    assert.equal(rel.last, `${path}?per_page=1&page=3`);
    assert.equal(rel.first, `${path}?per_page=1&page=1`);
    assert.equal((await get(path, t.stranger)).status, 404);
    assert.equal((await get(path)).status, 404);
    const id = page.body[0].id;
    assert.equal((await get(`/repos/acme/open/issues/events/${id}`, t.lisa)).status, 404);
    assert.equal((await get(`/repos/acme/secret/issues/events/${id}`, t.stranger)).status, 404);
    assert.equal((await get('/repos/acme/secret/issues/events/nope', t.lisa)).status, 404);
    const etag = (await get(path, t.lisa)).headers.get('etag')!;
    assert.equal((await get(path, t.lisa, { 'if-none-match': etag })).status, 304);
  });
});

describe('watching', () => {
  test('subscribers: the users watching who can read it', async () => {
    const secret = await get('/repos/acme/secret/subscribers', t.mona);
    assert.equal(secret.status, 200, secret.text);
    assert.deepEqual(secret.body.map((u: any) => u.login), ['mona', 'lisa'], 'hubot lost access; its watch is not listed');
    assert.ok(secret.body[0].url.endsWith('/users/mona'));
    const open = await get('/repos/acme/open/subscribers');
    assert.deepEqual(open.body.map((u: any) => u.login), ['hubot'], 'an ignoring user is no watcher');
    const page = await get('/repos/acme/secret/subscribers?per_page=1', t.mona);
    assert.deepEqual(page.body.map((u: any) => u.login), ['mona']);
    assert.equal(links(page.headers.get('link')).last, '/repos/acme/secret/subscribers?per_page=1&page=2');
    assert.equal((await get('/repos/acme/secret/subscribers', t.stranger)).status, 404);
    assert.equal((await get('/repos/acme/secret/subscribers')).status, 404);
    const etag = secret.headers.get('etag')!;
    assert.equal((await get('/repos/acme/secret/subscribers', t.mona, { 'if-none-match': etag })).status, 304);
  });

  test('subscription: the caller\'s own watch state, 404 when none', async () => {
    const mine = await get('/repos/acme/secret/subscription', t.lisa);
    assert.equal(mine.status, 200, mine.text);
    assert.equal(mine.body.subscribed, true);
    assert.equal(mine.body.ignored, false);
    assert.equal(mine.body.reason, null);
    assert.match(mine.body.created_at, /Z$/);
    assert.ok(mine.body.url.endsWith('/repos/acme/secret/subscription'));
    assert.ok(mine.body.repository_url.endsWith('/repos/acme/secret'));
    const ignoring = await get('/repos/acme/open/subscription', t.stranger);
    assert.deepEqual([ignoring.body.subscribed, ignoring.body.ignored], [false, true]);
    assert.equal((await get('/repos/acme/open/subscription', t.lisa)).status, 404, 'lisa does not watch it');
    assert.equal((await get('/repos/acme/secret/subscription', t.hubot)).status, 404, 'hubot may no longer read it');
    assert.equal((await get('/repos/acme/secret/subscription', t.monaBare)).status, 404);
    assert.equal((await get('/repos/acme/open/subscription')).status, 401);
    assert.equal((await get('/repos/acme/open/subscription', t.installation)).status, 403);
  });
});

describe('repository teams', () => {
  test('teams with access, their permission on it, for the organization\'s members', async () => {
    const teams = await get('/repos/acme/secret/teams', t.lisa);
    assert.equal(teams.status, 200, teams.text);
    assert.deepEqual(teams.body.map((team: any) => [team.slug, team.permission]), [['core', 'push'], ['docs', 'pull']]);
    assert.deepEqual(teams.body[1].permissions, { admin: false, maintain: false, push: false, triage: false, pull: true });
    assert.ok(teams.body[0].url.endsWith('/orgs/acme/teams/core'));
    assert.equal((await get(teams.body[0].url.slice(server.apiUrl.length), t.lisa)).status, 200, 'each url resolves for its reader');
    const page = await get('/repos/acme/secret/teams?per_page=1&page=2', t.lisa);
    assert.deepEqual(page.body.map((team: any) => team.slug), ['docs']);
    assert.equal(links(page.headers.get('link')).prev, '/repos/acme/secret/teams?per_page=1&page=1');
    assert.equal((await get('/repos/acme/secret/teams', t.installation)).body.length, 2);
  });

  test('others: 404 on a private repository, an empty list on a public one, 401 / 403 without credentials or scope', async () => {
    assert.equal((await get('/repos/acme/secret/teams', t.stranger)).status, 404);
    const outsider = await get('/repos/acme/open/teams', t.stranger);
    assert.equal(outsider.status, 200);
    assert.deepEqual(outsider.body, []);
    assert.deepEqual((await get('/repos/acme/open/teams', t.monaPublic)).body.map((team: any) => team.slug), ['core']);
    assert.equal((await get('/repos/acme/secret/teams', t.monaPublic)).status, 404, 'public_repo does not reach a private one');
    assert.equal((await get('/repos/acme/open/teams')).status, 401);
    const bare = await get('/repos/acme/open/teams', t.monaBare);
    assert.equal(bare.status, 403);
    assert.equal(bare.headers.get('x-accepted-oauth-scopes'), 'public_repo, repo');
  });
});

describe('an account\'s repositories', () => {
  const names = (response: { body: any[] }) => response.body.map((r) => r.full_name);

  test('GET /users/{username}/repos: owned ones by default, by full name; private ones for their readers', async () => {
    assert.deepEqual(names(await get('/users/mona/repos')), ['mona/blog']);
    assert.deepEqual(names(await get('/users/mona/repos', t.mona)), ['mona/blog', 'mona/mine']);
    assert.deepEqual(names(await get('/users/mona/repos', t.monaBare)), ['mona/blog'], 'private ones need repo');
    assert.deepEqual(names(await get('/users/mona/repos', t.lisa)), ['mona/blog']);
    const all = await get('/users/mona/repos?type=all', t.mona);
    assert.deepEqual(names(all), ['acme/beta', 'acme/inner', 'acme/open', 'acme/secret', 'mona/blog', 'mona/mine', 'stranger/shared']);
    assert.deepEqual(names(await get('/users/mona/repos?type=member', t.mona)), ['acme/beta', 'acme/inner', 'acme/open', 'acme/secret', 'stranger/shared']);
    assert.deepEqual(names(await get('/users/mona/repos?type=member')), ['acme/beta', 'acme/open'], 'to anyone, the public ones');
    assert.deepEqual(names(await get('/users/mona/repos?type=member', t.fgAcme)), ['acme/beta', 'acme/inner', 'acme/open', 'acme/secret'], 'a token of acme reaches acme only');
    assert.deepEqual(names(await get('/users/mona/repos?type=member', t.fgAcmeNoRead)), ['acme/beta', 'acme/open'], 'without a repository permission');
    assert.deepEqual(names(await get('/users/mona/repos?type=member', t.installation)), ['acme/beta', 'acme/inner', 'acme/open', 'acme/secret']);
    assert.deepEqual(names(await get('/users/mona/repos?type=all&direction=desc', t.mona)).slice(0, 2), ['stranger/shared', 'mona/mine']);
    const mine = all.body.find((r: any) => r.full_name === 'mona/mine');
    assert.deepEqual(mine.permissions, { admin: true, push: true, pull: true });
    assert.equal(mine.private, true);
    assert.equal(typeof mine.open_issues_count, 'number');
    assert.equal((await get('/users/nobody/repos')).status, 404);
    assert.equal((await get('/users/mona/repos?type=nope')).status, 422);
  });

  test('GET /orgs/{org}/repos: newest first by default; type, sort, direction; paginated', async () => {
    assert.deepEqual(names(await get('/orgs/acme/repos')), ['acme/beta', 'acme/open']);
    assert.deepEqual(names(await get('/orgs/acme/repos', t.lisa)), ['acme/inner', 'acme/beta', 'acme/secret', 'acme/open']);
    assert.deepEqual(names(await get('/orgs/acme/repos', t.stranger)), ['acme/beta', 'acme/open']);
    assert.deepEqual(names(await get('/orgs/acme/repos?type=private', t.lisa)), ['acme/inner', 'acme/secret']);
    assert.deepEqual(names(await get('/orgs/acme/repos?type=public', t.lisa)), ['acme/beta', 'acme/open']);
    assert.deepEqual(names(await get('/orgs/acme/repos?type=forks', t.lisa)), []);
    assert.deepEqual(names(await get('/orgs/acme/repos?type=member', t.stranger)), []);
    assert.deepEqual(names(await get('/orgs/acme/repos?sort=full_name', t.lisa)), ['acme/beta', 'acme/inner', 'acme/open', 'acme/secret']);
    assert.deepEqual(names(await get('/orgs/acme/repos?sort=created&direction=asc', t.lisa)), ['acme/open', 'acme/secret', 'acme/beta', 'acme/inner']);
    assert.deepEqual(names(await get('/orgs/acme/repos', t.installation)), ['acme/inner', 'acme/beta', 'acme/secret', 'acme/open']);
    const page = await get('/orgs/acme/repos?per_page=3', t.lisa);
    assert.deepEqual(names(page), ['acme/inner', 'acme/beta', 'acme/secret']);
    const rel = links(page.headers.get('link'));
    assert.equal(rel.next, '/orgs/acme/repos?per_page=3&page=2');
    assert.equal(rel.last, '/orgs/acme/repos?per_page=3&page=2');
    assert.deepEqual(names(await get(rel.next!, t.lisa)), ['acme/open']);
    const etag = page.headers.get('etag')!;
    assert.equal((await get('/orgs/acme/repos?per_page=3', t.lisa, { 'if-none-match': etag })).status, 304);
    assert.equal((await get('/orgs/mona/repos')).status, 404, 'a user is not an organization');
  });

  test('app user and selected-repository tokens: the private ones they reach, in the list\'s query', async () => {
    assert.deepEqual(names(await get('/orgs/acme/repos?sort=full_name', t.appUser)), ['acme/beta', 'acme/inner', 'acme/open', 'acme/secret']);
    assert.deepEqual(names(await get('/users/mona/repos?type=all', t.appUser)), ['acme/beta', 'acme/inner', 'acme/open', 'acme/secret', 'mona/blog'], 'the app is not installed on mona or stranger');
    assert.deepEqual(names(await get('/orgs/acme/repos?sort=full_name', t.appUserSelected)), ['acme/beta', 'acme/open', 'acme/secret'], 'its installation covers acme/secret only');
    assert.deepEqual(names(await get('/users/mona/repos?type=all', t.appUserSelected)), ['acme/beta', 'acme/open', 'acme/secret', 'mona/blog']);
    assert.deepEqual(names(await get('/orgs/acme/repos?sort=full_name', t.fgSelected)), ['acme/beta', 'acme/inner', 'acme/open'], 'the token selects acme/inner only');
    const page = await get('/orgs/acme/repos?sort=full_name&per_page=2', t.appUserSelected);
    assert.deepEqual(names(page), ['acme/beta', 'acme/open']);
    assert.equal(links(page.headers.get('link')).last, '/orgs/acme/repos?sort=full_name&per_page=2&page=2', 'the total counts what the caller sees');
  });
});

describe('an account\'s organizations', () => {
  const logins = (response: { body: any[] }) => response.body.map((o) => o.login);

  test('shown to the user themself and to the other members of each', async () => {
    const own = await get('/users/lisa/orgs', t.lisa);
    assert.equal(own.status, 200, own.text);
    assert.deepEqual(logins(own), ['acme', 'other']);
    assert.ok(own.body[0].url.endsWith('/orgs/acme'));
    assert.ok(own.body[0].repos_url.endsWith('/orgs/acme/repos'));
    assert.deepEqual(logins(await get('/users/lisa/orgs', t.mona)), ['acme'], 'mona shares acme only');
    assert.deepEqual(logins(await get('/users/lisa/orgs', t.stranger)), ['other']);
    assert.deepEqual(logins(await get('/users/lisa/orgs', t.hubot)), []);
    assert.deepEqual(logins(await get('/users/lisa/orgs')), []);
    assert.deepEqual(logins(await get('/users/mona/orgs', t.monaBare)), [], 'a classic token needs read:org or user');
    assert.deepEqual(logins(await get('/users/mona/orgs', t.fgAcme)), ['acme'], 'a token of acme reaches acme only');
    assert.deepEqual(logins(await get('/users/lisa/orgs', t.installation)), ['acme']);
    const page = await get('/users/mona/orgs?per_page=1', t.mona);
    assert.deepEqual(logins(page), ['acme']);
    assert.equal(links(page.headers.get('link')).next, '/users/mona/orgs?per_page=1&page=2');
    assert.equal((await get('/users/nobody/orgs')).status, 404);
  });
});
