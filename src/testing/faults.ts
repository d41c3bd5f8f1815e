// Fault injection for client tests (docs/clients.md), in test mode only (CODEHOST_TEST_MODE):
// POST /_admin/faults makes the next N matching public API requests (or those of the next S seconds)
// answer a platform error, wait, or lose their connection, and the next N webhook deliveries to an
// app time out or arrive twice. GET lists the rules in force, DELETE clears them. Without test mode
// the routes answer 404 and no hook is installed. The rules live in memory (fault-store.ts):
// they reach the process that received them.
import { STATUS_CODES } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { findAccount } from '../core/accounts/store.ts';
import { findApp } from '../core/apps/store.ts';
import type { Api, Context } from '../platform/context.ts';
import { ApiError, invalidField, notFound } from '../platform/errors.ts';
import { DELIVERY_EFFECTS, faultsOf, REQUEST_EFFECTS, type DeliveryEffect, type FaultMatch, type FaultRule, type RequestEffect, type RequestFacts } from './fault-store.ts';
import { clientAddress, rateLimitExceededMessage, secondaryRateLimitExceeded } from '../platform/rate-limit.ts';
import { hashSecret } from '../platform/tokens.ts';
import { parseAuthorization, type Principal, rateLimitKey } from '../core/access/index.ts';
import { withoutApiPrefix } from '../platform/urls.ts';

const hidden = { hide: true, tags: ['admin'] } as const;

/** The fault rule that answered a request, as the journal names it (its `fault` field and `injected_fault` warning). */
export interface InjectedFault {
  id: number;
  effect: string;
  match: ReturnType<typeof ruleBody>['match'];
}

declare module 'fastify' {
  interface FastifyRequest {
    injectedFault?: InjectedFault;
  }
}

const FaultBody = Type.Object({
  effect: Type.Union([...REQUEST_EFFECTS, ...DELIVERY_EFFECTS].map((effect) => Type.Literal(effect as RequestEffect | DeliveryEffect))),
  status: Type.Optional(Type.Integer({ minimum: 400, maximum: 599 })),
  retry_after: Type.Optional(Type.Integer({ minimum: 0, maximum: 86_400 })),
  reset_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 86_400 })),
  delay_ms: Type.Optional(Type.Integer({ minimum: 1, maximum: 120_000 })),
  match: Type.Optional(Type.Object({
    token: Type.Optional(Type.String({ minLength: 1 })),
    app: Type.Optional(Type.String({ minLength: 1 })),
    user: Type.Optional(Type.String({ minLength: 1 })),
    method: Type.Optional(Type.String({ pattern: '^[A-Za-z]+$' })),
    path: Type.Optional(Type.String({ pattern: '^/' })),
  }, { additionalProperties: false })),
  times: Type.Optional(Type.Integer({ minimum: 1 })),
  seconds: Type.Optional(Type.Integer({ minimum: 1 })),
}, { additionalProperties: false });
type FaultBody = Static<typeof FaultBody>;

/** Which of the optional fields each effect takes. */
const PARAMETERS: Record<FaultBody['effect'], readonly string[]> = {
  status: ['status', 'retry_after'],
  primary_rate_limit: ['status', 'reset_seconds'],
  secondary_rate_limit: ['status', 'retry_after'],
  delay: ['delay_ms'],
  drop: [],
  webhook_timeout: [],
  webhook_duplicate: [],
};

/** A rule as the admin API shows it: what it matches (never the token), its effect, what is left of it. */
function ruleBody(rule: FaultRule) {
  const match = rule.match;
  return {
    id: rule.id,
    effect: rule.effect,
    status: rule.status,
    retry_after: rule.retryAfter,
    reset_seconds: rule.resetSeconds,
    delay_ms: rule.delayMs,
    match: {
      token_last_eight: match.tokenLastEight ?? null,
      app: match.app?.slug ?? null,
      user: match.user?.login ?? null,
      method: match.method ?? null,
      path: match.path ?? null,
    },
    times_remaining: rule.remaining,
    expires_at: rule.expiresAt === null ? null : new Date(rule.expiresAt).toISOString(),
    hits: rule.hits,
    created_at: new Date(rule.createdAt).toISOString(),
  };
}

