// Issues written through the public API (issue 39): an installation opens, edits, closes and
// reopens issues and assigns them, as its bot account, through @octokit/core and @octokit/auth-app;
// each write reaches a second app as the platform's `issues` event, valid against the platform's
// schemas, and assignments notify. Then who may: a reader opens and edits what they opened, their
// assignees dropped as the platform drops them; every refusal with the platform's status.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createAppAuth } from '@octokit/auth-app';
import { Octokit } from '@octokit/core';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { Receiver, type Received } from '../../helpers/receiver.ts';
import { webhookSchemas } from '../../helpers/webhook-schemas.ts';
import { install, mintInstallationToken } from '../../helpers/app-credentials.ts';
import { classicToken, createApp, type TestApp } from '../../helpers/credentials.ts';

const schemas = webhookSchemas();

let server: TestServer;
let receiver: Receiver;
let writer: TestApp;
let installation: number;
let mona: string;
let olga: string;

before(async () => {
  receiver = await new Receiver().start();
  server = await startServer();
  for (const login of ['mona', 'hubot', 'olga']) await server.admin('POST', '/users', { login });
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'], members: ['hubot'] });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
  writer = await server.admin('POST', '/apps', { slug: 'writer', permissions: { issues: 'write', metadata: 'read' } });
  installation = await install(server, writer, 'acme');
  await server.admin('POST', '/apps', { slug: 'listener', permissions: { issues: 'read' }, events: ['issues'], webhook: { url: receiver.url('/listener') } });
  await server.admin('POST', '/apps/listener/installations', { account: 'acme', repositories: 'all' });
  mona = await classicToken(server, 'mona', ['repo']);
  olga = await classicToken(server, 'olga', ['public_repo']);
  await server.drain();
});

after(async () => {
  await server?.close();
  await receiver?.stop();
});

const asWriter = () => new Octokit({ baseUrl: server.apiUrl, authStrategy: createAppAuth, auth: { appId: writer.id, privateKey: writer.private_key, installationId: installation } });

/** The `issues` deliveries of `action` since the last look, each valid against the platform's schema. */
let seen = 0;
async function deliveries(action: string): Promise<Received[]> {
  await server.drain();
  const fresh = receiver.on('/listener').slice(seen);
  seen += fresh.length;
  for (const delivery of fresh) {
    assert.deepEqual(schemas.errors(String(delivery.headers['x-vendor-event']), delivery.json.action, delivery.json), [], `${delivery.headers['x-vendor-event']}/${delivery.json.action} validates`);
  }
  return fresh.filter((d) => d.headers['x-vendor-event'] === 'issues' && d.json.action === action);
}

