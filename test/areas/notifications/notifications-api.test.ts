// The notifications API end to end: list shapes and filters, pagination with Link, polling
// (Last-Modified / If-Modified-Since 304, X-Poll-Interval), mark as read (205, 202 + background
// job), threads and their subscriptions, validation errors, and every credential kind.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { Octokit } from '@octokit/core';
import {
  appJwt, appUserToken, classicToken, createApp, fineGrainedToken, installationToken, oauthToken,
} from '../../helpers/credentials.ts';
import { startServer, type TestServer, links } from '../../helpers/server.ts';

let server: TestServer;
const tokens: Record<string, string> = {};
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

async function person(login: string): Promise<string> {
  await server.admin('POST', '/users', { login });
  tokens[login] = await classicToken(server, login, ['notifications']);
  return login;
}

/** A thread made on the operator surface (no fan-out to wait for). */
async function notify(login: string, title: string, options: { repository?: string; reason?: string } = {}) {
  return server.admin('POST', '/notifications', {
    login,
    repository: options.repository ?? 'acme/widgets',
    subject: { type: 'Release', title, url: `https://example.com/releases/${encodeURIComponent(title)}` },
    reason: options.reason ?? 'subscribed',
  });
}

const titles = (body: { subject: { title: string } }[]) => body.map((t) => t.subject.title);
const get = (path: string, login: string, headers?: Record<string, string>) => server.api('GET', path, { token: tokens[login], headers });

before(async () => {
  server = await startServer();
  for (const login of ['mona', 'hubot']) await person(login);
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'] });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'gadgets' });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'secret', visibility: 'private' });
});
after(() => server.close());