async function createRule(ctx: Context, body: FaultBody): Promise<FaultRule> {
  const delivery = (DELIVERY_EFFECTS as readonly string[]).includes(body.effect);
  const takes: readonly string[] = PARAMETERS[body.effect];
  for (const field of ['status', 'retry_after', 'reset_seconds', 'delay_ms'] as const) {
    if (body[field] !== undefined && !takes.includes(field)) throw invalidField('Fault', field, `${field} does not apply to the ${body.effect} effect`);
  }
  let status: number | null = null;
  if (body.effect === 'status') {
    if (body.status === undefined) throw invalidField('Fault', 'status', 'the status effect needs a status (400 to 599)', 'missing_field');
    status = body.status;
  } else if (body.effect === 'primary_rate_limit' || body.effect === 'secondary_rate_limit') {
    status = body.status ?? 403;
    if (status !== 403 && status !== 429) throw invalidField('Fault', 'status', 'a rate limit answers 403 or 429');
  }
  if (body.effect === 'delay' && body.delay_ms === undefined) throw invalidField('Fault', 'delay_ms', 'the delay effect needs delay_ms', 'missing_field');

  const given = body.match ?? {};
  if (delivery) {
    if (given.app === undefined) throw invalidField('Fault', 'match.app', `${body.effect} applies to the deliveries of one app: name it in match.app`, 'missing_field');
    const other = (['token', 'user', 'method', 'path'] as const).find((field) => given[field] !== undefined);
    if (other) throw invalidField('Fault', `match.${other}`, `deliveries are matched by app only`);
  }
  const match: FaultMatch = {};
  const db = ctx.db.kysely;
  if (given.token !== undefined) {
    match.tokenHash = hashSecret(given.token);
    match.tokenLastEight = given.token.slice(-8);
  }
  if (given.app !== undefined) {
    const app = await findApp(db, given.app);
    if (!app) throw notFound(`No app ${given.app}`);
    match.app = { id: app.id, slug: app.slug };
  }
  if (given.user !== undefined) {
    const user = await findAccount(db, given.user);
    if (!user || user.type === 'Organization') throw notFound(`No user ${given.user}`);
    match.user = { id: user.id, login: user.login };
  }
  if (given.method !== undefined) match.method = given.method.toUpperCase();
  // Paths are matched under the API root, whichever of `/` and `/api/v3` the client uses.
  if (given.path !== undefined) match.path = withoutApiPrefix(given.path) || '/';

  const now = ctx.clock.nowMs();
  return faultsOf(ctx).add({
    effect: body.effect,
    status,
    retryAfter: body.effect === 'secondary_rate_limit' ? (body.retry_after ?? 60) : (body.retry_after ?? null),
    resetSeconds: body.effect === 'primary_rate_limit' ? (body.reset_seconds ?? 60) : null,
    delayMs: body.delay_ms ?? null,
    match,
    // Neither a count nor a time: the next matching request only.
    remaining: body.times ?? (body.seconds === undefined ? 1 : null),
    expiresAt: body.seconds === undefined ? null : now + body.seconds * 1000,
    createdAt: now,
  });
}

export function faultRoutes(app: Api, ctx: Context): void {
  const inTestMode = () => {
    if (!ctx.config.testMode) throw notFound();
  };

  app.post('/_admin/faults', { schema: { ...hidden, body: FaultBody } }, async (request, reply) => {
    inTestMode();
    return reply.code(201).send(ruleBody(await createRule(ctx, request.body)));
  });

  app.get('/_admin/faults', { schema: hidden }, async () => {
    inTestMode();
    return faultsOf(ctx).list(ctx.clock.nowMs()).map(ruleBody);
  });

  app.delete('/_admin/faults', { schema: hidden }, async (_request, reply) => {
    inTestMode();
    faultsOf(ctx).clear();
    return reply.code(204).send();
  });

  app.delete('/_admin/faults/:fault_id', {
    schema: { ...hidden, params: Type.Object({ fault_id: Type.Integer() }) },
  }, async (request, reply) => {
    inTestMode();
    if (!faultsOf(ctx).remove(request.params.fault_id)) throw notFound();
    return reply.code(204).send();
  });
}

function requestFacts(principal: Principal, authorization: string | undefined, method: string, url: string): RequestFacts {
  let tokenHash: string | null = null;
  try {
    const parsed = parseAuthorization(authorization);
    if (parsed) tokenHash = hashSecret(parsed.credential);
  } catch {
    // An unreadable header matches no token (the caller hook has answered it already).
  }
  let appId: number | null = null;
  let userId: number | null = null;
  if (principal.type === 'user') {
    userId = principal.user.id;
    appId = principal.appId;
  } else if (principal.type === 'installation') appId = principal.appId;
  else if (principal.type === 'app') appId = principal.app.id;
  const query = url.indexOf('?');
  return { tokenHash, appId, userId, method, path: query < 0 ? url : url.slice(0, query) };
}

/**
 * The API scope's hook (in test mode only): after the caller is resolved (so a rule can name a user
 * or an app, and an answer carries the caller's rate-limit headers) and before the route.
 */
export function faultInjection(ctx: Context): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  const store = faultsOf(ctx);
  return async (request, reply) => {
    if (store.empty) return;
    const rule = store.takeForRequest(ctx.clock.nowMs(), requestFacts(request.principal, request.headers.authorization, request.method, request.url));
    if (!rule) return;
    request.log.info({ fault: rule.id, effect: rule.effect }, 'fault injected');
    request.injectedFault = { id: rule.id, effect: rule.effect, match: ruleBody(rule).match };
    switch (rule.effect) {
      case 'delay':
        await sleep(rule.delayMs!);
        return;
      case 'drop':
        reply.hijack();
        request.raw.socket.destroy();
        return;
      case 'primary_rate_limit': {
        const limit = String(reply.getHeader('x-ratelimit-limit') ?? ctx.config.rateLimit.authenticatedPerHour);
        const [key] = rateLimitKey(ctx, request.principal, clientAddress(request));
        throw new ApiError(rule.status!, rateLimitExceededMessage(key), {
          headers: {
            'x-ratelimit-limit': limit,
            'x-ratelimit-remaining': '0',
            'x-ratelimit-used': limit,
            'x-ratelimit-reset': String(Math.floor(ctx.clock.nowMs() / 1000) + rule.resetSeconds!),
            'x-ratelimit-resource': 'core',
          },
        });
      }
      case 'secondary_rate_limit':
        throw secondaryRateLimitExceeded(request.id, rule.retryAfter!, rule.status!);
      default:
        throw new ApiError(rule.status!, STATUS_CODES[rule.status!] ?? 'Error', rule.retryAfter === null ? {} : { headers: { 'retry-after': String(rule.retryAfter) } });
    }
  };
}
