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
import type { JobHandler, Logger, Queue, SendOptions, WorkOptions } from './queue.ts';

interface Worker {
  name: string;
  handler: JobHandler<object>;
  concurrency: number;
  running: number;
  /** The claim in flight for this queue, if any: one at a time per queue. */
  claiming: Promise<void> | null;
  /** Woken while a claim was in flight: claim again once it ends. */
  claimAgain: boolean;
  /** The last claim found fewer ready jobs than it asked for: a finished job does not claim again. */
  exhausted: boolean;
  /** A wake-up for a job of this process that comes due later (a retry, a delayed send), and when. */
  wakeTimer?: NodeJS.Timeout;
  wakeAt?: number;
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

interface Running {
  job: ClaimedJob;
  handling: boolean;
  done: Promise<void>;
}

const iso = (ms: number) => new Date(ms).toISOString();

// A job is held by one claim: `attempts` grows with every claim, so once a lease ran out and another
// worker took the job, this worker's late writes (matched on id and attempts) change nothing.
const SEND = `insert into jobs (queue, data, singleton_key, run_after, locked_until, attempts, retry_limit, retry_delay_seconds, retry_backoff, created_at)
  values (?, ?, ?, ?, null, 0, ?, ?, ?, ?) on conflict (queue, singleton_key) do nothing`;
// One statement under SQLite's write lock, so two workers never claim the same job.
const CLAIM = `update jobs set locked_until = ?, attempts = attempts + 1
  where id in (
    select id from jobs where queue = ? and run_after <= ? and (locked_until is null or locked_until < ?)
    order by run_after, id limit ?
  )
  returning id, queue, data, attempts, retry_limit, retry_delay_seconds, retry_backoff`;
/** Claims as a JSON array of [id, attempts] pairs: one statement text for any number of jobs. */
const HELD = '(id, attempts) in (select value ->> 0, value ->> 1 from json_each(?))';
const DELETE = `delete from jobs where ${HELD}`;
const EXTEND = `update jobs set locked_until = ? where ${HELD} returning id`;
const RETRY = 'update jobs set run_after = ?, locked_until = null, last_error = ? where id = ? and attempts = ?';
const RELEASE = 'update jobs set locked_until = null where id = ? and attempts = ?';
const PENDING = 'select count(*) as count from jobs where run_after <= ?';

const held = (jobs: ClaimedJob[]) => JSON.stringify(jobs.map((job) => [job.id, job.attempts]));

export class TableQueue implements Queue {
  readonly #db: Db;
  readonly #settings: Config['jobs'];
  readonly #log: Logger;
  readonly #workers = new Map<string, Worker>();
  /** Jobs claimed and not yet settled; `handling` while the handler runs, then until the outcome is written. */
  readonly #running = new Set<Running>();
  readonly #deletes: WriteBatcher<ClaimedJob>;
  #started = false;
  #timer: NodeJS.Timeout | undefined;
  #heartbeat: NodeJS.Timeout | undefined;

