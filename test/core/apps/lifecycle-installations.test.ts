// Suspending, unsuspending and deleting an installation, as the platform's app API has them
// (PUT / DELETE /app/installations/{installation_id}/suspended, DELETE /app/installations/{id}, with
// the app's JWT) and on the operator surface: its tokens stop at once (a suspended installation's
// with 403, a deleted one's are gone: 401), no token is minted while suspended, nothing is
// delivered for it while suspended, and the app receives `installation` `suspend`, `unsuspend` and
// `deleted` without subscribing to anything. And repository lifecycle events: a new repository is
// `repository` `created`, a change of its archived flag `archived` / `unarchived`, for the apps
// installed on it that subscribe to `repository` (nothing when the flag does not change).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { appJwt, type TestApp } from '../../helpers/credentials.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { Receiver } from '../../helpers/receiver.ts';

const eventsOn = (receiver: Receiver, path: string) =>
  receiver.on(path).map((r) => `${r.headers['x-vendor-event']} ${r.json.action ?? ''}`.trim());

/** `event action owner/name` of what a path got. */
const namedOn = (receiver: Receiver, path: string) =>
  receiver.on(path).map((r) => `${r.headers['x-vendor-event']} ${r.json.action ?? ''} ${r.json.repository?.full_name ?? ''}`.trim());

