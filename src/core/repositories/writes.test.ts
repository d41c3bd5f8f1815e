// A repository's lifecycle writes (RepositoryWrites updateRepository: archive, unarchive, rename,
// transfer) on a real migrated database (SQLite, or PostgreSQL when DATABASE_URL is set), no server,
// with an area that records what the write applies in its transaction (`repository.moving`,
// `access.changed`). Two repositories of the same organization (widgets moves, gadgets must not),
// its team's grants of both, an installation on acme selecting both and one on the destination: a
// row per move and the state it leaves — the repository's row, its former names, the grants and
// selections, the activities recorded and applied — the other repository's untouched.
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/database.ts';
import { openDatabase, type Db } from '../../db/index.ts';
import { migrateToLatest } from '../../db/migrate.ts';
import type { Context } from '../../platform/context.ts';
import { ApiError } from '../../platform/errors.ts';
import type { Area } from '../area.ts';
import { RepositoryWrites } from './writes.ts';
import { StillClock } from '../../../test/helpers/unit.ts';

const clock = new StillClock();
const T0 = new Date(clock.ms).toISOString();
const T1 = new Date(clock.ms + 60_000).toISOString();

let testDatabase: TestDatabase;
let db: Db;
let ctx: Context;
const id: Record<string, number> = {};
const applied: string[] = [];
/** What the areas are given in the write's transaction. */
const spy: Area = {
  name: 'spy',
  handlers: {
    'repository.moving': async (_ctx, _trx, { payload }) => { applied.push(`moving ${JSON.stringify(payload)}`); },
    'access.changed': async (_ctx, _trx, { payload }) => { applied.push(`access.changed ${JSON.stringify(payload)}`); },
  },
};

before(async () => {
  testDatabase = await createTestDatabase();
  db = openDatabase({ databaseUrl: testDatabase.databaseUrl, sqlitePath: `${testDatabase.dataDir}/codehost.db` });
  await migrateToLatest(db);
  ctx = { clock, db, urls: { api: 'http://api.test', web: 'http://web.test' }, queue: { send: async () => 'job' } } as unknown as Context;
  const k = db.kysely;
  for (const [login, type] of [['mona', 'User'], ['acme', 'Organization'], ['other', 'Organization']] as const) {
    id[login] = (await k.insertInto('users').values({ login, login_lower: login, type, site_admin: 0, created_at: T0, updated_at: T0 } as never).returning('id').executeTakeFirstOrThrow()).id;
  }
  for (const org of ['acme', 'other']) await k.insertInto('organizations').values({ id: id[org]!, enterprise_id: null } as never).execute();
  id.devs = (await k.insertInto('teams').values({ org_id: id.acme!, slug: 'devs', name: 'devs', created_at: T0, updated_at: T0 } as never).returning('id').executeTakeFirstOrThrow()).id;
  await k.insertInto('apps').values({ slug: 'bot', name: 'bot', owner_id: null, client_id: 'Iv1.botclient', client_secret_hash: 'x', public_key_pem: 'x', permissions: '{}', events: '[]', created_at: T0, updated_at: T0 } as never).execute();
  id.app = (await k.selectFrom('apps').select('id').executeTakeFirstOrThrow()).id;
});

after(async () => {
  await db?.close();
  await testDatabase?.drop();
});

/** Afresh: acme/widgets and acme/gadgets (private), other/taken; the grants and selections of both. */
beforeEach(async () => {
  const k = db.kysely;
  clock.ms = Date.parse(T0);
  applied.length = 0;
  await k.deleteFrom('activity_outbox').execute();
  await k.deleteFrom('installations').execute();
  await k.deleteFrom('repository_former_names').execute();
  await k.deleteFrom('repositories').execute();
  for (const [owner, name] of [['acme', 'widgets'], ['acme', 'gadgets'], ['other', 'taken']] as const) {
    id[name] = (await k.insertInto('repositories').values({ owner_id: id[owner]!, name, name_lower: name, visibility: 'private', description: null, archived: 0, created_at: T0, updated_at: T0 } as never)
      .returning('id').executeTakeFirstOrThrow()).id;
  }
  await k.insertInto('team_repositories').values([id.widgets!, id.gadgets!].map((repository_id) => ({ team_id: id.devs!, repository_id, permission: 'push' })) as never).execute();
  await k.insertInto('repository_collaborators').values([id.widgets!, id.gadgets!].map((repository_id) => ({ repository_id, user_id: id.mona!, permission: 'push', created_at: T0 })) as never).execute();
  for (const account of ['acme', 'other']) {
    id[`on ${account}`] = (await k.insertInto('installations').values({ app_id: id.app!, account_id: id[account]!, repository_selection: 'selected', permissions: '{}', created_at: T0, updated_at: T0 } as never).returning('id').executeTakeFirstOrThrow()).id;
  }
  await k.insertInto('installation_repositories').values([id.widgets!, id.gadgets!].map((repository_id) => ({ installation_id: id['on acme']!, repository_id })) as never).execute();
  // The destination's installation selects its own repository; a transfer adds nothing to it.
  await k.insertInto('installation_repositories').values({ installation_id: id['on other']!, repository_id: id.taken! } as never).execute();
});

