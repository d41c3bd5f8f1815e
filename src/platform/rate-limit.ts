// Rate limits, shared by every process behind a load balancer through the database: each process
// counts in memory against blocks of quota it leases from the database (one upsert per block, not
// per request). A window opens at its first request and resets an hour later. Keys are only ids and
// client addresses (never text a client chose), and expired windows are swept.
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

type Caller = 'user' | 'app' | 'installation';

/**
 * What a rate limit counts: a user, an app or an installation by id, or a client address; and the
 * secondary limit's content a caller creates, a minute and an hour (`content-minute-user:1`).
 */
export type RateLimitKey = `${Caller}:${number}` | `content-${'minute' | 'hour'}-${Caller}:${number}` | `${'ip' | 'failed-login'}:${string}`;

const ID_KEY = /^(content-(minute|hour)-)?(user|app|installation):[1-9]\d{0,15}$/;
const ADDRESS_KEY = /^(ip|failed-login):(.{2,45})$/;

/**
 * The platform's message for a caller over its limit: the user, app or installation by id, or an
 * anonymous client's address with the platform's hint.
 */
export function rateLimitExceededMessage(key: RateLimitKey): string {
  const colon = key.indexOf(':');
  const kind = key.slice(0, colon);
  const subject = key.slice(colon + 1);
  return kind === 'ip' || kind === 'failed-login'
    ? `API rate limit exceeded for ${subject}. (But here's the good news: Authenticated requests get a higher rate limit.)`
    : `API rate limit exceeded for ${kind} ID ${subject}.`;
}

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

/** The platform's answer to a caller over a secondary limit: 403 (or the given status) with `Retry-After`. */
export function secondaryRateLimitExceeded(requestId: string, retryAfterSeconds: number, status = 403): ApiError {
  return new ApiError(status,
    'You have exceeded a secondary rate limit. Please wait a few minutes before you try again. '
    + `If you reach out to support for help, please include the request ID ${requestId}.`,
    { headers: { 'retry-after': String(retryAfterSeconds) } });
}

export const LOGIN_ATTEMPTS_EXCEEDED = 'Maximum number of login attempts exceeded. Please try again later.';

/**
 * How many requests of a budget of `limit` one lease takes: at most `block`, a fiftieth of the
 * budget, at least one (small budgets, such as the anonymous 60 an hour, stay exact per request).
 */
export function leaseSize(limit: number, block: number): number {
  return Math.max(1, Math.min(block, Math.floor(limit / 50)));
}

/** Requests this process may count without asking the database: numbers `next`..`end` of the window. */
interface Lease {
  windowStart: number;
  next: number;
  end: number;
  /** Requests given back (a 304): counted again before the next number. */
  credits: number;
}

/** What this process last knew of an address's failed logins, and when it read it (performance.now()). */
interface Known {
  used: number;
  windowStart: number;
  readAt: number;
}

/** Entries kept in memory per map before the oldest are dropped (an attacker with many addresses). */
export const MAX_ENTRIES = 100_000;

export interface RateLimiterOptions {
  /** The most requests one lease takes from the database (CODEHOST_RATE_LIMIT_BLOCK). */
  block: number;
  /** How long a read of another process's failed-login count is trusted (CODEHOST_LOOKUP_CACHE_MS). */
  cacheMs: number;
}

/**
 * Requests are counted in memory against quota leased from the database in blocks. The row of a
 * key holds every request number handed out to any process in its window; a lease is one upsert
 * that takes the next `leaseSize` numbers, and a request is allowed when the number it gets is
 * within the limit. No number is given twice, so all processes together never allow more than the
 * limit in a window; a number leased and not used (a process that stops, or serves the key no
 * more) is lost, so they allow at least `limit - processes × (lease - 1)` of it. Once a lease comes
 * back beyond the limit the key is refused from memory until its window resets. Failed logins stay
 * exact: each is counted by its own upsert, which judges it.
 */
export class RateLimiter {
  private readonly db: Executor;
  private readonly clock: Clock;
  private readonly options: RateLimiterOptions;
  private readonly leases = new Map<string, Lease>();
  private readonly leasing = new Map<string, Promise<void>>();
  private readonly failedLogins = new Map<string, Known>();

  constructor(db: Executor, clock: Clock, options: RateLimiterOptions = { block: 1, cacheMs: 0 }) {
    this.db = db;
    this.clock = clock;
    this.options = options;
  }

  /** Counts one request against `key` and returns the state after it; a window is an hour unless `windowSeconds` says less. */
  async hit(key: RateLimitKey, limit: number, resource = 'core', windowSeconds = WINDOW_SECONDS): Promise<RateLimitState> {
    checkKey(key);
    for (;;) {
      const now = this.nowSeconds();
      const lease = this.leases.get(key);
      if (lease && lease.windowStart > now - windowSeconds) {
        if (lease.credits > 0) {
          lease.credits--;
          return this.state(lease.next - 1 - lease.credits, lease.windowStart, limit, resource, windowSeconds);
        }
        // A number of this lease, or beyond the limit already: every number left in the window is.
        if (lease.next <= lease.end || lease.next > limit) {
          const used = lease.next++;
          return this.state(used, lease.windowStart, limit, resource, windowSeconds);
        }
      }
      let pending = this.leasing.get(key);
      if (!pending) {
        pending = this.lease(key, limit, now, windowSeconds).finally(() => this.leasing.delete(key));
        this.leasing.set(key, pending);
      }
      await pending;
    }
  }

  private async lease(key: string, limit: number, now: number, windowSeconds: number): Promise<void> {
    const size = leaseSize(limit, this.options.block);
    const row = await store.countRequests(this.db, key, size, now, now - windowSeconds);
    const old = this.leases.get(key);
    const credits = old && old.windowStart === row.window_start ? old.credits : 0;
    this.leases.delete(key);
    this.leases.set(key, { windowStart: row.window_start, next: row.used - size + 1, end: row.used, credits });
    bound(this.leases);
  }

