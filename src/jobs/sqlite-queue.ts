// The queue on SQLite: a durable `jobs` table polled in-process. A worker claims jobs by leasing them
// (locked_until) and keeps extending the leases while their handlers run; a job whose process died
// stops being extended, and once its lease runs out any worker claims it again. Times are real wall
// time (Date.now), never the adjustable test clock: leases must not expire because a test moved time.
//
// Throughput: each queue claims up to its free slots in one statement, and only for itself: a job
// that finishes wakes its own queue, once half its slots are free (a webhook burst claims in batches
// rather than one job per finished job). Finished jobs are deleted in batches, and one timer extends
// every running lease in one statement. A local send, and a retry or delayed send when it comes due,
// wake their queue at once; the poll finds what other processes sent. The hot statements are fixed
// SQL text, prepared once (the driver caches statements by text), not built by Kysely for every job.
import { CompiledQuery } from 'kysely';
import type { Config } from '../config.ts';
import type { Db, Executor } from '../db/index.ts';
import { WriteBatcher } from './batch.ts';
import { LocalPool, type Running } from './local-pool.ts';
import { consumed, type ConsumeMiddleware, type ConsumeOptions } from './middleware.ts';
import { EXHAUSTED_RETRY_LIMIT, exhaustedQueue, type Backlog, type JobHandler, type Logger, type Queue, type SendOptions, type WorkOptions } from './queue.ts';

interface ClaimedJob {
  id: number;
  queue: string;
  data: string;
  attempts: number;
  retry_limit: number;
  retry_delay_seconds: number;
  retry_backoff: number;
}

const iso = (ms: number) => new Date(ms).toISOString();

// A job is held by one claim: `attempts` grows with every claim, so once a lease ran out and another
// worker took the job, this worker's late writes (matched on id and attempts) change nothing.
const SEND = `insert into jobs (queue, data, singleton_key, run_after, locked_until, attempts, retry_limit, retry_delay_seconds, retry_backoff, created_at, group_key)
  values (?, ?, ?, ?, null, 0, ?, ?, ?, ?, ?) on conflict (queue, singleton_key) do nothing`;
/** Many jobs of one queue with the same settings: their data as a JSON array of JSON texts, in order. */
const SEND_MANY = `insert into jobs (queue, data, singleton_key, run_after, locked_until, attempts, retry_limit, retry_delay_seconds, retry_backoff, created_at)
  select ?, value, null, ?, null, 0, ?, ?, ?, ? from json_each(?) order by key`;
// One statement under SQLite's write lock, so two workers never claim the same job.
const CLAIM = `update jobs set locked_until = ?, attempts = attempts + 1
  where id in (
    select id from jobs where queue = ? and run_after <= ? and (locked_until is null or locked_until < ?)
    order by run_after, id limit ?
  )
  returning id, queue, data, attempts, retry_limit, retry_delay_seconds, retry_backoff`;
// The claim of a queue with a group limit: a job is taken while its group has fewer than the limit
// running (leased) counting the jobs this claim takes before it (`ahead`, in claim order).
const CLAIM_GROUPED = `update jobs set locked_until = ?, attempts = attempts + 1
  where id in (
    select id from (
      select id, run_after, group_key,
        row_number() over (partition by coalesce(group_key, 'job:' || id) order by run_after, id) - 1 as ahead
      from jobs where queue = ? and run_after <= ? and (locked_until is null or locked_until < ?)
    ) ready
    where group_key is null
      or ahead + (select count(*) from jobs held where held.queue = ? and held.group_key = ready.group_key and held.locked_until >= ?) < ?
    order by run_after, id limit ?
  )
  returning id, queue, data, attempts, retry_limit, retry_delay_seconds, retry_backoff`;
// A job out of attempts becomes a job of its queue's `exhausted` hook (same row, same data).
const EXHAUST = `update jobs set queue = ?, attempts = 0, retry_limit = ?, run_after = ?, locked_until = null, last_error = ?, group_key = null, singleton_key = null
  where id = ? and attempts = ?`;
/** Claims as a JSON array of [id, attempts] pairs: one statement text for any number of jobs. */
const HELD = '(id, attempts) in (select value ->> 0, value ->> 1 from json_each(?))';
const DELETE = `delete from jobs where ${HELD}`;
const EXTEND = `update jobs set locked_until = ? where ${HELD} returning id`;
const RETRY = 'update jobs set run_after = ?, locked_until = null, last_error = ? where id = ? and attempts = ?';
const RELEASE = 'update jobs set locked_until = null where id = ? and attempts = ?';
// A running job's run_after is already past, so `pending` counts ready and running jobs alike; a
// finished job counts until its delete is written.
const BACKLOG = `select coalesce(sum(case when run_after <= ? then 1 else 0 end), 0) as pending,
  coalesce(sum(case when run_after > ? then 1 else 0 end), 0) as deferred, min(case when run_after > ? then run_after end) as next from jobs`;

const heldJobs = (jobs: ClaimedJob[]) => JSON.stringify(jobs.map((job) => [job.id, job.attempts]));

