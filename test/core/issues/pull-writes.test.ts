// Pull requests through the public API (issue 39): the repository's list (state, head, base, sort,
// Link), an update (title, body, state; a base other than the default branch refused), requested
// reviewers added, listed and removed, reviews made (APPROVE, REQUEST_CHANGES, COMMENT, PENDING),
// listed and read. An installation acts as its bot account; each write reaches a second app as the
// platform's `pull_request` and `pull_request_review` events, valid against the platform's schemas;
// a review notifies the pull request's author, a review request the reviewer. Then who may, and
// what a refused write leaves.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { Receiver, type Received } from '../../helpers/receiver.ts';
import { webhookSchemas } from '../../helpers/webhook-schemas.ts';
import { install, mintInstallationToken } from '../../helpers/app-credentials.ts';
import { classicToken, fineGrainedToken, type TestApp } from '../../helpers/credentials.ts';

const schemas = webhookSchemas();

let server: TestServer;
let receiver: Receiver;
let bot: string;
let issuesBot: string;
let mona: string;
let hubot: string;
let olga: string;
let pull: number;
let other: number;
let issue: number;
let secretPull: number;
let vaultPull: number;
let head: string;

before(async () => {
  receiver = await new Receiver().start();
  server = await startServer();
  for (const login of ['mona', 'hubot', 'olga', 'rev']) await server.admin('POST', '/users', { login });
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'], members: ['hubot', 'rev'] });
  await server.admin('POST', '/orgs/acme/teams', { slug: 'core', members: ['rev'] });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets', init_git: true });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'secret', visibility: 'private' });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'vault' });
  const reviewer: TestApp = await server.admin('POST', '/apps', { slug: 'reviewer', permissions: { pull_requests: 'write', metadata: 'read' } });
  bot = await mintInstallationToken(server, reviewer, await install(server, reviewer, 'acme'));
  const labeler: TestApp = await server.admin('POST', '/apps', { slug: 'labeler', permissions: { issues: 'write', pull_requests: 'read', metadata: 'read' } });
  issuesBot = await mintInstallationToken(server, labeler, await install(server, labeler, 'acme'));
  await server.admin('POST', '/apps', {
    slug: 'listener', permissions: { pull_requests: 'read', metadata: 'read' }, events: ['pull_request', 'pull_request_review'], webhook: { url: receiver.url('/listener') },
  });
  await server.admin('POST', '/apps/listener/installations', { account: 'acme', repositories: 'all' });
  mona = await classicToken(server, 'mona', ['repo', 'notifications']);
  hubot = await classicToken(server, 'hubot', ['repo', 'notifications']);
  olga = await classicToken(server, 'olga', ['public_repo', 'notifications']);
  pull = (await server.admin('POST', '/repos/acme/widgets/issues', { author: 'hubot', title: 'Faster widgets', body: 'Makes them fast', pull_request: true })).number;
  issue = (await server.admin('POST', '/repos/acme/widgets/issues', { author: 'hubot', title: 'An issue' })).number;
  other = (await server.admin('POST', '/repos/acme/widgets/issues', { author: 'olga', title: 'Blue widgets', pull_request: true })).number;
  await server.admin('POST', `/repos/acme/widgets/issues/${other}/comments`, { author: 'mona', body: 'Nice' });
  secretPull = (await server.admin('POST', '/repos/acme/secret/issues', { author: 'hubot', title: 'Secret', pull_request: true })).number;
  vaultPull = (await server.admin('POST', '/repos/acme/vault/issues', { author: 'hubot', title: 'Vaulted', pull_request: true })).number;
  await server.admin('PATCH', '/repos/acme/vault', { archived: true });
  head = (await server.api('GET', '/repos/acme/widgets/branches/main', { token: mona })).body.commit.sha;
  await server.drain();
  seen = receiver.on('/listener').length;
});

after(async () => {
  await server?.close();
  await receiver?.stop();
});

