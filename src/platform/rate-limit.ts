// Rate limits, counted in the database so every process behind a load balancer shares them.
// A window opens at its first request and resets an hour later; one upsert per request. Keys are
// only ids and client addresses (never text a client chose), and expired windows are swept.
import { isIP } from 'node:net';
import type { FastifyRequest } from 'fastify';
import type { Executor } from '../db/index.ts';
import type { Clock } from './clock.ts';
import { ApiError } from './errors.ts';
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

/** How often the expired windows are removed. */
export const SWEEP_SECONDS = 600;

/** What a rate limit counts: a user, an app or an installation by id, or a client address. */
export type RateLimitKey = `${'user' | 'app' | 'installation'}:${number}` | `${'ip' | 'failed-login'}:${string}`;

const ID_KEY = /^(user|app|installation):[1-9]\d{0,15}$/;
const ADDRESS_KEY = /^(ip|failed-login):(.{2,45})$/;

function checkKey(key: string): void {
  const address = ADDRESS_KEY.exec(key)?.[2];
  if (!ID_KEY.test(key) && !(address !== undefined && isIP(address))) throw new Error(`not a rate-limit key: ${JSON.stringify(key.slice(0, 80))}`);
}

/**
 * The client's address: the socket's, or the one the trusted proxies name (CODEHOST_TRUST_PROXY).
 * Whatever a proxy forwards that is not an address falls back to the nearest address that is one
 * (the proxy's). IPv4-mapped IPv6 addresses are their IPv4 form, IPv6 addresses their short form.
 */
export function clientAddress(request: FastifyRequest): string {
  for (const candidate of [request.ip, request.socket.remoteAddress]) {
    const normal = normalAddress(candidate);
    if (normal) return normal;
  }
  return '0.0.0.0';
}

function normalAddress(value: string | undefined): string | null {
  if (!value || value.length > 45) return null;
  const family = isIP(value);
  if (family === 4) return value;
  if (family !== 6 || value.includes('%')) return null;
  const short = new URL(`http://[${value}]/`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(short);
  if (!mapped) return short;
  const [high, low] = [parseInt(mapped[1]!, 16), parseInt(mapped[2]!, 16)];
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

export const LOGIN_ATTEMPTS_EXCEEDED = 'Maximum number of login attempts exceeded. Please try again later.';

export class RateLimiter {
  private readonly db: Executor;
  private readonly clock: Clock;

  constructor(db: Executor, clock: Clock) {
    this.db = db;
    this.clock = clock;
  }

  /** Counts one request against `key` and returns the state after it. */
  async hit(key: RateLimitKey, limit: number, resource = 'core'): Promise<RateLimitState> {
    checkKey(key);
    const now = Math.floor(this.clock.nowMs() / 1000);
    const row = await store.countRequest(this.db, key, now, now - WINDOW_SECONDS);
    return this.state(row.used, row.window_start, limit, resource);
  }

  /** Reads the state without counting. */
  async peek(key: RateLimitKey, limit: number, resource = 'core'): Promise<RateLimitState> {
    checkKey(key);
    const now = Math.floor(this.clock.nowMs() / 1000);
    const row = await store.findCounter(this.db, key);
    if (!row || row.window_start <= now - WINDOW_SECONDS) return this.state(0, now, limit, resource);
    return this.state(row.used, row.window_start, limit, resource);
  }

  /** Gives back a counted request (a 304 does not count). */
  async refund(key: string): Promise<void> {
    checkKey(key);
    await store.uncountRequest(this.db, key);
  }

  /**
   * Runs a credential check under the failed-login limit of `address`. A failure (`failed(error)`)
   * is counted and judged by the one upsert that counts it, so concurrent guesses cannot all see
   * room left: at most `limit` fail with their own error in a window, the rest get 403. While the
   * address is over the limit every check is refused, a right one too (no oracle for guesses).
   */
  async guardLogin<T>(address: string, limit: number, check: () => Promise<T>, failed: (error: unknown) => boolean): Promise<T> {
    const key: RateLimitKey = `failed-login:${address}`;
    const [before, outcome] = await Promise.all([
      this.peek(key, limit),
      check().then(
        (value) => ({ ok: true as const, value }),
        (error: unknown) => ({ ok: false as const, error }),
      ),
    ]);
    if (before.remaining === 0) throw new ApiError(403, LOGIN_ATTEMPTS_EXCEEDED);
    if (outcome.ok) return outcome.value;
    if (failed(outcome.error) && (await this.hit(key, limit)).used > limit) throw new ApiError(403, LOGIN_ATTEMPTS_EXCEEDED);
    throw outcome.error;
  }

  /** Removes the windows that have run out (a sweep: ctx.periodic). */
  async sweep(): Promise<number> {
    return store.deleteExpiredCounters(this.db, Math.floor(this.clock.nowMs() / 1000) - WINDOW_SECONDS);
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
