// Consume middleware: what wraps the run of every job handler and periodic sweep, given when the
// queue and the periodic runner are built (supabase/storage's queue middleware). Outside production
// the test double's gate is one (src/testing/): a reset or a snapshot restore waits for the jobs in
// flight, and the jobs after it see the new state. Production builds them with none.

/** What is running: a queue's name (a job) or a sweep's. */
export interface Consumed {
  name: string;
}

/** Runs `run` (a handler's or a sweep's), and answers what it answers. */
export type ConsumeMiddleware = <T>(consumed: Consumed, run: () => Promise<T>) => Promise<T>;

/** What the queue and the periodic runner are built with. */
export interface ConsumeOptions {
  consume?: readonly ConsumeMiddleware[];
}

/** `run` inside every middleware, the first outermost; `run` itself when there is none. */
export function consumed<T>(middleware: readonly ConsumeMiddleware[], what: Consumed, run: () => Promise<T>): () => Promise<T> {
  return middleware.reduceRight<() => Promise<T>>((inner, outer) => () => outer(what, inner), run);
}
