// A user's permission on a repository (issue 39, People): GET /repos/{owner}/{repo}/collaborators/
// {username}/permission, the check a bot makes before it acts. Every source of access counts, the
// strongest wins (organization owner, base permission, team, direct collaborator, visibility), named
// as the platform names it: the legacy `permission` (maintain → write, triage → read, `none`), the
// `role_name`, and the user as a collaborator. Then who may ask: a reader with push access, an
// installation with `metadata: read`; what a caller may not see is a 404.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { install, mintInstallationToken } from '../../helpers/app-credentials.ts';
import { classicToken, createApp, fineGrainedToken } from '../../helpers/credentials.ts';

let server: TestServer;
/** mona owns acme: classic tokens with `repo`; olga has no relation to it. */
let mona: string;
let olga: string;
let bot: string;

before(async () => {
  server = await startServer();
  for (const login of ['mona', 'bob', 'sam', 'tina', 'carl', 'pat', 'tom', 'mia', 'olga']) await server.admin('POST', '/users', { login });
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'], members: ['bob'], security_managers: ['sam'] });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets', visibility: 'private' });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'gadgets' });
  await server.admin('POST', '/orgs/acme/teams', { slug: 'keepers' });
  await server.admin('PUT', '/orgs/acme/teams/keepers/members/tina', {});
  await server.admin('PUT', '/orgs/acme/teams/keepers/repos/acme/widgets', { permission: 'maintain' });
  for (const [login, permission] of [['carl', 'pull'], ['pat', 'triage'], ['tom', 'push'], ['mia', 'admin']] as const) {
    await server.admin('PUT', `/repos/acme/widgets/collaborators/${login}`, { permission });
  }
  // bob is a member (write) and a collaborator with triage: the stronger counts.
  await server.admin('PUT', '/repos/acme/widgets/collaborators/bob', { permission: 'triage' });
  mona = await classicToken(server, 'mona', ['repo']);
  olga = await classicToken(server, 'olga', ['repo']);
  const app = await createApp(server, 'gatekeeper', { metadata: 'read' });
  bot = await mintInstallationToken(server, app, await install(server, app, 'acme'));
});

after(() => server?.close());

const permissionOf = (repository: string, login: string, token = mona) =>
  server.api('GET', `/repos/acme/${repository}/collaborators/${login}/permission`, { token });

describe('a user\'s permission on a repository', () => {
  test('every source of access, named as the platform names it', async () => {
    const cases: [login: string, permission: string, role: string][] = [
      ['mona', 'admin', 'admin'], //  organization owner
      ['bob', 'write', 'write'], //   the organization's base permission, stronger than his triage
      ['sam', 'read', 'read'], //     security manager
      ['tina', 'write', 'maintain'], // through a team: maintain is the legacy write
      ['carl', 'read', 'read'],
      ['pat', 'read', 'triage'], //   triage is the legacy read
      ['tom', 'write', 'write'],
      ['mia', 'admin', 'admin'],
      ['olga', 'none', 'none'], //    no relation to a private repository
    ];
    const got = [];
    for (const [login] of cases) {
      const response = await permissionOf('widgets', login);
      assert.equal(response.status, 200, `${login}: ${response.text}`);
      got.push([login, response.body.permission, response.body.role_name]);
    }
    assert.deepEqual(got, cases);
  });

  test('the user as a collaborator: a simple user with the five levels and the role name', async () => {
    const { body } = await permissionOf('widgets', 'TINA');
    assert.deepEqual(Object.keys(body), ['permission', 'role_name', 'user']);
    assert.equal(body.user.login, 'tina');
    assert.equal(body.user.url, `${server.apiUrl}/users/tina`);
    assert.equal(body.user.type, 'User');
    assert.deepEqual(body.user.permissions, { pull: true, triage: true, push: true, maintain: true, admin: false });
    assert.equal(body.user.role_name, 'maintain');
    const none = (await permissionOf('widgets', 'olga')).body.user;
    assert.deepEqual(none.permissions, { pull: false, triage: false, push: false, maintain: false, admin: false });
    assert.equal(none.role_name, 'none');
    const triage = (await permissionOf('widgets', 'pat')).body.user.permissions;
    assert.deepEqual(triage, { pull: true, triage: true, push: false, maintain: false, admin: false });
  });

  test('on a public repository anyone reads: a stranger is `read`, as on the platform', async () => {
    const { status, body } = await permissionOf('gadgets', 'olga');
    assert.equal(status, 200);
    assert.deepEqual([body.permission, body.role_name], ['read', 'read']);
    assert.deepEqual((await permissionOf('gadgets', 'bob')).body.role_name, 'write');
  });

  test('a change of access shows at once', async () => {
    await server.admin('PUT', '/repos/acme/widgets/collaborators/olga', { permission: 'maintain' });
    assert.deepEqual((await permissionOf('widgets', 'olga')).body.role_name, 'maintain');
    await server.admin('DELETE', '/repos/acme/widgets/collaborators/olga');
    assert.deepEqual((await permissionOf('widgets', 'olga')).body.permission, 'none');
  });

  test('an unknown user, or an organization, is a 404', async () => {
    assert.equal((await permissionOf('widgets', 'nobody')).status, 404);
    assert.equal((await permissionOf('widgets', 'acme')).status, 404);
  });
});

