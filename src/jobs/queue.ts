// Background work behind one interface: pg-boss on PostgreSQL, a durable table polled in-process on
// SQLite. Webhook deliveries, exports, attach and bulk mark-as-read survive restarts: a job that was
// running when its process died runs again once its lease (or heartbeat) runs out. Areas define
// their jobs with `defineJob` (job.ts) and reach the queue only through those definitions.
import type { Executor } from '../db/index.ts';

export interface SendOptions {
  /** A second job with the same queue and key is not created while the first exists. */
  singletonKey?: string;
  /** Run no earlier than this many seconds from now. */
  startAfterSeconds?: number;
  /** How many times a failing job runs again (default 2). */
  retryLimit?: number;
  /** Seconds before a failed job runs again (default 5); doubled on each retry when `retryBackoff`. */
  retryDelaySeconds?: number;
  retryBackoff?: boolean;
  /**
   * Enqueue inside this transaction, so the job exists exactly when the caller's change commits
   * (the outbox pattern). Without it the job is sent on its own.
   */
  transaction?: Executor;
  /**
   * The job's group (say, the user it works for). A queue worked with `groupConcurrency` runs at most
   * that many jobs of one group at once; the group's other jobs wait while other groups' jobs run.
   */
  group?: string;
}

export interface WorkOptions<T = object> {
  /** Jobs of this queue handled at once in this process (default 1). */
  concurrency?: number;
  /** At most this many jobs of one group (`SendOptions.group`) run at once, across processes. */
  groupConcurrency?: number;
  /**
   * Runs once for a job that ran out of attempts (its handler failed on the last one, or its process
   * died on every one), with the job's data: the place to settle what the job leaves half done. It
   * runs as a job of its own on the queue `<name>.exhausted` (see `exhaustedQueue`), so it survives
   * a restart and is retried when it fails.
   */
  exhausted?: (data: T) => Promise<void>;
}

/** The queue where the `exhausted` hook of `name`'s jobs runs. */
export const exhaustedQueue = (name: string) => `${name}.exhausted`;
/** How many times a failing `exhausted` hook runs again. */
export const EXHAUSTED_RETRY_LIMIT = 5;

/** `attempt` is 1 on the first run; a run cut short by a dead process counts as an attempt. */
export type JobHandler<T> = (data: T, job: { id: string; attempt: number }) => Promise<void>;

/** The part of a pino logger (Fastify's `app.log`) the queues write failures to. */
export interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface Queue {
  /** Creates the queue's storage if needed. Sends need no worker; `work` and `start` are for workers. */
  send<T extends object>(name: string, data: T, options?: SendOptions): Promise<void>;
  /**
   * Sends one job per item of `data`, all with the same options, in one statement: a fan-out's jobs
   * cost one round trip, not one each. No `singletonKey` (each job is its own) and no `group`.
   */
  sendMany<T extends object>(name: string, data: T[], options?: Omit<SendOptions, 'singletonKey' | 'group'>): Promise<void>;
  /** Registers the handler of a queue; handlers run once `start` has been called. */
  work<T extends object>(name: string, handler: JobHandler<T>, options?: WorkOptions<T>): void;
  /**
   * Completes running jobs inside the caller's transaction, so each is done exactly when the caller's
   * change commits, in the same commit. `runs` are the second argument their handlers were called
   * with (any other object is ignored). The queue does not complete them again when their handlers
   * return; so a handler whose transaction does not commit must fail (throw), and its job runs again
   * as a failed job does. A job whose claim was lost meanwhile (its lease ran out, another worker
   * took it) is not completed by this: the claim that holds it settles it.
   */
  completeWithin(transaction: Executor, runs: readonly object[]): Promise<void>;
  /** Starts fetching and running jobs for the registered handlers. */
  start(): Promise<void>;
  /**
   * Stops fetching, waits for running jobs up to `timeoutMs` (default 30 s), then releases resources.
   * A job still running then is given up, and runs again elsewhere (or after a restart).
   */
  stop(timeoutMs?: number): Promise<void>;
  /**
   * In one read, across every queue: `pending`, the jobs ready to run now or running (for /metrics),
   * and `deferred`, the jobs scheduled for later (`startAfterSeconds`, or waiting out a retry delay),
   * with when the first of them comes due. Due times are wall time, never the adjustable test clock.
   */
  backlog(): Promise<Backlog>;
}

export interface Backlog {
  pending: number;
  deferred: number;
  /** When the first deferred job comes due (epoch milliseconds); null when there is none. */
  nextRunAt: number | null;
}

export interface DrainResult extends Backlog {
  /** True when nothing is left: no job ready or running and, when waited for, none deferred. */
  drained: boolean;
}

/**
 * Drains the queue: waits until no job is ready or running and, with `waitForDeferred`, until no job
 * is scheduled for later either (jobs can send jobs, so it looks again until both are settled at
 * once). A deferred job due after the deadline cannot run in time: the drain answers at once rather
 * than wait for nothing. Due times are wall time, so moving the test clock makes no job due sooner.
 */
export async function drainAll(queue: Queue, timeoutMs: number, options: { waitForDeferred: boolean }): Promise<DrainResult> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const backlog = await queue.backlog();
    if (backlog.pending === 0) {
      if (backlog.deferred === 0 || !options.waitForDeferred) return { ...backlog, drained: true };
      if (backlog.nextRunAt !== null && backlog.nextRunAt > deadline) return { ...backlog, drained: false };
    }
    if (Date.now() >= deadline) return { ...backlog, drained: false };
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
