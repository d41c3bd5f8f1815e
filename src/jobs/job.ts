// A background job, defined once in its area: its queue's name, its typed payload, how it is retried
// and what runs it. Everything else sends and works jobs through the definition, never by a string
// (src/architecture.test.ts), so a name, a payload type and a retry policy cannot drift apart.
import type { Queue, SendOptions, WorkOptions } from './queue.ts';

/** How a failing job runs again: the queue's `retryLimit`, `retryDelaySeconds` and `retryBackoff`. */
export type Retry = Pick<SendOptions, 'retryLimit' | 'retryDelaySeconds' | 'retryBackoff'>;

/**
 * The retries of a job that fails for a reason of its own (the database, not a receiver: outcomes
 * are recorded): a job cut short by a dead process counts as a run too, so a few, with backoff.
 * Every job that needs no other policy is defined with these.
 */
export const RETRIES = { retryLimit: 5, retryDelaySeconds: 2, retryBackoff: true } as const satisfies Retry;

/** What a sender may choose per job; the retries are the definition's. */
export type EnqueueOptions = Omit<SendOptions, keyof Retry>;

/** `attempt` is 1 on the first run; a run cut short by a dead process counts as an attempt. */
export interface JobRun {
  id: string;
  attempt: number;
}

/**
 * A job's definition. `W` is what its workers run it with (the server's context, or a service made
 * once per worker): `handle` and `options` receive it.
 */
export interface JobDefinition<T extends object, W> {
  /** The queue's name; written nowhere else. */
  name: string;
  /** Defaults to `RETRIES`. */
  retry?: Retry;
  handle(worker: W, data: T, run: JobRun): Promise<void>;
  /** How this process runs the queue (concurrency, groups, the exhausted hook); default one at a time. */
  options?(worker: W): WorkOptions<T>;
}

export interface Job<T extends object, W> extends Readonly<Required<Pick<JobDefinition<T, W>, 'name' | 'retry'>>> {
  /** Enqueues one job; with `transaction`, it exists exactly when the caller's change commits. */
  send(queue: Queue, data: T, options?: EnqueueOptions): Promise<void>;
  /** Enqueues one job per item in one statement (no `singletonKey`, no `group`). */
  sendMany(queue: Queue, data: T[], options?: Omit<EnqueueOptions, 'singletonKey' | 'group'>): Promise<void>;
  /** Registers this process as a worker of the job. */
  work(queue: Queue, worker: W): void;
}

export function defineJob<T extends object, W>(definition: JobDefinition<T, W>): Job<T, W> {
  const { name, retry = RETRIES, handle, options } = definition;
  return {
    name,
    retry,
    send: (queue, data, sendOptions) => queue.send<T>(name, data, { ...sendOptions, ...retry }),
    sendMany: (queue, data, sendOptions) => queue.sendMany<T>(name, data, { ...sendOptions, ...retry }),
    work: (queue, worker) => queue.work<T>(name, (data, run) => handle(worker, data, run), options?.(worker)),
  };
}
