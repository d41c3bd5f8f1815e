// The route's config (its `config`, with its `url` and `method`) of a request, read once. Fastify's
// `request.routeOptions` builds a new object of a dozen fields, and asks the router about its
// constraints, on every read; every request's hooks read the config several times.
import type { FastifyInstance, FastifyRequest } from 'fastify';

type RouteConfig = FastifyRequest['routeOptions']['config'];

declare module 'fastify' {
  interface FastifyRequest {
    /** The route's config as `routeConfig` first read it; null until then. */
    routeConfigRead: RouteConfig | null;
  }
}

/** Declares the request's slot for it: before any hook that reads it is installed. */
export function installRouteConfig(app: FastifyInstance): void {
  app.decorateRequest('routeConfigRead', null);
}

/** The config of the route the request is served by. */
export function routeConfig(request: FastifyRequest): RouteConfig {
  return (request.routeConfigRead ??= request.routeOptions.config);
}

/**
 * Forgets what was read: a request handed to the not-found handler (`reply.callNotFound()`, as
 * @fastify/static does for a file it lacks) is served by that route from then on.
 */
export function forgetRouteConfig(request: FastifyRequest): void {
  request.routeConfigRead = null;
}
