// The change feed and the reads it keeps (changes.ts): answered again only while nothing changed, on
// both databases; this process's writes seen at once, another connection's (another process's) within
// 1 ms on SQLite and within the window on PostgreSQL; a lost LISTEN connection keeps nothing.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { createTestDatabase, engine, type TestDatabase } from '../../test/helpers/database.ts';
import { cachedRead, ChangeFeed, mayChangeCached, SQLITE_CHECK_REUSE_MS, sqliteChanges, UNCACHED_TABLES } from './changes.ts';
import { openDatabase, type Db } from './index.ts';
import { migrateToLatest } from './migrate.ts';

const WINDOW_MS = 1_000;
let database: TestDatabase;
let db: Db;

const open = (lookupCacheMs = WINDOW_MS) =>
  openDatabase({ databaseUrl: database.databaseUrl, sqlitePath: `${database.dataDir}/codehost.db`, poolSize: 3, lookupCacheMs });

before(async () => {
  database = await createTestDatabase();
  db = open();
  await migrateToLatest(db);
  await db.kysely.insertInto('users').values({ login: 'mona', login_lower: 'mona', type: 'User', name: 'Mona', site_admin: 0, created_at: 'x', updated_at: 'x' }).execute();
});

after(async () => {
  await db.close();
  await database.drop();
});

/** The name of user 1, kept: `reads` counts the statements that ran. */
function counted(name: string) {
  const kept = cachedRead<number, string>(name);
  let reads = 0;
  const read = async (on = db.kysely) =>
    kept(on, 1, async () => {
      reads++;
      return (await on.selectFrom('users').select('name').where('id', '=', 1).executeTakeFirstOrThrow()).name!;
    });
  return { read, reads: () => reads };
}

/** Until the feed answers kept reads (PostgreSQL: its LISTEN connection is up and heard its heartbeat). */
async function warm(target: Db = db): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!target.feed.fresh()) {
    assert.ok(Date.now() < deadline, 'the change feed never became fresh');
    await sleep(10);
  }
}

/** Until the generation has stayed put for 200 ms (PostgreSQL: a write's own notification has come back). */
async function settled(): Promise<void> {
  const deadline = Date.now() + 5_000;
  for (let seen = db.feed.generation; Date.now() < deadline; seen = db.feed.generation) {
    await sleep(200);
    if (db.feed.generation === seen) return;
  }
  assert.fail('the generation kept moving');
}

/** PostgreSQL: a transaction sent as one text (`BEGIN; …; COMMIT`) is seen as soon as it returns. */
async function severalStatements(read: () => Promise<string>): Promise<void> {
  await settled();
  assert.equal(await read(), 'Mona 3');
  await sql.raw(`BEGIN;\nUPDATE users SET name = 'Mona 4' WHERE id = 1;\nCOMMIT`).execute(db.kysely);
  assert.equal(await read(), 'Mona 4');
  await rename(db.kysely, 'Mona 3');
  // The same, with a write no trigger notifies (a temporary table): only this process's own report moves it.
  await settled();
  const generation = db.feed.generation;
  await sql.raw(`BEGIN;\nCREATE TEMP TABLE changes_test (a int);\nDROP TABLE changes_test;\nCOMMIT`).execute(db.kysely);
  assert.notEqual(db.feed.generation, generation);
}

const rename = (on: Db['kysely'], name: string) => on.updateTable('users').set({ name }).where('id', '=', 1).execute();

test('which statements move the generation: writes, except to the bookkeeping tables', () => {
  assert.equal(mayChangeCached('select 1'), false);
  assert.equal(mayChangeCached('with recursive walk(id) as (select 1) select id, updated_at from walk'), false);
  assert.equal(mayChangeCached('update "users" set "name" = $1'), true);
  assert.equal(mayChangeCached('insert into "rate_limits" ("key") values (?)'), false);
  assert.equal(mayChangeCached('delete from "webhook_deliveries" where id = 1'), false);
  assert.equal(mayChangeCached('with x as (delete from jobs returning 1) update users set name = 1'), true);
  assert.equal(mayChangeCached('commit'), true);
  assert.equal(mayChangeCached('begin immediate'), false);
  // Several statements in one text (the PostgreSQL snapshot restore): whatever the first one is.
  assert.equal(mayChangeCached('BEGIN;\nDELETE FROM "users";\nCOMMIT'), true);
  assert.equal(mayChangeCached('delete from "jobs"; delete from "users"'), true);
  assert.ok(UNCACHED_TABLES.has('jobs'));
});