describe('listing', () => {
  test('a thread as the platform shapes it', async () => {
    const issue = await server.admin('POST', '/repos/acme/widgets/issues', { author: 'hubot', title: 'Shape', body: 'hey @mona' });
    await server.drain();
    const response = await get('/notifications', 'mona');
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /application\/json/);
    assert.equal(response.headers.get('x-accepted-oauth-scopes'), 'notifications, repo');
    assert.ok([60, 120, 240].includes(Number(response.headers.get('x-poll-interval'))));
    assert.ok(!Number.isNaN(Date.parse(response.headers.get('last-modified')!)));
    const [thread] = response.body;
    assert.deepEqual(Object.keys(thread).sort(), ['id', 'last_read_at', 'reason', 'repository', 'subject', 'subscription_url', 'unread', 'updated_at', 'url']);
    assert.match(thread.id, /^\d+$/);
    assert.ok(thread.url.endsWith(`/api/v3/notifications/threads/${thread.id}`));
    assert.equal(thread.subscription_url, `${thread.url}/subscription`);
    assert.deepEqual(thread.subject, { title: 'Shape', url: issue.url, latest_comment_url: issue.url, type: 'Issue' });
    assert.equal(thread.reason, 'mention');
    assert.equal(thread.unread, true);
    assert.match(thread.updated_at, ISO);
    assert.equal(thread.last_read_at, null);
    const repository = thread.repository;
    assert.equal(repository.full_name, 'acme/widgets');
    assert.equal(repository.owner.login, 'acme');
    assert.equal(repository.private, false);
    assert.equal(repository.open_issues_count, 1);
    for (const field of ['clone_url', 'ssh_url', 'default_branch', 'visibility', 'notifications_url', 'subscription_url']) assert.equal(typeof repository[field], 'string', field);
    assert.match(repository.created_at, ISO);
    const single = await get(`/notifications/threads/${thread.id}`, 'mona');
    assert.deepEqual(single.body, thread);
  });

  test('unread by default, all, participating; newest update first', async () => {
    const lister = await person('lister');
    await notify(lister, 'oldest', { reason: 'subscribed' });
    await server.advance(1);
    await notify(lister, 'middle', { reason: 'mention' });
    await server.advance(1);
    const newest = await notify(lister, 'newest', { reason: 'ci_activity' });
    await server.api('PATCH', `/notifications/threads/${newest.id}`, { token: tokens[lister] });
    assert.deepEqual(titles((await get('/notifications', lister)).body), ['middle', 'oldest']);
    assert.deepEqual(titles((await get('/notifications?all=true', lister)).body), ['newest', 'middle', 'oldest']);
    assert.deepEqual(titles((await get('/notifications?all=true&participating=true', lister)).body), ['middle']);
    assert.deepEqual(titles((await get('/notifications?participating=false', lister)).body), ['middle', 'oldest']);
  });

  test('since and before filter on updated_at', async () => {
    const timer = await person('timer');
    const first = await notify(timer, 'first');
    await server.advance(60);
    const second = await notify(timer, 'second');
    await server.advance(60);
    await notify(timer, 'third');
    assert.deepEqual(titles((await get(`/notifications?since=${second.updated_at}`, timer)).body), ['third', 'second']);
    assert.deepEqual(titles((await get(`/notifications?before=${second.updated_at}`, timer)).body), ['first']);
    assert.deepEqual(titles((await get(`/notifications?since=${first.updated_at}&before=${second.updated_at}`, timer)).body), ['first']);
    assert.deepEqual(titles((await get('/notifications?since=2100-01-01T00:00:00Z', timer)).body), []);
  });

  test('pages with Link; per_page defaults and caps', async () => {
    const pager = await person('pager');
    for (let i = 1; i <= 55; i++) await notify(pager, `n${i}`);
    const first = await get('/notifications?per_page=20', pager);
    assert.equal(first.body.length, 20);
    const firstLinks = links(first.headers.get('link'));
    assert.deepEqual(Object.keys(firstLinks).sort(), ['last', 'next']);
    assert.match(firstLinks.next!, /\/api\/v3\/notifications\?per_page=20&page=2$/);
    assert.match(firstLinks.last!, /page=3/);
    const second = await server.api('GET', new URL(firstLinks.next!).pathname.replace('/api/v3', '') + new URL(firstLinks.next!).search, { token: tokens[pager] });
    assert.equal(second.body.length, 20);
    assert.deepEqual(Object.keys(links(second.headers.get('link'))).sort(), ['first', 'last', 'next', 'prev']);
    const third = await get('/notifications?per_page=20&page=3', pager);
    assert.equal(third.body.length, 15);
    assert.deepEqual(Object.keys(links(third.headers.get('link'))).sort(), ['first', 'prev']);
    const all = new Set([...first.body, ...second.body, ...third.body].map((t: { id: string }) => t.id));
    assert.equal(all.size, 55, 'the pages do not overlap');

    assert.equal((await get('/notifications', pager)).body.length, 50, 'default 50');
    const capped = await get('/notifications?per_page=100', pager);
    assert.equal(capped.body.length, 50, 'max 50');
    assert.match(links(capped.headers.get('link')).next!, /per_page=50/);
    assert.equal((await get('/repos/acme/widgets/notifications', pager)).body.length, 30, 'repository list: default 30');
    assert.equal((await get('/repos/acme/widgets/notifications?per_page=1000', pager)).body.length, 55, 'repository list: max 100');
    assert.deepEqual((await get('/notifications?page=9', pager)).body, []);
  });

  test('the repository list shows that repository only, and needs to read it', async () => {
    const scoped = await person('scoped');
    await notify(scoped, 'in widgets');
    await notify(scoped, 'in gadgets', { repository: 'acme/gadgets' });
    assert.deepEqual(titles((await get('/repos/acme/gadgets/notifications', scoped)).body), ['in gadgets']);
    assert.deepEqual(titles((await get('/repos/ACME/Widgets/notifications', scoped)).body), ['in widgets']);
    assert.equal((await get('/repos/acme/nothing/notifications', scoped)).status, 404);
    assert.equal((await get('/repos/acme/secret/notifications', scoped)).status, 404, 'a private repository it cannot read');
    assert.equal((await get('/repos/acme/secret/notifications', 'mona')).status, 200);
  });

  test('bad query values are 422 with the validation body', async () => {
    for (const query of ['per_page=0', 'per_page=abc', 'page=0', 'since=yesterday', 'before=2024-13-01T00:00:00Z', 'since=2016-12-31T23:59:60Z', 'all=perhaps', 'participating=2']) {
      const response = await get(`/notifications?${query}`, 'mona');
      assert.equal(response.status, 422, query);
      assert.equal(response.body.message, 'Validation Failed');
      assert.equal(response.body.errors[0].code, 'invalid');
      assert.equal(response.body.status, '422');
    }
    assert.equal((await get('/repos/acme/widgets/notifications?per_page=-1', 'mona')).status, 422);
  });
});

