// The Queue contract, on whichever database the run targets (SQLite, or PostgreSQL when DATABASE_URL
// is set): the same tests hold for the table queue and for pg-boss.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { createTestDatabase, engine, type TestDatabase } from '../../test/helpers/database.ts';
import { loadConfig, type Config } from '../config.ts';
import { openDatabase, type Db } from '../db/index.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { createQueue, drainAll, type Logger, type Queue } from './index.ts';

/** Until no job is ready or running (deferred ones aside); false when the time ran out first. */
const drain = async (queue: Queue, timeoutMs: number) => (await drainAll(queue, timeoutMs, { waitForDeferred: false })).drained;

// pg-boss takes heartbeats of 10 s at the least; on SQLite a short lease keeps the recovery tests quick.
const leaseSeconds = engine === 'postgres' ? 10 : 2;
const pollMilliseconds = 50;
const config: Config = { ...loadConfig({}), databasePoolSize: 4, jobs: { worker: true, leaseSeconds, pollMilliseconds } };
const fixture = fileURLToPath(new URL('../../test/fixtures/queue-worker.ts', import.meta.url));

let testDatabase: TestDatabase;
let db: Db;

before(async () => {
  testDatabase = await createTestDatabase();
  db = openDatabase({
    databaseUrl: testDatabase.databaseUrl,
    sqlitePath: `${testDatabase.dataDir}/codehost.db`,
    poolSize: config.databasePoolSize,
  });
  await migrateToLatest(db);
});

after(async () => {
  await db.close();
  await testDatabase.drop();
});

interface LogEntry {
  level: 'info' | 'warn' | 'error';
  msg: string | undefined;
}

function recordingLogger(): Logger & { entries: LogEntry[] } {
  const entries: LogEntry[] = [];
  const at = (level: LogEntry['level']) => (_obj: object, msg?: string) => void entries.push({ level, msg });
  return { entries, info: at('info'), warn: at('warn'), error: at('error') };
}

/** A queue for one test, stopped at its end (each test uses queue names of its own). */
async function withQueue(
  run: (queue: Queue, log: ReturnType<typeof recordingLogger>) => Promise<void>,
  queueConfig: Config = config,
): Promise<void> {
  const log = recordingLogger();
  const queue = createQueue(db, queueConfig, log);
  try {
    await run(queue, log);
  } finally {
    await queue.stop(5_000);
  }
}

async function waitFor(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
}

test('a sent job runs once on a started worker', async () => {
  await withQueue(async (queue) => {
    const runs: Array<{ data: object; attempt: number }> = [];
    queue.work<{ n: number }>('once', async (data, job) => void runs.push({ data, attempt: job.attempt }));
    await queue.start();
    await queue.send('once', { n: 1 });
    assert.equal(await drain(queue, 10_000), true);
    await sleep(300);
    assert.deepEqual(runs, [{ data: { n: 1 }, attempt: 1 }]);
    assert.equal((await queue.backlog()).pending, 0);
  });
});

test('consume middleware given when the queue is built wraps each handler\'s run, the first outermost', async () => {
  const log = recordingLogger();
  const seen: string[] = [];
  const queue = createQueue(db, config, log, {
    consume: [
      async (consumed, run) => {
        seen.push(`outer ${consumed.name}`);
        try {
          return await run();
        } finally {
          seen.push('outer done');
        }
      },
      async (_consumed, run) => {
        seen.push('inner');
        return run();
      },
    ],
  });
  try {
    queue.work<{ n: number }>('consumed', async (data) => void seen.push(`handler ${data.n}`));
    await queue.start();
    await queue.send('consumed', { n: 1 });
    assert.equal(await drain(queue, 10_000), true);
    await waitFor(() => seen.includes('outer done'), 5_000, 'the middleware to finish');
    assert.deepEqual(seen, ['outer consumed', 'inner', 'handler 1', 'outer done']);
  } finally {
    await queue.stop(5_000);
  }
});

