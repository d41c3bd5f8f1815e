// The callers' own routes and sweep. GET /rate_limit: the caller's rate-limit status, as the platform answers it. codehost counts one
// resource, `core` (every API request, src/platform/rate-limit.ts); `resources` holds it and the
// platform's `search` (which the platform's answer always has: 30 a minute, 10 anonymous), never
// used because codehost serves no search; `rate` repeats `core` (the platform's older name, which
// clients such as PyGithub still read). The route is `uncounted`: reading it uses none of the budget, and it answers when the budget is spent.
// Expired tokens are swept by `sweepExpiredTokens` (src/workers.ts lists it).
import { Type } from 'typebox';
import type { Api, Context } from '../../platform/context.ts';
import { clientAddress } from '../../platform/rate-limit.ts';
import { ErrorBody } from '../../platform/schemas.ts';
import type { Area } from '../area.ts';
import { ALL_TOKENS } from './rule.ts';
import { rateLimitKey } from './hook.ts';
import { deleteExpiredTokens } from './store.ts';

const Rate = Type.Object({ limit: Type.Integer(), used: Type.Integer(), remaining: Type.Integer(), reset: Type.Integer() });

function callerRoutes(app: Api, ctx: Context): void {
  app.get('/rate_limit', {
    config: { access: { credentials: [...ALL_TOKENS, 'jwt'], anonymous: true }, uncounted: true },
    schema: {
      summary: 'Get rate limit status for the authenticated user',
      description: 'The budget of the caller (a user, an app, an installation, or the client address when anonymous) for this hour; reading it uses none of it.',
      tags: ['rate-limit'],
      response: { 200: Type.Object({ resources: Type.Object({ core: Rate, search: Rate }), rate: Rate }), 401: ErrorBody, 403: ErrorBody },
    },
  }, async (request) => {
    const { limit, used, remaining, reset } = await ctx.rateLimiter.peek(...rateLimitKey(ctx, request.principal, clientAddress(request)));
    const core = { limit, used, remaining, reset };
    const searches = request.principal.type === 'anonymous' ? 10 : 30;
    const search = { limit: searches, used: 0, remaining: searches, reset: Math.floor(ctx.clock.now().getTime() / 1000) + 60 };
    return { resources: { core, search }, rate: core };
  });
}

/** The sweep of expired tokens (src/workers.ts). */
export async function sweepExpiredTokens(ctx: Context): Promise<void> {
  await deleteExpiredTokens(ctx.db.kysely, ctx.clock.now().toISOString());
}

export const callers: Area = {
  name: 'callers',
  routes: callerRoutes,
};