describe('polling', () => {
  test('Last-Modified and If-Modified-Since: 304 without a body, not counted against the rate limit', async () => {
    const poller = await person('poller');
    await notify(poller, 'poll me');
    const first = await get('/notifications', poller);
    const lastModified = first.headers.get('last-modified')!;
    const unchanged = await get('/notifications', poller, { 'if-modified-since': lastModified });
    assert.equal(unchanged.status, 304);
    assert.equal(unchanged.text, '');
    assert.ok(unchanged.headers.get('x-poll-interval'));
    assert.equal(unchanged.headers.get('x-ratelimit-used'), first.headers.get('x-ratelimit-used'), 'a 304 is not counted');
    const again = await get('/notifications', poller, { 'if-modified-since': lastModified });
    assert.equal(again.status, 304);
    assert.equal(again.headers.get('x-ratelimit-used'), first.headers.get('x-ratelimit-used'));

    await server.advance(2);
    await notify(poller, 'news');
    const changed = await get('/notifications', poller, { 'if-modified-since': lastModified });
    assert.equal(changed.status, 200);
    assert.deepEqual(titles(changed.body), ['news', 'poll me']);

    // Reading changes the lists too, so it moves Last-Modified.
    const current = changed.headers.get('last-modified')!;
    await server.advance(2);
    assert.equal((await server.api('PUT', '/notifications', { token: tokens[poller], body: {} })).status, 205);
    const afterRead = await get('/notifications', poller, { 'if-modified-since': current });
    assert.equal(afterRead.status, 200);
    assert.deepEqual(afterRead.body, []);
    assert.equal((await get('/notifications', poller, { 'if-none-match': afterRead.headers.get('etag')! })).status, 304);
  });

  test('If-None-Match decides when present: If-Modified-Since is then ignored (RFC 9110 §13.1.3)', async () => {
    const poller = await person('validator');
    await notify(poller, 'tagged');
    const first = await get('/notifications', poller);
    const etag = first.headers.get('etag')!;
    const lastModified = first.headers.get('last-modified')!;
    const longAgo = new Date(Date.parse(lastModified) - 86_400_000).toUTCString();
    // A tag that does not match: 200, however recent If-Modified-Since is.
    const stale = await get('/notifications', poller, { 'if-none-match': 'W/"not-the-tag"', 'if-modified-since': lastModified });
    assert.equal(stale.status, 200);
    assert.deepEqual(titles(stale.body), ['tagged']);
    // A tag that matches: 304, however old If-Modified-Since is.
    const matched = await get('/notifications', poller, { 'if-none-match': etag, 'if-modified-since': longAgo });
    assert.equal(matched.status, 304);
    // Each on its own.
    assert.equal((await get('/notifications', poller, { 'if-none-match': etag })).status, 304);
    assert.equal((await get('/notifications', poller, { 'if-none-match': `"x", ${etag.slice(2)}` })).status, 304, 'a list, the strong form of the weak tag');
    assert.equal((await get('/notifications', poller, { 'if-modified-since': lastModified })).status, 304);
    assert.equal((await get('/notifications', poller, { 'if-modified-since': longAgo })).status, 200);
  });

  test('a thread has its own Last-Modified', async () => {
    const watcher = await person('threadpoller');
    const thread = await notify(watcher, 'single');
    const first = await get(`/notifications/threads/${thread.id}`, watcher);
    const lastModified = first.headers.get('last-modified')!;
    assert.equal((await get(`/notifications/threads/${thread.id}`, watcher, { 'if-modified-since': lastModified })).status, 304);
    await server.advance(2);
    await server.api('PATCH', `/notifications/threads/${thread.id}`, { token: tokens[watcher] });
    const read = await get(`/notifications/threads/${thread.id}`, watcher, { 'if-modified-since': lastModified });
    assert.equal(read.status, 200);
    assert.equal(read.body.unread, false);
  });

  test('X-Poll-Interval is 60 when idle and grows while the event loop is busy', async () => {
    await sleep(2600);
    assert.equal((await get('/notifications', 'mona')).headers.get('x-poll-interval'), '60');
    // This process is the server's: keep its event loop busy for three seconds.
    const until = Date.now() + 3000;
    while (Date.now() < until) Math.sqrt(Math.random());
    const busy = Number((await get('/notifications', 'mona')).headers.get('x-poll-interval'));
    assert.ok(busy >= 120, `under load: ${busy}`);
  });
});