let seen = 0;
/** The deliveries since the last look, each valid against the platform's schema: their `event/action`s, sorted, and the first body of each kind. */
async function delivered(): Promise<{ kinds: string[]; body: (kind: string) => Received['json'] }> {
  await server.drain();
  const fresh = receiver.on('/listener').slice(seen);
  seen += fresh.length;
  for (const d of fresh) assert.deepEqual(schemas.errors(String(d.headers['x-vendor-event']), d.json.action, d.json), [], `${d.headers['x-vendor-event']}/${d.json.action} validates`);
  const kind = (d: Received) => `${d.headers['x-vendor-event']}/${d.json.action}`;
  return { kinds: fresh.map(kind).sort(), body: (wanted) => fresh.find((d) => kind(d) === wanted)?.json };
}

/** The reason of the user's thread about the subject of that title, if they have one. */
async function reason(token: string, title: string): Promise<string | undefined> {
  const threads = await server.api('GET', '/notifications?all=true', { token });
  return threads.body.find((t: { subject: { title: string } }) => t.subject.title === title)?.reason;
}

describe('the repository\'s pull requests', () => {
  test('list: pull requests only, open by default, in their full form; state, head, base, sort, direction, Link', async () => {
    const listed = await server.api('GET', '/repos/acme/widgets/pulls', { token: olga });
    assert.equal(listed.status, 200);
    assert.deepEqual(listed.body.map((p: { number: number }) => p.number), [other, pull], 'newest first; the issue is not listed');
    assert.equal(listed.body[0].url, `${server.apiUrl}/repos/acme/widgets/pulls/${other}`);
    assert.equal(listed.body[0].requested_reviewers.length, 0);
    assert.deepEqual((await server.api('GET', '/repos/acme/widgets/pulls?direction=asc')).body.map((p: { number: number }) => p.number), [pull, other]);
    assert.deepEqual((await server.api('GET', '/repos/acme/widgets/pulls?sort=popularity&direction=desc')).body.map((p: { number: number }) => p.number), [other, pull], 'by comments');
    assert.deepEqual((await server.api('GET', '/repos/acme/widgets/pulls?sort=long-running')).body.map((p: { number: number }) => p.number), [pull, other], 'longest open first');
    assert.equal((await server.api('GET', '/repos/acme/widgets/pulls?state=closed')).body.length, 0);
    assert.equal((await server.api('GET', '/repos/acme/widgets/pulls?state=all')).body.length, 2);
    for (const [query, count] of [['head=acme:main', 2], ['head=ACME:main', 2], ['head=main', 2], ['head=acme:feature', 0], ['head=olga:main', 0], ['base=main', 2], ['base=feature', 0]] as const) {
      assert.equal((await server.api('GET', `/repos/acme/widgets/pulls?${query}`)).body.length, count, query);
    }
    const paged = await server.api('GET', '/repos/acme/widgets/pulls?per_page=1');
    assert.equal(paged.body.length, 1);
    assert.match(paged.headers.get('link') ?? '', /rel="next"/);
    assert.equal((await server.api('GET', '/repos/acme/secret/pulls', { token: olga })).status, 404, 'unseen');
    assert.deepEqual((await server.api('GET', '/repos/acme/secret/pulls', { token: mona })).body.map((p: { number: number }) => p.number), [secretPull]);
  });

  test('update: the bot edits the title, closes and reopens; pull_request edited, closed, reopened; the same values record nothing', async () => {
    const edited = await server.api('PATCH', `/repos/acme/widgets/pulls/${pull}`, { token: bot, body: { title: 'Much faster widgets', base: 'main' } });
    assert.equal(edited.status, 200, edited.text);
    assert.equal(edited.body.title, 'Much faster widgets');
    assert.equal(edited.body.url, `${server.apiUrl}/repos/acme/widgets/pulls/${pull}`);
    const first = await delivered();
    assert.deepEqual(first.kinds, ['pull_request/edited']);
    assert.deepEqual(first.body('pull_request/edited').changes, { title: { from: 'Faster widgets' } });
    assert.equal(first.body('pull_request/edited').sender.login, 'reviewer[bot]');
    assert.equal(first.body('pull_request/edited').pull_request.head.sha, head);

    const closed = await server.api('PATCH', `/repos/acme/widgets/pulls/${pull}`, { token: bot, body: { state: 'closed' } });
    assert.equal(closed.body.state, 'closed');
    assert.equal(closed.body.merged, false);
    const reopened = await server.api('PATCH', `/repos/acme/widgets/pulls/${pull}`, { token: bot, body: { state: 'open' } });
    assert.equal(reopened.body.state, 'open');
    assert.deepEqual((await delivered()).kinds, ['pull_request/closed', 'pull_request/reopened']);
    await server.api('PATCH', `/repos/acme/widgets/pulls/${pull}`, { token: bot, body: { title: 'Much faster widgets', state: 'open' } });
    assert.deepEqual((await delivered()).kinds, []);
  });

  test('update: its author (a reader) edits it; another reader may not (403); a base other than the default branch is a 422 and changes nothing', async () => {
    const own = await server.api('PATCH', `/repos/acme/widgets/pulls/${other}`, { token: olga, body: { body: 'Bluer' } });
    assert.equal(own.status, 200, own.text);
    assert.equal(own.body.body, 'Bluer');
    assert.equal((await server.api('PATCH', `/repos/acme/widgets/pulls/${pull}`, { token: olga, body: { title: 'Mine' } })).status, 403);
    const rebased = await server.api('PATCH', `/repos/acme/widgets/pulls/${pull}`, { token: bot, body: { title: 'Rebased', base: 'feature' } });
    assert.equal(rebased.status, 422);
    assert.equal(rebased.body.errors[0].field, 'base');
    assert.equal((await server.api('GET', `/repos/acme/widgets/pulls/${pull}`)).body.title, 'Much faster widgets', 'nothing half-written');
    assert.equal((await server.api('PATCH', `/repos/acme/widgets/pulls/${issue}`, { token: bot, body: { title: 'No' } })).status, 404, 'an issue\'s number');
    assert.equal((await server.api('PATCH', `/repos/acme/secret/pulls/${secretPull}`, { token: olga, body: { title: 'No' } })).status, 404, 'unseen');
    assert.equal((await server.api('PATCH', `/repos/acme/vault/pulls/${vaultPull}`, { token: mona, body: { title: 'No' } })).status, 403, 'archived');
    assert.equal((await server.api('PATCH', `/repos/acme/widgets/pulls/${pull}`, { token: issuesBot, body: { title: 'No' } })).status, 403, 'issues: write is not pull_requests: write');
    const fgRead = await fineGrainedToken(server, 'mona', 'acme', { pull_requests: 'read', metadata: 'read' });
    assert.equal((await server.api('PATCH', `/repos/acme/widgets/pulls/${pull}`, { token: fgRead, body: { title: 'No' } })).status, 403);
    const fgWrite = await fineGrainedToken(server, 'mona', 'acme', { pull_requests: 'write', metadata: 'read' });
    assert.equal((await server.api('PATCH', `/repos/acme/widgets/pulls/${pull}`, { token: fgWrite, body: { body: 'Fast' } })).status, 200);
    await delivered();
  });
});

