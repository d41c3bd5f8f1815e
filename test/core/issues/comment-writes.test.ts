// Comments written through the public API (issue 39's first operations): an app's installation
// comments, edits and deletes as its bot account (`<slug>[bot]`), through @octokit/core and
// @octokit/auth-app unchanged; the comment's mention notifies the user, and a second app gets
// `issue_comment` created, edited and deleted, signed and valid against the platform's schemas. Then
// who may: every refusal with the platform's status, and nothing stored by a refused write.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createAppAuth } from '@octokit/auth-app';
import { Octokit } from '@octokit/core';
import { verify } from '@octokit/webhooks-methods';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { Receiver, type Received } from '../../helpers/receiver.ts';
import { webhookSchemas } from '../../helpers/webhook-schemas.ts';
import { install, mintInstallationToken } from '../../helpers/app-credentials.ts';
import { classicToken, createApp, fineGrainedToken, type TestApp } from '../../helpers/credentials.ts';

const schemas = webhookSchemas();
const SECRET = 'listener-secret';

let server: TestServer;
let receiver: Receiver;
let writer: TestApp;
let writerInstallation: number;
let issueNumber: number;
let pullNumber: number;
let ownIssue: number;

before(async () => {
  receiver = await new Receiver().start();
  server = await startServer();
  for (const login of ['mona', 'hubot', 'olga']) await server.admin('POST', '/users', { login });
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'], members: ['hubot'] });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'vault', visibility: 'private' });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'elsewhere' });
  writer = await server.admin('POST', '/apps', { slug: 'writer', permissions: { issues: 'write', metadata: 'read' } });
  writerInstallation = await install(server, writer, 'acme', { repositories: ['widgets', 'vault'] });
  await server.admin('POST', '/apps', {
    slug: 'listener',
    permissions: { issues: 'read', metadata: 'read' },
    events: ['issue_comment'],
    webhook: { url: receiver.url('/listener'), secret: SECRET },
  });
  await server.admin('POST', '/apps/listener/installations', { account: 'acme', repositories: 'all' });
  issueNumber = (await server.admin('POST', '/repos/acme/widgets/issues', { author: 'mona', title: 'Broken' })).number;
  pullNumber = (await server.admin('POST', '/repos/acme/widgets/issues', { author: 'mona', title: 'Fix', pull_request: true })).number;
  ownIssue = (await server.admin('POST', '/repos/acme/vault/issues', { author: 'mona', title: 'Secret' })).number;
  await server.drain();
});

after(async () => {
  await server?.close();
  await receiver?.stop();
});

/** The app as an app author writes it: @octokit/auth-app mints the installation token. */
const asWriter = () => new Octokit({ baseUrl: server.apiUrl, authStrategy: createAppAuth, auth: { appId: writer.id, privateKey: writer.private_key, installationId: writerInstallation } });

async function delivered(action: string): Promise<Received> {
  await server.drain();
  const found = receiver.on('/listener').filter((r) => r.headers['x-vendor-event'] === 'issue_comment' && r.json.action === action);
  assert.equal(found.length, 1, `one issue_comment ${action} delivery (${receiver.received.length} received)`);
  const delivery = found[0]!;
  assert.ok(await verify(SECRET, delivery.body, String(delivery.headers['x-hub-signature-256'] ?? delivery.headers['x-vendor-signature-256'])), 'signed with the listener\'s secret');
  assert.deepEqual(schemas.errors('issue_comment', action, delivery.json), [], `issue_comment/${action} validates`);
  return delivery;
}

