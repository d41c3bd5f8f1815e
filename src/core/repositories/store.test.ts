// The visibility SQL of the repository store on a real database (SQLite, or PostgreSQL when
// DATABASE_URL is set), no server: who reads which repository (`readableBy` through `readersOf`), and
// which repositories a list shows for a filter and a credential's reach (`repositoryPage`,
// `privateOwnerIds`). One small world, many cases.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/database.ts';
import { openDatabase, type Db } from '../../db/index.ts';
import { migrateToLatest } from '../../db/migrate.ts';
import { sql } from 'kysely';
import { privateOwnerIds, repositoryPage, type PrivateReach, type RepositoryListFilter, type RepositoryListOrder } from './list-store.ts';
import { readableBy, readersOf } from '../access/index.ts';

let testDatabase: TestDatabase;
let db: Db;

/** Ids of the world, by name. */
const id: Record<string, number> = {};
/** The app's installation on `loner`, with `shared` selected. */
let installationId: number;

const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();

async function account(login: string, type: 'User' | 'Organization', enterprise?: string) {
  const row = await db.kysely.insertInto('users')
    .values({ login, login_lower: login, type, created_at: at(0), updated_at: at(0) } as never)
    .returning('id').executeTakeFirstOrThrow();
  id[login] = row.id;
  if (type === 'Organization') {
    await db.kysely.insertInto('organizations').values({ id: row.id, enterprise_id: enterprise ? id[enterprise]! : null } as never).execute();
  }
}

async function repository(name: string, owner: string, visibility: string, second: number, pushed: number | null) {
  const row = await db.kysely.insertInto('repositories')
    .values({
      owner_id: id[owner]!, name, name_lower: name.toLowerCase(), visibility,
      created_at: at(second), updated_at: at(60 - second), pushed_at: pushed === null ? null : at(pushed),
    } as never)
    .returning('id').executeTakeFirstOrThrow();
  id[name] = row.id;
}

before(async () => {
  testDatabase = await createTestDatabase();
  db = openDatabase({ databaseUrl: testDatabase.databaseUrl, sqlitePath: `${testDatabase.dataDir}/codehost.db` });
  await migrateToLatest(db);
  const k = db.kysely;
  for (const slug of ['ent', 'other-ent']) {
    const row = await k.insertInto('enterprises').values({ slug, slug_lower: slug, name: slug, created_at: at(0), updated_at: at(0) } as never).returning('id').executeTakeFirstOrThrow();
    id[slug] = row.id;
  }
  for (const login of ['alice', 'owner', 'member', 'secman', 'billing', 'collab', 'teamer', 'entmember', 'otherent', 'outsider']) await account(login, 'User');
  await account('org', 'Organization', 'ent');
  await account('sister', 'Organization', 'ent');
  await account('foreign', 'Organization', 'other-ent');
  await account('loner', 'Organization');
  await account('loner2', 'Organization');
  const role = (org: string, login: string, r: string) => ({ org_id: id[org]!, user_id: id[login]!, role: r });
  await k.insertInto('org_memberships').values([
    role('org', 'owner', 'owner'), role('org', 'member', 'member'), role('org', 'secman', 'security_manager'),
    role('org', 'billing', 'billing_manager'), role('sister', 'entmember', 'member'), role('foreign', 'otherent', 'member'),
    role('loner2', 'outsider', 'member'),
  ] as never).execute();
  // Created in this order (seconds 1..8); pushed_at in a different order, and missing for two.
  await repository('Pub', 'org', 'public', 1, 50);
  await repository('priv', 'org', 'private', 2, 10);
  await repository('int', 'org', 'internal', 3, null);
  await repository('mine', 'alice', 'private', 4, 20);
  await repository('alicepub', 'alice', 'public', 5, 30);
  await repository('lonerint', 'loner', 'internal', 6, null);
  await repository('shared', 'loner', 'private', 7, 40);
  await repository('teamed', 'loner', 'private', 8, 5);
  await k.insertInto('repository_collaborators').values({ repository_id: id.shared!, user_id: id.collab!, permission: 'pull', created_at: at(0) } as never).execute();
  const team = await k.insertInto('teams').values({ org_id: id.loner!, slug: 't', name: 't', created_at: at(0), updated_at: at(0) } as never).returning('id').executeTakeFirstOrThrow();
  await k.insertInto('team_members').values({ team_id: team.id, user_id: id.teamer! } as never).execute();
  await k.insertInto('team_repositories').values({ team_id: team.id, repository_id: id.teamed!, permission: 'pull' } as never).execute();
  const app = await k.insertInto('apps').values({ slug: 'a', name: 'a', owner_id: null, client_id: 'Iv1.a', client_secret_hash: 'x', public_key_pem: 'x', created_at: at(0), updated_at: at(0) } as never).returning('id').executeTakeFirstOrThrow();
  const installation = await k.insertInto('installations').values({ app_id: app.id, account_id: id.loner!, repository_selection: 'selected', created_at: at(0), updated_at: at(0) } as never).returning('id').executeTakeFirstOrThrow();
  installationId = installation.id;
  await k.insertInto('installation_repositories').values({ installation_id: installation.id, repository_id: id.shared! } as never).execute();
});

