// The queue on SQLite: a durable `jobs` table polled in-process. A worker claims a job by leasing it
// (locked_until) and keeps extending the lease while the handler runs; a job whose process died stops
// being extended, and once its lease runs out any worker claims it again. Times are real wall time
// (Date.now), never the adjustable test clock: leases must not expire because a test moved time.
import type { ExpressionBuilder } from 'kysely';
import type { Config } from '../config.ts';
import type { Db } from '../db/index.ts';
import type { Database } from '../db/schema.ts';
import type { JobHandler, Logger, Queue, SendOptions, WorkOptions } from './queue.ts';

interface Worker {
  handler: JobHandler<object>;
  concurrency: number;
  running: number;
}

interface ClaimedJob {
  id: number;
  queue: string;
  data: string;
  attempts: number;
  retry_limit: number;
  retry_delay_seconds: number;
  retry_backoff: number;
}

interface RunningJob {
  job: ClaimedJob;
  heartbeat: NodeJS.Timeout;
  done: Promise<void>;
}

const iso = (ms: number) => new Date(ms).toISOString();

export class TableQueue implements Queue {
  readonly #db: Db;
  readonly #settings: Config['jobs'];
  readonly #log: Logger;
  readonly #workers = new Map<string, Worker>();
  readonly #running = new Map<number, RunningJob>();
  #started = false;
  #timer: NodeJS.Timeout | undefined;
  #polling: Promise<void> | null = null;
  #pollAgain = false;

  constructor(db: Db, config: Config, log: Logger) {
    this.#db = db;
    this.#settings = config.jobs;
    this.#log = log;
  }

