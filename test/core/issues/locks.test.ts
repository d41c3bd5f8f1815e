// Locked conversations (issue 39): an app locks an issue with a reason and a maintainer unlocks it;
// each is the platform's `issues` locked / unlocked event (`pull_request` for a pull request), valid
// against its schema, and a timeline event. While locked only who may triage comments. Then who may.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { Receiver } from '../../helpers/receiver.ts';
import { watchDeliveries } from '../../helpers/deliveries.ts';
import { install, mintInstallationToken } from '../../helpers/app-credentials.ts';
import { classicToken, type TestApp } from '../../helpers/credentials.ts';

let server: TestServer;
let receiver: Receiver;
const watch = watchDeliveries(() => server, () => receiver, '/listener');
const delivered = watch.delivered;
let bot: string;
let mona: string;
let olga: string;
let number: number;
let pull: number;

before(async () => {
  receiver = await new Receiver().start();
  server = await startServer();
  for (const login of ['mona', 'olga']) await server.admin('POST', '/users', { login });
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'] });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
  const moderator: TestApp = await server.admin('POST', '/apps', { slug: 'moderator', permissions: { issues: 'write', pull_requests: 'write', metadata: 'read' } });
  bot = await mintInstallationToken(server, moderator, await install(server, moderator, 'acme'));
  await server.admin('POST', '/apps', { slug: 'listener', permissions: { issues: 'read', pull_requests: 'read', metadata: 'read' }, events: ['issues', 'pull_request'], webhook: { url: receiver.url('/listener') } });
  await server.admin('POST', '/apps/listener/installations', { account: 'acme', repositories: 'all' });
  mona = await classicToken(server, 'mona', ['repo']);
  olga = await classicToken(server, 'olga', ['public_repo']);
  number = (await server.admin('POST', '/repos/acme/widgets/issues', { author: 'olga', title: 'Heated' })).number;
  pull = (await server.admin('POST', '/repos/acme/widgets/issues', { author: 'mona', title: 'A change', pull_request: true })).number;
  await server.drain();
  watch.skip();
});

after(async () => {
  await server?.close();
  await receiver?.stop();
});


const comment = (token: string, body = 'Calm down') => server.api('POST', `/repos/acme/widgets/issues/${number}/comments`, { token, body: { body } });

describe('locking', () => {
  test('an app locks an issue with a reason: the issue shows it, the locked event and the timeline say so; again changes nothing', async () => {
    const locked = await server.api('PUT', `/repos/acme/widgets/issues/${number}/lock`, { token: bot, body: { lock_reason: 'too heated' } });
    assert.equal(locked.status, 204);
    assert.equal(locked.text, '');
    const issue = (await server.api('GET', `/repos/acme/widgets/issues/${number}`, { token: mona })).body;
    assert.equal(issue.locked, true);
    assert.equal(issue.active_lock_reason, 'too heated');
    const events = await delivered();
    assert.deepEqual(events.kinds, ['issues/locked']);
    assert.equal(events.body('issues/locked').issue.active_lock_reason, 'too heated');
    assert.equal(events.body('issues/locked').sender.login, 'moderator[bot]');
    assert.equal((await server.api('PUT', `/repos/acme/widgets/issues/${number}/lock`, { token: bot, body: {} })).status, 204);
    assert.deepEqual((await delivered()).kinds, [], 'already locked: nothing');
    assert.equal((await server.api('GET', `/repos/acme/widgets/issues/${number}`, { token: mona })).body.active_lock_reason, 'too heated', 'the first reason stays');
    const timeline = (await server.api('GET', `/repos/acme/widgets/issues/${number}/events`, { token: mona })).body;
    assert.deepEqual(timeline.map((e: { event: string }) => e.event), ['locked']);
  });

  test('while locked, a reader who may not triage cannot comment (403, nothing written); the owner and the app can', async () => {
    const refused = await comment(olga);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.message, 'Unable to create comment because issue is locked.');
    assert.equal((await comment(mona)).status, 201);
    assert.equal((await comment(bot)).status, 201);
    const comments = (await server.api('GET', `/repos/acme/widgets/issues/${number}/comments`, { token: mona })).body;
    assert.deepEqual(comments.map((c: { user: { login: string } }) => c.user.login), ['mona', 'moderator[bot]']);
    await delivered();
  });

  test('who may not lock, and what is no reason, changes nothing', async () => {
    assert.equal((await server.api('DELETE', `/repos/acme/widgets/issues/${number}/lock`, { token: olga })).status, 403, 'its author reads it but may not triage');
    assert.equal((await server.api('PUT', `/repos/acme/widgets/issues/${number}/lock`, { token: olga, body: {} })).status, 403);
    assert.equal((await server.api('PUT', `/repos/acme/widgets/issues/${pull}/lock`, { token: mona, body: { lock_reason: 'boring' } })).status, 422);
    assert.equal((await server.api('PUT', '/repos/acme/widgets/issues/999/lock', { token: mona, body: {} })).status, 404);
    assert.equal((await server.api('PUT', `/repos/acme/widgets/issues/${number}/lock`, { body: {} })).status, 401);
    assert.equal((await server.api('GET', `/repos/acme/widgets/issues/${number}`, { token: mona })).body.locked, true);
    assert.equal((await server.api('GET', `/repos/acme/widgets/issues/${pull}`, { token: mona })).body.locked, false);
    assert.deepEqual((await delivered()).kinds, []);
  });

  test('the owner unlocks it: the unlocked event, and anyone who reads it comments again', async () => {
    assert.equal((await server.api('DELETE', `/repos/acme/widgets/issues/${number}/lock`, { token: mona })).status, 204);
    const issue = (await server.api('GET', `/repos/acme/widgets/issues/${number}`, { token: mona })).body;
    assert.equal(issue.locked, false);
    assert.equal(issue.active_lock_reason, null);
    assert.deepEqual((await delivered()).kinds, ['issues/unlocked']);
    assert.equal((await server.api('DELETE', `/repos/acme/widgets/issues/${number}/lock`, { token: mona })).status, 204);
    assert.deepEqual((await delivered()).kinds, [], 'not locked: nothing');
    assert.equal((await comment(olga, 'Thanks')).status, 201);
    await delivered();
  });

  test('a pull request locks without a reason: pull_request locked', async () => {
    assert.equal((await server.api('PUT', `/repos/acme/widgets/issues/${pull}/lock`, { token: bot })).status, 204);
    const events = await delivered();
    assert.deepEqual(events.kinds, ['pull_request/locked']);
    assert.equal(events.body('pull_request/locked').pull_request.locked, true);
    assert.equal(events.body('pull_request/locked').pull_request.active_lock_reason, null);
  });

  test('an archived repository refuses to lock or unlock', async () => {
    await server.admin('PATCH', '/repos/acme/widgets', { archived: true });
    assert.equal((await server.api('DELETE', `/repos/acme/widgets/issues/${pull}/lock`, { token: mona })).status, 403);
    assert.equal((await server.api('GET', `/repos/acme/widgets/issues/${pull}`, { token: mona })).body.locked, true);
    await server.admin('PATCH', '/repos/acme/widgets', { archived: false });
    await delivered();
  });
});