  constructor(db: Db, config: Config, log: Logger) {
    this.#db = db;
    this.#settings = config.jobs;
    this.#log = log;
    this.#deletes = new WriteBatcher((jobs) => this.#run(DELETE, [held(jobs)]).then(() => undefined));
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
      ],
      options.transaction,
    );
    // Inside a transaction the claim waits for the connection, so it sees the job once committed.
    const worker = this.#workers.get(name);
    if (!worker) return;
    if (options.startAfterSeconds) this.#wakeAt(worker, now + options.startAfterSeconds * 1000);
    else this.#wake(worker);
  }

  work<T extends object>(name: string, handler: JobHandler<T>, options: WorkOptions = {}): void {
    const worker: Worker = {
      name,
      handler: handler as JobHandler<object>,
      concurrency: options.concurrency ?? 1,
      running: 0,
      claiming: null,
      claimAgain: false,
      exhausted: false,
    };
    this.#workers.set(name, worker);
    this.#claim(worker);
  }

  async start(): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    this.#poll();
  }

  async stop(timeoutMs = 30_000): Promise<void> {
    this.#started = false;
    clearTimeout(this.#timer);
    for (const worker of this.#workers.values()) clearTimeout(worker.wakeTimer);
    // A claim in flight may still hand jobs to handlers; they are waited for like the others.
    await Promise.all([...this.#workers.values()].map((worker) => worker.claiming));
    let timer: NodeJS.Timeout | undefined;
    const finished = await Promise.race([
      Promise.all([...this.#running].map((running) => running.done)).then(() => true),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
    ]);
    clearTimeout(timer);
    if (finished) return;
    clearInterval(this.#heartbeat);
    this.#heartbeat = undefined;
    // Give up the jobs still running: another worker may claim them at once rather than after their lease.
    for (const running of this.#running) {
      const { job } = running;
      // Not waited for again: a later stop returns at once.
      this.#running.delete(running);
      this.#log.warn({ queue: job.queue, jobId: job.id }, 'job still running at shutdown; released to run again');
      await this.#run(RELEASE, [job.id, job.attempts]).catch((err: unknown) =>
        this.#log.error({ err, queue: job.queue, jobId: job.id }, 'could not release job'),
      );
    }
  }

  async pending(): Promise<number> {
    // A running job's run_after is already past, so this counts ready and running jobs alike; a
    // finished job counts until its delete is written.
    const { rows } = await this.#run<{ count: number }>(PENDING, [iso(Date.now())]);
    return Number(rows[0]?.count ?? 0);
  }

  #run<R = unknown>(sql: string, parameters: unknown[], executor: Executor = this.#db.kysely) {
    return executor.executeQuery<R>(CompiledQuery.raw(sql, parameters));
  }

  /** Claims every queue with free slots each poll interval: jobs sent by other processes, retries, and jobs scheduled for now. */
  #poll(): void {
    if (!this.#started) return;
    for (const worker of this.#workers.values()) this.#wake(worker);
    this.#timer = setTimeout(() => this.#poll(), this.#settings.pollMilliseconds);
  }

  /** Claims now: the queue may have jobs. */
  #wake(worker: Worker): void {
    worker.exhausted = false;
    this.#claim(worker);
  }

  /** Wakes the queue at `at` (epoch ms), unless an earlier wake-up is already set: the poll is only a backstop. */
  #wakeAt(worker: Worker, at: number): void {
    if (worker.wakeAt !== undefined && worker.wakeAt <= at) return;
    clearTimeout(worker.wakeTimer);
    worker.wakeAt = at;
    // A timer may fire a millisecond early; the claim compares with Date.now().
    worker.wakeTimer = setTimeout(() => {
      worker.wakeAt = undefined;
      this.#wake(worker);
    }, Math.max(0, at - Date.now() + 5));
  }

  /** Claims jobs of one queue for all its free slots, unless a claim of that queue is already in flight. */
  #claim(worker: Worker): void {
    if (!this.#started) return;
    if (worker.claiming) {
      worker.claimAgain = true;
      return;
    }
    const free = worker.concurrency - worker.running;
    if (free <= 0) return;
    worker.claiming = this.#claimJobs(worker, free)
      .catch((err: unknown) => this.#log.error({ err, queue: worker.name }, 'job claim failed'))
      .finally(() => {
        worker.claiming = null;
        if (worker.claimAgain) {
          worker.claimAgain = false;
          this.#claim(worker);
        }
      });
  }

  async #claimJobs(worker: Worker, limit: number): Promise<void> {
    const now = Date.now();
    const { rows } = await this.#run<ClaimedJob>(CLAIM, [iso(now + this.#settings.leaseSeconds * 1000), worker.name, iso(now), iso(now), limit]);
    worker.exhausted = rows.length < limit;
    for (const job of rows) this.#start(worker, job);
  }

  #start(worker: Worker, job: ClaimedJob): void {
    worker.running++;
    this.#heartbeat ??= setInterval(() => void this.#extendLeases(), (this.#settings.leaseSeconds * 1000) / 3);
    const running: Running = { job, handling: true, done: Promise.resolve() };
    running.done = this.#handle(worker, job, running).finally(() => {
      this.#running.delete(running);
      if (this.#running.size === 0) {
        clearInterval(this.#heartbeat);
        this.#heartbeat = undefined;
      }
    });
    this.#running.add(running);
  }

  async #handle(worker: Worker, job: ClaimedJob, running: { handling: boolean }): Promise<void> {
    // Each claim counts as an attempt, so a job that keeps killing its process is not claimed forever.
    if (job.attempts > job.retry_limit + 1) {
      this.#log.error({ queue: job.queue, jobId: job.id, attempt: job.attempts }, 'job abandoned: its process died on every attempt');
    } else {
      try {
        await worker.handler(JSON.parse(job.data) as object, { id: String(job.id), attempt: job.attempts });
      } catch (err) {
        this.#finished(worker, running);
        await this.#fail(worker, job, err);
        return;
      }
    }
    // The slot is free once the handler returned; the delete joins the next batch.
    this.#finished(worker, running);
    await this.#deletes.add(job).catch((err: unknown) => this.#log.error({ err, queue: job.queue, jobId: job.id }, 'could not record the job outcome'));
  }

  #finished(worker: Worker, running: { handling: boolean }): void {
    running.handling = false;
    worker.running--;
    // Claiming for every finished job would cost a statement per job; half the slots is a batch.
    if (!worker.exhausted && worker.concurrency - worker.running >= Math.ceil(worker.concurrency / 2)) this.#claim(worker);
  }

  async #fail(worker: Worker, job: ClaimedJob, err: unknown): Promise<void> {
    const context = { err, queue: job.queue, jobId: job.id, attempt: job.attempts };
    try {
      if (job.attempts > job.retry_limit) {
        this.#log.error(context, 'job failed; no retries left');
        await this.#deletes.add(job);
        return;
      }
      const delaySeconds = job.retry_delay_seconds * (job.retry_backoff ? 2 ** (job.attempts - 1) : 1);
      this.#log.warn({ ...context, retryInSeconds: delaySeconds }, 'job failed; will retry');
      const lastError = err instanceof Error ? (err.stack ?? err.message) : String(err);
      const due = Date.now() + delaySeconds * 1000;
      await this.#run(RETRY, [iso(due), lastError, job.id, job.attempts]);
      this.#wakeAt(worker, due);
    } catch (recordErr) {
      this.#log.error({ err: recordErr, queue: job.queue, jobId: job.id }, 'could not record the job outcome');
    }
  }

  /** Extends the lease of every running job in one statement. */
  async #extendLeases(): Promise<void> {
    const handling = [...this.#running].filter((running) => running.handling);
    if (handling.length === 0) return;
    let rows: Array<{ id: number }>;
    try {
      ({ rows } = await this.#run<{ id: number }>(EXTEND, [iso(Date.now() + this.#settings.leaseSeconds * 1000), held(handling.map((running) => running.job))]));
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