describe('installation and repository lifecycle', () => {
  let server: TestServer;
  let receiver: Receiver;
  let bot: TestApp;
  let jwt: string;
  let installationId: number;

  const mint = (id = installationId) => server.api('POST', `/app/installations/${id}/access_tokens`, { token: jwt });

  before(async () => {
    receiver = await new Receiver().start();
    server = await startServer();
    await server.admin('POST', '/users', { login: 'mona' });
    await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'] });
    await server.admin('POST', '/orgs', { login: 'other', owners: ['mona'] });
    await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
    bot = await server.admin('POST', '/apps', { slug: 'bot', permissions: { metadata: 'read', issues: 'write' }, events: ['issues'], webhook: { url: receiver.url('/bot') } });
    await server.drain(); // its ping first, so that the deliveries below come in order
    installationId = (await server.admin('POST', '/apps/bot/installations', { account: 'acme' })).id;
    jwt = await appJwt(server, bot);
  });
  after(async () => {
    await server.close();
    await receiver.stop();
  });

  test('suspended: its tokens stop, none is minted, nothing is delivered; unsuspended: all works again', async () => {
    const token = (await mint()).body.token;
    assert.equal((await server.api('GET', '/installation/repositories', { token })).status, 200);

    const suspended = await server.api('PUT', `/app/installations/${installationId}/suspended`, { token: jwt });
    assert.equal(suspended.status, 204, suspended.text);
    const refused = await server.api('GET', '/installation/repositories', { token });
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.body.message, 'This installation has been suspended');
    const minted = await mint();
    assert.equal(minted.status, 403, minted.text);
    assert.equal(minted.body.message, 'This installation has been suspended');
    const shown = await server.api('GET', `/app/installations/${installationId}`, { token: jwt });
    assert.equal(shown.status, 200);
    assert.equal(typeof shown.body.suspended_at, 'string');

    // Activity while suspended is not delivered.
    await server.admin('POST', '/repos/acme/widgets/issues', { author: 'mona', title: 'while suspended' });
    await server.drain();
    assert.deepEqual(eventsOn(receiver, '/bot'), ['ping', 'installation created', 'installation suspend']);

    assert.equal((await server.api('DELETE', `/app/installations/${installationId}/suspended`, { token: jwt })).status, 204);
    assert.equal((await server.api('GET', '/installation/repositories', { token })).status, 200);
    assert.equal((await mint()).status, 201);
    assert.equal((await server.api('GET', `/app/installations/${installationId}`, { token: jwt })).body.suspended_at, null);
    await server.admin('POST', '/repos/acme/widgets/issues', { author: 'mona', title: 'after' });
    await server.drain();
    assert.deepEqual(eventsOn(receiver, '/bot'), ['ping', 'installation created', 'installation suspend', 'installation unsuspend', 'issues opened']);
    const [, suspend] = receiver.on('/bot');
    assert.equal(suspend!.json.installation.id, installationId);
  });

  test('deleted: its tokens are gone, it is a 404, and the app is told', async () => {
    const token = (await mint()).body.token;
    const deleted = await server.api('DELETE', `/app/installations/${installationId}`, { token: jwt });
    assert.equal(deleted.status, 204, deleted.text);
    assert.equal((await server.api('GET', '/installation/repositories', { token })).status, 401);
    assert.equal((await server.api('GET', `/app/installations/${installationId}`, { token: jwt })).status, 404);
    assert.equal((await mint()).status, 404);
    assert.equal((await server.api('DELETE', `/app/installations/${installationId}`, { token: jwt })).status, 404);
    await server.drain();
    assert.deepEqual(eventsOn(receiver, '/bot').slice(-1), ['installation deleted']);
  });

  test('the operator suspends, unsuspends and deletes; unknown installations are 404', async () => {
    const id = (await server.admin('POST', '/apps/bot/installations', { account: 'other' })).id;
    assert.equal((await server.adminRaw('PUT', `/apps/bot/installations/${id}/suspended`)).status, 204);
    assert.equal((await mint(id)).status, 403);
    assert.equal((await server.adminRaw('DELETE', `/apps/bot/installations/${id}/suspended`)).status, 204);
    assert.equal((await mint(id)).status, 201);
    assert.equal((await server.adminRaw('DELETE', `/apps/bot/installations/${id}`)).status, 204);
    assert.equal((await mint(id)).status, 404);
    for (const path of [`/apps/bot/installations/${id}`, `/apps/bot/installations/${id}/suspended`, '/apps/nobody/installations/1/suspended']) {
      assert.equal((await server.adminRaw('DELETE', path)).status, 404, path);
    }
    assert.equal((await server.api('PUT', '/app/installations/999999/suspended', { token: jwt })).status, 404);
    assert.equal((await server.api('PUT', '/app/installations/abc/suspended', { token: jwt })).status, 422);
  });

  test('a new repository is a `repository created` event', async () => {
    await server.admin('POST', '/apps', { slug: 'watcher', permissions: { metadata: 'read' }, events: ['repository'], webhook: { url: receiver.url('/watcher') } });
    await server.admin('POST', '/apps', { slug: 'deaf', permissions: { metadata: 'read' }, events: [], webhook: { url: receiver.url('/deaf') } });
    await server.drain(); // their pings first, so that the deliveries below come in order
    await server.admin('POST', '/apps/watcher/installations', { account: 'acme' });
    await server.admin('POST', '/apps/deaf/installations', { account: 'acme' });
    await server.admin('POST', '/repos', { owner: 'acme', name: 'gadgets' });
    await server.drain();
    assert.deepEqual(namedOn(receiver, '/watcher'), ['ping', 'installation created', 'repository created acme/gadgets']);
    assert.deepEqual(namedOn(receiver, '/deaf'), ['ping', 'installation created']);
  });

  test('archiving and unarchiving are `archived` and `unarchived` events, once each; a new description `edited`', async () => {
    const archived = await server.admin('PATCH', '/repos/acme/gadgets', { archived: true });
    assert.equal(archived.archived, true);
    await server.admin('PATCH', '/repos/acme/gadgets', { archived: true });
    await server.drain();
    await server.admin('PATCH', '/repos/acme/gadgets', { archived: false, description: 'back' });
    await server.admin('PATCH', '/repos/acme/gadgets', { description: 'no change of the flag' });
    await server.drain();
    const named = namedOn(receiver, '/watcher');
    assert.deepEqual(named.slice(0, 4), ['ping', 'installation created', 'repository created acme/gadgets', 'repository archived acme/gadgets']);
    // The later writes' deliveries may arrive in any order.
    assert.deepEqual(named.slice(4).sort(), ['repository edited acme/gadgets', 'repository edited acme/gadgets', 'repository unarchived acme/gadgets']);
    const [, , , first] = receiver.on('/watcher');
    assert.equal(first!.json.repository.archived, true);
    // The operator's write says no actor: the sender is the repository's owner.
    assert.equal(first!.json.sender.login, 'acme');
    const edits = receiver.on('/watcher').filter((r) => r.json.action === 'edited').map((r) => r.json.changes.description.from);
    assert.deepEqual(edits.sort(), ['back', null]);
    assert.deepEqual(namedOn(receiver, '/deaf'), ['ping', 'installation created']);
  });
});