describe('an installation opens, edits, closes, reopens and assigns issues', () => {
  let number: number;

  test('open: 201 with Location, by writer[bot], assigned to hubot; issues.opened reaches the listener; hubot is notified', async () => {
    const opened = await asWriter().request('POST /repos/{owner}/{repo}/issues', { owner: 'acme', repo: 'widgets', title: 'Widgets wobble', body: 'Seen on Tuesdays', assignees: ['hubot'] });
    assert.equal(opened.status, 201);
    number = opened.data.number;
    assert.equal(opened.headers.location, opened.data.url);
    assert.equal(opened.data.user?.login, 'writer[bot]');
    assert.deepEqual(opened.data.assignees?.map((a) => a.login), ['hubot']);
    assert.equal(opened.data.state, 'open');
    const [delivery] = await deliveries('opened');
    assert.equal(delivery?.json.issue.number, number);
    assert.equal(delivery?.json.sender.login, 'writer[bot]');
    const threads = await server.api('GET', '/notifications', { token: await classicToken(server, 'hubot', ['notifications', 'repo']) });
    assert.equal(threads.body.find((t: { subject: { title: string } }) => t.subject.title === 'Widgets wobble')?.reason, 'assign');
  });

  test('edit: title and body; issues.edited keeps what they were; the same values again record nothing', async () => {
    const edited = await asWriter().request('PATCH /repos/{owner}/{repo}/issues/{issue_number}', { owner: 'acme', repo: 'widgets', issue_number: number, title: 'Widgets wobble on Tuesdays', body: null });
    assert.equal(edited.status, 200);
    assert.equal(edited.data.title, 'Widgets wobble on Tuesdays');
    assert.equal(edited.data.body, null);
    const [delivery] = await deliveries('edited');
    assert.deepEqual(delivery?.json.changes, { title: { from: 'Widgets wobble' }, body: { from: 'Seen on Tuesdays' } });
    await asWriter().request('PATCH /repos/{owner}/{repo}/issues/{issue_number}', { owner: 'acme', repo: 'widgets', issue_number: number, title: 'Widgets wobble on Tuesdays' });
    assert.equal((await deliveries('edited')).length, 0);
  });

  test('close as not planned, reopen: the state and its reason; issues.closed and issues.reopened', async () => {
    const closed = await asWriter().request('PATCH /repos/{owner}/{repo}/issues/{issue_number}', { owner: 'acme', repo: 'widgets', issue_number: number, state: 'closed', state_reason: 'not_planned' });
    assert.equal(closed.data.state, 'closed');
    assert.equal(closed.data.state_reason, 'not_planned');
    assert.equal((await deliveries('closed')).length, 1);
    const reopened = await asWriter().request('PATCH /repos/{owner}/{repo}/issues/{issue_number}', { owner: 'acme', repo: 'widgets', issue_number: number, state: 'open' });
    assert.equal(reopened.data.state, 'open');
    assert.equal(reopened.data.state_reason, 'reopened');
    assert.equal((await deliveries('reopened')).length, 1);
  });

  test('assignees: add keeps who is assigned (201), remove takes some off (200); issues.assigned and unassigned; a check of who may be assigned', async () => {
    const added = await asWriter().request('POST /repos/{owner}/{repo}/issues/{issue_number}/assignees', { owner: 'acme', repo: 'widgets', issue_number: number, assignees: ['mona', 'olga'] });
    assert.equal(added.status, 201);
    assert.deepEqual(added.data.assignees?.map((a) => a.login).sort(), ['hubot', 'mona'], 'olga, who has no write access, is left out');
    assert.equal((await deliveries('assigned')).length, 1);
    const removed = await asWriter().request('DELETE /repos/{owner}/{repo}/issues/{issue_number}/assignees', { owner: 'acme', repo: 'widgets', issue_number: number, assignees: ['hubot'] });
    assert.equal(removed.status, 200);
    assert.deepEqual(removed.data.assignees?.map((a) => a.login), ['mona']);
    assert.equal((await deliveries('unassigned')).length, 1);
    assert.equal((await server.api('GET', '/repos/acme/widgets/assignees/hubot', { token: mona })).status, 204);
    assert.equal((await server.api('GET', '/repos/acme/widgets/assignees/olga', { token: mona })).status, 404);
    assert.equal((await server.api('GET', '/repos/acme/widgets/assignees/nobody', { token: mona })).status, 404);
  });
});