after(async () => {
  await db?.close();
  await testDatabase?.drop();
});

const USERS = ['alice', 'owner', 'member', 'secman', 'billing', 'collab', 'teamer', 'entmember', 'otherent', 'outsider'];

async function readers(repo: string): Promise<string[]> {
  const set = await readersOf(db.kysely, id[repo]!, USERS.map((login) => id[login]!));
  return USERS.filter((login) => set.has(id[login]!));
}

test('readableBy: public to all; private to the owner, organization roles, collaborators and teams; internal to the enterprise too', async () => {
  assert.deepEqual(await readers('Pub'), USERS);
  assert.deepEqual(await readers('alicepub'), USERS);
  // The billing manager's role reads no private or internal repository.
  assert.deepEqual(await readers('priv'), ['owner', 'member', 'secman']);
  assert.deepEqual(await readers('int'), ['owner', 'member', 'secman', 'entmember']);
  assert.deepEqual(await readers('mine'), ['alice']);
  // An organization without an enterprise: internal is its members' only.
  assert.deepEqual(await readers('lonerint'), []);
  assert.deepEqual(await readers('shared'), ['collab']);
  assert.deepEqual(await readers('teamed'), ['teamer']);
  // The organization itself owns its repositories.
  const orgReads = await readersOf(db.kysely, id.priv!, [id.org!, id.org!, id.sister!]);
  assert.deepEqual([...orgReads], [id.org]);
  assert.deepEqual([...(await readersOf(db.kysely, id.priv!, []))], []);
});

test('readableBy: the user as a value, as an expression (a reusable query\'s parameter) or as a column of the outer query reads alike', async () => {
  const member = id.member!;
  const ids = async (query: ReturnType<typeof sql<{ id: number }>>) => (await query.execute(db.kysely)).rows.map((row) => Number(row.id));
  const byValue = await ids(sql<{ id: number }>`select r.id from repositories r where ${readableBy(member, 'r.id')} order by r.id`);
  const byExpression = await ids(sql<{ id: number }>`select r.id from repositories r where ${readableBy(sql<number>`${member}`, 'r.id')} order by r.id`);
  const byColumn = await ids(sql<{ id: number }>`select r.id from repositories r inner join users u on u.id = ${member} where ${readableBy('u.id', 'r.id')} order by r.id`);
  assert.ok(byValue.includes(id.priv!) && !byValue.includes(id.mine!), String(byValue));
  assert.deepEqual(byExpression, byValue);
  assert.deepEqual(byColumn, byValue);
});

const BY_CREATED: RepositoryListOrder = { sort: 'created', direction: 'asc' };
const EVERYWHERE = (userId: number | null): PrivateReach => ({ userId, ownerIds: null, installationIds: [], repositoryIds: null });