export class TableQueue implements Queue {
  readonly #db: Db;
  readonly #settings: Config['jobs'];
  readonly #log: Logger;
  readonly #pool: LocalPool<ClaimedJob>;
  readonly #deletes: WriteBatcher<ClaimedJob>;
  #timer: NodeJS.Timeout | undefined;
  /** Queues worked with a group limit, and the limit. */
  readonly #groupLimits = new Map<string, number>();
  /** Queues whose jobs have an `exhausted` hook. */
  readonly #hooked = new Set<string>();
  /** The running job of each run its handler was given, for `completeWithin`. */
  readonly #runs = new WeakMap<object, Running<ClaimedJob>>();
  /** Jobs deleted in their handler's transaction (`completeWithin`): not deleted again once it returns. */
  readonly #completedWithin = new WeakSet<Running<ClaimedJob>>();
  /** What wraps each handler's run (see middleware.ts). */
  readonly #consume: readonly ConsumeMiddleware[];

  constructor(db: Db, config: Config, log: Logger, options: ConsumeOptions = {}) {
    this.#db = db;
    this.#consume = options.consume ?? [];
    this.#settings = config.jobs;
    this.#log = log;
    this.#deletes = new WriteBatcher((jobs) => this.#run(DELETE, [heldJobs(jobs)]).then(() => undefined));
    this.#pool = new LocalPool({
      log,
      claim: (queue, limit) => this.#claim(queue, limit),
      run: (running) => this.#handle(running),
      heartbeat: () => this.#extendLeases(),
      heartbeatMs: (config.jobs.leaseSeconds * 1000) / 3,
      // A timer may fire a millisecond early; the claim compares with Date.now().
      wakeSlackMs: 5,
      claimFailed: 'job claim failed',
    });
  }

  async send<T extends object>(name: string, data: T, options: SendOptions = {}): Promise<void> {
    const now = Date.now();
    await this.#run(
      SEND,
      [
        name,
        JSON.stringify(data),
        options.singletonKey ?? null,
        iso(now + (options.startAfterSeconds ?? 0) * 1000),
        options.retryLimit ?? 2,
        options.retryDelaySeconds ?? 5,
        options.retryBackoff ? 1 : 0,
        iso(now),
        options.group ?? null,
      ],
      options.transaction,
    );
    // Inside a transaction the claim waits for the connection, so it sees the job once committed.
    if (options.startAfterSeconds) this.#pool.wakeAt(name, now + options.startAfterSeconds * 1000);
    else this.#pool.wake(name);
  }

  async sendMany<T extends object>(name: string, data: T[], options: Omit<SendOptions, 'singletonKey' | 'group'> = {}): Promise<void> {
    if (data.length === 0) return;
    const now = Date.now();
    await this.#run(
      SEND_MANY,
      [
        name,
        iso(now + (options.startAfterSeconds ?? 0) * 1000),
        options.retryLimit ?? 2,
        options.retryDelaySeconds ?? 5,
        options.retryBackoff ? 1 : 0,
        iso(now),
        JSON.stringify(data.map((item) => JSON.stringify(item))),
      ],
      options.transaction,
    );
    if (options.startAfterSeconds) this.#pool.wakeAt(name, now + options.startAfterSeconds * 1000);
    else this.#pool.wake(name);
  }

  async completeWithin(transaction: Executor, runs: readonly object[]): Promise<void> {
    const held = runs.map((run) => this.#runs.get(run)).filter((running) => running !== undefined);
    if (held.length === 0) return;
    // Matched on id and attempts like every write of a claim: a job another worker took is left to it.
    await this.#run(DELETE, [heldJobs(held.map((running) => running.job))], transaction);
    for (const running of held) this.#completedWithin.add(running);
  }

  work<T extends object>(name: string, handler: JobHandler<T>, options: WorkOptions<T> = {}): void {
    if (options.groupConcurrency !== undefined) this.#groupLimits.set(name, options.groupConcurrency);
    const run = handler as JobHandler<object>;
    this.#pool.work(name, (data, job) => consumed(this.#consume, { name }, () => run(data, job))(), options.concurrency ?? 1);
    const exhausted = options.exhausted;
    if (exhausted) {
      this.#hooked.add(name);
      this.#pool.work(exhaustedQueue(name), (data) => exhausted(data as T), 1);
    }
  }

  async start(): Promise<void> {
    if (this.#pool.started) return;
    this.#pool.start();
    this.#poll();
  }

  async stop(timeoutMs = 30_000): Promise<void> {
    this.#pool.halt();
    clearTimeout(this.#timer);
    // Give up the jobs still running: another worker may claim them at once rather than after their lease.
    await this.#pool.finish(timeoutMs, async ({ job }) => {
      this.#log.warn({ queue: job.queue, jobId: job.id }, 'job still running at shutdown; released to run again');
      await this.#run(RELEASE, [job.id, job.attempts]).catch((err: unknown) =>
        this.#log.error({ err, queue: job.queue, jobId: job.id }, 'could not release job'),
      );
    });
  }

  async backlog(): Promise<Backlog> {
    const now = iso(Date.now());
    const { rows } = await this.#run<{ pending: number; deferred: number; next: string | null }>(BACKLOG, [now, now, now]);
    const next = rows[0]?.next ?? null;
    return { pending: Number(rows[0]?.pending ?? 0), deferred: Number(rows[0]?.deferred ?? 0), nextRunAt: next === null ? null : Date.parse(next) };
  }

  #run<R = unknown>(sql: string, parameters: unknown[], executor: Executor = this.#db.kysely) {
    return executor.executeQuery<R>(CompiledQuery.raw(sql, parameters));
  }

  /** Claims every queue with free slots each poll interval: jobs sent by other processes, retries, and jobs scheduled for now. */
  #poll(): void {
    if (!this.#pool.started) return;
    this.#pool.wakeAll();
    this.#timer = setTimeout(() => this.#poll(), this.#settings.pollMilliseconds);
  }

  async #claim(queue: string, limit: number): Promise<ClaimedJob[]> {
    const now = Date.now();
    const lease = iso(now + this.#settings.leaseSeconds * 1000);
    const groupLimit = this.#groupLimits.get(queue);
    const { rows } = groupLimit === undefined
      ? await this.#run<ClaimedJob>(CLAIM, [lease, queue, iso(now), iso(now), limit])
      : await this.#run<ClaimedJob>(CLAIM_GROUPED, [lease, queue, iso(now), iso(now), queue, iso(now), groupLimit, limit]);
    return rows;
  }

  async #handle(running: Running<ClaimedJob>): Promise<void> {
    const { job } = running;
    // Each claim counts as an attempt, so a job that keeps killing its process is not claimed forever.
    if (job.attempts > job.retry_limit + 1) {
      this.#log.error({ queue: job.queue, jobId: job.id, attempt: job.attempts }, 'job abandoned: its process died on every attempt');
      if (this.#hooked.has(job.queue)) {
        this.#pool.finished(running);
        await this.#exhaust(job, 'its process died on every attempt').catch((err: unknown) =>
          this.#log.error({ err, queue: job.queue, jobId: job.id }, 'could not record the job outcome'),
        );
        return;
      }
    } else {
      const run = { id: String(job.id), attempt: job.attempts };
      this.#runs.set(run, running);
      try {
        await running.handler(JSON.parse(job.data) as object, run);
      } catch (err) {
        this.#pool.finished(running);
        await this.#fail(job, err);
        return;
      }
    }
    // The slot is free once the handler returned; the delete joins the next batch, unless the
    // handler's own transaction deleted the job.
    this.#pool.finished(running);
    if (this.#completedWithin.has(running)) return;
    await this.#deletes.add(job).catch((err: unknown) => this.#log.error({ err, queue: job.queue, jobId: job.id }, 'could not record the job outcome'));
  }

  async #fail(job: ClaimedJob, err: unknown): Promise<void> {
    const context = { err, queue: job.queue, jobId: job.id, attempt: job.attempts };
    try {
      if (job.attempts > job.retry_limit) {
        this.#log.error(context, 'job failed; no retries left');
        if (this.#hooked.has(job.queue)) await this.#exhaust(job, err instanceof Error ? (err.stack ?? err.message) : String(err));
        else await this.#deletes.add(job);
        return;
      }
      const delaySeconds = job.retry_delay_seconds * (job.retry_backoff ? 2 ** (job.attempts - 1) : 1);
      this.#log.warn({ ...context, retryInSeconds: delaySeconds }, 'job failed; will retry');
      const lastError = err instanceof Error ? (err.stack ?? err.message) : String(err);
      const due = Date.now() + delaySeconds * 1000;
      await this.#run(RETRY, [iso(due), lastError, job.id, job.attempts]);
      this.#pool.wakeAt(job.queue, due);
    } catch (recordErr) {
      this.#log.error({ err: recordErr, queue: job.queue, jobId: job.id }, 'could not record the job outcome');
    }
  }

  /** Hands a job out of attempts to its queue's `exhausted` hook: the same row, moved to the hook's queue. */
  async #exhaust(job: ClaimedJob, lastError: string): Promise<void> {
    const hook = exhaustedQueue(job.queue);
    await this.#run(EXHAUST, [hook, EXHAUSTED_RETRY_LIMIT, iso(Date.now()), lastError, job.id, job.attempts]);
    this.#pool.wake(hook);
  }

  /** Extends the lease of every running job in one statement. */
  async #extendLeases(): Promise<void> {
    const handling = [...this.#pool.running].filter((running) => running.handling);
    if (handling.length === 0) return;
    let rows: Array<{ id: number }>;
    try {
      ({ rows } = await this.#run<{ id: number }>(EXTEND, [iso(Date.now() + this.#settings.leaseSeconds * 1000), heldJobs(handling.map((running) => running.job))]));
    } catch (err) {
      this.#log.error({ err }, 'could not extend the leases of running jobs');
      return;
    }
    const extended = new Set(rows.map((row) => row.id));
    // A job that finished meanwhile is gone for a good reason; only one still running lost its lease.
    for (const running of handling) {
      if (!extended.has(running.job.id) && running.handling) {
        this.#log.warn({ queue: running.job.queue, jobId: running.job.id }, 'job lease lost to another worker; it may run twice');
      }
    }
  }
}
