// A user's suspension (AccountWrites suspend / unsuspend) on a real migrated database (SQLite, or
// PostgreSQL when DATABASE_URL is set), no server: two users and an organization. A row per (state
// a user starts in, write): the state every account is left in — the suspended time and reason, the
// update time — the other user and the organization unchanged; unknown logins and organizations 404.
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/database.ts';
import { openDatabase, type Db } from '../../db/index.ts';
import { migrateToLatest } from '../../db/migrate.ts';
import type { Context } from '../../platform/context.ts';
import { ApiError } from '../../platform/errors.ts';
import { AccountWrites } from './writes.ts';
import { StillClock } from '../../../test/helpers/unit.ts';

const clock = new StillClock();
const T0 = new Date(clock.ms).toISOString();
const T1 = new Date(clock.ms + 60_000).toISOString();
const ACCOUNTS = [['alice', 'User'], ['Bob', 'User'], ['acme', 'Organization']] as const;
type Login = (typeof ACCOUNTS)[number][0];

let testDatabase: TestDatabase;
let db: Db;
let ctx: Context;

before(async () => {
  testDatabase = await createTestDatabase();
  db = openDatabase({ databaseUrl: testDatabase.databaseUrl, sqlitePath: `${testDatabase.dataDir}/codehost.db` });
  await migrateToLatest(db);
  ctx = { clock, db } as unknown as Context;
  for (const [login, type] of ACCOUNTS) {
    await db.kysely.insertInto('users').values({ login, login_lower: login.toLowerCase(), type, site_admin: 0, created_at: T0, updated_at: T0 } as never).execute();
  }
});

after(async () => {
  await db?.close();
  await testDatabase?.drop();
});

beforeEach(async () => {
  clock.ms = Date.parse(T0);
  await db.kysely.updateTable('users').set({ suspended_at: null, suspended_reason: null, updated_at: T0 }).execute();
});

/** Each account: `active <updated>` or `suspended <at> <reason> <updated>`. */
async function states(): Promise<Record<Login, string>> {
  const rows = await db.kysely.selectFrom('users').select(['login', 'suspended_at', 'suspended_reason', 'updated_at']).execute();
  return Object.fromEntries(rows.map((r) => [r.login, r.suspended_at === null ? `active ${r.suspended_reason} ${r.updated_at}` : `suspended ${r.suspended_at} ${r.suspended_reason} ${r.updated_at}`])) as Record<Login, string>;
}

const writes = () => new AccountWrites(ctx);

interface Row {
  from: 'active' | 'suspended';
  write: 'suspend' | 'unsuspend';
  /** The login as the operator writes it. */
  login: string;
  reason?: string | null;
  /** What the user (alice or Bob) is left as, at T1. */
  to: string;
}

const ROWS: Row[] = [
  { from: 'active', write: 'suspend', login: 'alice', reason: 'spam', to: `suspended ${T1} spam ${T1}` },
  { from: 'active', write: 'suspend', login: 'alice', reason: null, to: `suspended ${T1} null ${T1}` },
  // Again: the time and reason are the new ones.
  { from: 'suspended', write: 'suspend', login: 'alice', reason: 'audit', to: `suspended ${T1} audit ${T1}` },
  { from: 'suspended', write: 'unsuspend', login: 'alice', to: `active null ${T1}` },
  // Unsuspending an active user changes nothing but the update time.
  { from: 'active', write: 'unsuspend', login: 'alice', to: `active null ${T1}` },
  // The login is matched without case.
  { from: 'active', write: 'suspend', login: 'BOB', reason: 'left', to: `suspended ${T1} left ${T1}` },
  { from: 'suspended', write: 'unsuspend', login: 'bob', to: `active null ${T1}` },
];

const userOf = (login: string): Login => (login.toLowerCase() === 'bob' ? 'Bob' : 'alice');

for (const row of ROWS) {
  test(`${row.login} ${row.from}, ${row.write}${row.reason !== undefined ? ` (${row.reason})` : ''}: ${row.to}; the others unchanged`, async () => {
    const user = userOf(row.login);
    const other = user === 'alice' ? 'Bob' : 'alice';
    // Both users start in the row's state, so that the other's state is one a wrong row would move.
    if (row.from === 'suspended') for (const login of [user, other]) await writes().suspend(login, 'earlier');
    const before = await states();
    clock.ms = Date.parse(T1);
    if (row.write === 'suspend') await writes().suspend(row.login, row.reason ?? null);
    else await writes().unsuspend(row.login);
    const after = await states();
    assert.equal(after[user], row.to);
    assert.equal(after[other], before[other]);
    assert.equal(after.acme, before.acme);
  });
}

for (const write of ['suspend', 'unsuspend'] as const) {
  for (const login of ['nobody', 'acme', 'ACME', '']) {
    test(`${write} ${JSON.stringify(login)}: 404, nothing changes`, async () => {
      const before = await states();
      clock.ms = Date.parse(T1);
      await assert.rejects(write === 'suspend' ? writes().suspend(login, 'x') : writes().unsuspend(login), (error: unknown) => error instanceof ApiError && error.status === 404);
      assert.deepEqual(await states(), before);
    });
  }
}
