// Deleting a repository on the operator surface (spec/admin-api.md "Lifecycle",
// DELETE /_admin/repos/{owner}/{repo}): 204, and the repository and everything in it go in one
// transaction — issues, the notification threads of it, subscriptions, collaborators, team grants,
// installation selections, code security attachments and its git data — with a `repository`
// `deleted` event for the apps installed on it that subscribe to `repository`, its payload the
// repository as it was.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { classicToken } from './helpers/credentials.ts';
import { Receiver } from './helpers/receiver.ts';
import { startServer, type TestServer } from './helpers/server.ts';

describe('deleting a repository', () => {
  let server: TestServer;
  let receiver: Receiver;
  let bob: string;

  before(async () => {
    receiver = await new Receiver().start();
    server = await startServer();
    await server.admin('POST', '/users', { login: 'alice' });
    await server.admin('POST', '/users', { login: 'bob' });
    await server.admin('POST', '/orgs', { login: 'acme', owners: ['alice'] });
    await server.admin('POST', '/orgs/acme/teams', { slug: 'core', members: ['bob'] });
    await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
    await server.admin('POST', '/repos', { owner: 'acme', name: 'gadgets' });
    await server.admin('PUT', '/repos/acme/widgets/collaborators/bob', { permission: 'push' });
    await server.admin('PUT', '/orgs/acme/teams/core/repos/acme/widgets', { permission: 'pull' });
    await server.admin('POST', '/apps', { slug: 'watcher', permissions: { metadata: 'read' }, events: ['repository'], webhook: { url: receiver.url('/watcher') } });
    await server.admin('POST', '/apps', { slug: 'deaf', permissions: { metadata: 'read' }, events: [], webhook: { url: receiver.url('/deaf') } });
    await server.admin('POST', '/apps/watcher/installations', { account: 'acme' });
    await server.admin('POST', '/apps/deaf/installations', { account: 'acme' });
    await server.admin('POST', '/repos/acme/widgets/issues', { author: 'alice', title: 'Doomed', assignees: ['bob'] });
    await server.admin('POST', '/repos/acme/gadgets/issues', { author: 'alice', title: 'Kept', assignees: ['bob'] });
    await server.drain();
    bob = await classicToken(server, 'bob', ['repo', 'notifications']);
  });
  after(async () => {
    await server.close();
    await receiver.stop();
  });

  const threadRepos = async () =>
    ((await server.api('GET', '/notifications?all=true', { token: bob })).body as { repository: { full_name: string } }[]).map((t) => t.repository.full_name).sort();

  test('204: the repository, its issues and its threads go; other repositories stay', async () => {
    assert.deepEqual(await threadRepos(), ['acme/gadgets', 'acme/widgets']);
    const shown = await server.admin('GET', '/repos/acme/widgets');
    const deleted = await server.adminRaw('DELETE', '/repos/acme/widgets');
    assert.equal(deleted.status, 204, deleted.text);
    assert.equal((await server.adminRaw('GET', '/repos/acme/widgets')).status, 404);
    assert.equal((await server.api('GET', '/repos/acme/widgets', { token: bob })).status, 404);
    assert.equal((await server.api('GET', '/repos/acme/widgets/issues/1', { token: bob })).status, 404);
    assert.deepEqual(await threadRepos(), ['acme/gadgets']);
    assert.equal((await server.api('GET', '/repos/acme/gadgets/issues/1', { token: bob })).status, 200);
    // The name is free again: a new repository of that name is a new one, empty.
    const again = await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
    assert.notEqual(again.id, shown.id);
    assert.equal((await server.api('GET', '/repos/acme/widgets/issues/1', { token: bob })).status, 404);
  });

  test('apps subscribed to `repository` receive `deleted` with the repository as it was', async () => {
    await server.drain();
    const deleted = receiver.on('/watcher').filter((r) => r.json.action === 'deleted');
    assert.equal(deleted.length, 1);
    assert.equal(deleted[0]!.headers['x-vendor-event'], 'repository');
    assert.equal(deleted[0]!.json.repository.full_name, 'acme/widgets');
    assert.equal(deleted[0]!.json.organization.login, 'acme');
    assert.deepEqual(receiver.on('/deaf'), []);
  });

  test('an unknown repository or owner is 404', async () => {
    assert.equal((await server.adminRaw('DELETE', '/repos/acme/nothing')).status, 404);
    assert.equal((await server.adminRaw('DELETE', '/repos/nobody/widgets')).status, 404);
  });
});
