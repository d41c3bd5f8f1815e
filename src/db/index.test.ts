// Which statements the PostgreSQL pool may run again on a fresh connection when theirs was lost.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { createTestDatabase, engine } from '../../test/helpers/database.ts';
import { onlyReads, openDatabase, sqliteText } from './index.ts';

test('a SELECT, and a WITH query that modifies nothing, are reads; anything that writes is not', () => {
  for (const read of [
    'select 1',
    '  SELECT id from notification_threads where updated_at > $1',
    'with recursive walk(repository_id) as (select 1 union all select repository_id + 1 from walk) select * from walk',
  ]) assert.equal(onlyReads(read), true, read);
  for (const write of [
    'insert into users (login) values ($1)',
    'update notification_threads set unread = 0 where id = $1',
    'with gone as (delete from sessions where id = $1 returning id) select count(*) from gone',
    'WITH moved AS (UPDATE jobs SET state = $1 RETURNING id) SELECT id FROM moved',
    'with x as (select 1) insert into t select * from x',
    'begin',
  ]) assert.equal(onlyReads(write), false, write);
});

test('on SQLite a whole number is bound as an integer, a fraction as a real, a boolean as 0 or 1', async () => {
  const db = openDatabase({ sqlitePath: ':memory:', databaseUrl: null });
  try {
    const row = await sql<{ whole: string; text: string; fraction: string; big: string; flag: string }>`select
      typeof(${5}) as whole, cast(${5} as text) as text, typeof(${5.5}) as fraction,
      typeof(${Number.MAX_SAFE_INTEGER}) as big, typeof(${true}) as flag`.execute(db.kysely);
    // A REAL 5.0 would be '5.0' in a TEXT column and would cost SQLite a conversion on every integer key.
    assert.deepEqual({ ...row.rows[0] }, { whole: 'integer', text: '5', fraction: 'real', big: 'integer', flag: 'integer' });
  } finally {
    await db.close();
  }
});

test('on SQLite a bound LIMIT and OFFSET are put behind a cast (else every run prepares the statement again)', async () => {
  assert.equal(sqliteText('select "id" from "t" order by "id" limit ? offset ?'), 'select "id" from "t" order by "id" limit cast(? as integer) offset cast(? as integer)');
  assert.equal(sqliteText('select * from (select id from r LIMIT  ?) p limit 5'), 'select * from (select id from r LIMIT cast(? as integer)) p limit 5');
  const db = openDatabase({ sqlitePath: ':memory:', databaseUrl: null });
  try {
    const rows = await sql<{ n: number }>`with recursive c(n) as (select 1 union all select n + 1 from c where n < 10)
      select n from c order by n limit ${3} offset ${2 ** 31}`.execute(db.kysely);
    assert.deepEqual(rows.rows, []);
    const page = await sql<{ n: number }>`with recursive c(n) as (select 1 union all select n + 1 from c where n < 10)
      select n from c order by n limit ${3} offset ${4}`.execute(db.kysely);
    assert.deepEqual(page.rows.map((r) => r.n), [5, 6, 7]);
  } finally {
    await db.close();
  }
});

test('on SQLite a transaction that reads, then writes, commits although another connection wrote in between (an export thread, the CLI)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'codehost-begin-'));
  const db = openDatabase({ sqlitePath: join(dir, 'codehost.db'), databaseUrl: null });
  const other = new DatabaseSync(join(dir, 'codehost.db'));
  try {
    await sql`create table counted (n integer)`.execute(db.kysely);
    other.exec('PRAGMA busy_timeout = 0');
    let otherWrote = false;
    await db.kysely.transaction().execute(async (trx) => {
      await sql`select count(*) from counted`.execute(trx);
      // A deferred transaction's snapshot is older than this write, so its own write could not go on
      // (SQLITE_BUSY, which no busy timeout waits out: the request answered 503). With the write lock
      // taken at its start, the other connection waits (here, with no timeout, it fails) instead.
      try {
        other.exec('insert into counted values (1)');
        otherWrote = true;
      } catch (error) {
        assert.match(String(error), /locked|busy/i);
      }
      await sql`insert into counted values (2)`.execute(trx);
    });
    const rows = await sql<{ n: number }>`select n from counted order by n`.execute(db.kysely);
    assert.deepEqual(rows.rows.map((r) => r.n), otherWrote ? [1, 2] : [2]);
  } finally {
    other.close();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('on PostgreSQL a read whose connection was lost runs again after a text that opened and closed a transaction itself (BEGIN; …; COMMIT)', { skip: engine !== 'postgres' && 'PostgreSQL only' }, async () => {
  const database = await createTestDatabase();
  const db = openDatabase({ databaseUrl: database.databaseUrl, sqlitePath: '', poolSize: 1 });
  const killer = new pg.Client({ connectionString: database.databaseUrl! });
  await killer.connect();
  try {
    await db.kysely.connection().execute(async (connection) => {
      // The snapshot restore sends its whole transaction as one text: the transaction ends in it.
      await sql.raw('BEGIN; SELECT 1; COMMIT').execute(connection);
      const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(connection);
      await killer.query('select pg_terminate_backend($1)', [rows[0]!.pid]);
      // No transaction is open: the lone read runs again on a fresh connection instead of failing.
      const again = await sql<{ one: number }>`select 1 as one`.execute(connection);
      assert.equal(again.rows[0]!.one, 1);
    });
  } finally {
    await killer.end();
    await db.close();
    await database.drop();
  }
});
