// The platform API scope: (the journal's clock, at the root) → the gate (test double) → CORS → the
// version check and the caller (resolved once: credentials, rate limit, the route's access rule) →
// faults (test double) → schema validation → handler → (ETag / 304, at the root). The caller and
// the faults are steps of each route that has an access rule, added as the route is registered; an
// unknown path (the API's 404) runs the scope's hooks without them.
import type { FastifyContextConfig, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { Api, Context } from '../platform/context.ts';
import { cors } from './cors.ts';
import { apiNotFound } from './errors.ts';
import { installRepositoryPaths, type RepositoryPaths } from './repository-paths.ts';
import { installRootDocument } from './root.ts';

type AccessRule = NonNullable<FastifyContextConfig['access']>;

/** Resolves the caller of a request under its route's rule (src/core/access/hook.ts). */
export type ResolveCaller = (request: FastifyRequest, reply: FastifyReply, config: FastifyContextConfig, rule: AccessRule) => Promise<void>;

export interface ApiScope {
  resolveCaller: ResolveCaller;
  /** The caller of a request whose credentials are not yet read. */
  anonymous: FastifyRequest['principal'];
  repositoryPaths: RepositoryPaths;
  /** The rule of the root document (one that lets anyone in, so the API's headers and limits apply). */
  rootAccess: AccessRule;
  /** The test double's steps, where it is present (null in production). */
  gate: onRequestHookHandler | null;
  faults: ((request: FastifyRequest, reply: FastifyReply) => Promise<void>) | null;
  /** Each area's public routes. */
  routes: (api: Api) => void;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller once resolved (or set); `principal` reads the anonymous caller until then. */
    resolvedPrincipal: FastifyRequest['principal'] | null;
  }
}

/**
 * `request.principal` of every request: the anonymous caller until the API's caller step resolves
 * it (an operator or meta request keeps it), with no hook to set it.
 */
export function decorateCaller(app: Api, anonymous: FastifyRequest['principal']): void {
  app.decorateRequest('resolvedPrincipal', null);
  app.decorateRequest('principal', {
    getter(this: FastifyRequest) {
      return this.resolvedPrincipal ?? anonymous;
    },
    setter(this: FastifyRequest, principal: FastifyRequest['principal']) {
      this.resolvedPrincipal = principal;
    },
  });
}

const asArray = <T>(hooks: T | T[] | undefined): T[] => (hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks]);

/** The caller step of a route with `rule`: not async itself, so a failure or a pass costs no extra promise. */
export function callerStep(resolve: ResolveCaller, config: FastifyContextConfig, rule: AccessRule): onRequestHookHandler {
  return (request, reply, done) => {
    resolve(request, reply, config, rule).then(() => done(), done);
  };
}

/**
 * Adds the caller step (and the faults after it) to each route of `api` with an access rule, before
 * the route's own onRequest hooks.
 */
export function installCallerSteps(api: Api, resolve: ResolveCaller, faults: ApiScope['faults'] = null): void {
  api.addHook('onRoute', (route) => {
    const config = route.config as FastifyContextConfig | undefined;
    const rule = config?.access;
    if (!config || !rule) return;
    const steps: onRequestHookHandler[] = [callerStep(resolve, config, rule)];
    if (faults) steps.push(faults as onRequestHookHandler);
    route.onRequest = [...steps, ...asArray(route.onRequest)];
  });
}

export function apiScope(ctx: Context, scope: ApiScope) {
  return async (api: Api) => {
    if (scope.gate) api.addHook('onRequest', scope.gate);
    api.addHook('onRequest', cors(ctx.config.corsOrigins, ctx.vendor));
    // The twins first: each is made from its route as declared, and gets the caller step of its own.
    installRepositoryPaths(api, scope.repositoryPaths);
    installCallerSteps(api, scope.resolveCaller, scope.faults);
    // Not a prefixed scope: this is the 404 of every path no scope answers (/_admin has its own).
    api.setNotFoundHandler(apiNotFound(ctx));
    installRootDocument(api, ctx.urls, scope.rootAccess);
    scope.routes(api);
  };
}
