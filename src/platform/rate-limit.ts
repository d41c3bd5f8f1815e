// Rate limits, counted in the database so every process behind a load balancer shares them.
// A window opens at its first request and resets an hour later; one upsert per request.
import type { Executor } from '../db/index.ts';
import type { Clock } from './clock.ts';
import * as store from './rate-limit-store.ts';

export interface RateLimitState {
  limit: number;
  used: number;
  remaining: number;
  /** Epoch seconds at which the window resets. */
  reset: number;
  resource: string;
}

const WINDOW_SECONDS = 3600;

export class RateLimiter {
  private readonly db: Executor;
  private readonly clock: Clock;

  constructor(db: Executor, clock: Clock) {
    this.db = db;
    this.clock = clock;
  }

  /** Counts one request against `key` and returns the state after it. */
  async hit(key: string, limit: number, resource = 'core'): Promise<RateLimitState> {
    const now = Math.floor(this.clock.nowMs() / 1000);
    const row = await store.countRequest(this.db, key, now, now - WINDOW_SECONDS);
    return this.state(row.used, row.window_start, limit, resource);
  }

  /** Reads the state without counting. */
  async peek(key: string, limit: number, resource = 'core'): Promise<RateLimitState> {
    const now = Math.floor(this.clock.nowMs() / 1000);
    const row = await store.findCounter(this.db, key);
    if (!row || row.window_start <= now - WINDOW_SECONDS) return this.state(0, now, limit, resource);
    return this.state(row.used, row.window_start, limit, resource);
  }

  /** Gives back a counted request (a 304 does not count). */
  async refund(key: string): Promise<void> {
    await store.uncountRequest(this.db, key);
  }

  private state(used: number, windowStart: number, limit: number, resource: string): RateLimitState {
    return { limit, used, remaining: Math.max(0, limit - used), reset: windowStart + WINDOW_SECONDS, resource };
  }
}

export function rateLimitHeaders(state: RateLimitState): Record<string, string> {
  return {
    'x-ratelimit-limit': String(state.limit),
    'x-ratelimit-remaining': String(state.remaining),
    'x-ratelimit-used': String(state.used),
    'x-ratelimit-reset': String(state.reset),
    'x-ratelimit-resource': state.resource,
  };
}
