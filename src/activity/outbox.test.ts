// The dispatcher, on whichever database the run targets: rows dispatched together reach every
// consumer once, and a consumer that fails does not undo (or repeat) what the others applied.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { createTestDatabase, type TestDatabase } from '../../test/helpers/database.ts';
import { loadConfig, type Config } from '../config.ts';
import { openDatabase, type Db, type Executor } from '../db/index.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { createQueue, drainAll, type Queue } from '../jobs/index.ts';
import type { Context } from '../platform/context.ts';
import { DISPATCH, dispatcher, recordActivity, type ActivityConsumer, type StoredActivity } from './outbox.ts';

/** The one activity these tests record. */
type Pushes = { push: { i: number } };
type Pushed = StoredActivity<Pushes, 'push'>;

const config: Config = { ...loadConfig({}), databasePoolSize: 4, jobs: { worker: true, leaseSeconds: 10, pollMilliseconds: 50 } };
const silent = { info() {}, warn() {}, error() {} };

let testDatabase: TestDatabase;
let db: Db;

before(async () => {
  testDatabase = await createTestDatabase();
  db = openDatabase({ databaseUrl: testDatabase.databaseUrl, sqlitePath: `${testDatabase.dataDir}/codehost.db`, poolSize: config.databasePoolSize });
  await migrateToLatest(db);
  // What the consumers apply, written in the dispatch's transaction: only what commits is here.
  await sql`create table test_applied (consumer text not null, outbox_id integer not null)`.execute(db.kysely);
});

after(async () => {
  await db.close();
  await testDatabase.drop();
});

/** A consumer that writes (name, row) in the dispatch's transaction; `failing` may throw first. */
function consumer(name: string, failing?: (row: Pushed) => boolean): ActivityConsumer<Pushes> {
  return {
    name,
    handlers: {
      async push(_ctx: Context, trx: Executor, row: Pushed) {
        await sql`insert into test_applied (consumer, outbox_id) values (${name}, ${row.id})`.execute(trx);
        if (failing?.(row)) throw new Error(`${name} fails on row ${row.id}`);
      },
    },
  };
}

async function withDispatcher(consumers: ActivityConsumer<Pushes>[], run: (record: (n: number) => Promise<number[]>, queue: Queue) => Promise<void>) {
  const queue = createQueue(db, config, silent);
  const ctx = { db, queue, clock: { now: () => new Date() } } as unknown as Context;
  DISPATCH.work(ctx.queue, dispatcher(ctx, consumers));
  const record = async (n: number) => {
    const ids: number[] = [];
    // Each row in its own transaction, as writes record them.
    for (let i = 0; i < n; i++) ids.push((await db.kysely.transaction().execute((trx) => recordActivity(ctx, trx, { name: 'push', payload: { i } }))).id);
    return ids;
  };
  try {
    await run(record, queue);
  } finally {
    await queue.stop(5_000);
  }
}

const applied = async (ids: number[]) =>
  (await db.kysely.selectFrom('test_applied' as never).selectAll().execute() as Array<{ consumer: string; outbox_id: number }>)
    .filter((row) => ids.includes(Number(row.outbox_id)))
    .map((row) => `${row.consumer}:${ids.indexOf(Number(row.outbox_id))}`)
    .sort();

const expected = (names: string[], n: number) => names.flatMap((name) => Array.from({ length: n }, (_, i) => `${name}:${i}`)).sort();

test('rows dispatched together reach every consumer once', async () => {
  await withDispatcher([consumer('first'), consumer('second')], async (record, queue) => {
    // Recorded before the worker starts, so its claims take many rows at once.
    const ids = await record(40);
    await queue.start();
    assert.equal((await drainAll(queue, 20_000, { waitForDeferred: true })).drained, true);
    assert.deepEqual(await applied(ids), expected(['first', 'second'], 40));
    const markers = await db.kysely.selectFrom('activity_consumptions').select(['consumer', 'outbox_id']).where('outbox_id', 'in', ids).execute();
    assert.equal(markers.length, 80);
  });
});

test("a consumer's failure keeps the other consumers' work, and its own row is applied once when its job runs again", async () => {
  let failures = 0;
  // The second consumer fails on one row the first two times it gets it; the rows around it, in the same batch, must not suffer.
  let failOn = -1;
  const flaky = consumer('flaky', (row) => row.id === failOn && failures++ < 2);
  await withDispatcher([consumer('steady'), flaky], async (record, queue) => {
    const ids = await record(10);
    failOn = ids[4]!;
    await queue.start();
    assert.equal((await drainAll(queue, 30_000, { waitForDeferred: true })).drained, true);
    await sleep(100);
    assert.equal(failures, 3, 'failed twice (together, then alone), then applied on the next run');
    assert.deepEqual(await applied(ids), expected(['steady', 'flaky'], 10));
  });
});
