// CORS as the platform answers it, so browser apps (and /docs from another origin) can call the API:
// `Access-Control-Allow-Origin: *` without credentials mode on every answer, preflights (OPTIONS)
// answered 204, and the platform's response headers exposed. CODEHOST_CORS_ORIGINS narrows the
// origins. The API and meta scopes' hook; the operator surface (/_admin) takes no part: a browser page
// cannot call it.
import type { onRequestHookHandler } from 'fastify';
import type { VendorNames } from '../platform/vendor.ts';

export const CORS_ALLOW_METHODS = 'GET, POST, PATCH, PUT, DELETE';

/** The request headers a page may send: the version header in the vendor word's spelling and the spec's (src/platform/vendor.ts). */
export function corsAllowHeaders(names: VendorNames): string {
  return [
    'Authorization', 'Accept', 'Content-Type', 'If-Match', 'If-Modified-Since', 'If-None-Match', 'If-Unmodified-Since',
    'Accept-Encoding', 'Range', 'X-Requested-With', 'User-Agent', ...names.written.apiVersion,
  ].join(', ');
}

/** The response headers a page may read, those with the vendor word in its spelling. */
export function corsExposeHeaders(names: VendorNames): string {
  return [
    'ETag', 'Link', 'Location', 'Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Used', 'X-RateLimit-Reset',
    'X-RateLimit-Resource', 'X-OAuth-Scopes', 'X-Accepted-OAuth-Scopes', 'X-Poll-Interval', ...names.written.exposed,
  ].join(', ');
}
/** How long a browser may keep a preflight's answer (seconds). */
const MAX_AGE = '86400';

/** `origins`: `*`, or the allowed origins (lowercase, as `URL.origin` gives them). */
export function cors(origins: '*' | readonly string[], names: VendorNames): onRequestHookHandler {
  const allowHeaders = corsAllowHeaders(names);
  const exposeHeaders = corsExposeHeaders(names);
  // Not async (every request runs it; nothing here waits): a preflight is answered without `done`.
  return (request, reply, done) => {
    if (origins === '*') {
      reply.header('access-control-allow-origin', '*');
    } else {
      reply.header('vary', 'Origin');
      const origin = request.headers.origin;
      if (origin && origins.includes(origin.toLowerCase())) reply.header('access-control-allow-origin', origin);
    }
    if (request.method === 'OPTIONS' && request.headers['access-control-request-method']) {
      reply
        .code(204)
        .header('access-control-allow-methods', CORS_ALLOW_METHODS)
        .header('access-control-allow-headers', allowHeaders)
        .header('access-control-max-age', MAX_AGE)
        .send();
      return;
    }
    reply.header('access-control-expose-headers', exposeHeaders);
    done();
  };
}