test('a singleton key keeps one job per key while it exists', async () => {
  await withQueue(async (queue) => {
    for (const key of ['a', 'a', 'b']) await queue.send('singleton', { key }, { singletonKey: key });
    await queue.send('singleton', { key: null });
    await queue.send('singleton', { key: null });
    assert.equal((await queue.backlog()).pending, 4);

    const keys: Array<string | null> = [];
    queue.work<{ key: string | null }>('singleton', async ({ key }) => void keys.push(key));
    await queue.start();
    assert.equal(await drain(queue, 10_000), true);
    assert.deepEqual(keys.sort(), ['a', 'b', null, null]);

    // Once the first job is done, the key is free again.
    await queue.send('singleton', { key: 'a' }, { singletonKey: 'a' });
    assert.equal(await drain(queue, 10_000), true);
    assert.deepEqual(keys.sort(), ['a', 'a', 'b', null, null]);
  });
});

test('a failed job is retried, and given up once its retries are spent', async () => {
  await withQueue(async (queue, log) => {
    const attempts: Array<[string, number]> = [];
    queue.work<{ kind: string }>('retry', async ({ kind }, job) => {
      attempts.push([kind, job.attempt]);
      if (kind === 'always' || job.attempt === 1) throw new Error(`${kind} failed`);
    });
    await queue.start();
    await queue.send('retry', { kind: 'once' }, { retryDelaySeconds: 0 });
    await queue.send('retry', { kind: 'always' }, { retryLimit: 1, retryDelaySeconds: 0 });
    await waitFor(() => attempts.length === 4, 15_000, 'four attempts');
    assert.equal(await drain(queue, 10_000), true);
    await sleep(500);
    assert.deepEqual(attempts.filter(([kind]) => kind === 'once'), [['once', 1], ['once', 2]]);
    assert.deepEqual(attempts.filter(([kind]) => kind === 'always'), [['always', 1], ['always', 2]]);
    assert.equal(log.entries.filter((e) => e.msg === 'job failed; will retry').length, 2);
    assert.equal(log.entries.filter((e) => e.msg === 'job failed; no retries left').length, 1);
  });
});

test('a job sent in a transaction exists exactly when the transaction commits', async () => {
  await withQueue(async (queue) => {
    await assert.rejects(
      db.kysely.transaction().execute(async (trx) => {
        await queue.send('outbox', { n: 1 }, { transaction: trx });
        throw new Error('roll back');
      }),
      /roll back/,
    );
    assert.equal((await queue.backlog()).pending, 0);

    await db.kysely.transaction().execute(async (trx) => {
      await queue.send('outbox', { n: 2 }, { transaction: trx });
    });
    assert.equal((await queue.backlog()).pending, 1);

    const seen: number[] = [];
    queue.work<{ n: number }>('outbox', async ({ n }) => void seen.push(n));
    await queue.start();
    assert.equal(await drain(queue, 10_000), true);
    assert.deepEqual(seen, [2]);
  });
});

test('sendMany: one job per item with the send options, in a transaction exactly when it commits', async () => {
  await withQueue(async (queue) => {
    await assert.rejects(
      db.kysely.transaction().execute(async (trx) => {
        await queue.sendMany('many', [{ n: 0 }, { n: -1 }], { transaction: trx });
        throw new Error('roll back');
      }),
      /roll back/,
    );
    assert.equal((await queue.backlog()).pending, 0);
    await queue.sendMany('many', []);
    await db.kysely.transaction().execute(async (trx) => {
      await queue.sendMany('many', [{ n: 1 }, { n: 2 }, { n: 3 }], { transaction: trx, retryLimit: 1, retryDelaySeconds: 0 });
    });
    assert.equal((await queue.backlog()).pending, 3);

    const runs: Array<[number, number]> = [];
    queue.work<{ n: number }>('many', async ({ n }, job) => {
      runs.push([n, job.attempt]);
      // Each job has its own retries: the second fails once and runs again.
      if (n === 2 && job.attempt === 1) throw new Error('once');
    }, { concurrency: 4 });
    await queue.start();
    await waitFor(() => runs.length === 4, 15_000, 'four runs');
    assert.equal(await drain(queue, 10_000), true);
    assert.deepEqual(runs.sort(), [[1, 1], [2, 1], [2, 2], [3, 1]]);
  });
});