async function names(filter: RepositoryListFilter, reach: PrivateReach | null, order = BY_CREATED, page = { offset: 0, limit: 100 }) {
  const { total, ids } = await repositoryPage(db.kysely, filter, reach, order, page);
  const byId = new Map(Object.entries(id).map(([name, value]) => [value, name]));
  const listed = ids.map((value) => byId.get(value)!);
  if (page.offset === 0 && page.limit >= total) assert.equal(total, listed.length);
  return { total, listed };
}

test('repositoryPage: the reach of a credential', async () => {
  assert.deepEqual((await names({}, null)).listed, ['Pub', 'alicepub']);
  assert.deepEqual((await names({}, EVERYWHERE(id.member!))).listed, ['Pub', 'priv', 'int', 'alicepub']);
  assert.deepEqual((await names({}, EVERYWHERE(id.entmember!))).listed, ['Pub', 'int', 'alicepub']);
  assert.deepEqual((await names({}, EVERYWHERE(id.outsider!))).listed, ['Pub', 'alicepub']);
  // No user (an installation): its owners' and selected repositories only.
  assert.deepEqual((await names({}, EVERYWHERE(null))).listed, ['Pub', 'priv', 'int', 'mine', 'alicepub', 'lonerint', 'shared', 'teamed']);
  assert.deepEqual((await names({}, { userId: null, ownerIds: [id.alice!], installationIds: [], repositoryIds: null })).listed, ['Pub', 'mine', 'alicepub']);
  assert.deepEqual((await names({}, { userId: null, ownerIds: [id.alice!, id.org!], installationIds: [], repositoryIds: null })).listed, ['Pub', 'priv', 'int', 'mine', 'alicepub']);
  assert.deepEqual((await names({}, { userId: null, ownerIds: [], installationIds: [installationId], repositoryIds: null })).listed, ['Pub', 'alicepub', 'shared']);
  assert.deepEqual((await names({}, { userId: null, ownerIds: [id.alice!], installationIds: [installationId], repositoryIds: null })).listed, ['Pub', 'mine', 'alicepub', 'shared']);
  assert.deepEqual((await names({}, { userId: null, ownerIds: [], installationIds: [], repositoryIds: null })).listed, ['Pub', 'alicepub']);
  assert.deepEqual((await names({}, { userId: null, ownerIds: [], installationIds: [installationId + 1000], repositoryIds: null })).listed, ['Pub', 'alicepub']);
  // The credential's own selection narrows further; an empty one reaches no private repository.
  assert.deepEqual((await names({}, { ...EVERYWHERE(null), repositoryIds: [id.priv!, id.shared!] })).listed, ['Pub', 'priv', 'alicepub', 'shared']);
  assert.deepEqual((await names({}, { ...EVERYWHERE(null), repositoryIds: [] })).listed, ['Pub', 'alicepub']);
  // All three must hold: the user reads it, the owner is reached, and it is selected.
  assert.deepEqual((await names({}, { userId: id.member!, ownerIds: [id.alice!], installationIds: [], repositoryIds: null })).listed, ['Pub', 'alicepub']);
  assert.deepEqual((await names({}, { userId: id.member!, ownerIds: [id.org!], installationIds: [], repositoryIds: [id.int!] })).listed, ['Pub', 'int', 'alicepub']);
  assert.deepEqual((await names({}, { userId: id.collab!, ownerIds: null, installationIds: [], repositoryIds: [id.teamed!, id.shared!] })).listed, ['Pub', 'alicepub', 'shared']);
});

