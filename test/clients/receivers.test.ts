// The receivers of the ecosystem, unchanged (docs/clients.md "Apps and webhook receivers"): a Probot
// app, an @octokit/app app and an @octokit/webhooks receiver, each docs example run as written
// against a server on the demo data with CODEHOST_VENDOR_WORD=GitHub. The Probot app comments on the
// issue it is told of, labels and assigns it; the @octokit/app app also reacts, and marks the default
// branch's head with a status and a check run it completes, while a second app verifies its comment;
// hubot's notifications have the thread; the receiver verifies mona's comment's delivery. Under the spec's word the same middleware answers 400 (why the setting exists).
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Webhooks, createNodeMiddleware } from '@octokit/webhooks';
import { startServer, type TestServer } from '../helpers/server.ts';
import { appJwt } from '../helpers/credentials.ts';
import { MONA_TOKEN, runExample } from './docs.ts';

const HUBOT_TOKEN = 'chp_DemoHubotClassicToken0000000011LM121';

describe('with CODEHOST_VENDOR_WORD=GitHub', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ CODEHOST_VENDOR_WORD: 'GitHub' });
    await server.admin('POST', '/reset', { to: 'demo' });
  });
  after(() => server?.close());

  test('the answers carry the word: X-GitHub-Request-Id, -Media-Type, -Api-Version-Selected, X-Accepted-GitHub-Permissions; both version headers are read', async () => {
    const answer = await server.api('GET', '/repos/acme/widgets/issues/1', { token: MONA_TOKEN, headers: { 'x-github-api-version': '2026-03-10' } });
    assert.equal(answer.status, 200);
    assert.ok(answer.headers.get('x-github-request-id'));
    assert.equal(answer.headers.get('x-github-media-type'), 'github.v3; format=json');
    assert.equal(answer.headers.get('x-github-api-version-selected'), '2026-03-10');
    assert.equal(answer.headers.get('x-accepted-github-permissions'), 'issues=read; pull_requests=read');
    for (const name of ['x-vendor-request-id', 'x-vendor-media-type', 'x-vendor-api-version-selected', 'x-accepted-vendor-permissions']) assert.equal(answer.headers.get(name), null, name);
    const spec = await server.api('GET', '/repos/acme/widgets', { token: MONA_TOKEN, headers: { 'x-vendor-api-version': '2026-03-10' } });
    assert.equal(spec.headers.get('x-github-api-version-selected'), '2026-03-10');
    const unknown = await server.api('GET', '/repos/acme/widgets', { token: MONA_TOKEN, headers: { 'x-github-api-version': '2001-01-01' } });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.headers.get('x-github-api-version-selected'), '2022-11-28');
    const missing = await server.api('GET', '/nowhere', { headers: { 'x-github-api-version': '2026-03-10' } });
    assert.equal(missing.status, 404);
    assert.equal(missing.headers.get('x-github-api-version-selected'), '2026-03-10');
    const preflight = await fetch(`${server.apiUrl}/user`, { method: 'OPTIONS', headers: { origin: 'https://app.example.test', 'access-control-request-method': 'GET' } });
    assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /X-GitHub-Api-Version, X-Vendor-Api-Version$/);
  });

  test('docs/clients.md probot-app: the Probot app comments, labels and assigns as triage-bot[bot]; hubot is notified (mentioned, then assigned: the thread says the latest reason)', async () => {
    const output = await runExample('probot-app', server);
    assert.deepEqual(output.trim().split('\n'), ['triage-bot[bot] Thanks! @hubot will triage this.', 'needs triage hubot']);
    await server.drain();
    const threads = await server.api('GET', '/notifications', { token: HUBOT_TOKEN });
    const thread = threads.body.find((t: { subject: { title: string } }) => t.subject.title === 'Widgets squeak');
    assert.equal(thread?.reason, 'assign');
  });

  test('docs/clients.md octokit-app: an @octokit/app app comments (hubot is notified), labels, assigns, reacts, and checks the head; a second app verifies its comment', async () => {
    const output = (await runExample('octokit-app', server)).trim().split('\n');
    assert.deepEqual(output, ['helper-bot[bot] On it. @hubot, yours?', 'triaged hubot eyes:1', 'success triage:success']);
    await server.drain();
    const threads = await server.api('GET', '/notifications', { token: HUBOT_TOKEN });
    assert.ok(threads.body.some((t: { subject: { title: string } }) => t.subject.title === 'Widgets rattle'), 'hubot has the thread');
    const bot = await server.api('GET', '/users/helper-bot%5Bbot%5D');
    assert.equal(bot.body.type, 'Bot');
  });

  test('docs/clients.md octokit-webhooks: the middleware verifies the delivery of mona\'s comment', async () => {
    const output = (await runExample('octokit-webhooks', server)).trim().split('\n');
    assert.equal(output[0], '201 true');
    assert.match(output[1]!, /^[0-9a-f-]{36} mona Seen it too\.$/);
  });
});

test('under the spec\'s word, @octokit/webhooks\' middleware answers codehost\'s delivery 400: it reads the platform\'s header names', async () => {
  const server = await startServer();
  const webhooks = new Webhooks({ secret: 's' });
  const receiver = createServer(createNodeMiddleware(webhooks, { path: '/webhooks' }));
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  try {
    await server.admin('POST', '/users', { login: 'mona' });
    await server.admin('POST', '/repos', { owner: 'mona', name: 'tools' });
    const app = await server.admin('POST', '/apps', {
      slug: 'spec-word', permissions: { issues: 'read' }, events: ['issues'],
      webhook: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks`, secret: 's' },
    });
    await server.admin('POST', '/apps/spec-word/installations', { account: 'mona' });
    await server.admin('POST', '/repos/mona/tools/issues', { author: 'mona', title: 'Hello' });
    await server.drain();
    const deliveries = await server.api('GET', '/app/hook/deliveries', { authorization: `Bearer ${await appJwt(server, app)}` });
    const opened = deliveries.body.find((d: { event: string }) => d.event === 'issues');
    assert.equal(opened?.status_code, 400);
  } finally {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
    await server.close();
  }
});
