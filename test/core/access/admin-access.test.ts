// The operator rows that change repository access (spec/admin-api.md): organization membership,
// team membership, a team's repositories, direct collaborators and a repository's visibility. Each
// answers in the platform's shape; unknown references are 404, a bad role or permission 422; and the
// access they give or take is what the public API then sees.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AREAS } from '../../../src/app.ts';
import { loadSeed } from '../../../src/admin/seed.ts';
import { classicToken } from '../../helpers/credentials.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

let server: TestServer;
const tokens: Record<string, string> = {};

async function person(login: string): Promise<string> {
  await server.admin('POST', '/users', { login });
  tokens[login] = await classicToken(server, login, ['repo', 'notifications']);
  return login;
}

/**
 * What a user may do with a repository, as the public API shows it: `none` (404), `read` (it lists
 * the repository's notifications, but is refused its code security configuration, which needs an
 * administrator) or `admin`.
 */
async function access(login: string, fullName: string): Promise<'none' | 'read' | 'admin'> {
  const listed = await server.api('GET', `/repos/${fullName}/notifications`, { token: tokens[login] });
  if (listed.status === 404) return 'none';
  assert.equal(listed.status, 200, listed.text);
  const configuration = await server.api('GET', `/repos/${fullName}/code-security-configuration`, { token: tokens[login] });
  assert.ok([204, 403].includes(configuration.status), configuration.text);
  return configuration.status === 204 ? 'admin' : 'read';
}

function assertValidation(response: { status: number; body: any }, field?: string) {
  assert.equal(response.status, 422, JSON.stringify(response.body));
  assert.equal(response.body.message, 'Validation Failed');
  assert.ok(Array.isArray(response.body.errors));
  if (field) assert.equal(response.body.errors[0].field, field, JSON.stringify(response.body.errors));
  assert.equal(response.body.status, '422');
}

function assertNotFound(response: { status: number; body: any }) {
  assert.equal(response.status, 404, JSON.stringify(response.body));
  assert.equal(response.body.status, '404');
  assert.equal(typeof response.body.documentation_url, 'string');
}

before(async () => {
  server = await startServer();
  for (const login of ['owner', 'alice', 'bob', 'carol', 'dave']) await person(login);
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['owner'] });
  await server.admin('POST', '/orgs', { login: 'other', owners: ['owner'] });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'vault', visibility: 'private' });
  await server.admin('POST', '/repos', { owner: 'other', name: 'elsewhere', visibility: 'private' });
  await server.admin('POST', '/repos', { owner: 'owner', name: 'personal', visibility: 'private' });
});
after(() => server.close());

