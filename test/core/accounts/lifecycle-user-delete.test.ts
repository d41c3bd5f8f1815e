// A user deleted on the operator surface (spec/admin-api.md "Lifecycle"): the user, their
// repositories (git data included), memberships, collaborator grants, tokens of every kind,
// notification threads and subscriptions, migrations and their archive files go in one transaction;
// every credential of theirs answers 401 on its next request. Issues and comments they wrote elsewhere
// stay, shown as the platform's `ghost` user; the sole owner of an organization is refused (422).
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { classicToken, createApp, everyUserToken } from '../../helpers/credentials.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

let database: TestDatabase;
let server: TestServer;
let tokens: Record<string, string>;
let bob: string;

before(async () => {
  database = await createTestDatabase();
  server = await startServer({}, { database });
  for (const login of ['alice', 'bob', 'carol']) await server.admin('POST', '/users', { login });
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['bob', 'alice'], members: ['carol'] });
  await server.admin('POST', '/orgs', { login: 'solo', owners: ['carol'] });
  await server.admin('POST', '/orgs/acme/teams', { slug: 'devs', members: ['alice'] });
  await server.admin('POST', '/repos', { owner: 'alice', name: 'mine', visibility: 'private', init_git: true });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'shared' });
  await server.admin('PUT', '/repos/acme/shared/collaborators/alice', { permission: 'push' });
  await server.admin('POST', '/repos/alice/mine/issues', { author: 'alice', title: 'Mine' });
  await server.admin('POST', '/repos/acme/shared/issues', { author: 'alice', title: 'Hers', body: 'hey @bob' });
  await server.admin('POST', '/repos/acme/shared/issues/1/comments', { author: 'alice', body: 'A comment of hers' });
  await server.admin('POST', '/repos/acme/shared/issues', { author: 'bob', title: 'For alice', body: 'hey @alice' });
  const app = await createApp(server, 'helper', { metadata: 'read' });
  tokens = await everyUserToken(server, app, 'alice');
  bob = await classicToken(server, 'bob', ['repo', 'notifications']);
  const migration = await server.api('POST', '/user/migrations', { token: tokens.classic, body: { repositories: ['mine'] } });
  assert.equal(migration.status, 201, migration.text);
  await server.drain();
});
after(async () => {
  await server.close();
  await database.drop();
});

let aliceRowId = 0;
const aliceId = () => aliceRowId;

/** How many rows of each kind hang off the user (by id). */
async function rowsOf(id: number): Promise<Record<string, number>> {
  const db = server.server.ctx.db.kysely;
  if (!id) id = aliceRowId = (await db.selectFrom('users').select('id').where('login', '=', 'alice').executeTakeFirstOrThrow()).id;
  const count = async (table: 'users' | 'repositories' | 'org_memberships' | 'team_members' | 'repository_collaborators' | 'tokens' | 'notification_threads' | 'user_migrations', column: string) =>
    Number((await db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).where(column as never, '=', id as never).executeTakeFirstOrThrow()).n);
  return {
    id,
    users: await count('users', 'id'),
    repositories: await count('repositories', 'owner_id'),
    org_memberships: await count('org_memberships', 'user_id'),
    team_members: await count('team_members', 'user_id'),
    repository_collaborators: await count('repository_collaborators', 'user_id'),
    tokens: await count('tokens', 'user_id'),
    notification_threads: await count('notification_threads', 'user_id'),
    user_migrations: await count('user_migrations', 'owner_id'),
  };
}

const archives = () => join(database.dataDir, 'migration-archives');
const archiveFiles = () => (existsSync(archives()) ? readdirSync(archives(), { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.tar.gz')) : []);

describe('deleting a user', () => {
  test('the sole owner of an organization is refused with 422, and nothing changes', async () => {
    const refused = await server.adminRaw('DELETE', '/users/carol');
    assert.equal(refused.status, 422, refused.text);
    assert.match(refused.text, /solo/);
    assert.equal((await server.api('GET', '/users/carol')).status, 200);
  });

  test('unknown users and organizations are 404', async () => {
    assert.equal((await server.adminRaw('DELETE', '/users/nobody')).status, 404);
    assert.equal((await server.adminRaw('DELETE', '/users/acme')).status, 404);
  });

  test('the user and everything of theirs go; their credentials answer 401; their writing stays as ghost', async () => {
    for (const token of Object.values(tokens)) assert.equal((await server.api('GET', '/user', { token })).status, 200);
    assert.equal(archiveFiles().length, 1, 'the migration archive was written');
    const before = await rowsOf(aliceId());
    for (const [table, count] of Object.entries(before)) assert.ok(count > 0, `${table} has rows of alice before`);
    const gitDirs = readdirSync(join(database.dataDir, 'git'));
    assert.equal(gitDirs.length, 1);

    const deleted = await server.adminRaw('DELETE', '/users/alice');
    assert.equal(deleted.status, 204, deleted.text);

    for (const [kind, token] of Object.entries(tokens)) {
      const refused = await server.api('GET', '/user', { token });
      assert.equal(refused.status, 401, `${kind}: ${refused.text}`);
      assert.equal(refused.body.message, 'Bad credentials');
    }
    assert.equal((await server.api('GET', '/users/alice')).status, 404);
    assert.equal((await server.api('GET', '/repos/alice/mine', { token: bob })).status, 404);
    assert.deepEqual(readdirSync(join(database.dataDir, 'git')), [], 'the git data of their repositories is removed');
    await server.drain(); // the user.deleted activity: user-migrations removes the archives of the migrations that went
    assert.deepEqual(archiveFiles(), [], 'the migration archive is removed');
    for (const [table, count] of Object.entries(await rowsOf(before.id!))) if (table !== 'id') assert.equal(count, 0, `${table} keeps no row of alice`);

    // What they wrote on someone else's repository stays, written by ghost.
    const issue = await server.api('GET', '/repos/acme/shared/issues/1', { token: bob });
    assert.equal(issue.status, 200, issue.text);
    assert.equal(issue.body.user.login, 'ghost');
    const comments = await server.api('GET', '/repos/acme/shared/issues/1/comments', { token: bob });
    assert.equal(comments.body[0].user.login, 'ghost');
    // Others' credentials keep working; the login is free again.
    assert.equal((await server.api('GET', '/user', { token: bob })).status, 200);
    await server.admin('POST', '/users', { login: 'alice' });
    assert.equal((await server.api('GET', '/user', { token: tokens.classic })).status, 401);
    // Deleting again: 404.
    await server.admin('DELETE', '/users/alice');
    assert.equal((await server.adminRaw('DELETE', '/users/alice')).status, 404);
  });
});