describe('requested reviewers', () => {
  test('the bot requests mona and the team core, then olga (added to them); review_requested events; mona is notified', async () => {
    const asked = await server.api('POST', `/repos/acme/widgets/pulls/${pull}/requested_reviewers`, { token: bot, body: { reviewers: ['mona'], team_reviewers: ['core'] } });
    assert.equal(asked.status, 201, asked.text);
    assert.deepEqual(asked.body.requested_reviewers.map((u: { login: string }) => u.login), ['mona']);
    assert.deepEqual(asked.body.requested_teams.map((t: { slug: string }) => t.slug), ['core']);
    const more = await server.api('POST', `/repos/acme/widgets/pulls/${pull}/requested_reviewers`, { token: bot, body: { reviewers: ['olga', 'mona'] } });
    assert.deepEqual(more.body.requested_reviewers.map((u: { login: string }) => u.login).sort(), ['mona', 'olga']);
    assert.deepEqual(more.body.requested_teams.map((t: { slug: string }) => t.slug), ['core'], 'the teams stay');
    const events = await delivered();
    assert.deepEqual(events.kinds, ['pull_request/review_requested', 'pull_request/review_requested', 'pull_request/review_requested']);
    assert.equal(await reason(mona, 'Much faster widgets'), 'review_requested');
    const read = await server.api('GET', `/repos/acme/widgets/pulls/${pull}/requested_reviewers`, { token: olga });
    assert.equal(read.status, 200);
    assert.deepEqual(read.body.users.map((u: { login: string }) => u.login).sort(), ['mona', 'olga']);
    assert.deepEqual(read.body.teams.map((t: { slug: string }) => t.slug), ['core']);
  });

  test('removing olga and the team leaves mona; review_request_removed', async () => {
    const removed = await server.api('DELETE', `/repos/acme/widgets/pulls/${pull}/requested_reviewers`, { token: bot, body: { reviewers: ['OLGA'], team_reviewers: ['core'] } });
    assert.equal(removed.status, 200, removed.text);
    assert.deepEqual(removed.body.requested_reviewers.map((u: { login: string }) => u.login), ['mona']);
    assert.deepEqual(removed.body.requested_teams, []);
    assert.deepEqual((await delivered()).kinds, ['pull_request/review_request_removed', 'pull_request/review_request_removed']);
  });

  test('refusals: the author (422), a user without access (422), a reader (403), an issue (404), unseen (404), archived (403); nothing changes', async () => {
    const author = await server.api('POST', `/repos/acme/widgets/pulls/${pull}/requested_reviewers`, { token: bot, body: { reviewers: ['hubot'] } });
    assert.equal(author.status, 422);
    assert.equal(author.body.errors[0].message, 'Review cannot be requested from pull request author.');
    const outsider = await server.api('POST', `/repos/acme/secret/pulls/${secretPull}/requested_reviewers`, { token: mona, body: { reviewers: ['olga'] } });
    assert.equal(outsider.status, 422);
    assert.match(outsider.body.errors[0].message, /Reviews may only be requested from collaborators/);
    assert.equal((await server.api('POST', `/repos/acme/widgets/pulls/${pull}/requested_reviewers`, { token: bot, body: { reviewers: ['nobody'] } })).status, 422);
    assert.equal((await server.api('POST', `/repos/acme/widgets/pulls/${pull}/requested_reviewers`, { token: olga, body: { reviewers: ['mona'] } })).status, 403);
    assert.equal((await server.api('DELETE', `/repos/acme/widgets/pulls/${pull}/requested_reviewers`, { token: olga, body: { reviewers: ['mona'] } })).status, 403);
    assert.equal((await server.api('POST', `/repos/acme/widgets/pulls/${issue}/requested_reviewers`, { token: bot, body: { reviewers: ['mona'] } })).status, 404);
    assert.equal((await server.api('GET', `/repos/acme/widgets/pulls/${issue}/requested_reviewers`)).status, 404);
    assert.equal((await server.api('POST', `/repos/acme/secret/pulls/${secretPull}/requested_reviewers`, { token: olga, body: { reviewers: ['mona'] } })).status, 404);
    assert.equal((await server.api('POST', `/repos/acme/vault/pulls/${vaultPull}/requested_reviewers`, { token: mona, body: { reviewers: ['rev'] } })).status, 403);
    assert.deepEqual((await server.api('GET', `/repos/acme/widgets/pulls/${pull}/requested_reviewers`)).body.users.map((u: { login: string }) => u.login), ['mona']);
    assert.deepEqual((await server.api('GET', `/repos/acme/secret/pulls/${secretPull}/requested_reviewers`, { token: mona })).body.users, []);
    assert.deepEqual((await delivered()).kinds, []);
  });
});

