// Every URL a client is given resolves: activity made on the operator surface (an organization, a
// team, a private repository, an issue and a pull request with a comment and mentions, an app with a
// webhook, a user migration), then every `*url` field of a notification thread, a webhook payload and
// a migration is followed with the reader's token and must answer 200 (acme/secret archived since:
// an archived repository is read-only, and its URLs still resolve). Templated fields (`{`) are
// not addresses; web addresses (html_url, avatar_url, clone_url, diff_url...) are the web host's.
// Last, the repositories are renamed and transferred and everything is walked again.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { classicToken } from '../helpers/credentials.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

/**
 * Routes that `*url` fields name but that codehost does not serve because it keeps no such data (no
 * stand-in answers them; README "Known limits" and docs/permissions.md list them): a user's
 * followers, starred-like subscriptions and received events; a repository's contributors,
 * deployments, downloads, events, forks, hooks, languages, merges, stargazers, tags and statuses;
 * a pull request's commits and review comments; issue timelines; an organization's
 * events and hooks; a team's repositories. Everything else a walked document names is followed.
 */
const NOT_SERVED: readonly RegExp[] = [
  // codehost keeps no followers, stars or activity feeds of users.
  /^\/users\/[^/]+\/(followers|subscriptions|received_events)$/,
  // codehost keeps no contributors, deployments, downloads, events feed, forks, webhooks of a
  // repository, language statistics, merges, stars or tags (it stores no git refs beyond the data).
  /^\/repos\/[^/]+\/[^/]+\/(contributors|deployments|downloads|events|forks|hooks|languages|merges|stargazers|tags)$/,
  // codehost keeps no commits of a pull request and no review comments.
  /^\/repos\/[^/]+\/[^/]+\/pulls\/\d+\/(commits|comments)$/,
  // Named by webhook payloads: the legacy GET of a commit's statuses (codehost serves them at
  // …/commits/{ref}/statuses), and no issue timelines are kept...
  /^\/repos\/[^/]+\/[^/]+\/statuses\/[0-9a-f]{40}$/,
  /^\/repos\/[^/]+\/[^/]+\/issues\/\d+\/timeline$/,
  // ...nor an organization's events feed or webhooks, nor a team's repositories list.
  /^\/orgs\/[^/]+\/(events|hooks)$/,
  /^\/orgs\/[^/]+\/teams\/[^/]+\/repos$/,
];

/**
 * Served, but not to the reader's GET: an installation object (the `installation` events carry it
 * whole) names where its app mints tokens (POST with the app's JWT) and what an installation token
 * reaches (GET with that token); test/core/apps/app-api.test.ts follows both with their credentials.
 */
const OTHER_CREDENTIAL: readonly RegExp[] = [/^\/app\/installations\/\d+\/access_tokens$/, /^\/installation\/repositories$/, /^\/app\/hook\/deliveries$/];

let server: TestServer;
let receiver: Server;
const deliveries: { event: string; body: any }[] = [];
let reader: string;
let migration: any;