  async send<T extends object>(name: string, data: T, options: SendOptions = {}): Promise<void> {
    const now = Date.now();
    await (options.transaction ?? this.#db.kysely)
      .insertInto('jobs')
      .values({
        queue: name,
        data: JSON.stringify(data),
        singleton_key: options.singletonKey ?? null,
        run_after: iso(now + (options.startAfterSeconds ?? 0) * 1000),
        locked_until: null,
        attempts: 0,
        retry_limit: options.retryLimit ?? 2,
        retry_delay_seconds: options.retryDelaySeconds ?? 5,
        retry_backoff: options.retryBackoff ? 1 : 0,
        created_at: iso(now),
      })
      .onConflict((conflict) => conflict.columns(['queue', 'singleton_key']).doNothing())
      .execute();
    // Inside a transaction the claim waits for the connection, so it sees the job once committed.
    if (this.#workers.has(name)) this.#wake();
  }

  work<T extends object>(name: string, handler: JobHandler<T>, options: WorkOptions = {}): void {
    this.#workers.set(name, { handler: handler as JobHandler<object>, concurrency: options.concurrency ?? 1, running: 0 });
    this.#wake();
  }

  async start(): Promise<void> {
    this.#started = true;
    this.#wake();
  }

  async stop(timeoutMs = 30_000): Promise<void> {
    this.#started = false;
    clearTimeout(this.#timer);
    // A claim in flight may still hand jobs to handlers; they are waited for like the others.
    await this.#polling;
    let timer: NodeJS.Timeout | undefined;
    const finished = await Promise.race([
      Promise.all([...this.#running.values()].map((running) => running.done)).then(() => true),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
    ]);
    clearTimeout(timer);
    if (finished) return;
    // Give up the jobs still running: another worker may claim them at once rather than after their lease.
    for (const { job, heartbeat } of this.#running.values()) {
      clearInterval(heartbeat);
      this.#log.warn({ queue: job.queue, jobId: job.id }, 'job still running at shutdown; released to run again');
      await this.#db.kysely
        .updateTable('jobs')
        .set({ locked_until: null })
        .where(claimedBy(job))
        .execute()
        .catch((err: unknown) => this.#log.error({ err, queue: job.queue, jobId: job.id }, 'could not release job'));
    }
  }

  async pending(): Promise<number> {
    // A running job's run_after is already past, so this counts ready and running jobs alike.
    const row = await this.#db.kysely
      .selectFrom('jobs')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('run_after', '<=', iso(Date.now()))
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  /** Polls now: after a local send, a finished job, or the poll timer. */
  #wake(): void {
    if (!this.#started) return;
    if (this.#polling) {
      this.#pollAgain = true;
      return;
    }
    clearTimeout(this.#timer);
    this.#polling = this.#poll()
      .catch((err: unknown) => this.#log.error({ err }, 'job poll failed'))
      .finally(() => {
        this.#polling = null;
        if (!this.#started) return;
        if (this.#pollAgain) {
          this.#pollAgain = false;
          this.#wake();
        } else {
          this.#timer = setTimeout(() => this.#wake(), this.#settings.pollMilliseconds);
        }
      });
  }

  async #poll(): Promise<void> {
    for (const [name, worker] of this.#workers) {
      const free = worker.concurrency - worker.running;
      if (free <= 0 || !this.#started) continue;
      for (const job of await this.#claim(name, free)) this.#run(worker, job);
    }
  }

  /** Leases up to `limit` ready jobs of a queue in one statement (SQLite runs it under its write lock), so two workers never share one. */
  async #claim(name: string, limit: number): Promise<ClaimedJob[]> {
    const now = Date.now();
    return this.#db.kysely
      .updateTable('jobs')
      .set((eb) => ({ locked_until: iso(now + this.#settings.leaseSeconds * 1000), attempts: eb('attempts', '+', 1) }))
      .where('id', 'in', (qb) =>
        qb
          .selectFrom('jobs')
          .select('id')
          .where('queue', '=', name)
          .where(isReady(now))
          .orderBy('run_after')
          .orderBy('id')
          .limit(limit),
      )
      .returning(['id', 'queue', 'data', 'attempts', 'retry_limit', 'retry_delay_seconds', 'retry_backoff'])
      .execute();
  }

  #run(worker: Worker, job: ClaimedJob): void {
    worker.running++;
    const heartbeat = setInterval(() => void this.#extendLease(job), (this.#settings.leaseSeconds * 1000) / 3);
    const done = this.#handle(worker, job).finally(() => {
      clearInterval(heartbeat);
      this.#running.delete(job.id);
      worker.running--;
      this.#wake();
    });
    this.#running.set(job.id, { job, heartbeat, done });
  }

  async #handle(worker: Worker, job: ClaimedJob): Promise<void> {
    // Each claim counts as an attempt, so a job that keeps killing its process is not claimed forever.
    if (job.attempts > job.retry_limit + 1) {
      this.#log.error({ queue: job.queue, jobId: job.id, attempt: job.attempts }, 'job abandoned: its process died on every attempt');
      await this.#record(job, this.#db.kysely.deleteFrom('jobs').where(claimedBy(job)));
      return;
    }
    try {
      await worker.handler(JSON.parse(job.data) as object, { id: String(job.id), attempt: job.attempts });
    } catch (err) {
      await this.#fail(job, err);
      return;
    }
    await this.#record(job, this.#db.kysely.deleteFrom('jobs').where(claimedBy(job)));
  }

  async #fail(job: ClaimedJob, err: unknown): Promise<void> {
    const context = { err, queue: job.queue, jobId: job.id, attempt: job.attempts };
    if (job.attempts > job.retry_limit) {
      this.#log.error(context, 'job failed; no retries left');
      await this.#record(job, this.#db.kysely.deleteFrom('jobs').where(claimedBy(job)));
      return;
    }
    const delaySeconds = job.retry_delay_seconds * (job.retry_backoff ? 2 ** (job.attempts - 1) : 1);
    this.#log.warn({ ...context, retryInSeconds: delaySeconds }, 'job failed; will retry');
    const update = this.#db.kysely
      .updateTable('jobs')
      .set({
        run_after: iso(Date.now() + delaySeconds * 1000),
        locked_until: null,
        last_error: err instanceof Error ? (err.stack ?? err.message) : String(err),
      })
      .where(claimedBy(job));
    await this.#record(job, update);
  }

  async #extendLease(job: ClaimedJob): Promise<void> {
    const update = this.#db.kysely
      .updateTable('jobs')
      .set({ locked_until: iso(Date.now() + this.#settings.leaseSeconds * 1000) })
      .where(claimedBy(job));
    const changed = await this.#record(job, update);
    if (changed === 0) this.#log.warn({ queue: job.queue, jobId: job.id }, 'job lease lost to another worker; it may run twice');
  }

  /** Runs a write about a job; a failure is logged, since the job itself already ran. Returns the rows changed. */
  async #record(job: ClaimedJob, query: { executeTakeFirst(): Promise<object> }): Promise<number | undefined> {
    try {
      const result = (await query.executeTakeFirst()) as { numUpdatedRows?: bigint; numDeletedRows?: bigint };
      return Number(result.numUpdatedRows ?? result.numDeletedRows);
    } catch (err) {
      this.#log.error({ err, queue: job.queue, jobId: job.id }, 'could not record the job outcome');
      return undefined;
    }
  }
}

/**
 * Matches the job only while this claim holds it: `attempts` grows with every claim, so once a lease
 * ran out and another worker took the job, this worker's late writes change nothing.
 */
function claimedBy(job: ClaimedJob) {
  return (eb: ExpressionBuilder<Database, 'jobs'>) => eb.and([eb('id', '=', job.id), eb('attempts', '=', job.attempts)]);
}

function isReady(nowMs: number) {
  return (eb: ExpressionBuilder<Database, 'jobs'>) =>
    eb.and([eb('run_after', '<=', iso(nowMs)), eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', iso(nowMs))])]);
}