describe('marking as read', () => {
  test('PUT /notifications: 205 without a body; threads read with last_read_at', async () => {
    const reader = await person('reader');
    const one = await notify(reader, 'one');
    await notify(reader, 'two', { repository: 'acme/gadgets' });
    const response = await server.api('PUT', '/notifications', { token: tokens[reader], body: { read: true } });
    assert.equal(response.status, 205);
    assert.equal(response.text, '');
    assert.deepEqual((await get('/notifications', reader)).body, []);
    const thread = (await get(`/notifications/threads/${one.id}`, reader)).body;
    assert.equal(thread.unread, false);
    assert.match(thread.last_read_at, ISO);
    assert.equal((await server.api('PUT', '/notifications', { token: tokens[reader] })).status, 205, 'no body at all');
  });

  test('last_read_at leaves newer threads unread; a future one does not block later activity', async () => {
    const partial = await person('partial');
    await notify(partial, 'old');
    await server.advance(60);
    const cut = (await server.admin('GET', '/clock')).now;
    await server.advance(60);
    await notify(partial, 'new');
    assert.equal((await server.api('PUT', '/notifications', { token: tokens[partial], body: { last_read_at: cut } })).status, 205);
    assert.deepEqual(titles((await get('/notifications', partial)).body), ['new']);
    const old = (await get('/notifications?all=true', partial)).body.find((t: { subject: { title: string } }) => t.subject.title === 'old');
    assert.equal(old.last_read_at, cut.replace(/\.\d{3}Z$/, 'Z'));

    assert.equal((await server.api('PUT', '/notifications', { token: tokens[partial], body: { last_read_at: '2999-01-01T00:00:00Z' } })).status, 205);
    assert.deepEqual((await get('/notifications', partial)).body, []);
    await server.advance(1);
    await notify(partial, 'old');
    assert.deepEqual(titles((await get('/notifications', partial)).body), ['old'], 'read "in the future" does not hide later activity');
  });

  test('read: false marks threads unread again', async () => {
    const undo = await person('undo');
    await notify(undo, 'a');
    await notify(undo, 'b');
    await server.api('PUT', '/notifications', { token: tokens[undo] });
    assert.equal((await server.api('PUT', '/notifications', { token: tokens[undo], body: { read: false } })).status, 205);
    assert.deepEqual(titles((await get('/notifications', undo)).body).sort(), ['a', 'b']);
  });

  test('PUT /repos/{owner}/{repo}/notifications marks that repository only', async () => {
    const repoReader = await person('reporeader');
    await notify(repoReader, 'widget news');
    await notify(repoReader, 'gadget news', { repository: 'acme/gadgets' });
    const response = await server.api('PUT', '/repos/acme/widgets/notifications', { token: tokens[repoReader], body: {} });
    assert.equal(response.status, 205);
    assert.deepEqual(titles((await get('/notifications', repoReader)).body), ['gadget news']);
    assert.equal((await server.api('PUT', '/repos/acme/nothing/notifications', { token: tokens[repoReader], body: {} })).status, 404);
    assert.equal((await server.api('PUT', '/repos/acme/secret/notifications', { token: tokens[repoReader], body: {} })).status, 404);
  });

  test('a bad body: 400 for malformed JSON or a non-object, 422 for bad fields', async () => {
    const malformed = await server.api('PUT', '/notifications', { token: tokens.mona, rawBody: '{"read": tru', headers: { 'content-type': 'application/json' } });
    assert.deepEqual([malformed.status, malformed.body.message], [400, 'Problems parsing JSON']);
    const array = await server.api('PUT', '/notifications', { token: tokens.mona, body: [1] });
    assert.deepEqual([array.status, array.body.message], [400, 'Body should be a JSON object']);
    for (const body of [{ last_read_at: 'yesterday' }, { read: 'yes' }, { last_read_at: 5 }, { last_read_at: '2016-12-31T23:59:60Z' }]) {
      const response = await server.api('PUT', '/notifications', { token: tokens.mona, body });
      assert.equal(response.status, 422, JSON.stringify(body));
      assert.equal(response.body.message, 'Validation Failed');
    }
    const bad = await server.api('PUT', '/notifications/threads/1/subscription', { token: tokens.mona, body: { ignored: 'yes' } });
    assert.equal(bad.status, 422);
  });
});