describe('organization membership', () => {
  test('PUT adds or changes the role and answers the membership; DELETE takes it all away', async () => {
    assert.equal(await access('alice', 'acme/vault'), 'none');
    const added = await server.adminRaw('PUT', '/orgs/acme/members/alice', { role: 'member' });
    assert.equal(added.status, 200, added.text);
    assert.equal(added.body.state, 'active');
    assert.equal(added.body.role, 'member');
    assert.equal(added.body.user.login, 'alice');
    assert.equal(added.body.organization.login, 'acme');
    assert.match(added.body.url, /\/orgs\/acme\/memberships\/alice$/);
    assert.match(added.body.organization_url, /\/orgs\/acme$/);
    assert.equal(await access('alice', 'acme/vault'), 'read');

    const promoted = await server.admin('PUT', '/orgs/acme/members/alice', { role: 'owner' });
    assert.equal(promoted.role, 'admin');
    assert.equal(await access('alice', 'acme/vault'), 'admin');
    const demoted = await server.admin('PUT', '/orgs/acme/members/alice', { role: 'member' });
    assert.equal(demoted.role, 'member');
    assert.equal(await access('alice', 'acme/vault'), 'read');

    // Leaving the organization also leaves its teams and the direct access to its repositories.
    await server.admin('POST', '/orgs/acme/teams', { slug: 'leavers', members: ['alice'] });
    await server.admin('PUT', '/repos/acme/vault/collaborators/alice', { permission: 'pull' });
    await server.admin('PUT', '/repos/other/elsewhere/collaborators/alice', { permission: 'pull' });
    const removed = await server.adminRaw('DELETE', '/orgs/acme/members/alice');
    assert.equal(removed.status, 204);
    assert.equal(removed.text, '');
    assert.equal(await access('alice', 'acme/vault'), 'none');
    assert.equal(await access('alice', 'other/elsewhere'), 'read', 'access from another organization stays');
    const db = server.server.ctx.db.kysely;
    const alice = await db.selectFrom('users').select('id').where('login_lower', '=', 'alice').executeTakeFirstOrThrow();
    assert.deepEqual(await db.selectFrom('team_members').select('team_id').where('user_id', '=', alice.id).execute(), []);
    assert.deepEqual(await db.selectFrom('org_memberships').select('role').where('user_id', '=', alice.id).execute(), []);
    // Removing again is still a 204.
    assert.equal((await server.adminRaw('DELETE', '/orgs/acme/members/alice')).status, 204);
  });

  test('security and billing managers are roles beside the membership', async () => {
    await server.admin('PUT', '/orgs/acme/members/dave', { role: 'member' });
    const manager = await server.admin('PUT', '/orgs/acme/members/dave', { role: 'security_manager' });
    assert.equal(manager.role, 'member');
    const db = server.server.ctx.db.kysely;
    const roles = await db
      .selectFrom('org_memberships')
      .innerJoin('users', 'users.id', 'org_memberships.user_id')
      .select('role')
      .where('users.login_lower', '=', 'dave')
      .orderBy('role')
      .execute();
    assert.deepEqual(roles.map((r) => r.role), ['member', 'security_manager']);
    assert.equal((await server.admin('PUT', '/orgs/acme/members/carol', { role: 'billing_manager' })).role, 'billing_manager');
    assert.equal(await access('carol', 'acme/vault'), 'none', 'a billing manager reads no repository');
  });

  test('unknown references are 404, a bad role 422', async () => {
    assertNotFound(await server.adminRaw('PUT', '/orgs/nope/members/alice', { role: 'member' }));
    assertNotFound(await server.adminRaw('PUT', '/orgs/acme/members/ghost', { role: 'member' }));
    assertNotFound(await server.adminRaw('PUT', '/orgs/owner/members/alice', { role: 'member' }), );
    assertNotFound(await server.adminRaw('PUT', '/orgs/acme/members/other', { role: 'member' }));
    assertNotFound(await server.adminRaw('DELETE', '/orgs/nope/members/alice'));
    assertNotFound(await server.adminRaw('DELETE', '/orgs/acme/members/ghost'));
    assertValidation(await server.adminRaw('PUT', '/orgs/acme/members/alice', { role: 'wizard' }));
    assertValidation(await server.adminRaw('PUT', '/orgs/acme/members/alice', { role: 'admin' }));
    const defaulted = await server.adminRaw('PUT', '/orgs/acme/members/bob', {});
    assert.equal(defaulted.status, 200);
    assert.equal(defaulted.body.role, 'member', 'the role defaults to member');
    assert.equal((await server.adminRaw('DELETE', '/orgs/acme/members/bob')).status, 204);
  });
});