/** A repository as it stands: owner/name, archived, description, visibility, updated; its grants and selections. */
async function stateOf(name: 'widgets' | 'gadgets') {
  const k = db.kysely;
  const row = await k.selectFrom('repositories').innerJoin('users', 'users.id', 'repositories.owner_id')
    .select(['users.login', 'repositories.name', 'repositories.archived', 'repositories.description', 'repositories.visibility', 'repositories.updated_at'])
    .where('repositories.id', '=', id[name]!).executeTakeFirstOrThrow();
  const teams = await k.selectFrom('team_repositories').select('team_id').where('repository_id', '=', id[name]!).execute();
  const collaborators = await k.selectFrom('repository_collaborators').select('user_id').where('repository_id', '=', id[name]!).execute();
  const selections = await k.selectFrom('installation_repositories').select('installation_id').where('repository_id', '=', id[name]!).orderBy('installation_id').execute();
  return {
    at: `${row.login}/${row.name}`, archived: Boolean(row.archived), description: row.description, visibility: row.visibility, updated: row.updated_at,
    teams: teams.length, collaborators: collaborators.length, selectedBy: selections.map((s) => (s.installation_id === id['on acme'] ? 'acme' : 'other')),
  };
}

async function formerNames() {
  const rows = await db.kysely.selectFrom('repository_former_names').selectAll().orderBy('owner_login_lower').orderBy('name_lower').execute();
  return rows.map((r) => `${r.owner_login_lower}/${r.name_lower} → ${r.repository_id === id.widgets ? 'widgets' : r.repository_id}`);
}

async function recorded() {
  const rows = await db.kysely.selectFrom('activity_outbox').selectAll().orderBy('id').execute();
  return rows.map((row) => {
    const payload = JSON.parse(row.payload as string) as { repository: { full_name: string; archived: boolean }; changes?: { owner?: { from: Record<string, { login: string; type?: string }> } } };
    // A transfer's former owner, by its key and login (and type, for a user).
    const from = payload.changes?.owner?.from;
    if (from) payload.changes!.owner!.from = Object.fromEntries(Object.entries(from).map(([key, account]) => [key, `${account.login}${account.type ? ` ${account.type}` : ''}`])) as never;
    return `${row.event}.${row.action} ${row.repository_id === id.widgets ? 'widgets' : row.repository_id} ${payload.repository.full_name}${payload.repository.archived ? ' (archived)' : ''}${payload.changes ? ` ${JSON.stringify(payload.changes)}` : ''}`;
  });
}

const writes = () => new RepositoryWrites(ctx, [spy]);
const WIDGETS = { at: 'acme/widgets', archived: false, description: null as string | null, visibility: 'private', updated: T0, teams: 1, collaborators: 1, selectedBy: ['acme'] };

interface Row {
  title: string;
  /** Done first, at T0. */
  given?: Parameters<RepositoryWrites['updateRepository']>[2];
  input: Parameters<RepositoryWrites['updateRepository']>[2];
  /** The name the write is given (after `given`): acme/widgets when absent. */
  at?: string;
  /** What widgets is left as (T1 the update time), or the refusal. `activities` and `applied`: the write's own. */
  to: Partial<typeof WIDGETS> | 404 | 422;
  activities?: string[];
  applied?: (ids: Record<string, number>) => string[];
  former?: string[];
  /** A 422's errors. */
  errors?: object[];
}

const moving = (ids: Record<string, number>, to: string, name: string, transferred: boolean, renamed: boolean) =>
  `moving ${JSON.stringify({ repositoryId: ids.widgets, fromOwnerId: ids.acme, toOwnerId: ids[to], name, transferred, renamed })}`;
const accessChanged = (ids: Record<string, number>) => `access.changed ${JSON.stringify({ repositoryIds: [ids.widgets] })}`;

