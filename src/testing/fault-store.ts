// The fault rules of test mode (CODEHOST_TEST_MODE): what the operator asked to go wrong, for the
// next N matching requests or webhook deliveries, or for a time. Kept in memory, one set per server
// (a process running several servers, as the tests do, keeps them apart): a rule reaches the requests
// and deliveries of the process it was created in. The admin routes and the request hook are in
// faults.ts; the webhook engine is given `deliveryFault` (plugin.ts) when it is built.
import type { Context } from '../platform/context.ts';
import { perServer } from '../platform/per-server.ts';

export const REQUEST_EFFECTS = ['status', 'primary_rate_limit', 'secondary_rate_limit', 'delay', 'drop'] as const;
export const DELIVERY_EFFECTS = ['webhook_timeout', 'webhook_duplicate'] as const;
export type RequestEffect = (typeof REQUEST_EFFECTS)[number];
export type DeliveryEffect = (typeof DELIVERY_EFFECTS)[number];

/** What a request must be for a rule to apply; an absent field matches anything. */
export interface FaultMatch {
  /** SHA-256 of the credential (never the credential itself), and its last eight characters to show. */
  tokenHash?: string;
  tokenLastEight?: string;
  app?: { id: number; slug: string };
  user?: { id: number; login: string };
  method?: string;
  /** A path under the API root with `*` for any characters, e.g. `/notifications*`. */
  path?: string;
}

export interface FaultRule {
  id: number;
  effect: RequestEffect | DeliveryEffect;
  /** The answer's status (status, rate-limit effects). */
  status: number | null;
  /** `Retry-After` seconds (secondary rate limit; optional on a status). */
  retryAfter: number | null;
  /** Seconds until `X-RateLimit-Reset` (primary rate limit). */
  resetSeconds: number | null;
  delayMs: number | null;
  match: FaultMatch;
  /** Matches left before the rule is spent; null: any number until it expires. */
  remaining: number | null;
  /** Epoch milliseconds (the server's clock) at which the rule stops; null: until spent. */
  expiresAt: number | null;
  hits: number;
  createdAt: number;
}

/** What a request offers to match against: the caller as resolved, and the path without the query. */
export interface RequestFacts {
  tokenHash: string | null;
  appId: number | null;
  userId: number | null;
  method: string;
  path: string;
}

/** A path pattern where a star matches any run of characters, slashes included. */
export const glob = (pattern: string) => new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);

export class FaultStore {
  private rules: FaultRule[] = [];
  private nextId = 1;
  private readonly patterns = new Map<string, RegExp>();

  add(rule: Omit<FaultRule, 'id' | 'hits'>): FaultRule {
    const created = { ...rule, id: this.nextId++, hits: 0 };
    this.rules.push(created);
    return created;
  }

  /** The rules still in force, oldest first. */
  list(now: number): FaultRule[] {
    this.prune(now);
    return [...this.rules];
  }

  remove(id: number): boolean {
    const before = this.rules.length;
    this.rules = this.rules.filter((rule) => rule.id !== id);
    return this.rules.length < before;
  }

  clear(): void {
    this.rules = [];
  }

  /** The rules as they are, copied (a snapshot of the test double). */
  save(): FaultRule[] {
    return structuredClone(this.rules);
  }

  /** Puts saved rules back in place of the present ones. */
  replace(rules: FaultRule[]): void {
    this.rules = structuredClone(rules);
    this.nextId = Math.max(this.nextId, ...rules.map((rule) => rule.id + 1));
  }

  get empty(): boolean {
    return this.rules.length === 0;
  }

  /** The oldest rule in force that matches the request, counted as used; null when none does. */
  takeForRequest(now: number, facts: RequestFacts): FaultRule | null {
    return this.take(now, (rule) => (REQUEST_EFFECTS as readonly string[]).includes(rule.effect) && this.matches(rule.match, facts));
  }

  /** The oldest delivery rule in force for the app, counted as used. */
  takeForDelivery(now: number, appId: number): FaultRule | null {
    return this.take(now, (rule) => (DELIVERY_EFFECTS as readonly string[]).includes(rule.effect) && rule.match.app?.id === appId);
  }

  private take(now: number, applies: (rule: FaultRule) => boolean): FaultRule | null {
    this.prune(now);
    const rule = this.rules.find(applies);
    if (!rule) return null;
    rule.hits += 1;
    if (rule.remaining !== null) {
      rule.remaining -= 1;
      if (rule.remaining === 0) this.remove(rule.id);
    }
    return rule;
  }

  private matches(match: FaultMatch, facts: RequestFacts): boolean {
    if (match.tokenHash !== undefined && match.tokenHash !== facts.tokenHash) return false;
    if (match.app !== undefined && match.app.id !== facts.appId) return false;
    if (match.user !== undefined && match.user.id !== facts.userId) return false;
    if (match.method !== undefined && match.method !== facts.method) return false;
    if (match.path !== undefined) {
      let pattern = this.patterns.get(match.path);
      if (!pattern) this.patterns.set(match.path, (pattern = glob(match.path)));
      if (!pattern.test(facts.path)) return false;
    }
    return true;
  }

  private prune(now: number): void {
    if (this.rules.some((rule) => rule.expiresAt !== null && rule.expiresAt <= now)) {
      this.rules = this.rules.filter((rule) => rule.expiresAt === null || rule.expiresAt > now);
    }
  }
}

/** The fault rules of a server. */
const faults = perServer(() => new FaultStore());

/** The fault rules of this server. */
export function faultsOf(ctx: Context): FaultStore {
  return faults.of(ctx);
}

/**
 * The webhook sender's delivery fault check, in test mode only (production has none): the fault for
 * the next post to an app, when a rule says so, counted as used.
 */
export function deliveryFault(ctx: Context): ((appId: number) => DeliveryEffect | null) | undefined {
  if (!ctx.config.testMode) return undefined;
  const store = faults.of(ctx);
  return (appId) => {
    if (store.empty) return null;
    return (store.takeForDelivery(ctx.clock.nowMs(), appId)?.effect as DeliveryEffect | undefined) ?? null;
  };
}