describe('an installation comments, edits and deletes as its bot account', () => {
  let commentId: number;

  test('create: 201 with Location, by writer[bot]; the mention notifies hubot; the listener gets issue_comment.created', async () => {
    const created = await asWriter().request('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', { owner: 'acme', repo: 'widgets', issue_number: issueNumber, body: 'Thanks! @hubot will look.' });
    assert.equal(created.status, 201);
    commentId = Number(created.data.id);
    assert.equal(created.headers.location, created.data.url);
    assert.equal(created.data.body, 'Thanks! @hubot will look.');
    assert.equal(created.data.user?.login, 'writer[bot]');
    assert.equal(created.data.user?.type, 'Bot');
    const read = await server.api('GET', `/repos/acme/widgets/issues/comments/${commentId}`);
    assert.equal(read.status, 200);
    assert.equal(read.body.user.login, 'writer[bot]');

    const delivery = await delivered('created');
    assert.equal(delivery.json.comment.id, commentId);
    assert.equal(delivery.json.sender.login, 'writer[bot]');
    assert.equal(delivery.json.issue.number, issueNumber);

    const threads = await server.api('GET', '/notifications', { token: await classicToken(server, 'hubot', ['notifications', 'repo']) });
    assert.equal(threads.status, 200);
    const thread = threads.body.find((t: { subject: { title: string } }) => t.subject.title === 'Broken');
    assert.equal(thread?.reason, 'mention', 'the mentioned user has the thread');
    assert.equal(delivery.json.sender.url, `${server.apiUrl}/users/writer%5Bbot%5D`);
    assert.equal(delivery.json.sender.html_url.endsWith('/apps/writer'), true, 'a bot\'s page is its app\'s');
  });

  test('edit: 200 with the new body; issue_comment.edited keeps the old one in changes; the same body again records nothing', async () => {
    const edited = await asWriter().request('PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}', { owner: 'acme', repo: 'widgets', comment_id: commentId, body: 'Fixed in the next release.' });
    assert.equal(edited.status, 200);
    assert.equal(edited.data.body, 'Fixed in the next release.');
    const delivery = await delivered('edited');
    assert.deepEqual(delivery.json.changes, { body: { from: 'Thanks! @hubot will look.' } });
    assert.equal(delivery.json.comment.body, 'Fixed in the next release.');
    const again = await asWriter().request('PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}', { owner: 'acme', repo: 'widgets', comment_id: commentId, body: 'Fixed in the next release.' });
    assert.equal(again.status, 200);
    await delivered('edited');
  });

  test('delete: 204, the comment is gone (404), issue_comment.deleted shows it as it was', async () => {
    const deleted = await asWriter().request('DELETE /repos/{owner}/{repo}/issues/comments/{comment_id}', { owner: 'acme', repo: 'widgets', comment_id: commentId });
    assert.equal(deleted.status, 204);
    assert.equal((await server.api('GET', `/repos/acme/widgets/issues/comments/${commentId}`)).status, 404);
    const delivery = await delivered('deleted');
    assert.equal(delivery.json.comment.id, commentId);
    assert.equal(delivery.json.comment.body, 'Fixed in the next release.');
    const twice = await server.api('DELETE', `/repos/acme/widgets/issues/comments/${commentId}`, { token: await mintInstallationToken(server, writer, writerInstallation) });
    assert.equal(twice.status, 404);
  });

  test('a first write by two requests at once makes one bot account', async () => {
    const app = await server.admin('POST', '/apps', { slug: 'twins', permissions: { issues: 'write' } });
    const token = await mintInstallationToken(server, app, await install(server, app, 'acme'));
    const answers = await Promise.all([1, 2, 3].map((n) => server.api('POST', `/repos/acme/widgets/issues/${issueNumber}/comments`, { token, body: { body: `twin ${n}` } })));
    assert.deepEqual(answers.map((a) => a.status), [201, 201, 201]);
    assert.equal(new Set(answers.map((a) => a.body.user.id)).size, 1);
  });
});

