// The operator scope (/_admin, spec/admin-api.md): the admin token and nothing else of the API's —
// no version, no caller, no rate-limit headers, no CORS. The routes held by the test double's gate
// are in one child scope; those that take the gate alone or wait for what holds it in another.
import type { FastifyRequest, onRequestHookHandler, onRouteHookHandler } from 'fastify';
import type { Api, Context } from '../platform/context.ts';
import { operatorNotFound } from './errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Served by the operator scope (its admin token checked or refused). */
    operator: boolean;
  }
}

export interface OperatorScope {
  checkAdminToken: (request: FastifyRequest) => Promise<void>;
  /** What every operator route's schema gets as it is registered. */
  onRoute: onRouteHookHandler;
  gate: onRequestHookHandler | null;
  /** The routes held by the gate. */
  routes: (gated: Api) => void;
  /** The routes outside the gate (`gated` for the few of theirs that are held). */
  ungatedRoutes: (ungated: Api, gated: Api) => void;
}

/** The admin token check, not async itself: a request in a gated scope has waited its turn already. */
function adminTokenStep(check: OperatorScope['checkAdminToken']): onRequestHookHandler {
  return (request, _reply, done) => {
    request.operator = true;
    check(request).then(() => done(), done);
  };
}

export function operatorScope(ctx: Context, scope: OperatorScope) {
  const admin = adminTokenStep(scope.checkAdminToken);
  return async (operator: Api) => {
    operator.addHook('onRoute', scope.onRoute);
    let gated: Api | undefined;
    await operator.register(async (held: Api) => {
      if (scope.gate) held.addHook('onRequest', scope.gate);
      held.addHook('onRequest', admin);
      gated = held;
      scope.routes(held);
    });
    await operator.register(async (ungated: Api) => {
      ungated.addHook('onRequest', admin);
      scope.ungatedRoutes(ungated, gated!);
    });
  };
}

/** An unknown path under /_admin: held by the gate like any operator request, answered the plain 404. */
export function operatorNotFoundScope(ctx: Context, gate: onRequestHookHandler | null) {
  return async (unknown: Api) => {
    if (gate) unknown.addHook('onRequest', gate);
    unknown.setNotFoundHandler(operatorNotFound(ctx));
  };
}
