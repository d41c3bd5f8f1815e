// `X-Poll-Interval`: the configured interval (60 s by default), doubled or quadrupled while this
// process is under load. Load is the event-loop utilization (the share of wall time the loop spent
// running callbacks rather than waiting for I/O) over about the last two seconds: it counts every
// kind of work a request causes here (JSON, SQLite's synchronous queries, pg result parsing), and it
// is what limits how many requests one process answers. Each process measures its own.
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { perServer } from '../../platform/per-server.ts';

const SAMPLE_MS = 500;
const WINDOW_MS = 2000;
const KEPT = WINDOW_MS / SAMPLE_MS + 2;

export class LoadMonitor {
  #samples: { at: number; elu: EventLoopUtilization }[] = [];
  #timer: NodeJS.Timeout | undefined;

  start(): void {
    this.#sample();
    this.#timer = setInterval(() => this.#sample(), SAMPLE_MS);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  #sample(): void {
    this.#samples.push({ at: performance.now(), elu: performance.eventLoopUtilization() });
    if (this.#samples.length > KEPT) this.#samples.shift();
  }

  /**
   * Event-loop utilization (0 to 1) since the newest sample at least WINDOW_MS old (or the oldest).
   * A loop blocked for seconds took no samples meanwhile, so the window then spans the whole block.
   */
  utilization(): number {
    const now = performance.now();
    const from = this.#samples.findLast((s) => now - s.at >= WINDOW_MS) ?? this.#samples[0];
    if (!from) return 0;
    return performance.eventLoopUtilization(performance.eventLoopUtilization(), from.elu).utilization;
  }
}

/** The interval clients are told to wait, in seconds. */
export function pollInterval(base: number, utilization: number): number {
  if (utilization >= 0.95) return base * 4;
  if (utilization >= 0.8) return base * 2;
  return base;
}

/** The server's load monitor, sampling from its first use until the area closes. */
export const loadMonitor = perServer(() => {
  const load = new LoadMonitor();
  load.start();
  return load;
});
