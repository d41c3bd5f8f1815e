// The updater's access lists on a transfer (UpdaterAccessService onTransferred, in the move's
// transaction), on a real migrated database (SQLite, or PostgreSQL when DATABASE_URL is set), no
// server. Organizations acme (the old owner) and beta in enterprise `big`, gamma in `small`, delta
// in none, and the user mona; a moving repository and a neighbour of the same owner, each named by
// the lists of acme, beta, gamma, big and small. A row per destination: the lists that still name
// the moved repository (its new owner's, an enterprise the new owner is an organization of), the
// neighbour's lists untouched.
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/database.ts';
import { openDatabase, type Db } from '../../db/index.ts';
import { migrateToLatest } from '../../db/migrate.ts';
import { Clock } from '../../platform/clock.ts';
import type { Context } from '../../platform/context.ts';
import { UpdaterAccessService } from './service.ts';

const NOW = '2026-06-01T12:00:00.000Z';
const ORGS = { acme: 'big', beta: 'big', gamma: 'small', delta: null } as const;
const LISTS = [['organization', 'acme'], ['organization', 'beta'], ['organization', 'gamma'], ['enterprise', 'big'], ['enterprise', 'small']] as const;
const EVERY = LISTS.map(([, owner]) => owner);

let testDatabase: TestDatabase;
let db: Db;
let ctx: Context;
const id: Record<string, number> = {};

before(async () => {
  testDatabase = await createTestDatabase();
  db = openDatabase({ databaseUrl: testDatabase.databaseUrl, sqlitePath: `${testDatabase.dataDir}/codehost.db` });
  await migrateToLatest(db);
  ctx = { clock: new Clock(), db } as unknown as Context;
  const k = db.kysely;
  // Enterprise ids that are also account ids elsewhere: a rule that mixes the two kinds of owner shows.
  for (const slug of ['big', 'small']) {
    id[slug] = (await k.insertInto('enterprises').values({ slug, slug_lower: slug, name: slug, created_at: NOW, updated_at: NOW } as never).returning('id').executeTakeFirstOrThrow()).id;
  }
  for (const login of ['mona', ...Object.keys(ORGS)]) {
    id[login] = (await k.insertInto('users').values({ login, login_lower: login, type: login === 'mona' ? 'User' : 'Organization', site_admin: 0, created_at: NOW, updated_at: NOW } as never).returning('id').executeTakeFirstOrThrow()).id;
  }
  for (const [org, enterprise] of Object.entries(ORGS)) {
    await k.insertInto('organizations').values({ id: id[org]!, enterprise_id: enterprise && id[enterprise]! } as never).execute();
  }
  for (const name of ['moving', 'neighbour']) {
    id[name] = (await k.insertInto('repositories').values({ owner_id: id.acme!, name, name_lower: name, visibility: 'private', created_at: NOW, updated_at: NOW } as never).returning('id').executeTakeFirstOrThrow()).id;
  }
});

after(async () => {
  await db?.close();
  await testDatabase?.drop();
});

beforeEach(async () => {
  const k = db.kysely;
  await k.deleteFrom('updater_access_repositories').execute();
  for (const repository of ['moving', 'neighbour']) {
    await k.insertInto('updater_access_repositories').values(LISTS.map(([owner_type, owner]) => ({ owner_type, owner_id: id[owner]!, repository_id: id[repository]!, created_at: NOW })) as never).execute();
  }
});

/** The owners of the lists that name the repository. */
async function listsNaming(repository: string): Promise<string[]> {
  const rows = await db.kysely.selectFrom('updater_access_repositories').select(['owner_type', 'owner_id']).where('repository_id', '=', id[repository]!).execute();
  return LISTS.filter(([type, owner]) => rows.some((row) => row.owner_type === type && row.owner_id === id[owner])).map(([, owner]) => owner);
}

const ROWS: [to: string, keeps: string[]][] = [
  // Within its enterprise: the old organization's list lets go, the new one's and the enterprise's keep it.
  ['beta', ['beta', 'big']],
  // To another enterprise's organization: only the new owner's list and its enterprise's.
  ['gamma', ['gamma', 'small']],
  // To an organization of no enterprise, or a user: no list but one it owns (none here).
  ['delta', []],
  ['mona', []],
  // Back to its own owner (a rename's move of the same owner is no transfer; the rule keeps what it may).
  ['acme', ['acme', 'big']],
];

for (const [to, keeps] of ROWS) {
  test(`transferred from acme to ${to}: named by ${keeps.join(', ') || 'no list'}; the neighbour by every list`, async () => {
    await db.kysely.transaction().execute((trx) => new UpdaterAccessService(ctx).onTransferred(trx, id.moving!, id[to]!));
    assert.deepEqual(await listsNaming('moving'), keeps);
    assert.deepEqual(await listsNaming('neighbour'), EVERY);
  });
}
