// Labels (issue 39): a new repository's default labels; an installation labels issues as its bot,
// a name the repository lacks made on the way; a repository's labels made, renamed and deleted;
// each write reaches a second app as the platform's `issues` labeled/unlabeled and `label` events,
// valid against the platform's schemas. Then who may, and what a refused write leaves.
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

before(async () => {
  receiver = await new Receiver().start();
  server = await startServer();
  for (const login of ['mona', 'olga']) await server.admin('POST', '/users', { login });
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'] });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
  const writer: TestApp = await server.admin('POST', '/apps', { slug: 'labeler', permissions: { issues: 'write', metadata: 'read' } });
  bot = await mintInstallationToken(server, writer, await install(server, writer, 'acme'));
  await server.admin('POST', '/apps', { slug: 'listener', permissions: { issues: 'read', metadata: 'read' }, events: ['issues', 'label'], webhook: { url: receiver.url('/listener') } });
  await server.admin('POST', '/apps/listener/installations', { account: 'acme', repositories: 'all' });
  mona = await classicToken(server, 'mona', ['repo']);
  olga = await classicToken(server, 'olga', ['public_repo']);
  number = (await server.admin('POST', '/repos/acme/widgets/issues', { author: 'olga', title: 'Wobbles' })).number;
  await server.drain();
  watch.skip();
});

after(async () => {
  await server?.close();
  await receiver?.stop();
});

