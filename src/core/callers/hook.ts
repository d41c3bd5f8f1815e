// The caller of every public request, resolved once: version check → credentials → caller → rate
// limit → the route's access rule. Services read `request.principal`; what the route accepts is
// declared once in its `access` rule, which also gives the `X-Accepted-*` headers.
import type { FastifyInstance } from 'fastify';
import type { Context } from '../../platform/context.ts';
import { ApiError, forbidden } from '../../platform/errors.ts';
import { selectApiVersion } from '../../platform/http.ts';
import { databaseUnavailable } from '../../db/errors.ts';
import { rateLimitHeaders, type RateLimitState } from '../../platform/rate-limit.ts';
import { acceptedHeaders, checkRule, type AccessRule } from './access.ts';
import { ANONYMOUS, authenticate, type AnonymousPrincipal, type Principal } from './principal.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call a public route; routes without a rule (health, docs, admin) skip the API conventions. */
    access?: AccessRule;
    /** Basic credentials are the app's client id and secret (app token management). */
    basicApp?: boolean;
    /** Bad credentials here do not count toward the failed-login limit (token check). */
    failedLoginExempt?: boolean;
  }
  interface FastifyRequest {
    principal: Principal;
  }
}

export function installCallers(app: FastifyInstance, ctx: Context): void {
  app.decorateRequest('principal', null as unknown as AnonymousPrincipal);

  // Counting is a write. When the database cannot write (SQLite on a full or read-only disk), a read
  // must still be served: the request goes uncounted, with the last counted state in its headers.
  // Logged once per outage; a write request fails on its own write.
  let counterFailing = false;
  const count = async (key: string, limit: number): Promise<RateLimitState & { counted: boolean }> => {
    try {
      const state = await ctx.rateLimiter.hit(key, limit);
      counterFailing = false;
      return { ...state, counted: true };
    } catch (error) {
      const reason = databaseUnavailable(error);
      if (!reason) throw error;
      if (!counterFailing) ctx.log.error({ err: error, reason }, 'rate-limit counters cannot be written; requests are served uncounted until they can');
      counterFailing = true;
      return { ...(await ctx.rateLimiter.peek(key, limit)), counted: false };
    }
  };
  app.addHook('onRequest', async (request, reply) => {
    request.principal = ANONYMOUS;
    const config = request.routeOptions.config;
    const rule = config.access;
    if (!rule || config.admin) return;
    selectApiVersion(request, reply);
    reply.headers(acceptedHeaders(rule));

    const exempt = Boolean(config.failedLoginExempt);
    const failedKey = `failed-login:${request.ip}`;
    const failedLimit = ctx.config.rateLimit.failedLoginsPerHour;
    // The failed-login check and the credential lookup run side by side (one round trip on PostgreSQL).
    const [failures, authenticated] = await Promise.all([
      request.headers.authorization && !exempt ? ctx.rateLimiter.peek(failedKey, failedLimit) : null,
      authenticate(ctx.db.kysely, ctx.clock, request.headers.authorization, { basicApp: Boolean(config.basicApp) }).then(
        (principal) => ({ principal, error: null }),
        (error: unknown) => ({ principal: null, error }),
      ),
    ]);
    if (failures && failures.remaining === 0) throw forbidden('Maximum number of login attempts exceeded. Please try again later.');
    if (authenticated.error) {
      if (authenticated.error instanceof ApiError && authenticated.error.status === 401 && !exempt) await count(failedKey, failedLimit);
      throw authenticated.error;
    }
    request.principal = authenticated.principal!;

    const principal = request.principal;
    const [key, limit] = rateLimitKey(ctx, principal, request.ip);
    request.rateLimitKey = key;
    const state = await count(key, limit);
    if (!state.counted) request.rateLimitKey = null; // nothing to refund on a 304
    reply.headers(rateLimitHeaders(state));
    if (state.used > state.limit) {
      throw new ApiError(403, principal.type === 'anonymous'
        ? `API rate limit exceeded for ${request.ip}. (But here's the good news: Authenticated requests get a higher rate limit.)`
        : `API rate limit exceeded for ${key.replace(':', ' ')}.`);
    }
    if (principal.type === 'user' && (principal.kind === 'classic' || principal.kind === 'oauth')) {
      reply.header('x-oauth-scopes', principal.scopes.join(', '));
    }
    checkRule(rule, principal);
    // What the route accepts goes with the caller, so a check on an account or repository can ask
    // whether a token holds it there (an app user token's grant differs from account to account).
    if (principal.type === 'user' || principal.type === 'installation') principal.route = rule;
  });
}

function rateLimitKey(ctx: Context, principal: Principal, ip: string): [string, number] {
  const { authenticatedPerHour, anonymousPerHour } = ctx.config.rateLimit;
  switch (principal.type) {
    case 'user':
      return [`user:${principal.user.id}`, authenticatedPerHour];
    case 'installation':
      return [`installation:${principal.installationId}`, authenticatedPerHour];
    case 'app':
      return [`app:${principal.app.id}`, authenticatedPerHour];
    default:
      return [`ip:${ip}`, anonymousPerHour];
  }
}
