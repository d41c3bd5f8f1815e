// Periodic sweeps (expired archives, delivery retention...). Each runs in every worker process, so a
// sweep must be idempotent. `runAll` runs each once now: /_admin/jobs/drain uses it, so a test that
// moves the clock sees the sweeps' effects without waiting for their timers. A task registered with
// `atStart` runs once as the worker starts, too (a sweep of what a killed process left).
import type { FastifyBaseLogger } from 'fastify';
import { consumed, type ConsumeMiddleware, type ConsumeOptions } from './middleware.ts';

interface Task {
  name: string;
  seconds: number;
  run: () => Promise<void>;
  atStart: boolean;
  timer?: NodeJS.Timeout;
  running?: Promise<void>;
}

export class Periodic {
  private readonly tasks: Task[] = [];
  private readonly log: FastifyBaseLogger;
  private readonly consume: readonly ConsumeMiddleware[];
  private started = false;

  /** `options.consume` wraps every sweep's run (the test double's gate outside production). */
  constructor(log: FastifyBaseLogger, options: ConsumeOptions = {}) {
    this.log = log;
    this.consume = options.consume ?? [];
  }

  every(name: string, seconds: number, run: () => Promise<void>, options: { atStart?: boolean } = {}): void {
    const task: Task = { name, seconds, run: consumed(this.consume, { name }, run), atStart: options.atStart ?? false };
    this.tasks.push(task);
    if (this.started) this.schedule(task);
  }

  start(): void {
    this.started = true;
    this.tasks.forEach((task) => this.schedule(task));
  }

  stop(): void {
    this.started = false;
    for (const task of this.tasks) clearInterval(task.timer);
  }

  async runAll(): Promise<void> {
    for (const task of this.tasks) await this.runOnce(task);
  }

  private schedule(task: Task): void {
    if (task.atStart) void this.runOnce(task);
    task.timer = setInterval(() => void this.runOnce(task), task.seconds * 1000);
    task.timer.unref();
  }

  private runOnce(task: Task): Promise<void> {
    // A sweep still running is not started twice in one process.
    task.running ??= task
      .run()
      .catch((err: unknown) => this.log.error({ err, task: task.name }, 'periodic task failed'))
      .finally(() => {
        task.running = undefined;
      });
    return task.running;
  }
}