describe('labels', () => {
  test('a new repository has the platform\'s nine default labels', async () => {
    const listed = await server.api('GET', '/repos/acme/widgets/labels', { token: mona });
    assert.equal(listed.status, 200);
    assert.deepEqual(listed.body.map((l: { name: string }) => l.name), ['bug', 'documentation', 'duplicate', 'enhancement', 'good first issue', 'help wanted', 'invalid', 'question', 'wontfix']);
    const good = listed.body.find((l: { name: string }) => l.name === 'good first issue');
    assert.deepEqual(Object.keys(good), ['id', 'node_id', 'url', 'name', 'description', 'color', 'default']);
    assert.equal(good.url, `${server.apiUrl}/repos/acme/widgets/labels/good%20first%20issue`);
    assert.equal(good.color, '7057ff');
    assert.equal(good.default, true);
    assert.equal((await server.api('GET', '/repos/acme/widgets/labels/Good%20First%20Issue')).body.id, good.id, 'any case');
    assert.equal((await server.api('GET', '/repos/acme/widgets/labels?per_page=2')).body.length, 2);
  });

  test('the bot adds labels (one made on the way), sets them, removes one; each is an issues event, a made one a label event', async () => {
    const added = await server.api('POST', `/repos/acme/widgets/issues/${number}/labels`, { token: bot, body: { labels: ['bug', 'Needs triage'] } });
    assert.equal(added.status, 200);
    assert.deepEqual(added.body.map((l: { name: string }) => l.name), ['bug', 'Needs triage']);
    assert.equal(added.body[1].color, 'ededed');
    assert.equal(added.body[1].default, false);
    const first = await delivered();
    assert.deepEqual(first.kinds, ['issues/labeled', 'issues/labeled', 'label/created']);
    assert.equal(first.body('label/created').label.name, 'Needs triage');
    assert.equal(first.body('issues/labeled').sender.login, 'labeler[bot]');
    assert.deepEqual((await server.api('GET', `/repos/acme/widgets/issues/${number}`)).body.labels.map((l: { name: string }) => l.name), ['bug', 'Needs triage']);

    const again = await server.api('POST', `/repos/acme/widgets/issues/${number}/labels`, { token: bot, body: { labels: ['bug'] } });
    assert.equal(again.body.length, 2, 'adding a label it has changes nothing');
    assert.deepEqual((await delivered()).kinds, []);

    const set = await server.api('PUT', `/repos/acme/widgets/issues/${number}/labels`, { token: bot, body: { labels: [{ name: 'enhancement' }] } });
    assert.deepEqual(set.body.map((l: { name: string }) => l.name), ['enhancement']);
    assert.deepEqual((await delivered()).kinds, ['issues/labeled', 'issues/unlabeled', 'issues/unlabeled']);

    const removed = await server.api('DELETE', `/repos/acme/widgets/issues/${number}/labels/enhancement`, { token: bot });
    assert.equal(removed.status, 200);
    assert.deepEqual(removed.body, []);
    const missing = await server.api('DELETE', `/repos/acme/widgets/issues/${number}/labels/enhancement`, { token: bot });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.message, 'Label does not exist');
    await server.api('POST', `/repos/acme/widgets/issues/${number}/labels`, { token: bot, body: { labels: ['bug', 'question'] } });
    assert.equal((await server.api('DELETE', `/repos/acme/widgets/issues/${number}/labels`, { token: bot })).status, 204);
    assert.deepEqual((await server.api('GET', `/repos/acme/widgets/issues/${number}/labels`)).body, []);
    await delivered();
  });

  test('a repository\'s label made, renamed and deleted: label created, edited (changes), deleted; a deleted label leaves its issues', async () => {
    const made = await server.api('POST', '/repos/acme/widgets/labels', { token: mona, body: { name: 'p1', color: '#FF0000', description: 'Urgent' } });
    assert.equal(made.status, 201);
    assert.equal(made.headers.get('location'), made.body.url);
    assert.equal(made.body.color, 'ff0000');
    const twice = await server.api('POST', '/repos/acme/widgets/labels', { token: mona, body: { name: 'P1' } });
    assert.equal(twice.status, 422);
    assert.equal(twice.body.errors[0].code, 'already_exists');
    const renamed = await server.api('PATCH', '/repos/acme/widgets/labels/p1', { token: mona, body: { new_name: 'priority: high', color: '00ff00' } });
    assert.equal(renamed.status, 200);
    assert.equal(renamed.body.url, `${server.apiUrl}/repos/acme/widgets/labels/priority%3A%20high`);
    await server.api('POST', `/repos/acme/widgets/issues/${number}/labels`, { token: mona, body: { labels: ['priority: high'] } });
    const deleted = await server.api('DELETE', `/repos/acme/widgets/labels/${encodeURIComponent('priority: high')}`, { token: mona });
    assert.equal(deleted.status, 204);
    assert.equal((await server.api('GET', '/repos/acme/widgets/labels/p1')).status, 404);
    assert.deepEqual((await server.api('GET', `/repos/acme/widgets/issues/${number}/labels`)).body, []);
    const { kinds, body } = await delivered();
    assert.deepEqual(kinds, ['issues/labeled', 'label/created', 'label/deleted', 'label/edited']);
    assert.deepEqual(body('label/edited').changes, { name: { from: 'p1' }, color: { from: 'ff0000' } });
    assert.equal(body('label/deleted').label.name, 'priority: high');
  });

  test('an issue opened with labels: opened and labeled (recorded in that order); labels from who may not triage are dropped', async () => {
    const opened = await server.api('POST', '/repos/acme/widgets/issues', { token: bot, body: { title: 'Labeled at birth', labels: ['bug'] } });
    assert.equal(opened.status, 201);
    assert.deepEqual(opened.body.labels.map((l: { name: string }) => l.name), ['bug']);
    assert.deepEqual((await delivered()).kinds, ['issues/labeled', 'issues/opened']);
    const byReader = await server.api('POST', '/repos/acme/widgets/issues', { token: olga, body: { title: 'Mine', labels: ['bug'] } });
    assert.equal(byReader.status, 201);
    assert.deepEqual(byReader.body.labels, []);
    const patched = await server.api('PATCH', `/repos/acme/widgets/issues/${opened.body.number}`, { token: bot, body: { labels: ['question'] } });
    assert.deepEqual(patched.body.labels.map((l: { name: string }) => l.name), ['question']);
    await delivered();
  });

  test('who may: a reader is refused label writes (403); invalid input 422; archived 403; nothing changes', async () => {
    const before = (await server.api('GET', '/repos/acme/widgets/labels?per_page=100')).body.length;
    assert.equal((await server.api('POST', '/repos/acme/widgets/labels', { token: olga, body: { name: 'mine' } })).status, 403);
    assert.equal((await server.api('POST', `/repos/acme/widgets/issues/${number}/labels`, { token: olga, body: { labels: ['bug'] } })).status, 403);
    assert.equal((await server.api('PATCH', '/repos/acme/widgets/labels/bug', { token: olga, body: { color: '000000' } })).status, 403);
    assert.equal((await server.api('POST', '/repos/acme/widgets/labels', { body: { name: 'anon' } })).status, 401);
    for (const body of [{}, { name: '' }, { name: 'x'.repeat(51) }, { name: 'c', color: 'red' }, { name: 'd', description: 'x'.repeat(101) }]) {
      assert.equal((await server.api('POST', '/repos/acme/widgets/labels', { token: mona, body })).status, 422, JSON.stringify(body));
    }
    assert.equal((await server.api('POST', `/repos/acme/widgets/issues/${number}/labels`, { token: mona, body: { labels: Array.from({ length: 101 }, (_, i) => `l${i}`) } })).status, 422);
    assert.equal((await server.api('PATCH', '/repos/acme/widgets/labels/nothing', { token: mona, body: { color: '000000' } })).status, 404);
    assert.equal((await server.api('DELETE', '/repos/acme/widgets/labels/nothing', { token: mona })).status, 404);
    assert.equal((await server.api('PATCH', '/repos/acme/widgets/labels/bug', { token: mona, body: { new_name: 'Question' } })).status, 422, 'a name the repository has');
    await server.admin('PATCH', '/repos/acme/widgets', { archived: true });
    try {
      assert.equal((await server.api('POST', '/repos/acme/widgets/labels', { token: mona, body: { name: 'late' } })).status, 403);
      assert.equal((await server.api('PUT', `/repos/acme/widgets/issues/${number}/labels`, { token: mona, body: { labels: ['bug'] } })).status, 403);
    } finally {
      await server.admin('PATCH', '/repos/acme/widgets', { archived: false });
    }
    assert.equal((await server.api('GET', '/repos/acme/widgets/labels?per_page=100')).body.length, before);
    assert.deepEqual((await server.api('GET', `/repos/acme/widgets/issues/${number}/labels`)).body, []);
  });
});
