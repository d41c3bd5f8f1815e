// Organization membership checks (issue 39, People): GET /orgs/{org}/members/{username} answers a
// requester who is a member of the organization (or an installation on it) 204 for a member and 404
// for anyone else, and leads every other requester to /orgs/{org}/public_members/{username} (302),
// as the platform does. codehost keeps no public memberships (docs/permissions.md): that check is a
// 404 to everyone. An installation needs `members: read`.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { install, mintInstallationToken } from '../../helpers/app-credentials.ts';
import { appUserToken, classicToken, createApp, fineGrainedToken } from '../../helpers/credentials.ts';

let server: TestServer;
/** Classic tokens with `read:org`: mona owns acme, bob is a member, sam its security manager; bill its billing manager, olga a stranger. */
let mona: string;
let bob: string;
let olga: string;
let bill: string;
let reader: string;
let blind: string;

before(async () => {
  server = await startServer();
  for (const login of ['mona', 'bob', 'sam', 'bill', 'olga', 'carl']) await server.admin('POST', '/users', { login });
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'], members: ['bob'], security_managers: ['sam'] });
  await server.admin('PUT', '/orgs/acme/members/bill', { role: 'billing_manager' });
  await server.admin('POST', '/orgs', { login: 'globex', owners: ['olga'] });
  // carl reaches a repository of acme as a collaborator: no membership.
  await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
  await server.admin('PUT', '/repos/acme/widgets/collaborators/carl', { permission: 'push' });
  [mona, bob, olga, bill] = await Promise.all(['mona', 'bob', 'olga', 'bill'].map((login) => classicToken(server, login, ['read:org'])));
  const members = await createApp(server, 'roster', { members: 'read' });
  reader = await mintInstallationToken(server, members, await install(server, members, 'acme'));
  const metadata = await createApp(server, 'blind', { metadata: 'read' });
  blind = await mintInstallationToken(server, metadata, await install(server, metadata, 'acme'));
});

after(() => server?.close());

const check = (path: string, token?: string) => server.api('GET', path, token ? { token } : {});

describe('GET /orgs/{org}/members/{username}', () => {
  test('to a member: 204 for owners, members and security managers; 404 for the others', async () => {
    const got: Record<string, number> = {};
    for (const login of ['mona', 'bob', 'sam', 'bill', 'carl', 'olga', 'nobody', 'globex']) got[login] = (await check(`/orgs/acme/members/${login}`, bob)).status;
    assert.deepEqual(got, { mona: 204, bob: 204, sam: 204, bill: 404, carl: 404, olga: 404, nobody: 404, globex: 404 });
    const member = await check('/orgs/ACME/members/MONA', mona);
    assert.equal(member.status, 204);
    assert.equal(member.text, '');
    assert.equal(member.headers.get('content-length'), null);
  });

  test('an installation on the organization with members: read is answered as a member', async () => {
    const yes = await check('/orgs/acme/members/bob', reader);
    assert.equal(yes.status, 204);
    assert.equal(yes.headers.get('x-accepted-vendor-permissions'), 'members=read');
    assert.equal((await check('/orgs/acme/members/olga', reader)).status, 404);
    // On another organization it is an outsider there.
    assert.equal((await check('/orgs/globex/members/olga', reader)).status, 302);
  });

  test('an installation without members: read is refused (403), as a fine-grained token without it', async () => {
    const refused = await check('/orgs/acme/members/bob', blind);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.message, 'Resource not accessible by integration');
    const fine = await fineGrainedToken(server, 'mona', 'acme', { metadata: 'read' });
    assert.equal((await check('/orgs/acme/members/bob', fine)).status, 403);
    const allowed = await fineGrainedToken(server, 'mona', 'acme', { members: 'read' });
    assert.equal((await check('/orgs/acme/members/bob', allowed)).status, 204);
  });

  test('a requester who is not a member is led to the public membership: 302 with Location, no body', async () => {
    for (const [who, token] of [['a stranger', olga], ['a billing manager', bill], ['no credential', undefined]] as const) {
      const redirected = await check('/orgs/acme/members/bob', token);
      assert.equal(redirected.status, 302, who);
      assert.equal(redirected.headers.get('location'), `${server.apiUrl}/orgs/acme/public_members/bob`, who);
      assert.equal(redirected.text, '', who);
    }
    // Whether the user exists is not told either.
    assert.equal((await check('/orgs/acme/members/nobody', olga)).headers.get('location'), `${server.apiUrl}/orgs/acme/public_members/nobody`);
    const collaborator = await classicToken(server, 'carl', ['repo', 'read:org']);
    assert.equal((await check('/orgs/acme/members/bob', collaborator)).status, 302, 'a collaborator is no member');
  });

  test('a member\'s classic token needs read:org to see private memberships, else it is led as an outsider', async () => {
    const bare = await classicToken(server, 'bob', []);
    const response = await check('/orgs/acme/members/mona', bare);
    assert.equal(response.status, 302);
    assert.equal(response.headers.get('x-accepted-oauth-scopes'), '');
    const admin = await classicToken(server, 'bob', ['admin:org']);
    assert.equal((await check('/orgs/acme/members/mona', admin)).status, 204, 'admin:org implies read:org');
  });

  test('an app user token acts as its user where its app is installed', async () => {
    const app = await createApp(server, 'roster-user', { members: 'read' });
    await install(server, app, 'acme');
    const token = await appUserToken(server, app, 'bob');
    assert.equal((await check('/orgs/acme/members/mona', token)).status, 204);
    assert.equal((await check('/orgs/globex/members/olga', token)).status, 302, 'not installed on globex');
  });

  test('an unknown organization, or a user account, is a 404 to everyone', async () => {
    for (const token of [mona, olga, undefined]) {
      assert.equal((await check('/orgs/nowhere/members/bob', token)).status, 404);
      assert.equal((await check('/orgs/mona/members/mona', token)).status, 404);
    }
  });

  test('HEAD answers as GET, without a body', async () => {
    const head = await server.api('HEAD', '/orgs/acme/members/bob', { token: mona });
    assert.equal(head.status, 204);
    assert.equal(head.headers.get('content-length'), null);
    assert.equal((await server.api('HEAD', '/orgs/acme/members/bob', { token: olga })).status, 302);
  });
});

describe('GET /orgs/{org}/public_members/{username}', () => {
  test('codehost keeps every membership private: 404 to anyone, a member asking too', async () => {
    for (const token of [mona, bob, olga, reader, undefined]) {
      assert.equal((await check('/orgs/acme/public_members/bob', token)).status, 404);
    }
    assert.equal((await check('/orgs/nowhere/public_members/bob', mona)).status, 404);
  });

  test('an installation without members: read is refused (403)', async () => {
    assert.equal((await check('/orgs/acme/public_members/bob', blind)).status, 403);
  });
});