describe('who may ask', () => {
  test('an installation with metadata: read asks on its repositories, the public one too', async () => {
    const response = await permissionOf('widgets', 'tom', bot);
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.permission, 'write');
    assert.equal(response.headers.get('x-accepted-vendor-permissions'), 'metadata=read');
    assert.equal((await permissionOf('gadgets', 'olga', bot)).status, 200);
  });

  test('a private repository the caller does not see is a 404; a classic token needs repo there', async () => {
    const missing = await permissionOf('widgets', 'mona', olga);
    assert.equal(missing.status, 404);
    const noScope = await classicToken(server, 'mona', []);
    assert.equal((await permissionOf('widgets', 'bob', noScope)).status, 404);
    assert.equal((await permissionOf('gadgets', 'bob', noScope)).status, 200, 'a public one needs no scope');
    assert.equal((await permissionOf('nowhere', 'bob')).status, 404);
  });

  test('a user needs push access: a reader is refused with the platform\'s 403', async () => {
    const carl = await classicToken(server, 'carl', ['repo']);
    const refused = await permissionOf('widgets', 'mona', carl);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.message, 'Must have push access to view collaborator permission.');
    assert.equal((await permissionOf('gadgets', 'mona', olga)).status, 403, 'a stranger on a public repository');
    const tom = await classicToken(server, 'tom', ['repo']);
    assert.equal((await permissionOf('widgets', 'carl', tom)).body.role_name, 'read', 'a collaborator with push asks');
  });

  test('no credential is a 401; a fine-grained token needs metadata and to reach the repository', async () => {
    assert.equal((await server.api('GET', '/repos/acme/gadgets/collaborators/bob/permission')).status, 401);
    const fine = await fineGrainedToken(server, 'mona', 'acme', { metadata: 'read' });
    assert.equal((await permissionOf('widgets', 'bob', fine)).body.permission, 'write');
    await server.admin('POST', '/orgs', { login: 'globex', owners: ['mona'] });
    const elsewhere = await fineGrainedToken(server, 'mona', 'globex', { metadata: 'read' });
    assert.equal((await permissionOf('widgets', 'bob', elsewhere)).status, 404);
    assert.equal((await permissionOf('gadgets', 'bob', elsewhere)).status, 403, 'it sees a public repository of acme, not its people');
  });

  test('HEAD answers as GET, without a body', async () => {
    const head = await server.api('HEAD', '/repos/acme/widgets/collaborators/bob/permission', { token: mona });
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
  });
});