before(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      deliveries.push({ event: String(req.headers['x-vendor-event']), body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const port = (receiver.address() as AddressInfo).port;

  server = await startServer();
  for (const login of ['mona', 'lisa']) await server.admin('POST', '/users', { login });
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'], members: ['lisa'] });
  await server.admin('POST', '/orgs/acme/teams', { slug: 'core', name: 'Core', members: ['mona', 'lisa'] });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'secret', visibility: 'private' });
  await server.admin('POST', '/repos', { owner: 'mona', name: 'mine', visibility: 'private', init_git: true });
  await server.admin('POST', '/apps', {
    slug: 'walker',
    permissions: { issues: 'read', pull_requests: 'read', metadata: 'read' },
    events: ['issues', 'issue_comment', 'pull_request'],
    webhook: { url: `http://127.0.0.1:${port}/hook` },
  });
  await server.admin('POST', '/apps/walker/installations', { account: 'acme', repositories: 'all' });

  const issue = await server.admin('POST', '/repos/acme/secret/issues', { author: 'lisa', title: 'Broken', body: 'cc @mona' });
  const pull = await server.admin('POST', '/repos/acme/secret/issues', { author: 'lisa', title: 'Fix', pull_request: true, team_reviewers: ['core'] });
  await server.admin('POST', `/repos/acme/secret/issues/${pull.number}/comments`, { author: 'lisa', body: 'please look @mona and @acme/core' });
  await server.admin('POST', `/repos/acme/secret/issues/${issue.number}/comments`, { author: 'lisa', body: 'same here' });
  await server.admin('POST', '/repos/mona/mine/issues', { author: 'mona', title: 'Mine', body: 'hello' });
  // The reader watches both repositories: a repository's `subscription_url` is the caller's watch
  // state, a 404 (as on the platform) for a caller who does not watch it.
  for (const repository of ['acme/secret', 'mona/mine']) await server.admin('PUT', `/repos/${repository}/subscription`, { login: 'mona', subscribed: true });
  await server.drain();
  // An archived repository is read-only, not gone: every URL naming it still resolves.
  assert.equal((await server.admin('PATCH', '/repos/acme/secret', { archived: true })).archived, true);

  reader = await classicToken(server, 'mona', ['repo', 'notifications', 'read:org', 'user']);
  const started = await server.api('POST', '/user/migrations', { token: reader, body: { repositories: ['mine'] } });
  assert.equal(started.status, 201, started.text);
  await server.drain();
  migration = (await server.api('GET', `/user/migrations/${started.body.id}`, { token: reader })).body;
  assert.equal(migration.state, 'exported');
});
after(async () => {
  await server.close();
  receiver.closeAllConnections();
  await new Promise((resolve) => receiver.close(resolve));
});

/** Every string field whose name ends in `url`, with its path in the document. */
function urlFields(value: unknown, path = '$'): [string, string][] {
  if (Array.isArray(value)) return value.flatMap((item, i) => urlFields(item, `${path}[${i}]`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, field]): [string, string][] =>
    typeof field === 'string' && key.endsWith('url') ? [[`${path}.${key}`, field]] : urlFields(field, `${path}.${key}`),
  );
}

/** Follows every API URL of a document with the reader's token; answers what did not resolve. */
async function walk(name: string, document: unknown): Promise<{ followed: Set<string>; unresolved: string[] }> {
  const { api, web } = server.server.ctx.urls;
  const followed = new Set<string>();
  const unresolved: string[] = [];
  for (const [path, url] of urlFields(document)) {
    if (url.includes('{') || url === '') continue;
    // A ping's `hook.config.url` is the app's own receiver, not a codehost address.
    if (path.endsWith('.hook.config.url')) continue;
    if (!url.startsWith(`${api}/`)) {
      // A web or git address (html_url, avatar_url, clone_url, svn_url, git_url, ssh_url, diff_url, patch_url).
      assert.ok(url.startsWith(web) || url.startsWith('git://') || url.startsWith('git@'), `${name} ${path}: ${url}`);
      continue;
    }
    const route = url.slice(api.length);
    if (NOT_SERVED.some((pattern) => pattern.test(route)) || OTHER_CREDENTIAL.some((pattern) => pattern.test(route))) continue;
    if (followed.has(url)) continue;
    followed.add(url);
    const response = await fetch(url, { headers: { authorization: `Bearer ${reader}`, accept: 'application/vnd.vendor+json' } });
    await response.arrayBuffer();
    if (response.status !== 200) unresolved.push(`${name} ${path}: ${url} → ${response.status}`);
  }
  return { followed, unresolved };
}

const routesOf = (followed: Set<string>) => [...followed].map((url) => url.slice(server.server.ctx.urls.api.length).replace(/\/\d+(?=\/|$)/g, '/N'));