test(`a kept read answers again while nothing changed, and never after this process's write (${engine})`, async () => {
  await warm();
  const { read, reads } = counted('changes_test_local');
  assert.equal(await read(), 'Mona');
  assert.equal(await read(), 'Mona');
  assert.equal(reads(), 1);

  // A write outside a transaction: seen by the very next read.
  await rename(db.kysely, 'Mona 2');
  assert.equal(await read(), 'Mona 2');
  // A bookkeeping write does not throw the entries away (on PostgreSQL, once the rename's own
  // notification came back: it moves the generation once more).
  await settled();
  await read();
  const before = reads();
  await db.kysely.insertInto('rate_limits').values({ key: 'changes-test', window_start: 1, used: 1 }).execute();
  await settled();
  assert.equal(await read(), 'Mona 2');
  assert.equal(reads(), before);

  // A transaction: its writes are seen once it commits, and it never reads the kept value.
  await db.kysely.transaction().execute(async (trx) => {
    await rename(trx, 'Mona 3');
    assert.equal(await read(trx), 'Mona 3');
    assert.equal(await read(), 'Mona 2', 'outside the transaction, before it commits');
  });
  assert.equal(await read(), 'Mona 3');

  // A transaction in one text of several statements (the PostgreSQL snapshot restore sends its whole
  // transaction so; SQLite prepares one statement per text): seen as soon as it returns.
  if (engine === 'postgres') await severalStatements(read);

  // A transaction rolled back changes nothing, but its read is never kept.
  await assert.rejects(
    db.kysely.transaction().execute(async (trx) => {
      await rename(trx, 'never');
      throw new Error('rolled back');
    }),
  );
  assert.equal(await read(), 'Mona 3');
});

test(`a write committed elsewhere (another process) is seen ${engine === 'sqlite' ? 'within 1 ms (the next reading of data_version)' : `within the window (${WINDOW_MS} ms)`}`, async () => {
  const other = open(0);
  try {
    await warm();
    const { read, reads } = counted('changes_test_other');
    await rename(db.kysely, 'Before');
    assert.equal(await read(), 'Before');
    assert.equal(await read(), 'Before');
    const committed = Date.now();
    await rename(other.kysely, 'After');
    let seenAfterMs = -1;
    while (Date.now() - committed < WINDOW_MS * 3) {
      if ((await read()) === 'After') {
        seenAfterMs = Date.now() - committed;
        break;
      }
      await sleep(1);
    }
    assert.ok(seenAfterMs >= 0, 'the other process\'s write was never seen');
    if (engine === 'sqlite') assert.equal(seenAfterMs < 50 && reads() === 2, true, `SQLite reads it at its next reading of data_version (${seenAfterMs} ms, ${reads()} reads)`);
    else assert.ok(seenAfterMs <= WINDOW_MS, `seen after ${seenAfterMs} ms`);
  } finally {
    await other.close();
  }
});

