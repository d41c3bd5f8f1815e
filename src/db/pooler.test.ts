// CODEHOST_DATABASE_POOLER=transaction: behind PgBouncer in transaction mode a named prepared statement
// may be run on a server connection that never prepared it, so reusable queries run unnamed there.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CompiledQuery, sql } from 'kysely';
import { createTestDatabase, engine } from '../../test/helpers/database.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { pgbouncerUnavailable, startPgBouncer } from '../../test/helpers/pgbouncer.ts';
import { unavailable } from '../../test/helpers/skips.ts';
import { openDatabase } from './index.ts';
import { migrationsRecorded, transactionPoolerEvidence } from './pooler.ts';
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

// The start's probe (src/db/pooler.ts): a direct connection and a session pooler are never taken
// for a transaction pooler; a transaction pooler is found whatever its number of server connections.
const PROBES = 12;
const postgresOnly = engine !== 'postgres' && 'PostgreSQL only: the probe looks at PostgreSQL backends';
const bouncerSkip = postgresOnly || unavailable(pgbouncerUnavailable());

test(`a direct connection is never taken for a transaction pooler (${PROBES} probes, some at once)`, { skip: postgresOnly }, async () => {
  const database = await createTestDatabase();
  try {
    const url = database.databaseUrl!;
    for (let i = 0; i < PROBES / 2; i++) assert.equal(await transactionPoolerEvidence(url), null);
    assert.deepEqual(await Promise.all(Array.from({ length: PROBES / 2 }, () => transactionPoolerEvidence(url))), Array(PROBES / 2).fill(null));
  } finally {
    await database.drop();
  }
});

for (const [mode, poolSize] of [['transaction', 1], ['transaction', 6], ['session', 6]] as const) {
  test(`PgBouncer in ${mode} mode with ${poolSize} server connection${poolSize > 1 ? 's' : ''} is ${mode === 'transaction' ? 'found, every time' : 'never taken for a transaction pooler'}`, { skip: bouncerSkip }, async () => {
    const database = await createTestDatabase();
    const name = new URL(database.databaseUrl!).pathname.slice(1);
    const bouncer = await startPgBouncer({ serverUrl: database.databaseUrl!, databases: [name], poolSize, poolMode: mode });
    try {
      const url = bouncer.url(name);
      // At once: in session mode each probe holds two server connections while it runs.
      const together = mode === 'session' ? poolSize / 2 : PROBES / 2;
      const found = [];
      // Server connections already open and idle too (PgBouncer then picks among them).
      found.push(...(await Promise.all(Array.from({ length: together }, () => transactionPoolerEvidence(url)))));
      for (let i = 0; i < PROBES / 2; i++) found.push(await transactionPoolerEvidence(url));
      found.push(...(await Promise.all(Array.from({ length: together }, () => transactionPoolerEvidence(url)))));
      if (mode === 'session') assert.deepEqual(found, Array(found.length).fill(null));
      else for (const evidence of found) assert.match(evidence ?? 'nothing found', /answered by (one|two) backends?|session setting was gone/);
    } finally {
      await bouncer.stop();
      await database.drop();
    }
  });
}

test('migrationsRecorded: false on an empty database and for a migration not recorded, true once all are', { skip: postgresOnly }, async () => {
  const database = await createTestDatabase();
  try {
    const url = database.databaseUrl!;
    assert.equal(await migrationsRecorded(url, ['0001_core']), false);
    const db = openDatabase({ databaseUrl: url, sqlitePath: `${database.dataDir}/codehost.db` });
    try {
      const { migrateToLatest } = await import('./migrate.ts');
      await migrateToLatest(db);
    } finally {
      await db.close();
    }
    const { migrations } = await import('./migrations/index.ts');
    assert.equal(await migrationsRecorded(url, Object.keys(migrations)), true);
    assert.equal(await migrationsRecorded(url, [...Object.keys(migrations), '9999_unknown']), false);
  } finally {
    await database.drop();
  }
});

test('the probe of an address where nothing answers fails with the connection\'s error', { skip: postgresOnly }, async () => {
  const { freePort } = await import('../../test/helpers/process.ts');
  const port = await freePort();
  await assert.rejects(transactionPoolerEvidence(`postgres://postgres@127.0.0.1:${port}/postgres`), { code: 'ECONNREFUSED' });
});