describe('teams', () => {
  test('team members and team repositories give access; their removal takes it', async () => {
    const created = await server.adminRaw('POST', '/orgs/acme/teams', { slug: 'readers', repositories: [{ name: 'vault', permission: 'pull' }] });
    assert.equal(created.status, 201, created.text);
    assert.equal(await access('bob', 'acme/vault'), 'none');

    const joined = await server.adminRaw('PUT', '/orgs/acme/teams/readers/members/bob');
    assert.equal(joined.status, 200, joined.text);
    assert.deepEqual({ role: joined.body.role, state: joined.body.state }, { role: 'member', state: 'active' });
    assert.match(joined.body.url, /\/orgs\/acme\/teams\/readers\/memberships\/bob$/);
    assert.equal(await access('bob', 'acme/vault'), 'read');

    const granted = await server.adminRaw('PUT', '/orgs/acme/teams/readers/repos/acme/vault', { permission: 'admin' });
    assert.equal(granted.status, 200, granted.text);
    assert.equal(granted.body.full_name, 'acme/vault');
    assert.equal(granted.body.role_name, 'admin');
    assert.deepEqual(granted.body.permissions, { admin: true, maintain: true, push: true, triage: true, pull: true });
    assert.equal(await access('bob', 'acme/vault'), 'admin');
    const lowered = await server.admin('PUT', '/orgs/acme/teams/readers/repos/acme/vault', { permission: 'maintain' });
    assert.equal(lowered.role_name, 'maintain');
    assert.deepEqual(lowered.permissions, { admin: false, maintain: true, push: true, triage: true, pull: true });
    assert.equal(await access('bob', 'acme/vault'), 'read');

    assert.equal((await server.adminRaw('DELETE', '/orgs/acme/teams/readers/repos/acme/vault')).status, 204);
    assert.equal(await access('bob', 'acme/vault'), 'none');
    await server.admin('PUT', '/orgs/acme/teams/readers/repos/acme/vault', {});
    assert.equal(await access('bob', 'acme/vault'), 'read');
    const left = await server.adminRaw('DELETE', '/orgs/acme/teams/readers/members/bob');
    assert.equal(left.status, 204);
    assert.equal(await access('bob', 'acme/vault'), 'none');
    assert.equal((await server.adminRaw('DELETE', '/orgs/acme/teams/readers/members/bob')).status, 204);
  });

  test('unknown references are 404; a bad permission or a repository of another owner 422', async () => {
    await server.admin('POST', '/orgs/acme/teams', { slug: 'strict' });
    assertNotFound(await server.adminRaw('PUT', '/orgs/acme/teams/nope/members/bob'));
    assertNotFound(await server.adminRaw('PUT', '/orgs/nope/teams/strict/members/bob'));
    assertNotFound(await server.adminRaw('PUT', '/orgs/acme/teams/strict/members/ghost'));
    assertNotFound(await server.adminRaw('DELETE', '/orgs/acme/teams/nope/members/bob'));
    assertNotFound(await server.adminRaw('PUT', '/orgs/acme/teams/strict/repos/acme/nope', { permission: 'pull' }));
    assertNotFound(await server.adminRaw('PUT', '/orgs/acme/teams/nope/repos/acme/vault', { permission: 'pull' }));
    assertNotFound(await server.adminRaw('DELETE', '/orgs/acme/teams/strict/repos/acme/nope'));
    assertValidation(await server.adminRaw('PUT', '/orgs/acme/teams/strict/repos/acme/vault', { permission: 'write' }));
    assertValidation(await server.adminRaw('PUT', '/orgs/acme/teams/strict/repos/other/elsewhere', { permission: 'pull' }), 'repository');
    assertNotFound(await server.adminRaw('POST', '/orgs/acme/teams', { slug: 'broken', repositories: [{ name: 'nope' }] }));
    assertValidation(await server.adminRaw('POST', '/orgs/acme/teams', { slug: 'broken', repositories: [{ name: 'vault', permission: 'all' }] }));
    assertValidation(await server.adminRaw('POST', '/orgs/acme/teams', { slug: 'broken', repositories: [{ name: 'other/elsewhere' }] }), 'repositories');
    // Nothing of a refused create is left behind.
    assert.equal((await server.adminRaw('POST', '/orgs/acme/teams', { slug: 'broken' })).status, 201);
  });
});

describe('collaborators', () => {
  test('PUT gives direct access at a level, DELETE takes it; the answer is the permission', async () => {
    assert.equal(await access('carol', 'acme/vault'), 'none');
    const pull = await server.adminRaw('PUT', '/repos/acme/vault/collaborators/carol', { permission: 'pull' });
    assert.equal(pull.status, 200, pull.text);
    assert.deepEqual({ permission: pull.body.permission, role_name: pull.body.role_name, login: pull.body.user.login }, { permission: 'read', role_name: 'read', login: 'carol' });
    assert.equal(await access('carol', 'acme/vault'), 'read');
    const levels: Record<string, [string, string, 'read' | 'admin']> = {
      triage: ['read', 'triage', 'read'],
      push: ['write', 'write', 'read'],
      maintain: ['write', 'maintain', 'read'],
      admin: ['admin', 'admin', 'admin'],
    };
    for (const [permission, [legacy, role, seen]] of Object.entries(levels)) {
      const answer = await server.admin('PUT', '/repos/acme/vault/collaborators/carol', { permission });
      assert.deepEqual([answer.permission, answer.role_name], [legacy, role], permission);
      assert.equal(await access('carol', 'acme/vault'), seen, permission);
    }
    // A user's own repository, too.
    await server.admin('PUT', '/repos/owner/personal/collaborators/carol', {});
    assert.equal(await access('carol', 'owner/personal'), 'read');

    const removed = await server.adminRaw('DELETE', '/repos/acme/vault/collaborators/carol');
    assert.equal(removed.status, 204);
    assert.equal(await access('carol', 'acme/vault'), 'none');
    assert.equal((await server.adminRaw('DELETE', '/repos/acme/vault/collaborators/carol')).status, 204);
  });

  test('unknown references are 404, a bad permission or the owner 422', async () => {
    assertNotFound(await server.adminRaw('PUT', '/repos/acme/nope/collaborators/carol', { permission: 'pull' }));
    assertNotFound(await server.adminRaw('PUT', '/repos/acme/vault/collaborators/ghost', { permission: 'pull' }));
    assertNotFound(await server.adminRaw('PUT', '/repos/acme/vault/collaborators/other', { permission: 'pull' }));
    assertNotFound(await server.adminRaw('DELETE', '/repos/acme/nope/collaborators/carol'));
    assertNotFound(await server.adminRaw('DELETE', '/repos/acme/vault/collaborators/ghost'));
    assertValidation(await server.adminRaw('PUT', '/repos/acme/vault/collaborators/carol', { permission: 'write' }));
    assertValidation(await server.adminRaw('PUT', '/repos/owner/personal/collaborators/owner', { permission: 'pull' }), 'collaborator');
  });
});

