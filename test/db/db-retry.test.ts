// PostgreSQL's deadlock (40P01) and serialization failure (40001) are the server's own doing and
// meant to be retried: the transaction runner (src/db/index.ts) runs the transaction again, a bounded
// number of times with jitter, so every writer gets it and a race ends in its right answers.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { engine } from '../helpers/database.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const postgresOnly = engine !== 'postgres' ? 'PostgreSQL only: SQLite runs one transaction at a time' : false;

let server: TestServer;
before(async () => {
  server = await startServer();
  if (engine === 'postgres') {
    await sql`create table retry_scratch (id integer primary key, n integer not null)`.execute(server.server.ctx.db.kysely);
    await sql`insert into retry_scratch values (1, 0), (2, 0)`.execute(server.server.ctx.db.kysely);
  }
});
after(() => server?.close());

/** A latch: `open()` lets every `wait()` through, now and later. */
function latch() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, wait: () => opened };
}

test('two transactions that take two rows in opposite orders deadlock; the one PostgreSQL cancels runs again, and both commit', { skip: postgresOnly }, async () => {
  const db = server.server.ctx.db.kysely;
  const aHolds = latch();
  const bHolds = latch();
  const attempts = { a: 0, b: 0 };
  const a = db.transaction().execute(async (trx) => {
    attempts.a++;
    await sql`update retry_scratch set n = n + 1 where id = 1`.execute(trx);
    aHolds.open();
    await bHolds.wait();
    await sql`update retry_scratch set n = n + 1 where id = 2`.execute(trx);
  });
  const b = db.transaction().execute(async (trx) => {
    attempts.b++;
    await sql`update retry_scratch set n = n + 1 where id = 2`.execute(trx);
    bHolds.open();
    await aHolds.wait();
    await sql`update retry_scratch set n = n + 1 where id = 1`.execute(trx);
  });
  const settled = await Promise.allSettled([a, b]);
  assert.deepEqual(settled.map((s) => s.status), ['fulfilled', 'fulfilled'], settled.map((s) => (s.status === 'rejected' ? String(s.reason) : 'ok')).join(' | '));
  assert.equal(attempts.a + attempts.b, 3, `one of them ran twice: ${JSON.stringify(attempts)}`);
  const rows = (await sql<{ id: number; n: number }>`select id, n from retry_scratch order by id`.execute(db)).rows;
  assert.deepEqual(rows.map((r) => r.n), [2, 2], 'each committed once: the cancelled attempt left nothing');
});

test('a transaction that fails for its own statement is not run again', { skip: postgresOnly }, async () => {
  const db = server.server.ctx.db.kysely;
  let attempts = 0;
  await assert.rejects(db.transaction().execute(async (trx) => {
    attempts++;
    await sql`insert into retry_scratch values (1, 0)`.execute(trx);
  }), /duplicate key/);
  assert.equal(attempts, 1);
});