describe('who may write a comment, and what a refused write leaves', () => {
  const comments = async (repo: string, number: number) => (await server.api('GET', `/repos/acme/${repo}/issues/${number}/comments`, { token: await classicToken(server, 'mona', ['repo']) })).body.length;
  const post = (token: string | undefined, repo: string, number: number, body: unknown = { body: 'hi' }) =>
    server.api('POST', `/repos/acme/${repo}/issues/${number}/comments`, { ...(token ? { token } : {}), body });

  test('users: anyone who reads the repository comments; editing or deleting another\'s comment needs write access (403)', async () => {
    const olga = await classicToken(server, 'olga', ['public_repo']);
    const mine = await post(olga, 'widgets', issueNumber);
    assert.equal(mine.status, 201);
    assert.equal(mine.body.user.login, 'olga');
    assert.equal(mine.body.author_association, 'NONE');
    const monas = await post(await classicToken(server, 'mona', ['repo']), 'widgets', issueNumber, { body: 'from the owner' });
    for (const [method, body] of [['PATCH', { body: 'hijacked' }], ['DELETE', undefined]] as const) {
      const refused = await server.api(method, `/repos/acme/widgets/issues/comments/${monas.body.id}`, { token: olga, body });
      assert.equal(refused.status, 403, `${method} of another's comment`);
      assert.equal(refused.body.message, 'Resource not accessible by personal access token');
    }
    assert.equal((await server.api('GET', `/repos/acme/widgets/issues/comments/${monas.body.id}`)).body.body, 'from the owner');
    const own = await server.api('PATCH', `/repos/acme/widgets/issues/comments/${mine.body.id}`, { token: olga, body: { body: 'edited by me' } });
    assert.equal(own.status, 200);
    const byOwner = await server.api('DELETE', `/repos/acme/widgets/issues/comments/${mine.body.id}`, { token: await classicToken(server, 'mona', ['repo']) });
    assert.equal(byOwner.status, 204, 'the owner deletes anyone\'s comment');
  });

  test('credentials: none 401, no scope 403 naming the scopes, public_repo on a private repository 404, an outsider 404', async () => {
    const before = await comments('vault', ownIssue);
    assert.equal((await post(undefined, 'widgets', issueNumber)).status, 401);
    const noScope = await post(await classicToken(server, 'mona', []), 'widgets', issueNumber);
    assert.equal(noScope.status, 403);
    assert.equal(noScope.headers.get('x-accepted-oauth-scopes'), 'public_repo, repo');
    assert.equal((await post(await classicToken(server, 'mona', ['public_repo']), 'vault', ownIssue)).status, 404);
    assert.equal((await post(await classicToken(server, 'olga', ['repo']), 'vault', ownIssue)).status, 404);
    assert.equal(await comments('vault', ownIssue), before, 'nothing stored');
  });

  test('installations and fine-grained tokens: issues write for an issue, either permission for a pull request, their repositories only', async () => {
    const pullsOnly = await createApp(server, 'pulls-only', { pull_requests: 'write' });
    const pullsToken = await mintInstallationToken(server, pullsOnly, await install(server, pullsOnly, 'acme'));
    const onIssue = await post(pullsToken, 'widgets', issueNumber);
    assert.equal(onIssue.status, 403);
    assert.equal(onIssue.body.message, 'Resource not accessible by integration');
    assert.equal((await post(pullsToken, 'widgets', pullNumber)).status, 201);

    const reader = await createApp(server, 'reader', { issues: 'read' });
    assert.equal((await post(await mintInstallationToken(server, reader, await install(server, reader, 'acme')), 'widgets', issueNumber)).status, 403);

    const writerToken = await mintInstallationToken(server, writer, writerInstallation);
    const elsewhere = (await server.admin('POST', '/repos/acme/elsewhere/issues', { author: 'mona', title: 'Not covered' })).number;
    assert.equal((await post(writerToken, 'elsewhere', elsewhere)).status, 403, 'a public repository outside the installation: seen, not changed');
    assert.equal((await post(writerToken, 'vault', ownIssue)).status, 201, 'a private repository of the installation');

    const fg = await fineGrainedToken(server, 'mona', 'acme', { issues: 'write' });
    assert.equal((await post(fg, 'vault', ownIssue)).status, 201);
    const fgRead = await fineGrainedToken(server, 'mona', 'acme', { issues: 'read' });
    assert.equal((await post(fgRead, 'vault', ownIssue)).status, 403);
  });

  test('archived: 403 and nothing stored; bodies and ids checked: 422 and 404', async () => {
    const token = await classicToken(server, 'mona', ['repo']);
    assert.equal((await post(token, 'widgets', issueNumber, null)).status, 400, 'a body that is no object: Problems parsing JSON');
    for (const body of [{}, { body: '' }, { body: 7 }, { body: 'x'.repeat(65_537) }]) {
      const invalid = await post(token, 'widgets', issueNumber, body);
      assert.equal(invalid.status, 422, JSON.stringify(body)?.slice(0, 40));
    }
    assert.equal((await post(token, 'widgets', issueNumber, { body: 'x'.repeat(65_536) })).status, 201, 'the largest body');
    assert.equal((await post(token, 'widgets', 999_999)).status, 404);
    for (const id of ['0', 'abc', '99999999999', '999999']) {
      assert.equal((await server.api('PATCH', `/repos/acme/widgets/issues/comments/${id}`, { token, body: { body: 'x' } })).status, 404, id);
    }
    const vaultComment = (await post(token, 'vault', ownIssue)).body.id;
    assert.equal((await server.api('DELETE', `/repos/acme/widgets/issues/comments/${vaultComment}`, { token })).status, 404, 'a comment of another repository');

    const before = await comments('widgets', issueNumber);
    await server.admin('PATCH', '/repos/acme/widgets', { archived: true });
    const archived = await post(token, 'widgets', issueNumber);
    assert.equal(archived.status, 403);
    assert.equal(archived.body.message, 'Repository was archived so is read-only.');
    assert.equal(await comments('widgets', issueNumber), before);
    await server.admin('PATCH', '/repos/acme/widgets', { archived: false });
  });
});