describe('marking many as read in the background', () => {
  let small: TestServer;
  const smallTokens: Record<string, string> = {};
  before(async () => {
    // Batches of 3: the background job marks the 8 threads in three transactions.
    small = await startServer({ CODEHOST_NOTIFICATIONS_MARK_READ_THRESHOLD: '5', CODEHOST_NOTIFICATIONS_MARK_READ_BATCH: '3' });
    for (const login of ['many', 'few']) {
      await small.admin('POST', '/users', { login });
      smallTokens[login] = await classicToken(small, login, ['repo']);
    }
    await small.admin('POST', '/orgs', { login: 'acme', owners: ['many'] });
    await small.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
    const make = (login: string, title: string) =>
      small.admin('POST', '/notifications', { login, repository: 'acme/widgets', subject: { type: 'Release', title, url: `https://example.com/${title}` }, reason: 'subscribed' });
    for (let i = 0; i < 8; i++) await make('many', `m${i}`);
    for (let i = 0; i < 3; i++) await make('few', `f${i}`);
    await small.advance(60);
    await make('many', 'later');
  });
  after(() => small.close());

  test('above the threshold: 202 with the message, then a background job marks them all', async () => {
    const cut = new Date(Date.parse((await small.admin('GET', '/clock')).now) - 30_000).toISOString();
    const response = await small.api('PUT', '/notifications', { token: smallTokens.many, body: { last_read_at: cut } });
    assert.equal(response.status, 202);
    assert.deepEqual(response.body, { message: "Unread notifications couldn't be marked in a single request. Notifications are being marked as read in the background." });
    await small.drain();
    const left = await small.api('GET', '/notifications', { token: smallTokens.many });
    assert.deepEqual(titles(left.body), ['later'], 'the thread updated after last_read_at stays unread');
    const read = await small.api('GET', '/notifications?all=true', { token: smallTokens.many });
    assert.equal(read.body.filter((t: { unread: boolean; last_read_at: string | null }) => !t.unread && t.last_read_at).length, 8);
  });

  test('at or below the threshold: 205 at once; the repository form answers 202 with its url', async () => {
    assert.equal((await small.api('PUT', '/notifications', { token: smallTokens.few })).status, 205);
    assert.deepEqual((await small.api('GET', '/notifications', { token: smallTokens.few })).body, []);
    await small.api('PUT', '/notifications', { token: smallTokens.many, body: { read: false } });
    await small.drain();
    const response = await small.api('PUT', '/repos/acme/widgets/notifications', { token: smallTokens.many, body: {} });
    assert.equal(response.status, 202);
    assert.match(response.body.url, /\/repos\/acme\/widgets\/notifications$/);
    await small.drain();
    assert.deepEqual((await small.api('GET', '/notifications', { token: smallTokens.many })).body, []);
  });
});

describe('threads and subscriptions', () => {
  test('get, mark read (205), mark done (204); someone else\'s thread is a 404', async () => {
    const owner = await person('threadowner');
    const thread = await notify(owner, 'mine');
    const got = await get(`/notifications/threads/${thread.id}`, owner);
    assert.equal(got.status, 200);
    assert.equal(got.body.id, thread.id);
    for (const [method, path] of [
      ['GET', ''], ['PATCH', ''], ['DELETE', ''], ['GET', '/subscription'], ['PUT', '/subscription'], ['DELETE', '/subscription'],
    ] as const) {
      const foreign = await server.api(method, `/notifications/threads/${thread.id}${path}`, { token: tokens.hubot, body: method === 'PUT' ? {} : undefined });
      assert.equal(foreign.status, 404, `${method} ${path} of another user's thread`);
    }
    assert.equal((await get('/notifications/threads/999999', owner)).status, 404);
    assert.equal((await get('/notifications/threads/99999999999', owner)).status, 404);
    assert.equal((await get('/notifications/threads/abc', owner)).status, 422);

    const read = await server.api('PATCH', `/notifications/threads/${thread.id}`, { token: tokens[owner] });
    assert.deepEqual([read.status, read.text], [205, '']);
    assert.equal((await get(`/notifications/threads/${thread.id}`, owner)).body.unread, false);
    const done = await server.api('DELETE', `/notifications/threads/${thread.id}`, { token: tokens[owner] });
    assert.deepEqual([done.status, done.text], [204, '']);
    assert.deepEqual((await get('/notifications?all=true', owner)).body, []);
  });

  test('subscription get / set / delete', async () => {
    const subscriber = await person('subscriber');
    const thread = await notify(subscriber, 'subscribable');
    const path = `/notifications/threads/${thread.id}/subscription`;
    const initial = await get(path, subscriber);
    assert.equal(initial.status, 200);
    assert.deepEqual(Object.keys(initial.body).sort(), ['created_at', 'ignored', 'reason', 'subscribed', 'thread_url', 'url']);
    assert.deepEqual([initial.body.subscribed, initial.body.ignored, initial.body.reason], [false, false, null]);
    assert.equal(initial.body.url, thread.subscription_url);
    assert.equal(initial.body.thread_url, thread.url);
    assert.match(initial.body.created_at, ISO);

    const ignored = await server.api('PUT', path, { token: tokens[subscriber], body: { ignored: true } });
    assert.deepEqual([ignored.status, ignored.body.subscribed, ignored.body.ignored], [200, false, true]);
    assert.deepEqual((await get(path, subscriber)).body, ignored.body);
    const subscribed = await server.api('PUT', path, { token: tokens[subscriber], body: { ignored: false } });
    assert.deepEqual([subscribed.body.subscribed, subscribed.body.ignored, subscribed.body.reason], [true, false, 'manual']);
    const deleted = await server.api('DELETE', path, { token: tokens[subscriber] });
    assert.deepEqual([deleted.status, deleted.text], [204, '']);
    assert.deepEqual([(await get(path, subscriber)).body.subscribed, (await get(path, subscriber)).body.ignored], [false, false]);
  });
});