describe('repositories', () => {
  test('PATCH changes visibility, description and archived, and answers the repository', async () => {
    await server.admin('POST', '/repos', { owner: 'acme', name: 'shown' });
    assert.equal(await access('bob', 'acme/shown'), 'read');
    const hidden = await server.adminRaw('PATCH', '/repos/acme/shown', { visibility: 'private', description: 'Now private' });
    assert.equal(hidden.status, 200, hidden.text);
    assert.equal(hidden.body.full_name, 'acme/shown');
    assert.equal(hidden.body.private, true);
    assert.equal(hidden.body.visibility, 'private');
    assert.equal(hidden.body.description, 'Now private');
    assert.equal(await access('bob', 'acme/shown'), 'none');
    const archived = await server.admin('PATCH', '/repos/acme/shown', { archived: true, visibility: 'internal' });
    assert.equal(archived.archived, true);
    assert.equal(archived.visibility, 'internal');
    assert.equal(archived.description, 'Now private', 'what is not sent stays');
    assert.equal((await server.admin('GET', '/repos/acme/shown')).archived, true);
    const shown = await server.admin('PATCH', '/repos/acme/shown', { visibility: 'public', archived: false, description: null });
    assert.deepEqual([shown.private, shown.archived, shown.description], [false, false, null]);
    assert.equal(await access('bob', 'acme/shown'), 'read');
  });

  test('unknown repositories are 404; bad values 422', async () => {
    assertNotFound(await server.adminRaw('PATCH', '/repos/acme/nope', { visibility: 'private' }));
    assertNotFound(await server.adminRaw('PATCH', '/repos/ghost/vault', { visibility: 'private' }));
    assertValidation(await server.adminRaw('PATCH', '/repos/acme/vault', { visibility: 'secret' }));
    assertValidation(await server.adminRaw('PATCH', '/repos/acme/vault', { archived: 'yes' }));
    assertValidation(await server.adminRaw('PATCH', '/repos/owner/personal', { visibility: 'internal' }), 'visibility');
  });
});

describe('seed files', () => {
  test('`collaborators`, and `teams` with their `repositories`, load idempotently', async () => {
    await person('seeded');
    const seed = {
      repos: [{ owner: 'acme', name: 'seeded-a', visibility: 'private' }, { owner: 'acme', name: 'seeded-b', visibility: 'private' }],
      teams: [{ org: 'acme', slug: 'seeded-team', members: ['seeded'], repositories: [{ name: 'seeded-a', permission: 'pull' }] }],
      collaborators: [{ repository: 'acme/seeded-b', login: 'seeded', permission: 'admin' }],
    };
    const first = await loadSeed(server.server.ctx, AREAS, seed);
    assert.deepEqual([first.created.teams, first.created.collaborators], [1, 1]);
    await loadSeed(server.server.ctx, AREAS, seed);
    assert.equal(await access('seeded', 'acme/seeded-a'), 'read');
    assert.equal(await access('seeded', 'acme/seeded-b'), 'admin');
  });
});