describe('who may open and change an issue', () => {
  test('a reader opens an issue (its assignees dropped) and edits and closes it; another\'s issue is a 403; assigning does nothing', async () => {
    const opened = await server.api('POST', '/repos/acme/widgets/issues', { token: olga, body: { title: 'A question', assignees: ['hubot'] } });
    assert.equal(opened.status, 201);
    assert.deepEqual(opened.body.assignees, []);
    const own = await server.api('PATCH', `/repos/acme/widgets/issues/${opened.body.number}`, { token: olga, body: { title: 'A better question', state: 'closed' } });
    assert.equal(own.status, 200);
    assert.equal(own.body.state, 'closed');
    const monas = await server.api('POST', '/repos/acme/widgets/issues', { token: mona, body: { title: 'Owner\'s' } });
    const refused = await server.api('PATCH', `/repos/acme/widgets/issues/${monas.body.number}`, { token: olga, body: { title: 'Hijacked' } });
    assert.equal(refused.status, 403);
    assert.equal((await server.api('GET', `/repos/acme/widgets/issues/${monas.body.number}`)).body.title, 'Owner\'s');
    const assigned = await server.api('POST', `/repos/acme/widgets/issues/${monas.body.number}/assignees`, { token: olga, body: { assignees: ['olga'] } });
    assert.equal(assigned.status, 201);
    assert.deepEqual(assigned.body.assignees, []);
  });

  test('invalid fields are the platform\'s 422; archived is 403; nothing changes', async () => {
    const { number } = (await server.api('POST', '/repos/acme/widgets/issues', { token: mona, body: { title: 42 } })).body;
    assert.equal((await server.api('GET', `/repos/acme/widgets/issues/${number}`)).body.title, '42', 'a number is a title, as the platform takes it');
    const patch = (body: unknown) => server.api('PATCH', `/repos/acme/widgets/issues/${number}`, { token: mona, body });
    for (const body of [{ title: '' }, { state: 'merged' }, { state: 'closed', state_reason: 'reopened' }, { state: 'open', state_reason: 'completed' }, { assignees: ['olga'] }, { milestone: 1 },
      { assignees: Array.from({ length: 11 }, (_, i) => `u${i}`) }, { body: 'x'.repeat(65_537) }]) {
      const answer = await patch(body);
      assert.equal(answer.status, 422, JSON.stringify(body).slice(0, 60));
    }
    for (const body of [{}, { title: '' }, { title: 'x'.repeat(257) }, { title: 'M', milestone: '1' }, { title: 'A', assignees: ['olga'] }]) {
      assert.equal((await server.api('POST', '/repos/acme/widgets/issues', { token: mona, body })).status, 422, JSON.stringify(body));
    }
    const unchanged = (await server.api('GET', `/repos/acme/widgets/issues/${number}`)).body;
    assert.equal(unchanged.state, 'open');
    assert.deepEqual(unchanged.assignees, []);
    assert.equal((await server.api('PATCH', '/repos/acme/widgets/issues/99999', { token: mona, body: { title: 'x' } })).status, 404);

    await server.admin('PATCH', '/repos/acme/widgets', { archived: true });
    try {
      assert.equal((await patch({ state: 'closed' })).status, 403);
      assert.equal((await server.api('POST', '/repos/acme/widgets/issues', { token: mona, body: { title: 'Late' } })).status, 403);
    } finally {
      await server.admin('PATCH', '/repos/acme/widgets', { archived: false });
    }
    assert.equal((await server.api('GET', `/repos/acme/widgets/issues/${number}`)).body.state, 'open');
  });

  test('a pull request in its issue form: pull_requests write closes it, issues read does not', async () => {
    const pull = await server.admin('POST', '/repos/acme/widgets/issues', { author: 'mona', title: 'Fix', pull_request: true });
    const pulls = await createApp(server, 'pulls', { pull_requests: 'write' });
    const token = await mintInstallationToken(server, pulls, await install(server, pulls, 'acme'));
    const closed = await server.api('PATCH', `/repos/acme/widgets/issues/${pull.number}`, { token, body: { state: 'closed' } });
    assert.equal(closed.status, 200);
    assert.equal(closed.body.state, 'closed');
    const issue = (await server.api('POST', '/repos/acme/widgets/issues', { token: mona, body: { title: 'Not a pull request' } })).body;
    assert.equal((await server.api('PATCH', `/repos/acme/widgets/issues/${issue.number}`, { token, body: { state: 'closed' } })).status, 403);
    const reader = await createApp(server, 'reader', { issues: 'read' });
    const readerToken = await mintInstallationToken(server, reader, await install(server, reader, 'acme'));
    assert.equal((await server.api('POST', '/repos/acme/widgets/issues', { token: readerToken, body: { title: 'x' } })).status, 403);
  });
});
