// Repository lifecycle events (spec/admin-api.md "Lifecycle"): each change is recorded as a typed
// activity in its own transaction, and apps installed on the repository that subscribe to
// `repository` receive it: `created` for a new repository, `archived` / `unarchived` when the
// operator archives or unarchives it (nothing when the flag does not change).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from './helpers/server.ts';
import { Receiver } from './helpers/receiver.ts';

const eventsOn = (receiver: Receiver, path: string) =>
  receiver.on(path).map((r) => `${r.headers['x-vendor-event']} ${r.json.action ?? ''} ${r.json.repository?.full_name ?? ''}`.trim());

describe('repository events', () => {
  let server: TestServer;
  let receiver: Receiver;

  before(async () => {
    receiver = await new Receiver().start();
    server = await startServer();
    await server.admin('POST', '/users', { login: 'mona' });
    await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'] });
    await server.admin('POST', '/apps', { slug: 'watcher', permissions: { metadata: 'read' }, events: ['repository'], webhook: { url: receiver.url('/watcher') } });
    await server.admin('POST', '/apps', { slug: 'deaf', permissions: { metadata: 'read' }, events: [], webhook: { url: receiver.url('/deaf') } });
    await server.admin('POST', '/apps/watcher/installations', { account: 'acme' });
    await server.admin('POST', '/apps/deaf/installations', { account: 'acme' });
  });
  after(async () => {
    await server.close();
    await receiver.stop();
  });

  test('a new repository is a `repository created` event', async () => {
    await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
    await server.drain();
    assert.deepEqual(eventsOn(receiver, '/watcher'), ['repository created acme/widgets']);
    assert.deepEqual(eventsOn(receiver, '/deaf'), []);
  });

  test('archiving and unarchiving are `archived` and `unarchived` events, once each', async () => {
    const archived = await server.admin('PATCH', '/repos/acme/widgets', { archived: true });
    assert.equal(archived.archived, true);
    await server.admin('PATCH', '/repos/acme/widgets', { archived: true });
    await server.drain();
    await server.admin('PATCH', '/repos/acme/widgets', { archived: false, description: 'back' });
    await server.admin('PATCH', '/repos/acme/widgets', { description: 'no change of the flag' });
    await server.drain();
    assert.deepEqual(eventsOn(receiver, '/watcher'), [
      'repository created acme/widgets',
      'repository archived acme/widgets',
      'repository unarchived acme/widgets',
    ]);
    const [, first] = receiver.on('/watcher');
    assert.equal(first!.json.repository.archived, true);
    assert.equal(first!.json.sender, undefined);
    assert.deepEqual(eventsOn(receiver, '/deaf'), []);
  });
});
