// Webhook events follow permissions, as on the platform: an app subscribes only to events its
// permissions cover (a 422 naming the event otherwise, on create and on update), and a delivery goes
// only to installations whose current grant (installation permissions ∩ the app's) covers the event,
// so a grant narrowed later stops them. `issue_comment` is covered by `issues`, or by
// `pull_requests` for a comment on a pull request. Deliveries go to a real receiver on a local port.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { appJwt, type TestApp } from '../../helpers/credentials.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { Receiver } from '../../helpers/receiver.ts';

/** `event action` of what a path of the receiver got, in arrival order. */
function eventsOn(receiver: Receiver, path: string): string[] {
  return receiver.on(path).map((r) => `${r.headers['x-vendor-event']} ${r.json.action ?? ''}`.trim());
}

describe('webhook events follow permissions', () => {
  let server: TestServer;
  let receiver: Receiver;

  before(async () => {
    receiver = await new Receiver().start();
    server = await startServer();
    await server.admin('POST', '/users', { login: 'mona' });
    await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'] });
    await server.admin('POST', '/repos', { owner: 'acme', name: 'secret', visibility: 'private' });
    await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
  });
  after(async () => {
    await server.close();
    await receiver.stop();
  });

  /** The errors of a 422 answer, asserting its shape. */
  function validationErrors(response: { status: number; body: any; text: string }): any[] {
    assert.equal(response.status, 422, response.text);
    assert.equal(response.body.message, 'Validation Failed');
    return response.body.errors;
  }

  /** A 422 that names `event` in an error on App.events. */
  function assertNamesEvent(response: { status: number; body: any; text: string }, event: string): void {
    const errors = validationErrors(response);
    assert.ok(
      errors.some((e) => e.resource === 'App' && e.field === 'events' && e.code === 'invalid' && String(e.message).includes(event)),
      response.text,
    );
  }

  test('creating an app subscribed to an event its permissions do not cover is a 422 naming the event', async () => {
    assertNamesEvent(await server.adminRaw('POST', '/apps', { slug: 'nosy', permissions: { metadata: 'read' }, events: ['issues'] }), 'issues');
    assertNamesEvent(await server.adminRaw('POST', '/apps', { slug: 'nosy', events: ['pull_request'] }), 'pull_request');
    assertNamesEvent(await server.adminRaw('POST', '/apps', { slug: 'nosy', permissions: { issues: 'write' }, events: ['issues', 'push'] }), 'push');
    // An event the platform does not have.
    assertNamesEvent(await server.adminRaw('POST', '/apps', { slug: 'nosy', permissions: { issues: 'write' }, events: ['no_such_event'] }), 'no_such_event');
    // Nothing was created.
    assert.equal((await server.adminRaw('PATCH', '/apps/nosy', { events: [] })).status, 404);

    // Covered: read or write, events needing no permission, metadata events (every app reads metadata).
    const ok = await server.adminRaw('POST', '/apps', {
      slug: 'covered',
      permissions: { issues: 'read', contents: 'write' },
      events: ['issues', 'issue_comment', 'push', 'create', 'star', 'repository', 'installation_target'],
    });
    assert.equal(ok.status, 201, ok.text);
    // issue_comment with pull_requests only: comments on pull requests.
    assert.equal((await server.adminRaw('POST', '/apps', { slug: 'pr-only', permissions: { pull_requests: 'read' }, events: ['issue_comment', 'pull_request'] })).status, 201);
  });

  test('PATCH /_admin/apps/{app_slug} changes permissions and events under the same rule', async () => {
    await server.admin('POST', '/apps', { slug: 'changing', permissions: { issues: 'read' }, events: ['issues'] });
    // Adding an uncovered event; dropping the permission an event needs.
    assertNamesEvent(await server.adminRaw('PATCH', '/apps/changing', { events: ['issues', 'pull_request'] }), 'pull_request');
    assertNamesEvent(await server.adminRaw('PATCH', '/apps/changing', { permissions: { metadata: 'read' } }), 'issues');
    assertNamesEvent(await server.adminRaw('PATCH', '/apps/changing', { events: ['bogus'] }), 'bogus');

    const both = await server.adminRaw('PATCH', '/apps/changing', { permissions: { issues: 'read', pull_requests: 'write' }, events: ['issues', 'pull_request'] });
    assert.equal(both.status, 200, both.text);
    assert.deepEqual([both.body.slug, both.body.permissions, both.body.events], ['changing', { issues: 'read', pull_requests: 'write' }, ['issues', 'pull_request']]);
    assert.equal(both.body.client_secret, undefined);
    assert.equal(both.body.private_key, undefined);
    const dropped = await server.adminRaw('PATCH', '/apps/changing', { permissions: { metadata: 'read' }, events: [] });
    assert.equal(dropped.status, 200, dropped.text);
    assert.deepEqual([dropped.body.permissions, dropped.body.events], [{ metadata: 'read' }, []]);
    assert.equal((await server.adminRaw('PATCH', '/apps/ghost-app', { events: [] })).status, 404);
    assert.equal((await server.adminRaw('PATCH', '/apps/changing', { permissions: { issues: 'admin' } })).status, 422);
  });

  test('a grant narrowed later stops deliveries; widened again, they come back', async () => {
    const reader: TestApp = await server.admin('POST', '/apps', {
      slug: 'issue-reader',
      permissions: { issues: 'read', metadata: 'read' },
      events: ['issues'],
      webhook: { url: receiver.url('/reader') },
    });
    await server.drain(); // its ping, so that the deliveries below come in order
    const installation = await server.admin('POST', '/apps/issue-reader/installations', { account: 'acme', repositories: ['secret'] });

    await server.admin('POST', '/repos/acme/secret/issues', { author: 'mona', title: 'Private plans', body: 'the private body' });
    await server.drain();
    // Created with a URL, the app is pinged; installing is an `installation created` event, delivered without subscribing.
    assert.deepEqual(eventsOn(receiver, '/reader'), ['ping', 'installation created', 'issues opened']);
    assert.equal(receiver.on('/reader')[2]!.json.issue.body, 'the private body');

    // The installation's grant is narrowed to metadata only.
    const narrowed = await server.adminRaw('PATCH', `/apps/issue-reader/installations/${installation.id}`, { permissions: { metadata: 'read' } });
    assert.equal(narrowed.status, 200, narrowed.text);
    assert.deepEqual([narrowed.body.id, narrowed.body.permissions, narrowed.body.account.login], [installation.id, { metadata: 'read' }, 'acme']);

    await server.admin('POST', '/repos/acme/secret/issues', { author: 'mona', title: 'More plans', body: 'another private body' });
    assert.equal(await server.admin('POST', '/events', { event: 'issues', action: 'edited', repository: 'acme/secret', sender: 'mona' }).then((r) => r.deliveries), 0);
    await server.drain();
    assert.deepEqual(eventsOn(receiver, '/reader'), ['ping', 'installation created', 'issues opened'], 'no delivery after the grant was narrowed');
    const listed = await server.api('GET', '/app/hook/deliveries', { token: await appJwt(server, reader) });
    assert.equal(listed.body.length, 3);

    // Beyond what the app requests, unknown installations and other apps' installations.
    const beyond = await server.adminRaw('PATCH', `/apps/issue-reader/installations/${installation.id}`, { permissions: { issues: 'write' } });
    assert.equal(beyond.status, 422, beyond.text);
    assert.equal(beyond.body.errors[0].field, 'permissions');
    assert.equal((await server.adminRaw('PATCH', '/apps/issue-reader/installations/999999', { permissions: {} })).status, 404);
    assert.equal((await server.adminRaw('PATCH', '/apps/issue-reader/installations/99999999999', { permissions: {} })).status, 404);
    assert.equal((await server.adminRaw('PATCH', `/apps/covered/installations/${installation.id}`, { permissions: {} })).status, 404);
    assert.equal((await server.adminRaw('PATCH', `/apps/issue-reader/installations/${installation.id}`, {})).status, 422);

    // Granted again: the account accepted new permissions (an `installation` event), and delivered again.
    await server.admin('PATCH', `/apps/issue-reader/installations/${installation.id}`, { permissions: { issues: 'read' } });
    await server.drain();
    await server.admin('POST', '/repos/acme/secret/issues', { author: 'mona', title: 'Back', body: 'visible again' });
    await server.drain();
    assert.deepEqual(eventsOn(receiver, '/reader'), ['ping', 'installation created', 'issues opened', 'installation new_permissions_accepted', 'issues opened']);
  });

  test('issue_comment reaches an app with pull_requests only for comments on pull requests', async () => {
    await server.admin('POST', '/apps', {
      slug: 'pr-commenter',
      permissions: { pull_requests: 'read' },
      events: ['issue_comment'],
      webhook: { url: receiver.url('/pr') },
    });
    await server.admin('POST', '/apps/pr-commenter/installations', { account: 'acme' });
    const issue = await server.admin('POST', '/repos/acme/widgets/issues', { author: 'mona', title: 'Plain issue' });
    const pull = await server.admin('POST', '/repos/acme/widgets/issues', { author: 'mona', title: 'A pull request', pull_request: true });
    await server.admin('POST', `/repos/acme/widgets/issues/${issue.number}/comments`, { author: 'mona', body: 'on the issue' });
    await server.admin('POST', `/repos/acme/widgets/issues/${pull.number}/comments`, { author: 'mona', body: 'on the pull request' });
    await server.drain();
    const got = receiver.received.filter((r) => r.path === '/pr' && !['installation', 'ping'].includes(String(r.headers['x-vendor-event'])));
    assert.deepEqual(got.map((r) => [r.headers['x-vendor-event'], r.json.comment.body, r.json.issue.number]), [['issue_comment', 'on the pull request', pull.number]]);

    // Raw events: the payload's issue says whether the comment is on a pull request.
    const raw = (payload: Record<string, unknown>) =>
      server.admin('POST', '/events', { event: 'issue_comment', action: 'created', repository: 'acme/widgets', sender: 'mona', payload }).then((r) => r.deliveries);
    assert.equal(await raw({ issue: { number: pull.number, pull_request: { url: 'x' } } }), 1);
    assert.equal(await raw({ issue: { number: issue.number } }), 0);
    await server.drain();
  });

  test('an app stored with an event its grant does not cover gets no delivery', async () => {
    // Rows written before the rule (or by hand): the app's events say issues, its permissions do not.
    await server.admin('POST', '/apps', { slug: 'legacy', permissions: { metadata: 'read' }, events: [], webhook: { url: receiver.url('/legacy') } });
    await server.admin('POST', '/apps/legacy/installations', { account: 'acme' });
    // The app requests issues, but its installation was granted only metadata.
    await server.admin('POST', '/apps', { slug: 'ungranted', permissions: { issues: 'read', metadata: 'read' }, events: ['issues'], webhook: { url: receiver.url('/ungranted') } });
    await server.admin('POST', '/apps/ungranted/installations', { account: 'acme', permissions: { metadata: 'read' } });
    // The installation grants issues, but the app no longer requests it (stored by hand).
    await server.admin('POST', '/apps', { slug: 'unrequested', permissions: { issues: 'read' }, events: ['issues'], webhook: { url: receiver.url('/unrequested') } });
    await server.admin('POST', '/apps/unrequested/installations', { account: 'acme' });
    const db = server.server.ctx.db.kysely;
    await db.updateTable('apps').set({ events: JSON.stringify(['issues', 'issue_comment']) }).where('slug', '=', 'legacy').execute();
    await db.updateTable('apps').set({ permissions: JSON.stringify({ metadata: 'read' }) }).where('slug', '=', 'unrequested').execute();

    const issue = await server.admin('POST', '/repos/acme/secret/issues', { author: 'mona', title: 'Still private', body: 'nobody without issues sees this' });
    await server.admin('POST', `/repos/acme/secret/issues/${issue.number}/comments`, { author: 'mona', body: 'nor this' });
    await server.drain();
    // Only their creation's ping and their installation's own event, which need no permission.
    assert.deepEqual(eventsOn(receiver, '/legacy').sort(), ['installation created', 'ping']);
    assert.deepEqual(eventsOn(receiver, '/ungranted').sort(), ['installation created', 'ping']);
    assert.deepEqual(eventsOn(receiver, '/unrequested').sort(), ['installation created', 'ping']);
  });

  test('member, membership, organization, team and team_add need members: an installation not granted it receives none of them', async () => {
    const events = ['member', 'membership', 'organization', 'team', 'team_add', 'repository'];
    await server.admin('POST', '/users', { login: 'newcomer' });
    await server.admin('POST', '/apps', { slug: 'people', permissions: { members: 'read', metadata: 'read' }, events, webhook: { url: receiver.url('/people') } });
    await server.admin('POST', '/apps/people/installations', { account: 'acme' });
    await server.admin('POST', '/apps', { slug: 'no-people', permissions: { members: 'read', metadata: 'read' }, events, webhook: { url: receiver.url('/no-people') } });
    await server.admin('POST', '/apps/no-people/installations', { account: 'acme', permissions: { metadata: 'read' } });
    // Without members an app cannot even subscribe to them.
    assertNamesEvent(await server.adminRaw('POST', '/apps', { slug: 'nosy-people', permissions: { metadata: 'read' }, events: ['member'] }), 'member');

    await server.admin('PUT', '/repos/acme/widgets/collaborators/newcomer', { permission: 'pull' });
    await server.admin('PUT', '/repos/acme/widgets/collaborators/newcomer', { permission: 'push' });
    await server.admin('DELETE', '/repos/acme/widgets/collaborators/newcomer');
    await server.admin('PUT', '/orgs/acme/members/newcomer', {});
    await server.admin('POST', '/orgs/acme/teams', { slug: 'people-team' });
    await server.admin('PUT', '/orgs/acme/teams/people-team/members/newcomer');
    await server.admin('PUT', '/orgs/acme/teams/people-team/repos/acme/widgets', { permission: 'pull' });
    await server.admin('DELETE', '/orgs/acme/teams/people-team/repos/acme/widgets');
    // Leaving the organization leaves its teams: `membership` `removed` too.
    await server.admin('DELETE', '/orgs/acme/members/newcomer');
    // `repository` needs only metadata, which every installation holds: both get it.
    await server.admin('PATCH', '/repos/acme/widgets', { description: 'described' });
    await server.drain();

    assert.deepEqual(eventsOn(receiver, '/people').sort(), [
      'installation created', 'member added', 'member edited', 'member removed', 'membership added', 'membership removed',
      'organization member_added', 'organization member_removed', 'ping', 'repository edited', 'team added_to_repository', 'team created', 'team removed_from_repository', 'team_add',
    ]);
    assert.deepEqual(eventsOn(receiver, '/no-people').sort(), ['installation created', 'ping', 'repository edited']);
  });
});