describe('access', () => {
  test('classic and OAuth tokens with notifications or repo; every other kind 403; none 401', async () => {
    await server.admin('POST', '/users', { login: 'kinds' });
    await notify('kinds', 'for every kind');
    const app = await createApp(server, 'notify-app', { metadata: 'read', issues: 'write' });
    const expectations: [string, Promise<string>, number][] = [
      ['classic with notifications', classicToken(server, 'kinds', ['notifications']), 200],
      ['classic with repo', classicToken(server, 'kinds', ['repo']), 200],
      ['classic without either', classicToken(server, 'kinds', ['read:user', 'public_repo']), 403],
      ['oauth with notifications', oauthToken(server, app, 'kinds', ['notifications']), 200],
      ['oauth without', oauthToken(server, app, 'kinds', ['read:user']), 403],
      ['fine-grained', fineGrainedToken(server, 'kinds', 'kinds', { metadata: 'read', issues: 'write' }), 403],
      ['fine-grained for another owner', fineGrainedToken(server, 'kinds', 'acme', { metadata: 'read' }), 403],
      ['app user', appUserToken(server, app, 'kinds'), 403],
      ['installation', installationToken(server, app, 'acme'), 403],
      ['app JWT', appJwt(server, app), 403],
    ];
    for (const [name, made, status] of expectations) {
      const token = await made;
      for (const [method, path] of [['GET', '/notifications'], ['PUT', '/notifications'], ['GET', '/repos/acme/widgets/notifications']] as const) {
        const response = await server.api(method, path, { authorization: `Bearer ${token}`, body: method === 'PUT' ? { read: false } : undefined });
        assert.equal(response.status, status === 200 && method === 'PUT' ? 205 : status, `${name}: ${method} ${path}`);
        if (status === 403) assert.match(response.body.message, /^Resource not accessible by (personal access token|integration)$/);
      }
    }
    const anonymous = await server.api('GET', '/notifications');
    assert.deepEqual([anonymous.status, anonymous.body.message], [401, 'Requires authentication']);
    assert.equal((await server.api('GET', '/notifications/threads/1')).status, 401);
    assert.equal((await server.api('PUT', '/notifications')).status, 401);
    const bad = await server.api('GET', '/notifications', { token: 'chp_000000000000000000000000000000000000' });
    assert.deepEqual([bad.status, bad.body.message], [401, 'Bad credentials']);
  });

  test('@octokit/core lists notifications', async () => {
    const octokit = new Octokit({ auth: tokens.mona, baseUrl: server.apiUrl, request: { fetch } });
    const response = await octokit.request('GET /notifications', { all: true, per_page: 5 });
    assert.equal(response.status, 200);
    assert.ok(Array.isArray(response.data));
    assert.equal(typeof response.data[0]!.id, 'string');
    assert.equal(response.data[0]!.repository.full_name, 'acme/widgets');
    const thread = await octokit.request('GET /notifications/threads/{thread_id}', { thread_id: Number(response.data[0]!.id) });
    assert.equal(thread.data.id, response.data[0]!.id);
  });
});
