// Reusable queries: built once per database, whatever executes them (the database or its transactions).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from './index.ts';
import { idList, isPostgres, reusableQuery } from './prepared.ts';

const databaseUrl = process.env.DATABASE_URL ?? null;

test('a reusable query is built once per database, and its transactions run that one (each transaction is a new executor)', async () => {
  let builds = 0;
  const echo = reusableQuery('prepared_test_echo', (db, value: number, ids: number[] | string) => {
    builds += 1;
    const listed = isPostgres(db)
      ? sql<number>`cardinality(cast(${ids} as int4[]))`
      : sql<number>`(select count(*) from json_each(${ids}))`;
    return db.selectNoFrom([sql<number>`${value} + 0`.as('value'), listed.as('listed')]);
  });
  const db = openDatabase({ databaseUrl, sqlitePath: ':memory:', poolSize: 2 });
  try {
    assert.equal(isPostgres(db.kysely), db.dialect === 'postgres');
    for (let i = 1; i <= 3; i++) {
      const [row] = await db.kysely.transaction().execute(async (trx) => {
        assert.equal(isPostgres(trx), db.dialect === 'postgres');
        return echo(trx, i, idList(trx, [7, 8, 9].slice(0, i)));
      });
      assert.deepEqual({ value: Number(row!.value), listed: Number(row!.listed) }, { value: i, listed: i });
    }
    const [outside] = await echo(db.kysely, 4, idList(db.kysely, []));
    assert.equal(Number(outside!.value), 4);
    assert.equal(builds, 1);
  } finally {
    await db.close();
  }
});