const ROWS: Row[] = [
  { title: 'archived', input: { archived: true }, to: { archived: true }, activities: ['repository.archived widgets acme/widgets (archived)'] },
  { title: 'archived again: nothing recorded', given: { archived: true }, input: { archived: true }, to: { archived: true }, activities: [] },
  { title: 'unarchived', given: { archived: true }, input: { archived: false }, to: { archived: false }, activities: ['repository.unarchived widgets acme/widgets'] },
  { title: 'unarchived when active: nothing recorded', input: { archived: false }, to: {}, activities: [] },
  { title: 'archived with a new description: both', input: { archived: true, description: 'old' }, to: { archived: true, description: 'old' }, activities: ['repository.archived widgets acme/widgets (archived)', 'repository.edited widgets acme/widgets (archived) {"description":{"from":null}}'] },
  {
    title: 'renamed: the old name is a former name, a rename applied and recorded, its grants kept', input: { name: 'sprockets' },
    to: { at: 'acme/sprockets' }, activities: ['repository.renamed widgets acme/sprockets {"repository":{"name":{"from":"widgets"}}}'],
    applied: (ids) => [moving(ids, 'acme', 'sprockets', false, true)], former: ['acme/widgets → widgets'],
  },
  {
    title: 'renamed by case alone: a rename', input: { name: 'Widgets' },
    to: { at: 'acme/Widgets' }, activities: ['repository.renamed widgets acme/Widgets {"repository":{"name":{"from":"widgets"}}}'],
    applied: (ids) => [moving(ids, 'acme', 'Widgets', false, true)], former: ['acme/widgets → widgets'],
  },
  { title: 'renamed to its own name: nothing moves', input: { name: 'widgets' }, to: {}, activities: [], applied: () => [], former: [] },
  { title: 'renamed to its neighbour\'s name: 422', input: { name: 'gadgets' }, to: 422, errors: [{ resource: 'Repository', field: 'name', code: 'already_exists', message: 'acme/gadgets already exists' }] },
  { title: 'renamed to its neighbour\'s name in another case: 422', input: { name: 'GADGETS' }, to: 422, errors: [{ resource: 'Repository', field: 'name', code: 'already_exists', message: 'acme/GADGETS already exists' }] },
  { title: 'renamed to a name that is not one: 422', input: { name: 'no/slash' }, to: 422, errors: [{ resource: 'Repository', field: 'name', code: 'invalid' }] },
  {
    title: 'renamed back: the new name is no longer a former name, the second is', given: { name: 'sprockets' }, at: 'acme/sprockets', input: { name: 'widgets' },
    to: { at: 'acme/widgets' }, activities: ['repository.renamed widgets acme/widgets {"repository":{"name":{"from":"sprockets"}}}'],
    applied: (ids) => [moving(ids, 'acme', 'widgets', false, true)], former: ['acme/sprockets → widgets'],
  },
  {
    title: 'transferred to another organization: its team grants and the old owner\'s selections go, its collaborators stay', input: { owner: 'other' },
    to: { at: 'other/widgets', teams: 0, selectedBy: [] },
    activities: ['repository.transferred widgets other/widgets {"owner":{"from":{"organization":"acme"}}}'],
    applied: (ids) => [moving(ids, 'other', 'widgets', true, false), accessChanged(ids)], former: ['acme/widgets → widgets'],
  },
  {
    title: 'transferred to a collaborator: they are its owner, no longer its collaborator', input: { owner: 'mona' },
    to: { at: 'mona/widgets', teams: 0, selectedBy: [], collaborators: 0 },
    activities: ['repository.transferred widgets mona/widgets {"owner":{"from":{"organization":"acme"}}}'],
    applied: (ids) => [moving(ids, 'mona', 'widgets', true, false), accessChanged(ids)], former: ['acme/widgets → widgets'],
  },
  {
    title: 'transferred and renamed: both', input: { owner: 'other', name: 'moved' },
    to: { at: 'other/moved', teams: 0, selectedBy: [] },
    activities: ['repository.renamed widgets other/moved {"repository":{"name":{"from":"widgets"}}}', 'repository.transferred widgets other/moved {"owner":{"from":{"organization":"acme"}}}'],
    applied: (ids) => [moving(ids, 'other', 'moved', true, true), accessChanged(ids)], former: ['acme/widgets → widgets'],
  },
  {
    title: 'transferred from a user: the former owner is a user', given: { owner: 'mona' }, at: 'mona/widgets', input: { owner: 'other' },
    to: { at: 'other/widgets', teams: 0, selectedBy: [], collaborators: 0 },
    activities: ['repository.transferred widgets other/widgets {"owner":{"from":{"user":"mona User"}}}'],
    applied: (ids) => [`moving ${JSON.stringify({ repositoryId: ids.widgets, fromOwnerId: ids.mona, toOwnerId: ids.other, name: 'widgets', transferred: true, renamed: false })}`, accessChanged(ids)],
    former: ['acme/widgets → widgets', 'mona/widgets → widgets'],
  },
  { title: 'transferred and renamed onto a name the destination has: 422', input: { owner: 'other', name: 'taken' }, to: 422, errors: [{ resource: 'Repository', field: 'name', code: 'already_exists', message: 'other/taken already exists' }] },
  { title: 'transferred onto a name the destination has: 422', given: { name: 'taken' }, at: 'acme/taken', input: { owner: 'other' }, to: 422, errors: [{ resource: 'Repository', field: 'name', code: 'already_exists', message: 'other/taken already exists' }] },
  { title: 'transferred to its own owner: nothing moves', input: { owner: 'acme' }, to: {}, activities: [], applied: () => [], former: [] },
  { title: 'transferred to nobody: 404', input: { owner: 'nobody' }, to: 404 },
  { title: 'internal, transferred to a user: 422', input: { owner: 'mona', visibility: 'internal' }, to: 422, errors: [{ resource: 'Repository', field: 'visibility', code: 'custom', message: 'internal repositories belong to organizations' }] },
  { title: 'already internal, transferred to a user: 422', given: { visibility: 'internal' }, input: { owner: 'mona' }, to: 422, errors: [{ resource: 'Repository', field: 'visibility', code: 'custom', message: 'internal repositories belong to organizations' }] },
  { title: 'private, given its own visibility: nothing recorded or applied', input: { visibility: 'private' }, to: {}, activities: [] },
  { title: 'given its own description: nothing recorded', input: { description: null }, to: {}, activities: [] },
  { title: 'public, archived: archived alone', given: { visibility: 'public' }, input: { archived: true }, to: { visibility: 'public', archived: true }, activities: ['repository.archived widgets acme/widgets (archived)'] },
  { title: 'public, made internal: privatized', given: { visibility: 'public' }, input: { visibility: 'internal' }, to: { visibility: 'internal' }, activities: ['repository.privatized widgets acme/widgets'], applied: (ids) => [accessChanged(ids)] },
  { title: 'internal in its organization', input: { visibility: 'internal' }, to: { visibility: 'internal' }, activities: [], applied: (ids) => [accessChanged(ids)] },
  { title: 'made public: publicized, its access changed', input: { visibility: 'public' }, to: { visibility: 'public' }, activities: ['repository.publicized widgets acme/widgets'], applied: (ids) => [accessChanged(ids)] },
  { title: 'made private again: privatized', given: { visibility: 'public' }, input: { visibility: 'private' }, to: { visibility: 'private' }, activities: ['repository.privatized widgets acme/widgets'], applied: (ids) => [accessChanged(ids)] },
  { title: 'an unknown repository: 404', at: 'acme/nothing', input: { archived: true }, to: 404 },
];

