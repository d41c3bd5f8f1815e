// Deleting a repository on the operator surface (spec/admin-api.md "Lifecycle",
// DELETE /_admin/repos/{owner}/{repo}): 204, and the repository and everything in it go in one
// transaction — issues, the notification threads of it, subscriptions, collaborators, team grants,
// installation selections, code security attachments and its git data — with a `repository`
// `deleted` event for the apps installed on it that subscribe to `repository`, its payload the
// repository as it was.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { appJwt, classicToken, createApp, type TestApp } from '../../helpers/credentials.ts';
import { Receiver } from '../../helpers/receiver.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

/** alice owns acme, whose team core has bob. */
async function acmeWithCore(server: TestServer): Promise<void> {
  await server.admin('POST', '/users', { login: 'alice' });
  await server.admin('POST', '/users', { login: 'bob' });
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['alice'] });
  await server.admin('POST', '/orgs/acme/teams', { slug: 'core', members: ['bob'] });
}

describe('deleting a repository', () => {
  let server: TestServer;
  let receiver: Receiver;
  let bob: string;

  before(async () => {
    receiver = await new Receiver().start();
    server = await startServer();
    await acmeWithCore(server);
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
    // The unsubscribed app receives only its creation's ping and its own `installation` `created` (neither needs a subscription).
    assert.deepEqual(receiver.on('/deaf').map((r) => `${r.headers['x-vendor-event']} ${r.json.action}`).sort(), ['installation created', 'ping undefined']);
  });

  test('an unknown repository or owner is 404', async () => {
    assert.equal((await server.adminRaw('DELETE', '/repos/acme/nothing')).status, 404);
    assert.equal((await server.adminRaw('DELETE', '/repos/nobody/widgets')).status, 404);
  });
});

