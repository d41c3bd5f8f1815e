// The operator's view of tokens and the expiry sweep of store.ts on a real database (SQLite, or
// PostgreSQL when DATABASE_URL is set), no server: `listTokens` (oldest first, one user's or all,
// pages with the total, the user's login and the app's slug, never the hash) and
// `deleteExpiredTokens` (expired at or before `now`; a token without expiry stays).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/database.ts';
import { openDatabase, type Db } from '../../db/index.ts';
import { migrateToLatest } from '../../db/migrate.ts';
import { Clock } from '../../platform/clock.ts';
import { deleteExpiredTokens, issueToken, listTokens, type IssueTokenInput } from './store.ts';

const clock = new Clock();
const NOW = '2026-06-01T12:00:00.000Z';
const seconds = (s: number) => new Date(Date.parse(NOW) + s * 1000).toISOString();

let testDatabase: TestDatabase;
let db: Db;
const id: Record<string, number> = {};

before(async () => {
  testDatabase = await createTestDatabase();
  db = openDatabase({ databaseUrl: testDatabase.databaseUrl, sqlitePath: `${testDatabase.dataDir}/codehost.db` });
  await migrateToLatest(db);
  for (const login of ['alice', 'bob']) {
    id[login] = (await db.kysely.insertInto('users')
      .values({ login, login_lower: login, type: 'User', name: null, email: null, site_admin: 0, created_at: NOW, updated_at: NOW } as never)
      .returning('id').executeTakeFirstOrThrow()).id;
  }
  id.app = (await db.kysely.insertInto('apps').values({
    slug: 'the-app', name: 'The App', owner_id: null, client_id: 'Iv1.theapp', client_secret_hash: 'x',
    public_key_pem: 'x', permissions: '{}', events: '[]', created_at: NOW, updated_at: NOW,
  } as never).returning('id').executeTakeFirstOrThrow()).id;
});

after(async () => {
  await db?.close();
  await testDatabase?.drop();
});

async function issue(input: IssueTokenInput): Promise<{ id: number; token: string }> {
  const { row, token } = await issueToken(db.kysely, clock, input);
  return { id: row.id, token };
}

test('listTokens: oldest first, all or one user\'s, a page of them with the total; login and app slug; never the hash', async () => {
  const a1 = await issue({ kind: 'classic', user_id: id.alice!, scopes: ['repo'], note: 'first', expires_at: seconds(60) });
  const b1 = await issue({ kind: 'oauth', user_id: id.bob!, app_id: id.app!, scopes: [] });
  const a2 = await issue({ kind: 'fine_grained', user_id: id.alice!, permissions: { issues: 'read' } });
  const i1 = await issue({ kind: 'installation', app_id: id.app! });

  const all = await listTokens(db.kysely, {}, { limit: 10, offset: 0 });
  assert.equal(all.total, 4);
  assert.deepEqual(all.rows.map((row) => row.id), [a1.id, b1.id, a2.id, i1.id]);
  const first = all.rows[0]!;
  assert.deepEqual({ ...first, created_at: typeof first.created_at }, {
    id: a1.id, kind: 'classic', token_last_eight: a1.token.slice(-8), user_id: id.alice!, login: 'alice', app_slug: null,
    scopes: '["repo"]', permissions: '{}', note: 'first', expires_at: seconds(60), created_at: 'string',
  });
  assert.deepEqual([all.rows[1]!.login, all.rows[1]!.app_slug], ['bob', 'the-app']);
  assert.equal(all.rows[2]!.permissions, '{"issues":"read"}');
  assert.deepEqual([all.rows[3]!.user_id, all.rows[3]!.login, all.rows[3]!.app_slug], [null, null, 'the-app']);
  for (const row of all.rows) assert.ok(!('hashed_token' in row) && !Object.values(row).includes(a1.token));

  const alices = await listTokens(db.kysely, { userId: id.alice! }, { limit: 10, offset: 0 });
  assert.deepEqual([alices.rows.map((row) => row.id), alices.total], [[a1.id, a2.id], 2]);
  const page = await listTokens(db.kysely, {}, { limit: 2, offset: 1 });
  assert.deepEqual([page.rows.map((row) => row.id), page.total], [[b1.id, a2.id], 4]);
  const bobsPage = await listTokens(db.kysely, { userId: id.bob! }, { limit: 1, offset: 1 });
  assert.deepEqual([bobsPage.rows, bobsPage.total], [[], 1]);

  await db.kysely.deleteFrom('tokens').execute();
});

test('deleteExpiredTokens: removes what expired at or before now, keeps later and unexpiring ones, says how many', async () => {
  const past = await issue({ kind: 'classic', user_id: id.alice!, expires_at: seconds(-1) });
  const atNow = await issue({ kind: 'classic', user_id: id.alice!, expires_at: NOW });
  const later = await issue({ kind: 'classic', user_id: id.alice!, expires_at: seconds(1) });
  const never = await issue({ kind: 'classic', user_id: id.alice!, expires_at: null });
  assert.equal(await deleteExpiredTokens(db.kysely, NOW), 2);
  const left = await db.kysely.selectFrom('tokens').select('id').orderBy('id').execute();
  assert.deepEqual(left.map((row) => row.id), [later.id, never.id]);
  assert.ok(![past.id, atNow.id].some((gone) => left.some((row) => row.id === gone)));
  assert.equal(await deleteExpiredTokens(db.kysely, NOW), 0);
  await db.kysely.deleteFrom('tokens').execute();
});