for (const row of ROWS) {
  test(`widgets ${row.title}; gadgets untouched`, async () => {
    if (row.given) await writes().updateRepository('acme', 'widgets', row.given);
    const gadgets = await stateOf('gadgets');
    const before = { widgets: await stateOf('widgets'), former: await formerNames(), activities: await recorded(), applied: [...applied] };
    clock.ms = Date.parse(T1);
    const [owner, name] = (row.at ?? 'acme/widgets').split('/') as [string, string];
    const done = writes().updateRepository(owner, name, row.input);
    if (typeof row.to === 'number') {
      await assert.rejects(done, (error: unknown) => error instanceof ApiError && error.status === row.to);
      if (row.errors) await done.catch((error: ApiError) => assert.deepEqual(error.errors, row.errors));
      assert.deepEqual({ widgets: await stateOf('widgets'), former: await formerNames(), activities: await recorded(), applied }, before);
    } else {
      const answer = await done;
      const after = await stateOf('widgets');
      assert.deepEqual(after, { ...before.widgets, ...row.to, updated: T1 });
      assert.equal(`${answer.owner.login}/${answer.name}`, after.at);
      assert.equal(Boolean(answer.archived), after.archived);
      // What the write itself recorded and applied.
      if (row.activities) assert.deepEqual((await recorded()).slice(before.activities.length), row.activities);
      assert.deepEqual(applied.slice(before.applied.length), row.applied?.(id) ?? []);
      if (row.former) assert.deepEqual(await formerNames(), row.former);
    }
    assert.deepEqual(await stateOf('gadgets'), gadgets);
  });
}
