// The shape of the one list of every job worker and periodic sweep (src/workers.ts): each job by its
// definition and the worker that runs it, each sweep by its name and interval. A process starts
// exactly what the list names.
import type { Job } from './job.ts';
import type { Periodic } from './periodic.ts';
import type { Queue } from './queue.ts';

/** A job this process works. */
export interface JobWorker {
  name: string;
  work(queue: Queue): void;
}

/** A periodic sweep: idempotent, since every worker process runs it. */
export interface Sweep {
  name: string;
  seconds: number;
  /** Also once as the worker starts (a sweep of what a killed process left). */
  atStart?: boolean;
  /**
   * Registered in a process without the worker too (CODEHOST_WORKER=0): it sweeps that process's
   * own memory. Its timer runs with the workers; /_admin/jobs/drain runs it in any process.
   */
  everyProcess?: boolean;
  run(): Promise<void>;
}

export interface Workers {
  jobs: readonly JobWorker[];
  sweeps: readonly Sweep[];
}

/** The worker of `job`: its handlers run with `worker` (the server's context, or a service made once). */
export function jobWorker<T extends object, W>(job: Job<T, W>, worker: W): JobWorker {
  return { name: job.name, work: (queue) => job.work(queue, worker) };
}

/**
 * Registers the list's sweeps with the periodic runner and, in a worker process, its jobs with the
 * queue. A name listed twice is a mistake in the list.
 */
export function registerWorkers(workers: Workers, to: { queue: Queue; periodic: Periodic; worker: boolean }): void {
  const names = [...workers.jobs, ...workers.sweeps].map((entry) => entry.name);
  const twice = names.find((name, at) => names.indexOf(name) !== at);
  if (twice !== undefined) throw new Error(`${twice} is listed twice among the workers`);
  for (const sweep of workers.sweeps) {
    if (to.worker || sweep.everyProcess) to.periodic.every(sweep.name, sweep.seconds, sweep.run, { atStart: sweep.atStart ?? false });
  }
  if (to.worker) for (const job of workers.jobs) job.work(to.queue);
}