test(`SQLite's data_version is read at most once per ${SQLITE_CHECK_REUSE_MS} ms: another connection's commit is seen within that`, () => {
  let version = 1;
  let readings = 0;
  let now = 1_000;
  const feed = new ChangeFeed(sqliteChanges(() => (readings++, version), () => now));
  assert.equal(readings, 1, 'read once when opened');
  assert.equal(feed.fresh(), true);
  assert.equal(readings, 2);
  const generation = feed.generation;
  version = 2; // another connection commits
  now += SQLITE_CHECK_REUSE_MS / 2;
  assert.equal(feed.fresh(), true);
  assert.equal(readings, 2, 'the reading of half a window ago answers');
  assert.equal(feed.generation, generation, 'so the commit is not seen yet');
  now += SQLITE_CHECK_REUSE_MS / 2;
  assert.equal(feed.fresh(), true);
  assert.equal(readings, 3, 'a window after the last reading, it is read again');
  assert.equal(feed.generation, generation + 1, 'and the commit is seen');
  assert.equal(feed.fresh(), true);
  assert.equal(feed.generation, generation + 1, 'nothing else committed: nothing moves');
  // A closed database answers nothing from memory, and is asked again next time.
  const closed = new ChangeFeed(sqliteChanges(() => {
    readings++;
    if (readings > 4) throw new Error('closed');
    return 1;
  }, () => now));
  now += SQLITE_CHECK_REUSE_MS;
  assert.equal(closed.fresh(), false);
  assert.equal(closed.fresh(), false);
});

test('the kept reads are bounded by their weight: the oldest go first, one heavier than the bound is not kept', async () => {
  await warm();
  const kept = cachedRead<string, string>('changes_test_weight', { limit: 3, weight: (value) => value.length });
  const reads: string[] = [];
  const read = (key: string) => kept(db.kysely, key, async () => (reads.push(key), key));
  for (const key of ['a', 'bb', 'a', 'bb']) await read(key);
  assert.deepEqual(reads, ['a', 'bb'], 'both kept: 1 + 2 parts');
  await read('c'); // 1 + 2 + 1 > 3: 'a', the oldest, goes
  await read('bb');
  await read('c');
  await read('a');
  assert.deepEqual(reads, ['a', 'bb', 'c', 'a']);
  await read('dddd');
  await read('dddd');
  assert.deepEqual(reads.slice(4), ['dddd', 'dddd'], 'heavier than the bound: read every time');
});

test('a window of 0 keeps nothing', async () => {
  const off = open(0);
  try {
    assert.equal(off.feed.fresh(), false);
    const kept = cachedRead<number, number>('changes_test_off');
    let reads = 0;
    for (let i = 0; i < 3; i++) await kept(off.kysely, 1, async () => ++reads);
    assert.equal(reads, 3);
  } finally {
    await off.close();
  }
});

test('PostgreSQL: every table a kept read may depend on notifies its changes; the bookkeeping ones do not', { skip: engine !== 'postgres' && 'PostgreSQL only' }, async () => {
  const { rows } = await sql<{ name: string; triggered: boolean }>`select t.table_name as name,
      exists (select 1 from information_schema.triggers g where g.event_object_table = t.table_name and g.trigger_name = 'codehost_changes') as triggered
    from information_schema.tables t where t.table_schema = current_schema() and t.table_type = 'BASE TABLE'`.execute(db.kysely);
  assert.ok(rows.length > 40);
  for (const { name, triggered } of rows) {
    const expected = !UNCACHED_TABLES.has(name) && !name.startsWith('kysely_');
    assert.equal(triggered, expected, `${name}: ${triggered ? 'notifies' : 'does not notify'}`);
  }
});

test('PostgreSQL: a lost LISTEN connection keeps nothing until it listens again', { skip: engine !== 'postgres' && 'PostgreSQL only' }, async () => {
  await warm();
  const { read, reads } = counted('changes_test_lost');
  await read();
  await read();
  assert.equal(reads(), 1);
  const other = open(0);
  try {
    // Ends the LISTEN connection (the server's backend) and, while it is down, changes the name elsewhere.
    const ended = await sql<{ n: number }>`select count(pg_terminate_backend(pid)) as n from pg_stat_activity
      where datname = current_database() and application_name = 'codehost change feed'`.execute(other.kysely);
    assert.equal(Number(ended.rows[0]!.n), 1);
    await rename(other.kysely, 'While down');
    const deadline = Date.now() + WINDOW_MS;
    // No kept answer hides the change once the window has passed, whether or not the connection is back.
    while (Date.now() < deadline) await sleep(20);
    assert.equal(await read(), 'While down');
    await warm();
    assert.equal(await read(), 'While down');
  } finally {
    await other.close();
  }
});
