// The queue on PostgreSQL: pg-boss 12 in the `pgboss` schema, with its own connection pool. Every
// process that sends starts pg-boss (sends need its schema and queue cache), and so also supervises:
// a job whose worker died stops heartbeating, and the next supervise pass fails it into a retry.
//
// Throughput: pg-boss's own workers fetch one job per poller, so a concurrency of 32 would be 32
// pollers, each a transaction per poll even while idle. Instead each queue has one poller here that
// fetches up to its free slots in one statement (once half of them are free) and runs the jobs in a
// local pool; finished jobs are completed in batches, and one timer heartbeats every running job.
// Wake-ups come from LISTEN/NOTIFY (pg-boss notifies on every send to a `notify` queue), from local
// sends and failures, so the idle poll is only a backstop for what nothing announces: jobs of other
// processes that come due later, and jobs a supervise pass put back after their worker died.
import { randomUUID } from 'node:crypto';
import { CompiledQuery, sql } from 'kysely';
import { PgBoss, type Db as BossDb, type JobWithMetadata } from 'pg-boss';
import { notifyChannelSql } from 'pg-boss/dist/plans.js';
import type { Config } from '../config.ts';
import type { Db, Executor } from '../db/index.ts';
import { reusableText } from '../db/prepared.ts';
import { WriteBatcher } from './batch.ts';
import { LocalPool, type Running as PoolRunning } from './local-pool.ts';
import { consumed, type ConsumeMiddleware, type ConsumeOptions } from './middleware.ts';
import { EXHAUSTED_RETRY_LIMIT, exhaustedQueue, type Backlog, type JobHandler, type Logger, type Queue, type SendOptions, type WorkOptions } from './queue.ts';

const SCHEMA = 'pgboss';
/** pg-boss refuses shorter heartbeats, so a lease below this is stretched to it. */
const MIN_HEARTBEAT_SECONDS = 10;
/** pg-boss's longest allowed run. Heartbeats, not this, are what detect a dead worker. */
const MAX_RUN_SECONDS = 24 * 60 * 60;
/** The idle poll while LISTEN works: each poll is a transaction per worked queue. */
const NOTIFIED_POLL_MS = 2_000;
/** A wake-up for a job due later comes this much after its time: pg-boss compares with the database's clock. */
const CLOCK_SLACK_MS = 100;

type Running = PoolRunning<JobWithMetadata<object>>;

const attempt = ({ job }: Running) => ({ id: job.id, retryCount: job.retryCount });

export class PgBossQueue implements Queue {
  readonly #db: Db;
  readonly #log: Logger;
  readonly #boss: PgBoss;
  readonly #heartbeatSeconds: number;
  readonly #pollMs: number;
  readonly #pool: LocalPool<JobWithMetadata<object>>;
  /** Per worked queue: its finished jobs, completed in batches. */
  readonly #completions = new Map<string, WriteBatcher<Running>>();
  readonly #queues = new Map<string, Promise<void>>();
  #booted: Promise<void> | null = null;
  /**
   * Whether the worker LISTENs. Not behind a transaction pooler (CODEHOST_DATABASE_POOLER=transaction):
   * PgBouncer 1.18 runs the LISTEN on a server connection that then serves other clients, and the
   * notifications reaching it broke their queries (rows missing, connections closed; measured by
   * test/db/pgbouncer.test.ts). The queues are polled there, every CODEHOST_JOB_POLL_MS.
   */
  readonly #listens: boolean;
  /** The LISTEN connection of a started worker; null when it could not listen. */
  #listener: { close(): Promise<void> } | null = null;
  #pollTimer: NodeJS.Timeout | undefined;
  /** Queues worked with a group limit, and the limit. */
  readonly #groupLimits = new Map<string, number>();
  /** Queues whose jobs have an `exhausted` hook: their dead-letter queue runs it. */
  readonly #hooked = new Set<string>();
  /** The running job of each run its handler was given, for `completeWithin`. */
  readonly #runs = new WeakMap<object, Running>();
  /** Jobs completed in their handler's transaction (`completeWithin`): not completed again once it returns. */
  readonly #completedWithin = new WeakSet<Running>();
  /** What wraps each handler's run (see middleware.ts). */
  readonly #consume: readonly ConsumeMiddleware[];

