// Background work behind one interface: pg-boss on PostgreSQL, a durable table polled in-process on
// SQLite. Webhook deliveries, exports, attach and bulk mark-as-read survive restarts: a job that was
// running when its process died runs again once its lease (or heartbeat) runs out.
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
}

export interface WorkOptions {
  /** Jobs of this queue handled at once in this process (default 1). */
  concurrency?: number;
}

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
  /** Registers the handler of a queue; handlers run once `start` has been called. */
  work<T extends object>(name: string, handler: JobHandler<T>, options?: WorkOptions): void;
  /** Starts fetching and running jobs for the registered handlers. */
  start(): Promise<void>;
  /**
   * Stops fetching, waits for running jobs up to `timeoutMs` (default 30 s), then releases resources.
   * A job still running then is given up, and runs again elsewhere (or after a restart).
   */
  stop(timeoutMs?: number): Promise<void>;
  /**
   * Jobs ready to run now or running, across every queue (for /metrics and drain). Jobs scheduled
   * for later (`startAfterSeconds`, or waiting out a retry delay) are not counted until they are due.
   */
  pending(): Promise<number>;
}

/** Waits until no job is queued or running; false when `timeoutMs` ran out first. */
export async function drain(queue: Queue, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if ((await queue.pending()) === 0) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
