// The caller of every public request, resolved once: version check → credentials → caller → rate
// limit → the route's access rule. Services read `request.principal`; what the route accepts is
// declared once in its `access` rule, which also gives the `X-Accepted-*` headers.
import type { FastifyContextConfig, FastifyReply, FastifyRequest } from 'fastify';
import type { Context } from '../../platform/context.ts';
import { databaseUnavailable } from '../../db/errors.ts';
import { ApiError } from '../../platform/errors.ts';
import { anonymousRateLimit, anonymousRateLimitHeaders, selectApiVersion } from '../../http/version.ts';
import {
  clientAddress, rateLimitExceededMessage, rateLimitHeaders, secondaryRateLimitExceeded, type RateLimitKey, type RateLimitState,
} from '../../platform/rate-limit.ts';
import { acceptedHeaders, checkRule } from './access.ts';
import type { AccessRule } from './rule.ts';
import { authenticate, isFailedLogin, type Principal } from './principal.ts';
import { explanationOfError, type Explanation } from './explain.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call a public route (every route of the API scope has one). */
    access?: AccessRule;
    /** Basic credentials are the app's client id and secret (app token management). */
    basicApp?: boolean;
    /** The request reads the caller's budget and uses none of it (GET /rate_limit): not counted, not refused over the limit. */
    uncounted?: boolean;
    /**
     * The request creates content (an issue, a comment, a reaction, a label, a status, a check run, a
     * review): counted against the secondary limit of content a caller creates a minute and an hour.
     */
    createsContent?: boolean;
  }
  interface FastifyRequest {
    principal: Principal;
    /** Why the caller's credential was refused (./explain.ts), for the journal: never in the answer. */
    explanation: Explanation | null;
  }
}

/** Resolves a public request's caller under the route's `rule`: the API scope's onRequest hook (src/http/api.ts) calls it. */
export type CallerResolution = (request: FastifyRequest, reply: FastifyReply, config: FastifyContextConfig, rule: AccessRule) => Promise<void>;

export function callerResolution(ctx: Context): CallerResolution {
  // Counting is a write once per lease (platform/rate-limit.ts). When the database cannot write
  // (SQLite on a full or read-only disk) and the lease in hand has run out, a read must still be
  // served: the request goes uncounted, with the last counted state in its headers.
  // Logged once per outage; a write request fails on its own write.
  let counterFailing = false;
  /** The state after counting the request; an uncounted one has nothing to refund on a 304. */
  const count = async (request: FastifyRequest, key: RateLimitKey, limit: number): Promise<RateLimitState> => {
    try {
      const state = await ctx.rateLimiter.hit(key, limit);
      counterFailing = false;
      request.rateLimitKey = key;
      return state;
    } catch (error) {
      const reason = databaseUnavailable(error);
      if (!reason) throw error;
      if (!counterFailing) ctx.log.error({ err: error, reason }, 'rate-limit counters cannot be written; requests are served uncounted until they can');
      counterFailing = true;
      return ctx.rateLimiter.peek(key, limit);
    }
  };
  /**
   * A request that creates content, of a caller the route admits: counted a minute and an hour
   * (CODEHOST_RATE_LIMIT_CONTENT_PER_MINUTE / _PER_HOUR); over either, the platform's secondary
   * limit (403 with `Retry-After`: the seconds until that window ends). Its headers stay the primary's.
   */
  const countContent = async (request: FastifyRequest, key: RateLimitKey): Promise<void> => {
    const { contentPerMinute, contentPerHour } = ctx.config.rateLimit;
    for (const [window, limit, seconds] of [['minute', contentPerMinute, 60], ['hour', contentPerHour, 3600]] as const) {
      // Stryker disable next-line StringLiteral: a content window's resource is never shown (the answer's headers are the primary budget's)
      const state = await ctx.rateLimiter.hit(`content-${window}-${key}` as RateLimitKey, limit, 'content', seconds);
      if (state.used > limit) throw secondaryRateLimitExceeded(request.id, Math.max(1, state.reset - Math.floor(ctx.clock.nowMs() / 1000)));
    }
  };
  const resolve = async (request: FastifyRequest, reply: FastifyReply, config: FastifyContextConfig, rule: AccessRule): Promise<void> => {
    try {
      selectApiVersion(ctx.vendor, request, reply);
    } catch (error) {
      await anonymousRateLimitHeaders(ctx, request, reply);
      throw error;
    }
    reply.headers(acceptedHeaders(rule, ctx.vendor.acceptedPermissions));

    const address = clientAddress(request);
    // Every credential check runs under the failed-login limit of the client's address (the check
    // and the limit's read side by side; the read at most once per CODEHOST_LOOKUP_CACHE_MS).
    const authorization = request.headers.authorization;
    const check = () => authenticate(ctx.db.kysely, ctx.clock, authorization, { basicApp: Boolean(config.basicApp) });
    try {
      request.principal = authorization
        ? await ctx.rateLimiter.guardLogin(address, ctx.config.rateLimit.failedLoginsPerHour, check, isFailedLogin)
        // The anonymous caller's own copy, to carry this request's notes (./explain.ts).
        : { type: 'anonymous', kind: null };
    } catch (error) {
      // Stryker disable all: the journal's explanation (./explain.ts), never in the answer: test/testing/journal-explains.test.ts
      request.explanation = explanationOfError(error) ?? (error instanceof ApiError && error.status === 401
        ? { reason: 'unknown_credential', message: 'the Authorization header is not a credential codehost reads (Bearer, token or Basic and one value)', credential: { kind: null } }
        : null);
      // Stryker restore all
      // Refused before the caller is known: the rate-limit headers are the address's anonymous budget's.
      if (error instanceof ApiError && (error.status === 401 || error.status === 403)) await anonymousRateLimitHeaders(ctx, request, reply);
      throw error;
    }

    const principal = request.principal;
    const [key, limit] = rateLimitKey(ctx, principal, address);
    const state = config.uncounted ? await ctx.rateLimiter.peek(key, limit) : await count(request, key, limit);
    reply.headers(rateLimitHeaders(state));
    if (!config.uncounted && state.used > state.limit) throw new ApiError(403, rateLimitExceededMessage(key));
    if (principal.type === 'user' && (principal.kind === 'classic' || principal.kind === 'oauth')) {
      reply.header('x-oauth-scopes', principal.scopes.join(', '));
    }
    checkRule(rule, principal);
    if (config.createsContent) await countContent(request, key);
    // What the route accepts goes with the caller, so a check on an account or repository can ask
    // whether a token holds it there (an app user token's grant differs from account to account).
    if (principal.type === 'user' || principal.type === 'installation') principal.route = rule;
  };
  return resolve;
}

/** What the rate limit counts the caller as, and its limit an hour. */
export function rateLimitKey(ctx: Context, principal: Principal, address: string): [RateLimitKey, number] {
  const { authenticatedPerHour } = ctx.config.rateLimit;
  switch (principal.type) {
    case 'user':
      return [`user:${principal.user.id}`, authenticatedPerHour];
    case 'installation':
      return [`installation:${principal.installationId}`, authenticatedPerHour];
    case 'app':
      return [`app:${principal.app.id}`, authenticatedPerHour];
    default:
      return anonymousRateLimit(ctx, address);
  }
}