  /** Reads the state without counting: this process's own count while it holds a lease of the key. */
  async peek(key: RateLimitKey, limit: number, resource = 'core'): Promise<RateLimitState> {
    checkKey(key);
    const now = this.nowSeconds();
    const lease = this.leases.get(key);
    if (lease && lease.windowStart > now - WINDOW_SECONDS) return this.state(lease.next - 1 - lease.credits, lease.windowStart, limit, resource);
    const row = await store.findCounter(this.db, key);
    if (!row || row.window_start <= now - WINDOW_SECONDS) return this.state(0, now, limit, resource);
    return this.state(row.used, row.window_start, limit, resource);
  }

  /** Gives back a counted request (a 304 does not count): the next request of the key in this process reuses it. */
  refund(key: string): void {
    checkKey(key);
    const lease = this.leases.get(key);
    if (lease && lease.windowStart > this.nowSeconds() - WINDOW_SECONDS && lease.next - 1 - lease.credits > 0) lease.credits++;
  }

  /**
   * Runs a credential check under the failed-login limit of `address`. A failure (`failed(error)`)
   * is counted and judged by the one upsert that counts it, so concurrent guesses cannot all see
   * room left: at most `limit` fail with their own error in a window, the rest get 403. While the
   * address is over the limit every check is refused, a right one too (no oracle for guesses). The
   * count is read from the database at most once per `cacheMs` per address; this process's own
   * failures update it at once. So an address that another process has just blocked can have one
   * more check judged here within that time (a wrong one is counted by the upsert and refused).
   */
  async guardLogin<T>(address: string, limit: number, check: () => Promise<T>, failed: (error: unknown) => boolean): Promise<T> {
    const key: RateLimitKey = `failed-login:${address}`;
    checkKey(key);
    // Read within cacheMs (most requests): judged at once, and only the check is waited for.
    const known = this.knownFailedLogins(key);
    if (known !== null) {
      if (known >= limit) throw new ApiError(403, LOGIN_ATTEMPTS_EXCEEDED);
      try {
        return await check();
      } catch (error) {
        return this.judgeFailure(key, limit, error, failed);
      }
    }
    const [before, outcome] = await Promise.all([
      this.readFailedLogins(key),
      check().then(
        (value) => ({ ok: true as const, value }),
        (error: unknown) => ({ ok: false as const, error }),
      ),
    ]);
    if (before >= limit) throw new ApiError(403, LOGIN_ATTEMPTS_EXCEEDED);
    if (outcome.ok) return outcome.value;
    return this.judgeFailure(key, limit, outcome.error, failed);
  }

  /** A check that failed: a failed login is counted by its own upsert, which refuses it over the limit. */
  private async judgeFailure(key: RateLimitKey, limit: number, error: unknown, failed: (error: unknown) => boolean): Promise<never> {
    if (failed(error)) {
      const now = this.nowSeconds();
      const row = await store.countRequests(this.db, key, 1, now, now - WINDOW_SECONDS);
      this.remember(key, row.used, row.window_start);
      if (row.used > limit) throw new ApiError(403, LOGIN_ATTEMPTS_EXCEEDED);
    }
    throw error;
  }

  /** The failed logins of the window as this process read or counted them within cacheMs; null when that is older. */
  private knownFailedLogins(key: RateLimitKey): number | null {
    const known = this.failedLogins.get(key);
    if (!known || performance.now() - known.readAt >= this.options.cacheMs) return null;
    return known.windowStart > this.nowSeconds() - WINDOW_SECONDS ? known.used : 0;
  }

  private async readFailedLogins(key: RateLimitKey): Promise<number> {
    const now = this.nowSeconds();
    const row = await store.findCounter(this.db, key);
    if (!row || row.window_start <= now - WINDOW_SECONDS) {
      this.remember(key, 0, now);
      return 0;
    }
    this.remember(key, row.used, row.window_start);
    return row.used;
  }

  private remember(key: string, used: number, windowStart: number): void {
    const known = this.failedLogins.get(key);
    // Concurrent failures answer out of order: keep the highest count of a window.
    if (known && known.windowStart === windowStart && known.used > used) used = known.used;
    this.failedLogins.delete(key);
    this.failedLogins.set(key, { used, windowStart, readAt: performance.now() });
    bound(this.failedLogins);
  }

  /** Forgets what this process holds in memory (the test double replaced the counters in the database). */
  forget(): void {
    this.leases.clear();
    this.failedLogins.clear();
  }

  /** Removes the windows that have run out (a sweep: ctx.periodic), in the database and in memory. */
  async sweep(): Promise<number> {
    const expired = this.nowSeconds() - WINDOW_SECONDS;
    for (const map of [this.leases, this.failedLogins]) {
      for (const [key, entry] of map) if (entry.windowStart <= expired) map.delete(key);
    }
    return store.deleteExpiredCounters(this.db, expired);
  }

  private nowSeconds(): number {
    return Math.floor(this.clock.nowMs() / 1000);
  }

  private state(used: number, windowStart: number, limit: number, resource: string, windowSeconds = WINDOW_SECONDS): RateLimitState {
    return { limit, used, remaining: Math.max(0, limit - used), reset: windowStart + windowSeconds, resource };
  }
}

/** Drops the oldest entries of a map beyond MAX_ENTRIES (a dropped lease's numbers are lost: fewer allowed, never more). */
export function bound(map: Map<string, unknown>): void {
  while (map.size > MAX_ENTRIES) map.delete(map.keys().next().value!);
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
