// `X-Poll-Interval`: the configured interval (60 s by default), doubled or quadrupled while this
// process is under load. Load is the event-loop utilization (the share of wall time the loop spent
// running callbacks rather than waiting for I/O) over the last two seconds or so: it counts every
// kind of work a request causes here (JSON, SQLite's synchronous queries, pg result parsing), and
// it is what limits how many requests one process answers. Each process measures its own.
import { performance, type EventLoopUtilization } from 'node:perf_hooks';

const SAMPLE_MS = 500;
/** Samples kept: the window is (SAMPLES - 1) × SAMPLE_MS plus the time since the last sample. */
const SAMPLES = 5;

export class LoadMonitor {
  #samples: EventLoopUtilization[] = [];
  #timer: NodeJS.Timeout | undefined;

  start(): void {
    this.#samples = [performance.eventLoopUtilization()];
    this.#timer = setInterval(() => {
      this.#samples.push(performance.eventLoopUtilization());
      if (this.#samples.length > SAMPLES) this.#samples.shift();
    }, SAMPLE_MS);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  /** Event-loop utilization (0 to 1) since the oldest sample. */
  utilization(): number {
    const oldest = this.#samples[0];
    if (!oldest) return 0;
    return performance.eventLoopUtilization(performance.eventLoopUtilization(), oldest).utilization;
  }
}

/** The interval clients are told to wait, in seconds. */
export function pollInterval(base: number, utilization: number): number {
  if (utilization >= 0.95) return base * 4;
  if (utilization >= 0.8) return base * 2;
  return base;
}
