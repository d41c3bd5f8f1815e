// What every answer of every scope shares: the schema compilers, the JSON body, the input rules, the
// request id, media type and (test clock) `Date` headers, `Location` of a create, the ETag / 304 and the error bodies.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Context } from '../platform/context.ts';
import { installCompilers, type ConventionOptions } from './compilers.ts';
import { conditionalAnswer } from './conditional.ts';
import { errorHandler } from './errors.ts';
import { installInput } from './input.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The rate-limit key the request was counted under (a 304 refunds it). */
    rateLimitKey: string | null;
  }
}

export type { ConventionOptions } from './compilers.ts';

export function installConventions(app: FastifyInstance, ctx: Context, options: ConventionOptions = {}): void {
  installCompilers(app, options);
  app.decorateRequest('rateLimitKey', null);
  installInput(app);

  // The hooks every request runs are not async where nothing in them waits: no promise per hook.
  // With the test clock on, `Date` is the clock's (a client that corrects its clock skew from it, as
  // @octokit/auth-app does for a JWT, follows POST /_admin/clock); else Node writes the wall clock's.
  const clock = ctx.clock.adjustable ? ctx.clock : null;
  const { requestId, mediaType, mediaTypeValue } = ctx.vendor;
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers({ [requestId]: request.id, [mediaType]: mediaTypeValue });
    if (clock) reply.header('date', clock.httpDate());
    done();
  });

  // A create answers where the new resource is, in `Location`: its API URL, which every
  // representation names as `url` (built from the configured API URL, /api/v3 included), so a
  // create route says it once, in what it answers.
  app.addHook('preSerialization', (_request: FastifyRequest, reply, payload, done) => {
    const url = reply.statusCode === 201 ? (payload as { url?: unknown } | null)?.url : undefined;
    if (typeof url === 'string' && url.startsWith(`${ctx.urls.api}/`)) reply.header('location', url);
    done(null, payload);
  });

  app.addHook('onSend', conditionalAnswer(ctx));
  app.setErrorHandler(errorHandler(ctx));
}
