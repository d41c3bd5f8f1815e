// The repository's two paths, as on the platform: every `/repos/{owner}/{repo}/...` operation answers
// at `/repositories/{repository_id}/...` too (a twin route, hidden from the OpenAPI document, whose
// first step puts the repository's current owner and name in the parameters), and the old name of a
// renamed or transferred repository redirects to the id. One plugin of the API scope: installed
// before any route is registered, it sees each route as it comes.
import type { FastifyReply, FastifyRequest, onSendHookHandler, preValidationHookHandler, RouteOptions } from 'fastify';
import type { Api } from '../platform/context.ts';

const BY_NAME = '/repos/:owner/:repo';
const BY_ID = '/repositories/:repository_id';
const ROUTE_HOOKS = ['onRequest', 'preParsing', 'preHandler', 'preSerialization', 'onSend', 'onResponse', 'onError', 'onTimeout', 'onRequestAbort'] as const;

export interface RepositoryPaths {
  /** The twin's first step: the id's repository's owner and name in the parameters (a 404 for no repository). */
  byId: (request: FastifyRequest) => Promise<void>;
  /** A 404 of a former name: the answer that leads to the id instead, or the payload as it was. */
  formerName: (request: FastifyRequest, reply: FastifyReply, payload: unknown) => Promise<unknown>;
}

const asArray = <T>(hooks: T | T[] | undefined): T[] => (hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks]);

export function installRepositoryPaths(api: Api, paths: RepositoryPaths): void {
  const byId = paths.byId as preValidationHookHandler;
  // Not async: every answer of these routes passes here, and all but a few 404s go on at once.
  const formerName: onSendHookHandler = (request, reply, payload, done) => {
    if (reply.statusCode !== 404) return done(null, payload);
    paths.formerName(request, reply, payload).then((answer) => done(null, answer), done);
  };
  api.addHook('onRoute', (route) => {
    if (route.url !== BY_NAME && !route.url.startsWith(`${BY_NAME}/`)) return;
    // HEAD twins come from their GET routes, as HEAD routes do.
    if (route.url !== BY_NAME && route.method !== 'HEAD') {
      const twin: RouteOptions = {
        method: route.method,
        url: `${BY_ID}${route.url.slice(BY_NAME.length)}`,
        handler: route.handler,
        schema: { ...route.schema, hide: true },
        config: route.config,
        preValidation: [byId, ...asArray(route.preValidation)],
        ...(route.bodyLimit === undefined ? {} : { bodyLimit: route.bodyLimit }),
      };
      for (const name of ROUTE_HOOKS) if (route[name]) Object.assign(twin, { [name]: route[name] });
      api.route(twin);
    }
    route.onSend = [...asArray(route.onSend), formerName];
  });
}
