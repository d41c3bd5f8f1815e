// CORS as the platform answers it, so browser apps (and /docs from another origin) can call the API:
// `Access-Control-Allow-Origin: *` without credentials mode on every answer, preflights (OPTIONS)
// answered 204, and the platform's response headers exposed. CODEHOST_CORS_ORIGINS narrows the
// origins. The API and meta scopes' hook; the operator surface (/_admin) takes no part: a browser page
// cannot call it.
import type { onRequestHookHandler } from 'fastify';

export const CORS_ALLOW_METHODS = 'GET, POST, PATCH, PUT, DELETE';
export const CORS_ALLOW_HEADERS = [
  'Authorization', 'Accept', 'Content-Type', 'If-Match', 'If-Modified-Since', 'If-None-Match', 'If-Unmodified-Since',
  'Accept-Encoding', 'Range', 'X-Requested-With', 'User-Agent', 'X-Vendor-Api-Version',
].join(', ');
export const CORS_EXPOSE_HEADERS = [
  'ETag', 'Link', 'Location', 'Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Used', 'X-RateLimit-Reset',
  'X-RateLimit-Resource', 'X-OAuth-Scopes', 'X-Accepted-OAuth-Scopes', 'X-Poll-Interval', 'X-Vendor-Request-Id', 'X-Vendor-Media-Type',
  'X-Vendor-Api-Version-Selected', 'X-Accepted-Vendor-Permissions',
].join(', ');
/** How long a browser may keep a preflight's answer (seconds). */
const MAX_AGE = '86400';

/** `origins`: `*`, or the allowed origins (lowercase, as `URL.origin` gives them). */
export function cors(origins: '*' | readonly string[]): onRequestHookHandler {
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
        .header('access-control-allow-headers', CORS_ALLOW_HEADERS)
        .header('access-control-max-age', MAX_AGE)
        .send();
      return;
    }
    reply.header('access-control-expose-headers', CORS_EXPOSE_HEADERS);
    done();
  };
}