test('every URL of a notification thread resolves', async () => {
  const threads = await server.api('GET', '/notifications?all=true', { token: reader });
  assert.equal(threads.status, 200);
  assert.ok(threads.body.length >= 2, 'a thread for the issue and for the pull request');
  const { followed, unresolved } = await walk('notification', threads.body);
  assert.deepEqual(unresolved, []);
  const routes = routesOf(followed);
  for (const route of [
    '/notifications/threads/N', '/repos/acme/secret', '/users/acme', '/repos/acme/secret/issues/N', '/repos/acme/secret/pulls/N', '/repos/acme/secret/issues/comments/N',
    '/repos/acme/secret/subscribers', '/repos/acme/secret/subscription', '/repos/acme/secret/teams', '/users/acme/repos', '/users/acme/orgs',
  ]) {
    assert.ok(routes.includes(route), `walked ${route} (${routes.join(', ')})`);
  }
});

test('every URL of a webhook payload resolves', async () => {
  const events = new Set(deliveries.map((d) => d.event));
  for (const event of ['issues', 'issue_comment', 'pull_request']) assert.ok(events.has(event), `a ${event} delivery`);
  const { followed, unresolved } = await walk('webhook', deliveries.map((d) => d.body));
  assert.deepEqual(unresolved, []);
  const routes = routesOf(followed);
  for (const route of [
    '/repos/acme/secret', '/users/lisa', '/repos/acme/secret/issues/N', '/repos/acme/secret/pulls/N', '/repos/acme/secret/issues/comments/N', '/orgs/acme/teams/core',
    '/repos/acme/secret/issues/N/comments', '/repos/acme/secret/issues/N/events', '/users/lisa/repos', '/users/lisa/orgs',
  ]) {
    assert.ok(routes.includes(route), `walked ${route} (${routes.join(', ')})`);
  }
});

test('every URL of a migration resolves', async () => {
  const { followed, unresolved } = await walk('migration', migration);
  assert.deepEqual(unresolved, []);
  const routes = routesOf(followed);
  for (const route of ['/user/migrations/N', '/user/migrations/N/archive', '/users/mona', '/repos/mona/mine', '/repos/mona/mine/subscription', '/users/mona/repos', '/users/mona/orgs']) {
    assert.ok(routes.includes(route), `walked ${route} (${routes.join(', ')})`);
  }
});

// Last (it moves what the tests above walked): a renamed repository and a transferred one. Every
// URL of the threads, the migration and the payloads sent since names the new place and resolves.
test('after a rename and a transfer, every URL names the new place and resolves', async () => {
  await server.admin('PATCH', '/repos/acme/secret', { archived: false });
  assert.equal((await server.admin('PATCH', '/repos/acme/secret', { name: 'hidden' })).full_name, 'acme/hidden');
  assert.equal((await server.admin('PATCH', '/repos/mona/mine', { owner: 'acme' })).full_name, 'acme/mine');
  const sent = deliveries.length;
  await server.admin('POST', '/repos/acme/hidden/issues', { author: 'lisa', title: 'Moved', body: 'cc @mona' });
  await server.admin('POST', '/repos/acme/mine/issues', { author: 'mona', title: 'Moved too' });
  await server.drain();
  const since = deliveries.slice(sent);
  assert.ok(since.some((d) => d.event === 'issues'), 'issues deliveries after the move');

  const threads = await server.api('GET', '/notifications?all=true', { token: reader });
  const moved = await server.api('GET', `/user/migrations/${migration.id}`, { token: reader });
  assert.equal(moved.status, 200, moved.text);
  for (const [name, document] of [['notification', threads.body], ['migration', moved.body], ['webhook', since.map((d) => d.body)]] as const) {
    const { followed, unresolved } = await walk(name, document);
    assert.deepEqual(unresolved, [], name);
    const old = [...followed].filter((url) => /\/repos\/(acme\/secret|mona\/mine)(\/|$)/.test(url));
    assert.deepEqual(old, [], `${name}: URLs naming the old place`);
    assert.ok(followed.size > 0, `${name}: URLs walked`);
  }
});