  constructor(db: Db, config: Config, log: Logger, options: ConsumeOptions = {}) {
    if (!db.url) throw new Error('the pg-boss queue needs a PostgreSQL connection string');
    this.#db = db;
    this.#consume = options.consume ?? [];
    this.#log = log;
    this.#heartbeatSeconds = Math.max(MIN_HEARTBEAT_SECONDS, config.jobs.leaseSeconds);
    this.#pollMs = config.jobs.pollMilliseconds;
    this.#listens = config.databasePooler !== 'transaction';
    this.#pool = new LocalPool({
      log,
      claim: (queue, limit) => this.#fetch(queue, limit),
      run: (running) => this.#handle(running),
      heartbeat: () => this.#touch(),
      // pg-boss fails a job whose heartbeat is older than heartbeatSeconds; refresh at half that.
      heartbeatMs: (this.#heartbeatSeconds * 1000) / 2,
      // The callers add CLOCK_SLACK_MS to the time itself.
      wakeSlackMs: 0,
      claimFailed: 'job fetch failed',
    });
    // Expired heartbeats are only noticed by a supervise pass (gated by the monitor interval), so run
    // it several times per heartbeat: a dead worker's job is retried about 1.25 leases after it died.
    const superviseSeconds = Math.min(60, Math.max(1, Math.round(this.#heartbeatSeconds / 4)));
    this.#boss = new PgBoss({
      connectionString: db.url,
      // Its own pool, sized like the application's; a worker process adds one connection for LISTEN.
      max: config.databasePoolSize,
      // A database that is down fails each statement after this, rather than queueing it for ever.
      connectionTimeoutMillis: config.databaseConnectTimeoutMs,
      schema: SCHEMA,
      // The workers here are not pg-boss's, so pg-boss's listener would wake nothing: `start` listens
      // itself. Sends still notify (queues are created with `notify`).
      useListenNotify: false,
      superviseIntervalSeconds: superviseSeconds,
      monitorIntervalSeconds: superviseSeconds,
      schedule: false,
    });
    this.#boss.on('error', (err) => log.error({ err }, 'job queue error'));
    this.#boss.on('warning', (warning) => log.warn({ data: warning.data }, warning.message));
  }

