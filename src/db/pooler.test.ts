// CODEHOST_DATABASE_POOLER=transaction: behind PgBouncer in transaction mode a named prepared statement
// may be run on a server connection that never prepared it, so reusable queries run unnamed there.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CompiledQuery, sql } from 'kysely';
import { createTestDatabase, engine } from '../../test/helpers/database.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { openDatabase } from './index.ts';
import { reusableQuery, reusableText } from './prepared.ts';

test('CODEHOST_DATABASE_POOLER is session by default, transaction when asked, and nothing else', () => {
  assert.equal(loadConfig({}).databasePooler, 'session');
  assert.equal(loadConfig({ CODEHOST_DATABASE_POOLER: 'transaction' }).databasePooler, 'transaction');
  assert.throws(() => loadConfig({ CODEHOST_DATABASE_POOLER: 'statement' }), ConfigError);
});

const answer = reusableQuery('pooler_test_answer', (db, value: number) => db.selectNoFrom(sql<number>`${value}::int`.as('answer')));

const rawAnswer = reusableText('pooler_test_raw', 'select $1::int as answer');

for (const pooler of ['session', 'transaction'] as const) {
  test(`with the pooler ${pooler}, a reusable query or text ${pooler === 'session' ? 'is' : 'is not'} a named prepared statement`, { skip: engine !== 'postgres' && 'PostgreSQL only: SQLite has no server-side statements' }, async () => {
    const database = await createTestDatabase();
    const db = openDatabase({ databaseUrl: database.databaseUrl, sqlitePath: `${database.dataDir}/codehost.db`, poolSize: 1, pooler });
    try {
      assert.deepEqual(await answer(db.kysely, 42), [{ answer: 42 }]);
      // One connection in the pool: this runs where the reusable query ran.
      const prepared = await sql<{ n: number }>`select count(*) as n from pg_prepared_statements where name like 'codehost_pooler_test_answer_%'`.execute(db.kysely);
      assert.equal(prepared.rows[0]!.n, pooler === 'session' ? 1 : 0);
      // A statement of fixed text (raw SQL, the job queue's insert) the same way.
      assert.deepEqual((await db.kysely.executeQuery(CompiledQuery.raw(rawAnswer, [7]))).rows, [{ answer: 7 }]);
      const raw = await sql<{ n: number }>`select count(*) as n from pg_prepared_statements where name like 'codehost_pooler_test_raw_%'`.execute(db.kysely);
      assert.equal(raw.rows[0]!.n, pooler === 'session' ? 1 : 0);
    } finally {
      await db.close();
      await database.drop();
    }
  });
}