test('behind a transaction pooler (CODEHOST_DATABASE_POOLER=transaction) the worker does not LISTEN, and a job sent in a transaction still runs: polled', { skip: engine !== 'postgres' && 'PostgreSQL only: SQLite has no LISTEN' }, async () => {
  // A LISTEN through PgBouncer in transaction mode broke other clients' queries (test/db/pgbouncer.test.ts).
  const listening = async () =>
    (await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and query ilike 'LISTEN %'`.execute(db.kysely)).rows[0]!.n;
  for (const pooler of ['session', 'transaction'] as const) {
    await withQueue(async (queue) => {
      const runs: number[] = [];
      queue.work<{ n: number }>(`pooled-${pooler}`, async ({ n }) => void runs.push(n));
      await queue.start();
      assert.equal(await listening(), pooler === 'session' ? 1 : 0, pooler);
      // A send in a transaction wakes no local worker: LISTEN or the poll finds it.
      await db.kysely.transaction().execute((trx) => queue.send(`pooled-${pooler}`, { n: 1 }, { transaction: trx }));
      await waitFor(() => runs.length === 1, 5_000, `the job (${pooler})`);
    }, { ...config, databasePooler: pooler });
  }
});

test('a job sent in a transaction is inserted by a named statement on PostgreSQL, unnamed behind a transaction pooler', { skip: engine !== 'postgres' && 'PostgreSQL only: SQLite has no server-side statements' }, async () => {
  // Every fan-out and every activity sends its jobs in the caller's transaction: planning that insert
  // on each run was most of its cost (docs/performance.md, "Webhook deliveries").
  for (const pooler of ['session', 'transaction'] as const) {
    // One connection: the count below runs where the send ran.
    const ownDb = openDatabase({ databaseUrl: testDatabase.databaseUrl, sqlitePath: `${testDatabase.dataDir}/codehost.db`, poolSize: 1, pooler });
    const queue = createQueue(ownDb, { ...config, databasePooler: pooler }, recordingLogger());
    try {
      await ownDb.kysely.transaction().execute((trx) => queue.sendMany(`named-send-${pooler}`, [{ n: 1 }, { n: 2 }], { transaction: trx }));
      await ownDb.kysely.transaction().execute((trx) => queue.send(`named-send-${pooler}`, { n: 3 }, { transaction: trx }));
      const prepared = await sql<{ n: number }>`select count(*)::int as n from pg_prepared_statements where name like 'codehost_pgboss_send_%'`.execute(ownDb.kysely);
      assert.equal(prepared.rows[0]!.n > 0, pooler === 'session', pooler);
      const sent = await sql<{ n: number }>`select count(*)::int as n from pgboss.job where name = ${`named-send-${pooler}`}`.execute(ownDb.kysely);
      assert.equal(sent.rows[0]!.n, 3, pooler);
    } finally {
      // Nobody works these: the later tests drain every queue.
      await sql`delete from pgboss.job where name = ${`named-send-${pooler}`}`.execute(db.kysely);
      await queue.stop(5_000);
      await ownDb.close();
    }
  }
});

test('a job completed in its handler\'s transaction is completed by a named statement on PostgreSQL, unnamed behind a transaction pooler', { skip: engine !== 'postgres' && 'PostgreSQL only: SQLite has no server-side statements' }, async () => {
  // Every batch of delivery outcomes completes its jobs so: planning pg-boss's completion on every
  // run was most of its cost (docs/performance.md, "Webhook deliveries").
  for (const pooler of ['session', 'transaction'] as const) {
    // One connection: the count below runs where the completion ran.
    const ownDb = openDatabase({ databaseUrl: testDatabase.databaseUrl, sqlitePath: `${testDatabase.dataDir}/codehost.db`, poolSize: 1, pooler });
    const queue = createQueue(ownDb, { ...config, databasePooler: pooler }, recordingLogger());
    try {
      const name = `named-complete-${pooler}`;
      await queue.sendMany(name, [{ n: 1 }, { n: 2 }]);
      const seen: number[] = [];
      queue.work<{ n: number }>(name, async ({ n }, run) => {
        await ownDb.kysely.transaction().execute((trx) => queue.completeWithin(trx, [run]));
        seen.push(n);
      }, { concurrency: 2 });
      await queue.start();
      await waitFor(() => seen.length === 2, 15_000, 'both jobs');
      assert.equal(await drain(queue, 10_000), true);
      const prepared = await sql<{ n: number }>`select count(*)::int as n from pg_prepared_statements where name like 'codehost_pgboss_complete_%'`.execute(ownDb.kysely);
      assert.equal(prepared.rows[0]!.n > 0, pooler === 'session', pooler);
      const completed = await sql<{ n: number }>`select count(*)::int as n from pgboss.job where name = ${name} and state = 'completed'`.execute(ownDb.kysely);
      assert.equal(completed.rows[0]!.n, 2, pooler);
    } finally {
      await queue.stop(5_000);
      await ownDb.close();
    }
  }
});

test('pending counts jobs due now, not jobs scheduled for later; drain waits for them', async () => {
  await withQueue(async (queue) => {
    await queue.send('later', { n: 1 }, { startAfterSeconds: 3600 });
    assert.equal((await queue.backlog()).pending, 0);
    assert.equal(await drain(queue, 1_000), true);

    await queue.send('now', { n: 2 });
    assert.equal((await queue.backlog()).pending, 1);
    assert.equal(await drain(queue, 300), false, 'nothing works the queue yet');

    let ran = 0;
    queue.work('now', async () => void ran++);
    queue.work('later', async () => assert.fail('a job scheduled for later ran now'));
    await queue.start();
    assert.equal(await drain(queue, 10_000), true);
    assert.equal(ran, 1);
  });
});

test('backlog tells deferred jobs apart; drainAll waits for them, or answers at once when none can run in time', async () => {
  // A database of its own: the other tests leave jobs scheduled for later behind.
  const own = await createTestDatabase();
  const ownDb = openDatabase({ databaseUrl: own.databaseUrl, sqlitePath: `${own.dataDir}/codehost.db`, poolSize: config.databasePoolSize });
  await migrateToLatest(ownDb);
  const queue = createQueue(ownDb, config, recordingLogger());
  try {
    const runs: string[] = [];
    let failures = 0;
    queue.work<{ n: string }>('deferred', async ({ n }) => void runs.push(n));
    queue.work<{ n: string }>('flaky', async ({ n }) => {
      if (failures++ === 0) throw new Error('first attempt fails');
      runs.push(n);
    });
    await queue.start();
    assert.deepEqual(await queue.backlog(), { pending: 0, deferred: 0, nextRunAt: null });

    const sentAt = Date.now();
    await queue.send('deferred', { n: 'soon' }, { startAfterSeconds: 1 });
    const backlog = await queue.backlog();
    const answeredAt = Date.now();
    assert.deepEqual([backlog.pending, backlog.deferred], [0, 1]);
    // One second after the send, which happened between sentAt and answeredAt (50 ms for PostgreSQL's
    // clock against this process's and rounding).
    const next = backlog.nextRunAt!;
    assert.ok(next >= sentAt + 1000 - 50 && next <= answeredAt + 1000 + 50, `next run at ${next - sentAt} ms after the send, answered ${answeredAt - sentAt} ms after it`);
    // Not waiting for deferred jobs: drained, with the deferred one reported.
    const reported = await drainAll(queue, 5_000, { waitForDeferred: false });
    assert.deepEqual([reported.drained, reported.pending, reported.deferred], [true, 0, 1]);
    assert.deepEqual(runs, []);
    // Waiting: the deferred job has run when the drain answers.
    const waited = await drainAll(queue, 10_000, { waitForDeferred: true });
    assert.deepEqual([waited.drained, waited.pending, waited.deferred, waited.nextRunAt], [true, 0, 0, null]);
    assert.deepEqual(runs, ['soon']);

    // A retry waiting out its delay is deferred too, and waited for.
    await queue.send('flaky', { n: 'retried' }, { retryDelaySeconds: 1 });
    const retried = await drainAll(queue, 15_000, { waitForDeferred: true });
    assert.equal(retried.drained, true);
    assert.deepEqual(runs, ['soon', 'retried']);
    assert.equal(failures, 2);

    // A job due after the deadline cannot run in time: the answer comes at once.
    await queue.send('deferred', { n: 'late' }, { startAfterSeconds: 3600 });
    const started = Date.now();
    const late = await drainAll(queue, 5_000, { waitForDeferred: true });
    assert.ok(Date.now() - started < 2_000, `answered after ${Date.now() - started} ms`);
    assert.deepEqual([late.drained, late.pending, late.deferred], [false, 0, 1]);
    assert.ok(late.nextRunAt! > Date.now() + 3_500_000);
  } finally {
    await queue.stop(5_000);
    await ownDb.close();
    await own.drop();
  }
});

test('a worker runs at most `concurrency` jobs of its queue at once', async () => {
  await withQueue(async (queue) => {
    for (let n = 0; n < 6; n++) await queue.send('concurrent', { n });
    let running = 0;
    let most = 0;
    let done = 0;
    queue.work(
      'concurrent',
      async () => {
        most = Math.max(most, ++running);
        await sleep(150);
        running--;
        done++;
      },
      { concurrency: 2 },
    );
    await queue.start();
    assert.equal(await drain(queue, 15_000), true);
    assert.equal(done, 6);
    assert.equal(most, 2);
  });
});

test('a worker claims jobs for all its free slots at once, and settles them', async () => {
  await withQueue(async (queue) => {
    for (let n = 0; n < 12; n++) await queue.send('batch', { n });
    let running = 0;
    let most = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const seen: number[] = [];
    queue.work<{ n: number }>(
      'batch',
      async ({ n }) => {
        seen.push(n);
        most = Math.max(most, ++running);
        await gate;
        running--;
      },
      { concurrency: 8 },
    );
    await queue.start();
    await waitFor(() => running === 8, 10_000, 'eight jobs running');
    // Held at the gate, the other four wait for a free slot.
    await sleep(300);
    assert.equal(most, 8);
    assert.equal((await queue.backlog()).pending, 12);
    release();
    assert.equal(await drain(queue, 10_000), true);
    assert.deepEqual(seen.sort((a, b) => a - b), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  });
});

test('jobs do not wait for the idle poll: local sends, sends of other processes, retries and delayed jobs', async () => {
  // A poll interval longer than the test: only wake-ups can run these jobs in time.
  const idle: Config = { ...config, jobs: { ...config.jobs, pollMilliseconds: 120_000 } };
  const sender = createQueue(db, idle, recordingLogger());
  try {
    await withQueue(async (queue) => {
      const ran: string[] = [];
      queue.work<{ kind: string }>('wake', async ({ kind }, job) => {
        ran.push(`${kind}:${job.attempt}`);
        if (kind === 'retry' && job.attempt === 1) throw new Error('first attempt fails');
      });
      await queue.start();
      await sleep(200);

      await queue.send('wake', { kind: 'local' });
      await waitFor(() => ran.includes('local:1'), 3_000, 'the local send to run');
      await queue.send('wake', { kind: 'retry' }, { retryDelaySeconds: 1 });
      await waitFor(() => ran.includes('retry:2'), 6_000, 'the retry to run');
      await queue.send('wake', { kind: 'delayed' }, { startAfterSeconds: 1 });
      await sleep(500);
      assert.equal(ran.includes('delayed:1'), false, 'a delayed job ran early');
      await waitFor(() => ran.includes('delayed:1'), 4_000, 'the delayed job to run');

      // Two jobs deferred to different moments: each runs when it comes due, not at the next poll.
      const sentAt = Date.now();
      await queue.send('wake', { kind: 'sooner' }, { startAfterSeconds: 1 });
      await queue.send('wake', { kind: 'later' }, { startAfterSeconds: 2 });
      await waitFor(() => ran.includes('sooner:1'), 4_000, 'the sooner delayed job to run');
      await waitFor(() => ran.includes('later:1'), 4_000, 'the later delayed job to run');
      assert.ok(Date.now() - sentAt < 2_000 + 700, `the later job ran ${Date.now() - sentAt} ms after its send`);

      // Another process's send: pg-boss's NOTIFY wakes this one. SQLite has no such signal across
      // processes; its poll (every 250 ms by default) finds them.
      if (engine === 'postgres') {
        await sender.send('wake', { kind: 'remote' });
        await waitFor(() => ran.includes('remote:1'), 3_000, "another process's send to run");
      }
    }, idle);
  } finally {
    await sender.stop(5_000);
  }
});

test('a job still running when stop gives up on it runs again on another worker', async () => {
  let release!: () => void;
  const hung = new Promise<void>((resolve) => (release = resolve));
  const attempts: number[] = [];
  try {
    await withQueue(async (queue, log) => {
      queue.work('abandoned', async (_data, job) => {
        attempts.push(job.attempt);
        await hung;
      });
      await queue.start();
      await queue.send('abandoned', {}, { retryDelaySeconds: 0 });
      await waitFor(() => attempts.length === 1, 10_000, 'the job to start');
      await queue.stop(300);
      assert.equal(log.entries.filter((e) => e.msg === 'job still running at shutdown; released to run again').length, 1);
    });
    await withQueue(async (queue) => {
      queue.work('abandoned', async (_data, job) => void attempts.push(job.attempt));
      await queue.start();
      assert.equal(await drain(queue, 15_000), true);
      assert.deepEqual(attempts, [1, 2]);
    });
  } finally {
    release();
  }
});

test('stop waits for a running job to finish', async () => {
  await withQueue(async (queue) => {
    let started = false;
    let finished = false;
    queue.work('slow', async () => {
      started = true;
      await sleep(700);
      finished = true;
    });
    await queue.start();
    await queue.send('slow', {});
    await waitFor(() => started, 10_000, 'the job to start');
    await queue.stop(10_000);
    assert.equal(finished, true);
  });
  await withQueue(async (queue) => assert.equal((await queue.backlog()).pending, 0));
});

test('a job running longer than its lease keeps it while its process lives', async () => {
  const other = createQueue(db, config, recordingLogger());
  try {
    await withQueue(async (queue, log) => {
      const attempts: number[] = [];
      // Long enough for an unrenewed lease (or pg-boss heartbeat) to run out and be noticed.
      const handler = async (_data: object, job: { attempt: number }) => {
        attempts.push(job.attempt);
        await sleep(leaseSeconds * 1500);
      };
      queue.work('long', handler);
      other.work('long', handler);
      await Promise.all([queue.start(), other.start()]);
      await queue.send('long', {});
      assert.equal(await drain(queue, leaseSeconds * 1500 + 10_000), true);
      assert.deepEqual(attempts, [1]);
      assert.deepEqual(log.entries.filter((e) => e.level !== 'info'), []);
    });
  } finally {
    await other.stop(5_000);
  }
});

/** Resolves once the child prints `text`; rejects if it exits or stays silent first. */
function output(child: ChildProcess, text: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`the worker did not print "${text}" within ${timeoutMs} ms`)), timeoutMs);
    child.stdout?.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes(text)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the worker exited (${code ?? signal}) before printing "${text}"`));
    });
  });
}

