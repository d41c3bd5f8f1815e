// The in-process scheduling both queue adapters share: per queue one claim in flight at a time, for
// all its free slots; a finished job claims again only once half the slots are free (a burst is
// claimed in batches, not one job per finished job); wake-ups for jobs due later; one heartbeat timer
// while anything runs; and the bookkeeping of shutdown. The adapter supplies the storage: how to claim
// jobs, how to run one and record its outcome, and how to keep running jobs held (lease or heartbeat).
import type { JobHandler, Logger } from './queue.ts';

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
  /** Times (epoch ms, ascending) at which jobs known to this process come due (retries, delayed sends). */
  wakeTimes: number[];
  /** The timer for the earliest of them. */
  wakeTimer?: NodeJS.Timeout;
}

/** Wake-up times kept per queue; past this many the backstop poll covers the rest. */
const MAX_WAKE_TIMES = 10_000;

export interface Running<J> {
  queue: string;
  job: J;
  handler: JobHandler<object>;
  /** The handler has not returned yet. */
  handling: boolean;
  /** Given up at shutdown (see `finish`): its late outcome is not recorded. */
  released: boolean;
  done: Promise<void>;
}

export interface PoolOptions<J> {
  log: Logger;
  /** Claims up to `limit` ready jobs of `queue` for this process. */
  claim(queue: string, limit: number): Promise<J[]>;
  /** Runs the handler, calls `pool.finished(running)` as soon as it returned, then records the outcome. */
  run(running: Running<J>): Promise<void>;
  /** Keeps the jobs in `pool.running` held (extends leases, refreshes heartbeats); every `heartbeatMs` while any runs. */
  heartbeat(): Promise<void>;
  heartbeatMs: number;
  /** Added to every wake-up timer (a timer may fire a little early). */
  wakeSlackMs: number;
  /** Logged when a claim fails. */
  claimFailed: string;
}

export class LocalPool<J> {
  readonly #options: PoolOptions<J>;
  readonly #workers = new Map<string, Worker>();
  /** Jobs claimed and not yet settled; `handling` while the handler runs, then until the outcome is written. */
  readonly #running = new Set<Running<J>>();
  /** The worker each running job took its slot from. */
  readonly #workerOf = new WeakMap<Running<J>, Worker>();
  #started = false;
  #heartbeat: NodeJS.Timeout | undefined;

  constructor(options: PoolOptions<J>) {
    this.#options = options;
  }

  get started(): boolean {
    return this.#started;
  }

  get running(): ReadonlySet<Running<J>> {
    return this.#running;
  }

  /** Registers a queue's handler; it claims at once if the pool is started. */
  work(name: string, handler: JobHandler<object>, concurrency: number): void {
    const worker: Worker = { name, handler, concurrency, running: 0, claiming: null, claimAgain: false, exhausted: false, wakeTimes: [] };
    this.#workers.set(name, worker);
    this.#wake(worker);
  }

  start(): void {
    this.#started = true;
    for (const worker of this.#workers.values()) this.#armWake(worker);
  }

  /** Claims now for `name` (a queue without a worker here is ignored): the queue may have jobs. */
  wake(name: string): void {
    const worker = this.#workers.get(name);
    if (worker) this.#wake(worker);
  }

  wakeAll(): void {
    for (const worker of this.#workers.values()) this.#wake(worker);
  }

  /**
   * Wakes the queue at `at` (epoch ms). Every time is kept, not only the earliest: jobs deferred to
   * different moments (throttled deliveries, retries) each run when they come due, and the poll stays
   * only a backstop.
   */
  wakeAt(name: string, at: number): void {
    const worker = this.#workers.get(name);
    if (!worker || worker.wakeTimes.length >= MAX_WAKE_TIMES) return;
    const times = worker.wakeTimes;
    let index = times.length;
    while (index > 0 && times[index - 1]! > at) index--;
    times.splice(index, 0, at);
    if (index === 0) this.#armWake(worker);
  }

  #armWake(worker: Worker): void {
    clearTimeout(worker.wakeTimer);
    const next = worker.wakeTimes[0];
    if (next === undefined || !this.#started) return;
    worker.wakeTimer = setTimeout(() => {
      const now = Date.now();
      while (worker.wakeTimes.length && worker.wakeTimes[0]! <= now) worker.wakeTimes.shift();
      this.#wake(worker);
      this.#armWake(worker);
    }, Math.max(0, next - Date.now() + this.#options.wakeSlackMs));
  }

  /** The handler of `running` returned: its slot is free. */
  finished(running: Running<J>): void {
    const worker = this.#workerOf.get(running)!;
    running.handling = false;
    worker.running--;
    // Claiming for every finished job would cost a statement per job; half the slots is a batch.
    if (!worker.exhausted && worker.concurrency - worker.running >= Math.ceil(worker.concurrency / 2)) this.#claim(worker);
  }

  /** Stops claiming and cancels the wake-ups; `finish` then waits for what runs. */
  halt(): void {
    this.#started = false;
    for (const worker of this.#workers.values()) clearTimeout(worker.wakeTimer);
  }

  /**
   * Waits for claims in flight and running jobs up to `timeoutMs`; the jobs still running then are
   * marked released, no longer waited for (a later stop returns at once), and handed to `release`.
   */
  async finish(timeoutMs: number, release: (running: Running<J>) => Promise<void>): Promise<void> {
    // A claim in flight may still hand jobs to handlers; they are waited for like the others.
    await Promise.all([...this.#workers.values()].map((worker) => worker.claiming));
    let timer: NodeJS.Timeout | undefined;
    const finished = await Promise.race([
      Promise.all([...this.#running].map((running) => running.done)).then(() => true),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
    ]);
    clearTimeout(timer);
    clearInterval(this.#heartbeat);
    this.#heartbeat = undefined;
    if (finished) return;
    for (const running of this.#running) {
      running.released = true;
      this.#running.delete(running);
      await release(running);
    }
  }

  #wake(worker: Worker): void {
    worker.exhausted = false;
    this.#claim(worker);
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
      .catch((err: unknown) => this.#options.log.error({ err, queue: worker.name }, this.#options.claimFailed))
      .finally(() => {
        worker.claiming = null;
        if (worker.claimAgain) {
          worker.claimAgain = false;
          this.#claim(worker);
        }
      });
  }

  async #claimJobs(worker: Worker, limit: number): Promise<void> {
    const jobs = await this.#options.claim(worker.name, limit);
    worker.exhausted = jobs.length < limit;
    for (const job of jobs) this.#start(worker, job);
  }

  #start(worker: Worker, job: J): void {
    worker.running++;
    this.#heartbeat ??= setInterval(() => void this.#options.heartbeat(), this.#options.heartbeatMs);
    const running: Running<J> = { queue: worker.name, job, handler: worker.handler, handling: true, released: false, done: Promise.resolve() };
    this.#workerOf.set(running, worker);
    running.done = this.#options.run(running).finally(() => {
      this.#running.delete(running);
      if (this.#running.size === 0) {
        clearInterval(this.#heartbeat);
        this.#heartbeat = undefined;
      }
    });
    this.#running.add(running);
  }
}