describe('reviews', () => {
  let approval: number;

  test('mona (requested) approves: 200, APPROVED at the head commit; pull_request_review submitted; hubot (the author) is notified; mona\'s request is answered', async () => {
    const made = await server.api('POST', `/repos/acme/widgets/pulls/${pull}/reviews`, { token: mona, body: { event: 'APPROVE', body: 'LGTM' } });
    assert.equal(made.status, 200, made.text);
    approval = made.body.id;
    assert.deepEqual(Object.keys(made.body).sort(), ['_links', 'author_association', 'body', 'commit_id', 'html_url', 'id', 'node_id', 'pull_request_url', 'state', 'submitted_at', 'user']);
    assert.equal(made.body.state, 'APPROVED');
    assert.equal(made.body.user.login, 'mona');
    assert.equal(made.body.author_association, 'MEMBER');
    assert.equal(made.body.commit_id, head);
    assert.equal(made.body.pull_request_url, `${server.apiUrl}/repos/acme/widgets/pulls/${pull}`);
    assert.equal(made.body.html_url, `${server.url}/acme/widgets/pull/${pull}#pullrequestreview-${approval}`);
    assert.deepEqual(made.body._links, { html: { href: made.body.html_url }, pull_request: { href: made.body.pull_request_url } });
    const events = await delivered();
    assert.deepEqual(events.kinds, ['pull_request_review/submitted']);
    const body = events.body('pull_request_review/submitted');
    assert.deepEqual(Object.keys(body).slice(0, 3), ['action', 'review', 'pull_request']);
    assert.equal(body.review.id, approval);
    assert.equal(body.review.state, 'approved');
    assert.equal(body.review.commit_id, head);
    assert.equal(body.pull_request.number, pull);
    assert.equal(body.sender.login, 'mona');
    assert.equal(await reason(hubot, 'Much faster widgets'), 'author');
    assert.deepEqual((await server.api('GET', `/repos/acme/widgets/pulls/${pull}/requested_reviewers`)).body.users, [], 'a review answers its request');
  });

  test('the bot and a reader comment; the author comments but may neither approve nor request changes', async () => {
    const byBot = await server.api('POST', `/repos/acme/widgets/pulls/${pull}/reviews`, { token: bot, body: { event: 'REQUEST_CHANGES', body: 'Needs tests' } });
    assert.equal(byBot.status, 200, byBot.text);
    assert.equal(byBot.body.state, 'CHANGES_REQUESTED');
    assert.equal(byBot.body.user.login, 'reviewer[bot]');
    const byReader = await server.api('POST', `/repos/acme/widgets/pulls/${pull}/reviews`, { token: olga, body: { event: 'COMMENT', body: 'Looks fun' } });
    assert.equal(byReader.status, 200, byReader.text);
    assert.equal(byReader.body.author_association, 'NONE');
    const own = await server.api('POST', `/repos/acme/widgets/pulls/${pull}/reviews`, { token: hubot, body: { event: 'COMMENT', body: 'Thanks' } });
    assert.equal(own.status, 200);
    for (const event of ['APPROVE', 'REQUEST_CHANGES']) {
      const refused = await server.api('POST', `/repos/acme/widgets/pulls/${pull}/reviews`, { token: hubot, body: { event, body: 'Mine' } });
      assert.equal(refused.status, 422, event);
      assert.match(refused.body.errors[0].message, /your own pull request/);
    }
    const events = await delivered();
    assert.deepEqual(events.kinds, ['pull_request_review/submitted', 'pull_request_review/submitted', 'pull_request_review/submitted']);
  });

  test('no event: a PENDING review, one per user, shown to its author only; no event delivered', async () => {
    const pending = await server.api('POST', `/repos/acme/widgets/pulls/${pull}/reviews`, { token: mona, body: { body: 'Draft' } });
    assert.equal(pending.status, 200, pending.text);
    assert.equal(pending.body.state, 'PENDING');
    assert.equal('submitted_at' in pending.body, false);
    const again = await server.api('POST', `/repos/acme/widgets/pulls/${pull}/reviews`, { token: mona, body: {} });
    assert.equal(again.status, 422);
    assert.deepEqual((await delivered()).kinds, []);
    const asMona = await server.api('GET', `/repos/acme/widgets/pulls/${pull}/reviews`, { token: mona });
    assert.deepEqual(asMona.body.map((r: { state: string }) => r.state), ['APPROVED', 'CHANGES_REQUESTED', 'COMMENTED', 'COMMENTED', 'PENDING'], 'oldest first');
    const asAnyone = await server.api('GET', `/repos/acme/widgets/pulls/${pull}/reviews`);
    assert.equal(asAnyone.body.length, 4);
    assert.equal((await server.api('GET', `/repos/acme/widgets/pulls/${pull}/reviews/${pending.body.id}`)).status, 404);
    assert.equal((await server.api('GET', `/repos/acme/widgets/pulls/${pull}/reviews/${pending.body.id}`, { token: mona })).body.state, 'PENDING');
    const paged = await server.api('GET', `/repos/acme/widgets/pulls/${pull}/reviews?per_page=2`);
    assert.equal(paged.body.length, 2);
    assert.match(paged.headers.get('link') ?? '', /rel="next"/);
  });

  test('one review by id; another pull request\'s or an issue\'s number is a 404', async () => {
    const one = await server.api('GET', `/repos/acme/widgets/pulls/${pull}/reviews/${approval}`);
    assert.equal(one.status, 200);
    assert.equal(one.body.body, 'LGTM');
    assert.equal((await server.api('GET', `/repos/acme/widgets/pulls/${other}/reviews/${approval}`)).status, 404);
    assert.equal((await server.api('GET', `/repos/acme/widgets/pulls/${issue}/reviews`)).status, 404);
    assert.equal((await server.api('GET', `/repos/acme/widgets/pulls/${pull}/reviews/99999999999`)).status, 404);
  });

  test('refusals: a body missing (422), line comments (422), a commit other than the head (422), an issue (404), unseen (404), archived (403), issues: write only (403); none is kept', async () => {
    const count = async () => (await server.api('GET', `/repos/acme/widgets/pulls/${pull}/reviews`, { token: mona })).body.length;
    const before = await count();
    for (const event of ['COMMENT', 'REQUEST_CHANGES']) {
      const refused = await server.api('POST', `/repos/acme/widgets/pulls/${pull}/reviews`, { token: bot, body: { event } });
      assert.equal(refused.status, 422, event);
      assert.equal(refused.body.errors[0].field, 'body');
    }
    const lines = await server.api('POST', `/repos/acme/widgets/pulls/${pull}/reviews`, { token: bot, body: { event: 'COMMENT', body: 'See lines', comments: [{ path: 'README.md', line: 1, body: 'Typo' }] } });
    assert.equal(lines.status, 422);
    assert.equal(lines.body.errors[0].message, 'codehost keeps no review comments on lines');
    assert.equal((await server.api('POST', `/repos/acme/widgets/pulls/${pull}/reviews`, { token: bot, body: { event: 'APPROVE', commit_id: '1'.repeat(40) } })).status, 422);
    assert.equal((await server.api('POST', `/repos/acme/widgets/pulls/${issue}/reviews`, { token: bot, body: { event: 'APPROVE' } })).status, 404);
    assert.equal((await server.api('POST', `/repos/acme/secret/pulls/${secretPull}/reviews`, { token: olga, body: { event: 'APPROVE' } })).status, 404);
    assert.equal((await server.api('POST', `/repos/acme/vault/pulls/${vaultPull}/reviews`, { token: mona, body: { event: 'APPROVE' } })).status, 403);
    assert.equal((await server.api('POST', `/repos/acme/widgets/pulls/${pull}/reviews`, { token: issuesBot, body: { event: 'APPROVE' } })).status, 403);
    assert.equal(await count(), before);
    assert.deepEqual((await delivered()).kinds, []);
  });

  test('a repository without git data: commit_id null (the event shows the null object id); a deleted reviewer\'s review is ghost\'s', async () => {
    const made = await server.api('POST', `/repos/acme/secret/pulls/${secretPull}/reviews`, { token: await classicToken(server, 'rev', ['repo']), body: { event: 'APPROVE' } });
    assert.equal(made.status, 200, made.text);
    assert.equal(made.body.commit_id, null);
    assert.equal(made.body.body, '');
    const events = await delivered();
    assert.deepEqual(events.kinds, ['pull_request_review/submitted']);
    assert.equal(events.body('pull_request_review/submitted').review.commit_id, '0'.repeat(40));
    await server.admin('DELETE', '/users/rev');
    assert.equal((await server.api('GET', `/repos/acme/secret/pulls/${secretPull}/reviews/${made.body.id}`, { token: mona })).body.user.login, 'ghost');
  });
});