test('repositoryPage: the filter (owner, visibility, affiliation, none)', async () => {
  const all = EVERYWHERE(null);
  assert.deepEqual((await names({ ownerId: id.org! }, all)).listed, ['Pub', 'priv', 'int']);
  assert.deepEqual((await names({ visibility: 'public' }, all)).listed, ['Pub', 'alicepub']);
  assert.deepEqual((await names({ visibility: 'private' }, all)).listed, ['priv', 'int', 'mine', 'lonerint', 'shared', 'teamed']);
  assert.deepEqual((await names({ ownerId: id.org!, visibility: 'private' }, all)).listed, ['priv', 'int']);
  assert.deepEqual((await names({ none: true }, all)).listed, []);
  assert.equal((await names({ none: true }, all)).total, 0);
  const of = (login: string, owner: boolean, member: boolean) => ({ affiliation: { userId: id[login]!, owner, member } });
  assert.deepEqual((await names(of('alice', true, true), all)).listed, ['mine', 'alicepub']);
  assert.deepEqual((await names(of('alice', true, false), all)).listed, ['mine', 'alicepub']);
  assert.deepEqual((await names(of('alice', false, true), all)).listed, []);
  assert.deepEqual((await names(of('alice', false, false), all)).listed, []);
  assert.deepEqual((await names(of('member', false, true), all)).listed, ['Pub', 'priv', 'int']);
  assert.deepEqual((await names(of('member', true, true), all)).listed, ['Pub', 'priv', 'int']);
  assert.deepEqual((await names(of('member', true, false), all)).listed, []);
  assert.deepEqual((await names(of('member', false, false), all)).listed, []);
  assert.deepEqual((await names(of('collab', true, true), all)).listed, ['shared']);
  assert.deepEqual((await names(of('teamer', false, true), all)).listed, ['teamed']);
  assert.deepEqual((await names(of('billing', true, true), all)).listed, []);
  // An organization "owns" its repositories, not as a member.
  assert.deepEqual((await names(of('org', false, true), all)).listed, []);
  assert.deepEqual((await names({ ...of('member', false, true), visibility: 'public' }, all)).listed, ['Pub']);
});

test('repositoryPage: order, direction, and a page of the total', async () => {
  const all = EVERYWHERE(null);
  const order = async (sort: RepositoryListOrder['sort'], direction: RepositoryListOrder['direction']) =>
    (await names({ ownerId: id.loner! }, all, { sort, direction })).listed.concat((await names({ ownerId: id.org! }, all, { sort, direction })).listed);
  assert.deepEqual(await order('created', 'asc'), ['lonerint', 'shared', 'teamed', 'Pub', 'priv', 'int']);
  assert.deepEqual(await order('created', 'desc'), ['teamed', 'shared', 'lonerint', 'int', 'priv', 'Pub']);
  assert.deepEqual(await order('updated', 'asc'), ['teamed', 'shared', 'lonerint', 'int', 'priv', 'Pub']);
  assert.deepEqual(await order('updated', 'desc'), ['lonerint', 'shared', 'teamed', 'Pub', 'priv', 'int']);
  // Never pushed: the creation time stands in.
  assert.deepEqual(await order('pushed', 'asc'), ['teamed', 'lonerint', 'shared', 'int', 'priv', 'Pub']);
  assert.deepEqual(await order('pushed', 'desc'), ['shared', 'lonerint', 'teamed', 'Pub', 'priv', 'int']);
  assert.deepEqual(await order('full_name', 'asc'), ['lonerint', 'shared', 'teamed', 'int', 'priv', 'Pub']);
  assert.deepEqual(await order('full_name', 'desc'), ['teamed', 'shared', 'lonerint', 'Pub', 'priv', 'int']);
  const page = await names({}, all, BY_CREATED, { offset: 2, limit: 3 });
  assert.deepEqual(page, { total: 8, listed: ['int', 'mine', 'alicepub'] });
});

test('privateOwnerIds: the owners of the private repositories the user reads, within the filter', async () => {
  const owners = async (filter: RepositoryListFilter, login: string) => (await privateOwnerIds(db.kysely, filter, id[login]!)).sort((a, b) => a - b);
  assert.deepEqual(await owners({}, 'member'), [id.org]);
  assert.deepEqual(await owners({}, 'alice'), [id.alice]);
  assert.deepEqual(await owners({}, 'collab'), [id.loner]);
  assert.deepEqual(await owners({}, 'entmember'), [id.org]);
  assert.deepEqual(await owners({}, 'outsider'), []);
  assert.deepEqual(await owners({ ownerId: id.alice! }, 'member'), []);
  assert.deepEqual(await owners({ none: true }, 'member'), []);
});