  async send<T extends object>(name: string, data: T, options: SendOptions = {}): Promise<void> {
    await this.#queue(name);
    const id = randomUUID();
    await this.#boss.send(name, data, {
      ...this.#jobOptions(id, options),
      // The queue's `exclusive` policy allows one queued or running job per key; a job sent without a
      // key gets a key of its own, so only callers that ask for deduplication get it.
      singletonKey: options.singletonKey ?? id,
      ...(options.group === undefined ? {} : { group: { id: options.group } }),
      ...(options.transaction ? { db: inTransaction(options.transaction, 'pgboss_send') } : {}),
    });
    this.#wakeAfterSend(name, options);
  }

  async sendMany<T extends object>(name: string, data: T[], options: Omit<SendOptions, 'singletonKey' | 'group'> = {}): Promise<void> {
    if (data.length === 0) return;
    await this.#queue(name);
    const jobs = data.map((item) => {
      const id = randomUUID();
      // The settings `send` gives a job, each job its own singleton key.
      return { ...this.#jobOptions(id, options), data: item, singletonKey: id };
    });
    await this.#boss.insert(name, jobs, options.transaction ? { db: inTransaction(options.transaction, 'pgboss_send') } : {});
    this.#wakeAfterSend(name, options);
  }

  /** What every job sent here carries: its id, retries, lease and start. */
  #jobOptions(id: string, options: SendOptions) {
    return {
      id,
      retryLimit: options.retryLimit ?? 2,
      retryDelay: options.retryDelaySeconds ?? 5,
      retryBackoff: options.retryBackoff ?? false,
      // Per job rather than per queue, so a changed lease applies to queues created before it.
      heartbeatSeconds: this.#heartbeatSeconds,
      expireInSeconds: MAX_RUN_SECONDS,
      ...(options.startAfterSeconds ? { startAfter: options.startAfterSeconds } : {}),
    };
  }

  /**
   * NOTIFY wakes the workers of every process (a transactional job's once it commits); this covers
   * a connection that cannot LISTEN, and a job scheduled for later, which sends no NOTIFY.
   */
  #wakeAfterSend(name: string, options: SendOptions): void {
    if (options.startAfterSeconds) this.#pool.wakeAt(name, Date.now() + options.startAfterSeconds * 1000 + CLOCK_SLACK_MS);
    else if (!options.transaction) this.#pool.wake(name);
  }

  async completeWithin(transaction: Executor, runs: readonly object[]): Promise<void> {
    const byQueue = new Map<string, Running[]>();
    for (const run of runs) {
      const running = this.#runs.get(run);
      if (running) byQueue.set(running.job.name, [...(byQueue.get(running.job.name) ?? []), running]);
    }
    // pg-boss's own completion (fenced to the attempt fetched: a job taken away meanwhile is left as
    // it is), run in the caller's transaction as a named statement.
    for (const [name, held] of byQueue) {
      await this.#boss.complete(name, held.map(attempt), undefined, { db: inTransaction(transaction, 'pgboss_complete') });
      for (const running of held) this.#completedWithin.add(running);
    }
  }

  work<T extends object>(name: string, handler: JobHandler<T>, options: WorkOptions<T> = {}): void {
    if (options.groupConcurrency !== undefined) this.#groupLimits.set(name, options.groupConcurrency);
    const exhausted = options.exhausted;
    if (exhausted) this.#hooked.add(name);
    const run = handler as JobHandler<object>;
    this.#worked(name, (data, job) => consumed(this.#consume, { name }, () => run(data, job))(), options.concurrency ?? 1);
    if (exhausted) this.#worked(exhaustedQueue(name), (data) => exhausted(data as T), 1);
  }

  #worked(name: string, handler: JobHandler<object>, concurrency: number): void {
    this.#completions.set(name, new WriteBatcher(async (done) => void (await this.#boss.complete(name, done.map(attempt)))));
    this.#pool.work(name, handler, concurrency);
  }

  async start(): Promise<void> {
    if (this.#pool.started) return;
    this.#pool.start();
    await this.#boot();
    await Promise.all([...this.#completions.keys()].map((name) => this.#queue(name)));
    this.#listener = await this.#listen();
    this.#poll();
  }

  async stop(timeoutMs = 30_000): Promise<void> {
    this.#pool.halt();
    clearTimeout(this.#pollTimer);
    const listener = this.#listener;
    this.#listener = null;
    await listener?.close().catch((err: unknown) => this.#log.error({ err }, 'could not close the job listener'));
    // Fail the jobs still running into a retry, so another worker (or a restart) runs them again.
    await this.#pool.finish(timeoutMs, async (running) => {
      const { job } = running;
      this.#log.warn({ queue: job.name, jobId: job.id }, 'job still running at shutdown; released to run again');
      await this.#boss
        .fail(job.name, attempt(running), { message: 'the worker shut down while the job was running' })
        .catch((err: unknown) => this.#log.error({ err, queue: job.name, jobId: job.id }, 'could not release job'));
    });
    if (this.#booted) await this.#boss.stop({ graceful: true, timeout: timeoutMs });
  }

  async backlog(): Promise<Backlog> {
    await this.#boot();
    // pg-boss compares start_after with the database's clock: the due time is turned into this
    // process's terms through the wait the database sees.
    const { rows } = await sql<{ pending: number; deferred: number; wait_ms: number | null }>`
      select
        count(*) filter (where state = 'active' or (state in ('created', 'retry') and start_after <= now()))::int as pending,
        count(*) filter (where state in ('created', 'retry') and start_after > now())::int as deferred,
        (extract(epoch from min(start_after) filter (where state in ('created', 'retry') and start_after > now()) - now()) * 1000)::float8 as wait_ms
      from ${sql.id(SCHEMA, 'job')}
      where state in ('created', 'retry', 'active')
    `.execute(this.#db.kysely);
    const waitMs = rows[0]?.wait_ms ?? null;
    return { pending: rows[0]?.pending ?? 0, deferred: rows[0]?.deferred ?? 0, nextRunAt: waitMs === null ? null : Date.now() + Number(waitMs) };
  }

  #boot(): Promise<void> {
    this.#booted ??= this.#boss.start().then(
      () => undefined,
      (err: unknown) => {
        this.#booted = null;
        throw err;
      },
    );
    return this.#booted;
  }

  /**
   * Creates the queue once per process; create_queue leaves an existing queue as it is. A queue with
   * an `exhausted` hook gets its hook's queue as its dead-letter queue: pg-boss copies a job there
   * when it fails for the last time, whether its handler threw or its heartbeat stopped (the worker
   * died). The dead letter is set on an existing queue too, since a process without workers may have
   * created it; jobs take it from their queue when they are sent.
   */
  #queue(name: string): Promise<void> {
    let created = this.#queues.get(name);
    if (!created) {
      const options = { notify: true, heartbeatSeconds: this.#heartbeatSeconds, expireInSeconds: MAX_RUN_SECONDS };
      const isHook = [...this.#hooked].some((hooked) => exhaustedQueue(hooked) === name);
      created = this.#boot().then(async () => {
        if (isHook) return this.#boss.createQueue(name, { ...options, policy: 'standard', retryLimit: EXHAUSTED_RETRY_LIMIT, retryDelay: 5 });
        if (!this.#hooked.has(name)) return this.#boss.createQueue(name, { ...options, policy: 'exclusive' });
        const deadLetter = exhaustedQueue(name);
        await this.#queue(deadLetter);
        await this.#boss.createQueue(name, { ...options, policy: 'exclusive', deadLetter });
        await this.#boss.updateQueue(name, { deadLetter });
        // Jobs take their dead letter from the queue when sent: those sent before (by a process that
        // works no queue) get it now.
        await sql`update ${sql.id(SCHEMA, 'job')} set dead_letter = ${deadLetter}
          where name = ${name} and dead_letter is null and state in ('created', 'retry', 'active')`.execute(this.#db.kysely);
      });
      created.catch(() => this.#queues.delete(name));
      this.#queues.set(name, created);
    }
    return created;
  }

  /** LISTENs on pg-boss's channel (payload: the queue name); null behind a transaction pooler, or when the connection cannot. */
  async #listen(): Promise<{ close(): Promise<void> } | null> {
    const db = this.#boss.getDb();
    if (!this.#listens || !db.listen) return null;
    try {
      const { rows } = await db.executeSql(`select ${notifyChannelSql(SCHEMA)} as channel`);
      const channel = (rows[0] as { channel: string }).channel;
      return await db.listen(
        channel,
        (name) => this.#pool.wake(name),
        // Notifications sent while the listener was reconnecting are lost: look at every queue.
        () => this.#pool.wakeAll(),
      );
    } catch (err) {
      this.#log.warn({ err }, 'LISTEN/NOTIFY unavailable; the job queues are polled');
      return null;
    }
  }

  /** The backstop: every worked queue with free slots fetches each poll interval, relaxed while LISTEN works. */
  #poll(): void {
    if (!this.#pool.started) return;
    this.#pool.wakeAll();
    this.#pollTimer = setTimeout(() => this.#poll(), this.#listener ? Math.max(this.#pollMs, NOTIFIED_POLL_MS) : this.#pollMs);
  }

  async #fetch(name: string, limit: number): Promise<Array<JobWithMetadata<object>>> {
    await this.#queue(name);
    const groupConcurrency = this.#groupLimits.get(name);
    return await this.#boss.fetch<object>(name, { batchSize: limit, includeMetadata: true, ...(groupConcurrency === undefined ? {} : { groupConcurrency }) });
  }

  async #handle(running: Running): Promise<void> {
    const { job } = running;
    const attemptNumber = job.retryCount + 1;
    let failure: { err: unknown } | null = null;
    const run = { id: job.id, attempt: attemptNumber };
    this.#runs.set(run, running);
    try {
      await running.handler(job.data, run);
    } catch (err) {
      failure = { err };
    }
    this.#pool.finished(running);
    if (running.released) return;
    try {
      if (!failure) {
        // Unless the handler's own transaction completed it.
        if (!this.#completedWithin.has(running)) await this.#completions.get(running.queue)!.add(running);
        return;
      }
      const context = { err: failure.err, queue: job.name, jobId: job.id, attempt: attemptNumber };
      const retrying = job.retryCount < job.retryLimit;
      if (retrying) this.#log.warn(context, 'job failed; will retry');
      else this.#log.error(context, 'job failed; no retries left');
      const err = failure.err instanceof Error ? failure.err : { message: String(failure.err) };
      await this.#boss.fail(job.name, attempt(running), err);
      // A retry sends no NOTIFY. pg-boss backs off between retryDelay·2^n and twice that; waking at
      // the longest (a little after, for the database's clock) bounds the wait without a guess.
      if (retrying) {
        const delaySeconds = job.retryBackoff ? Math.max(1, job.retryDelay) * 2 ** (job.retryCount + 1) : job.retryDelay;
        this.#pool.wakeAt(job.name, Date.now() + delaySeconds * 1000 + CLOCK_SLACK_MS);
      }
    } catch (err) {
      this.#log.error({ err, queue: job.name, jobId: job.id }, 'could not record the job outcome');
    }
  }

  /** Refreshes the heartbeat of every running job, one statement per queue. */
  async #touch(): Promise<void> {
    const byQueue = new Map<string, Running[]>();
    for (const running of this.#pool.running) {
      if (running.released) continue;
      const list = byQueue.get(running.job.name) ?? [];
      list.push(running);
      byQueue.set(running.job.name, list);
    }
    for (const [name, runs] of byQueue) {
      try {
        await this.#boss.touch(name, runs.map(attempt));
      } catch (err) {
        this.#log.error({ err, queue: name }, 'could not refresh the heartbeats of running jobs');
      }
    }
  }
}

/**
 * Runs pg-boss's insert or completion in the caller's Kysely transaction, so the job commits (or not)
 * with it. Its text names the queue's table and takes the jobs as parameters, so there are a few
 * texts, each run for every fan-out, every activity and every batch of outcomes: on PostgreSQL a
 * named statement (planning was most of its cost: 0.65 ms a round trip unnamed, 0.18 ms named;
 * docs/performance.md).
 */
function inTransaction(executor: Executor, name: string): BossDb {
  return {
    async executeSql(text, values) {
      const result = await executor.executeQuery(CompiledQuery.raw(reusableText(name, text), values ?? []));
      return { rows: [...result.rows] };
    },
  };
}
