// Periodic sweeps (expired archives, delivery retention...). Each runs in every worker process, so a
// sweep must be idempotent. `runAll` runs each once now: /_admin/jobs/drain uses it, so a test that
// moves the clock sees the sweeps' effects without waiting for their timers.
import type { FastifyBaseLogger } from 'fastify';

interface Task {
  name: string;
  seconds: number;
  run: () => Promise<void>;
  timer?: NodeJS.Timeout;
  running?: Promise<void>;
}

export class Periodic {
  private readonly tasks: Task[] = [];
  private readonly log: FastifyBaseLogger;
  private started = false;

  constructor(log: FastifyBaseLogger) {
    this.log = log;
  }

  every(name: string, seconds: number, run: () => Promise<void>): void {
    const task: Task = { name, seconds, run };
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