/**
 * Starts the worker fixture on `queue`, waits until its handler has started a job, and kills it
 * (SIGKILL); with `completeWithin`, the handler has completed its job in its own committed transaction first.
 */
async function killedWhileRunning(queue: string, options: { completeWithin?: boolean } = {}): Promise<void> {
  const child = spawn(process.execPath, [fixture, queue, ...(options.completeWithin ? ['complete-within'] : [])], {
    env: {
      ...process.env,
      DATABASE_URL: testDatabase.databaseUrl ?? '',
      CODEHOST_DATA_DIR: testDatabase.dataDir,
      CODEHOST_JOB_LEASE_SECONDS: String(leaseSeconds),
      CODEHOST_JOB_POLL_MS: String(pollMilliseconds),
      CODEHOST_DATABASE_POOL_SIZE: String(config.databasePoolSize),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  try {
    await output(child, 'started', 30_000);
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
}

test('a job whose process was killed mid-run runs again, once, after a restart', async () => {
  await withQueue(async (queue) => {
    await queue.send('restart', { n: 1 }, { retryDelaySeconds: 0 });

    await killedWhileRunning('restart');

    const attempts: number[] = [];
    queue.work('restart', async (_data, job) => void attempts.push(job.attempt));
    await queue.start();
    // The lease (pg-boss: heartbeat, then a supervise pass) runs out, then the next poll claims the job.
    await waitFor(() => attempts.length > 0, leaseSeconds * 2_000 + 5_000, 'the job to run again');
    assert.equal(await drain(queue, 10_000), true);
    await sleep(1_000);
    assert.deepEqual(attempts, [2]);
  });
});

test('a job completed in its handler\'s transaction is done when that commits; rolled back, it is not, and the failed handler\'s job runs again', async () => {
  await withQueue(async (queue, log) => {
    await queue.send('within', { n: 1 }, { retryDelaySeconds: 0 });
    const pendingSeen: number[] = [];
    const attempts: number[] = [];
    queue.work('within', async (_data, run) => {
      attempts.push(run.attempt);
      if (run.attempt === 1) {
        await assert.rejects(
          db.kysely.transaction().execute(async (trx) => {
            await queue.completeWithin(trx, [run]);
            throw new Error('roll back');
          }),
          /roll back/,
        );
        pendingSeen.push((await queue.backlog()).pending);
        throw new Error('the transaction did not commit');
      }
      await db.kysely.transaction().execute((trx) => queue.completeWithin(trx, [run]));
      // Done before the handler returns: the commit completed it.
      pendingSeen.push((await queue.backlog()).pending);
    });
    await queue.start();
    await waitFor(() => attempts.length === 2 && pendingSeen.length === 2, 15_000, 'the job to run twice');
    assert.equal(await drain(queue, 10_000), true);
    await sleep(500);
    assert.deepEqual(attempts, [1, 2]);
    assert.deepEqual(pendingSeen, [1, 0]);
    // Completed once, by the commit: nothing failed to record an outcome.
    assert.deepEqual(log.entries.filter((entry) => entry.level === 'error'), []);
  });
});

test('a job completed in its handler\'s committed transaction does not run again after its process is killed', async () => {
  await withQueue(async (queue) => {
    await queue.send('completed-then-killed', { n: 1 }, { retryDelaySeconds: 0 });

    await killedWhileRunning('completed-then-killed', { completeWithin: true });

    const attempts: number[] = [];
    queue.work('completed-then-killed', async (_data, job) => void attempts.push(job.attempt));
    await queue.start();
    assert.equal((await queue.backlog()).pending, 0);
    // Past the time a job of a dead process is claimed again (the test above): still nothing ran.
    await sleep(leaseSeconds * 2_000 + 2_000);
    assert.deepEqual(attempts, []);
  });
});

test('a job out of attempts runs its exhausted hook once, with its data', async () => {
  await withQueue(async (queue) => {
    const attempts: number[] = [];
    const hooks: object[] = [];
    queue.work<{ n: number }>('exhaust-throw', async (_data, job) => {
      attempts.push(job.attempt);
      throw new Error('always fails');
    }, { exhausted: async (data) => void hooks.push(data) });
    queue.work<{ n: number }>('exhaust-fine', async () => {}, { exhausted: async (data) => void hooks.push(data) });
    await queue.start();
    await queue.send('exhaust-throw', { n: 1 }, { retryLimit: 1, retryDelaySeconds: 0, singletonKey: 'one' });
    await queue.send('exhaust-fine', { n: 2 }, { retryLimit: 0 });
    await waitFor(() => hooks.length > 0, 20_000, 'the exhausted hook');
    assert.equal(await drain(queue, 10_000), true);
    await sleep(500);
    assert.deepEqual(attempts, [1, 2]);
    assert.deepEqual(hooks, [{ n: 1 }]);
  });
});

test('a job whose process is killed on every attempt runs its exhausted hook once', async () => {
  await withQueue(async (queue) => {
    const hooks: object[] = [];
    const attempts: number[] = [];
    // Registered first, so the queue is created with its hook (as the server registers its workers before anything is sent).
    queue.work<{ n: number }>('exhaust-kill', async (_data, job) => void attempts.push(job.attempt), { exhausted: async (data) => void hooks.push(data) });
    await queue.send('exhaust-kill', { n: 3 }, { retryLimit: 0, retryDelaySeconds: 0 });

    await killedWhileRunning('exhaust-kill');

    await queue.start();
    // The lease (pg-boss: heartbeat, then a supervise pass) runs out; the job has no attempt left.
    await waitFor(() => hooks.length > 0, leaseSeconds * 2_000 + 10_000, 'the exhausted hook');
    assert.equal(await drain(queue, 10_000), true);
    await sleep(500);
    assert.deepEqual(attempts, []);
    assert.deepEqual(hooks, [{ n: 3 }]);
  });
});

test('with a group limit, one group\'s backlog does not hold up another group\'s job', async () => {
  await withQueue(async (queue) => {
    const running = new Map<string, number>();
    const most = new Map<string, number>();
    const finished: string[] = [];
    queue.work<{ group: string; n: number }>('grouped', async ({ group, n }) => {
      running.set(group, (running.get(group) ?? 0) + 1);
      most.set(group, Math.max(most.get(group) ?? 0, running.get(group)!));
      await sleep(150);
      running.set(group, running.get(group)! - 1);
      finished.push(`${group}${n}`);
    }, { concurrency: 2, groupConcurrency: 1 });
    for (let n = 1; n <= 4; n++) await queue.send('grouped', { group: 'a', n }, { group: 'a' });
    await queue.send('grouped', { group: 'b', n: 1 }, { group: 'b' });
    await queue.start();
    await waitFor(() => finished.length === 5, 30_000, 'every job');
    assert.equal(most.get('a'), 1);
    assert.ok(finished.indexOf('b1') < finished.indexOf('a4'), finished.join(' '));
  });
});