// Renaming (`name`) and transferring (`owner`) on PATCH /_admin/repos/{owner}/{repo}: one transaction
// with `repository` `renamed` / `transferred`; the old /repos/{owner}/{repo} answers as the platform
// does (a read 301, a write 307, to /repositories/{id}); threads and payloads name the new place.
describe('renaming and transferring a repository', () => {
  let server: TestServer;
  let receiver: Receiver;
  let bob: string;
  let id: number;

  before(async () => {
    receiver = await new Receiver().start();
    server = await startServer();
    await acmeWithCore(server);
    await server.admin('POST', '/orgs', { login: 'other', owners: ['alice'] });
    id = (await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets', visibility: 'private' })).id;
    await server.admin('POST', '/repos', { owner: 'other', name: 'taken' });
    await server.admin('PUT', '/orgs/acme/teams/core/repos/acme/widgets', { permission: 'pull' });
    await server.admin('POST', '/apps', { slug: 'watcher', permissions: { metadata: 'read' }, events: ['repository'], webhook: { url: receiver.url('/watcher') } });
    await server.admin('POST', '/apps/watcher/installations', { account: 'acme' });
    await server.admin('POST', '/apps/watcher/installations', { account: 'other' });
    await server.admin('POST', '/repos/acme/widgets/issues', { author: 'alice', title: 'Follows', assignees: ['bob'] });
    await server.drain();
    bob = await classicToken(server, 'bob', ['repo', 'notifications']);
  });
  after(async () => {
    await server.close();
    await receiver.stop();
  });

  test('a rename: 200 at the new place; the old name redirects; threads and payloads name the new place', async () => {
    const renamed = await server.admin('PATCH', '/repos/acme/widgets', { name: 'gizmos' });
    assert.equal(renamed.full_name, 'acme/gizmos');
    assert.equal(renamed.id, id);
    assert.equal((await server.api('GET', '/repos/acme/gizmos', { token: bob })).status, 200);

    const read = await server.api('GET', '/repos/acme/widgets', { token: bob });
    assert.equal(read.status, 301, read.text);
    const location = `${server.apiUrl}/repositories/${id}`;
    assert.equal(read.headers.get('location'), location);
    assert.deepEqual(Object.keys(read.body).sort(), ['documentation_url', 'message', 'url']);
    assert.equal(read.body.message, 'Moved Permanently');
    assert.equal(read.body.url, location);
    const issue = await server.api('GET', '/repos/ACME/widgets/issues/1', { token: bob });
    assert.equal(issue.status, 301, issue.text);
    const write = await server.api('PUT', '/repos/acme/widgets/notifications', { token: bob, body: {} });
    assert.equal(write.status, 307, write.text);
    assert.equal(write.headers.get('location'), `${location}/notifications`);

    const byId = await server.api('GET', `/repositories/${id}`, { token: bob });
    assert.equal(byId.status, 200, byId.text);
    assert.equal(byId.body.full_name, 'acme/gizmos');
    // The caller's access rules hold there: a private repository is not there for a stranger.
    assert.equal((await server.api('GET', `/repositories/${id}`)).status, 404);
    assert.equal((await server.api('GET', '/repositories/999999', { token: bob })).status, 404);
    assert.equal((await server.api('GET', '/repositories/abc', { token: bob })).status, 422);

    const threads = (await server.api('GET', '/notifications?all=true', { token: bob })).body;
    assert.equal(threads[0].repository.full_name, 'acme/gizmos');
    assert.match(threads[0].subject.url, /\/repos\/acme\/gizmos\/issues\/1$/);

    await server.drain();
    const event = receiver.on('/watcher').find((r) => r.json.action === 'renamed')!;
    assert.equal(event.headers['x-vendor-event'], 'repository');
    assert.equal(event.json.repository.full_name, 'acme/gizmos');
    assert.equal(event.json.changes.repository.name.from, 'widgets');
  });

  test('a new repository that takes the old name ends the redirect', async () => {
    await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
    const read = await server.api('GET', '/repos/acme/widgets', { token: bob });
    assert.equal(read.status, 200);
    assert.notEqual(read.body.id, id);
    await server.admin('DELETE', '/repos/acme/widgets');
    assert.equal((await server.api('GET', '/repos/acme/widgets', { token: bob })).status, 404);
  });

  test('a transfer: the new owner, the old organization\'s team grants go, the old name redirects', async () => {
    await server.admin('PUT', '/repos/acme/gizmos/collaborators/bob', { permission: 'pull' });
    const moved = await server.admin('PATCH', '/repos/acme/gizmos', { owner: 'other' });
    assert.equal(moved.full_name, 'other/gizmos');
    assert.equal(moved.owner.login, 'other');
    const teams = await server.api('GET', '/repos/other/gizmos/teams', { token: bob });
    assert.deepEqual(teams.body, []);
    // Collaborators stay.
    assert.equal((await server.api('GET', '/repos/other/gizmos', { token: bob })).status, 200);
    for (const old of ['/repos/acme/gizmos', '/repos/acme/widgets']) {
      const read = await server.api('GET', old, { token: bob });
      assert.equal(read.status, old === '/repos/acme/widgets' ? 404 : 301, `${old}: ${read.text}`);
    }
    await server.drain();
    const event = receiver.on('/watcher').find((r) => r.json.action === 'transferred')!;
    assert.equal(event.json.repository.full_name, 'other/gizmos');
    assert.equal(event.json.changes.owner.from.organization.login, 'acme');
    assert.equal(event.json.organization.login, 'other');
  });

  test('an unknown destination is 404, a name taken there or a bad name 422', async () => {
    assert.equal((await server.adminRaw('PATCH', '/repos/other/gizmos', { owner: 'nobody' })).status, 404);
    const taken = await server.adminRaw('PATCH', '/repos/other/gizmos', { name: 'taken' });
    assert.equal(taken.status, 422, taken.text);
    assert.equal(taken.body.errors[0].code, 'already_exists');
    assert.equal((await server.adminRaw('PATCH', '/repos/other/gizmos', { name: 'bad name' })).status, 422);
    assert.equal((await server.adminRaw('PATCH', '/repos/other/gizmos', { name: 42 })).status, 422);
    assert.equal((await server.adminRaw('PATCH', '/repos/other/gizmos', { owner: ['x'] })).status, 422);
    assert.equal((await server.admin('GET', '/repos/other/gizmos')).id, id);
  });
});

// Tokens that named a repository, before and after its transfer (PATCH /_admin/repos/{o}/{r} `owner`),
// as the platform has it: the repository leaves the old owner's installations and the fine-grained
// tokens whose resource owner is the old owner; the new owner's reach it (docs/permissions.md).
describe('tokens after a transfer', () => {
  let server: TestServer;
  let app: TestApp;

  before(async () => {
    server = await startServer();
    await acmeWithCore(server);
    await server.admin('POST', '/orgs', { login: 'other', owners: ['alice'] });
    await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets', visibility: 'private' });
    await server.admin('POST', '/repos', { owner: 'acme', name: 'gears', visibility: 'private' });
    await server.admin('PUT', '/repos/acme/widgets/collaborators/bob', { permission: 'pull' });
    await server.admin('POST', '/repos/acme/widgets/issues', { author: 'alice', title: 'Travels' });
    app = await createApp(server, 'narrow', { metadata: 'read', issues: 'read' });
  });
  after(() => server.close());

  test('a fine-grained token selecting it and an installation token narrowed to it stop; the new owner\'s reach it', async () => {
    const fineGrained = async (owner: string, repositories: 'all' | string[]) =>
      (await server.admin('POST', '/tokens', { login: 'bob', kind: 'fine_grained', resource_owner: owner, repositories, permissions: { metadata: 'read', issues: 'read' } })).token as string;
    const selecting = await fineGrained('acme', ['widgets']);
    const acmeInstallation = await server.admin('POST', '/apps/narrow/installations', { account: 'acme', repositories: 'all' });
    const jwt = await appJwt(server, app);
    const minted = await server.api('POST', `/app/installations/${acmeInstallation.id}/access_tokens`, { token: jwt, body: { repositories: ['widgets'] } });
    assert.equal(minted.status, 201, minted.text);
    const narrowed = minted.body.token as string;
    for (const [what, token] of [['fine-grained token for acme', selecting], ['acme installation token', narrowed]] as const) {
      for (const path of ['/repos/acme/widgets', '/repos/acme/widgets/issues/1']) {
        const answer = await server.api('GET', path, { token });
        assert.equal(answer.status, 200, `${what} ${path}: ${answer.text}`);
      }
    }

    const { id } = await server.admin('PATCH', '/repos/acme/widgets', { owner: 'other' });
    for (const [what, token] of [['fine-grained token for acme', selecting], ['acme installation token', narrowed]] as const) {
      for (const path of ['/repos/other/widgets', '/repos/other/widgets/issues/1', `/repositories/${id}`, `/repositories/${id}/issues/1`]) {
        const answer = await server.api('GET', path, { token });
        assert.equal(answer.status, 404, `${what} ${path}: ${answer.status} ${answer.text}`);
      }
      // Still no way in by the old name: to a token that may not read the repository it is the 404 of
      // a repository that never was (no redirect naming its id).
      const old = await server.api('GET', '/repos/acme/widgets', { token });
      assert.equal(old.status, 404, old.text);
      assert.equal(old.headers.get('location'), null);
    }
    // The narrowed token still reaches nothing else of acme it did not name; the acme installation no longer lists it.
    const listed = await server.api('GET', '/installation/repositories', { token: narrowed });
    assert.equal(listed.status, 200, listed.text);
    assert.deepEqual(listed.body.repositories.map((r: { full_name: string }) => r.full_name), []);
    assert.equal((await server.api('GET', '/repos/acme/gears', { token: narrowed })).status, 404);

    // The new owner's: a fine-grained token for other (all repositories) and other's installation.
    const forOther = await fineGrained('other', 'all');
    assert.equal((await server.api('GET', '/repos/other/widgets', { token: forOther })).status, 200);
    const otherInstallation = await server.admin('POST', '/apps/narrow/installations', { account: 'other', repositories: 'all' });
    const otherMinted = await server.api('POST', `/app/installations/${otherInstallation.id}/access_tokens`, { token: jwt, body: { repositories: ['widgets'] } });
    assert.equal(otherMinted.status, 201, otherMinted.text);
    assert.equal((await server.api('GET', '/repos/other/widgets/issues/1', { token: otherMinted.body.token })).status, 200);
  });
});

// The platform redirects an old name's sub-path to the same sub-path by id, which it serves
// (`/repos/{old}/issues/1` → 301 `/repositories/{id}/issues/1`).
describe('sub-paths of an old name', () => {
  let server: TestServer;
  let bob: string;
  let id: number;

  before(async () => {
    server = await startServer();
    await acmeWithCore(server);
    id = (await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets' })).id;
    await server.admin('POST', '/repos/acme/widgets/issues', { author: 'alice', title: 'Stays' });
    await server.admin('PATCH', '/repos/acme/widgets', { name: 'gizmos' });
    bob = await classicToken(server, 'bob', ['repo', 'notifications']);
  });
  after(() => server.close());

  test('redirect to the same sub-path by id, which serves it', async () => {
    for (const [method, path, status] of [['GET', '/issues/1', 301], ['GET', '/issue-types', 301], ['GET', '/subscription', 301], ['PUT', '/notifications', 307]] as const) {
      const moved = await server.api(method, `/repos/acme/widgets${path}`, { token: bob, body: method === 'PUT' ? {} : undefined });
      assert.equal(moved.status, status, `${method} ${path}: ${moved.text}`);
      assert.equal(moved.headers.get('location'), `${server.apiUrl}/repositories/${id}${path}`);
      const served = await server.api(method, `/repositories/${id}${path}`, { token: bob, body: method === 'PUT' ? {} : undefined });
      assert.equal(served.status, (await server.api(method, `/repos/acme/gizmos${path}`, { token: bob, body: method === 'PUT' ? {} : undefined })).status, `${method} /repositories/{id}${path}`);
    }
    // The query goes along; the page served by id is the one served by name.
    const paged = await server.api('GET', '/repos/acme/widgets/issues/1/comments?per_page=1&page=2', { token: bob });
    assert.equal(paged.status, 301);
    assert.equal(paged.headers.get('location'), `${server.apiUrl}/repositories/${id}/issues/1/comments?per_page=1&page=2`);
    const byId = await server.api('GET', `/repositories/${id}/issues/1`, { token: bob });
    assert.deepEqual(byId.body, (await server.api('GET', '/repos/acme/gizmos/issues/1', { token: bob })).body);
    assert.equal((await server.api('HEAD', `/repositories/${id}/issues/1`, { token: bob })).status, 200);
  });

  test('an id of no repository, or no id, is a 404 with the platform\'s body; the twins are not documented', async () => {
    for (const given of ['999999', '0', 'abc', '1e3', '-1', '2147483648', '99999999999', '99999999999999999999']) {
      const answer = await server.api('GET', `/repositories/${given}/issues/1`, { token: bob });
      assert.equal(answer.status, 404, `${given}: ${answer.text}`);
      assert.equal(answer.body.message, 'Not Found');
      assert.equal(typeof answer.body.documentation_url, 'string');
    }
    // A private repository's id tells an outsider nothing more than its name does.
    const hidden = (await server.admin('POST', '/repos', { owner: 'acme', name: 'hidden', visibility: 'private' })).id;
    await server.admin('POST', '/users', { login: 'olga' });
    const olga = await classicToken(server, 'olga', ['repo']);
    for (const path of ['/issues/1', '/subscription', '/issue-types']) {
      assert.equal((await server.api('GET', `/repositories/${hidden}${path}`, { token: olga })).status, (await server.api('GET', `/repos/acme/hidden${path}`, { token: olga })).status, path);
    }
    const document = await fetch(`${server.url}/openapi.json`).then((r) => r.json()) as { paths: Record<string, unknown> };
    assert.deepEqual(Object.keys(document.paths).filter((path) => path.startsWith('/repositories/')), ['/repositories/{repository_id}']);
  });
});
