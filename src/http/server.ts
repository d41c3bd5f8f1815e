// The Fastify server's options: the log, the /api/v3 prefix, request ids, the trusted proxy, the
// deadlines of slow clients, the body limit, the graceful stop (./shutdown.ts) and the error body of
// a URL the router cannot take.
import type { RequestListener } from 'node:http';
import type { FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import type { Config } from '../config.ts';
import { ApiError } from '../platform/errors.ts';
import { referenceUrl, type Urls } from '../platform/urls.ts';
import { BODY_LIMIT_BYTES } from './input.ts';
import { GracefulServer } from './shutdown.ts';

/**
 * A request as the log shows it: the path the client asked for without its query string (a signed
 * URL's signature, a token some clients put there), and no header at all (Authorization, Cookie).
 */
function loggedRequest(request: FastifyRequest) {
  const url = request.originalUrl ?? request.url;
  const query = url.indexOf('?');
  return {
    method: request.method,
    url: query === -1 ? url : url.slice(0, query),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}

export interface LogOptions {
  logger?: boolean | object;
  logStream?: { write(line: string): void };
}

/**
 * `urls`: the server's URLs, read when an answer needs them (final once listening); `date`: the
 * test clock's `Date` header, null when Node writes the wall clock's.
 */
export function serverOptions(config: Config, options: LogOptions, urls: () => Urls, date: () => string | null = () => null): FastifyServerOptions & { serverFactory: (handler: RequestListener) => GracefulServer } {
  return {
    logger: options.logger ?? {
      level: config.logLevel,
      serializers: { req: loggedRequest },
      redact: ['req.headers.authorization', 'req.headers.cookie'],
      ...(options.logStream ? { stream: options.logStream } : {}),
    },
    rewriteUrl: (req) => {
      const url = req.url ?? '/';
      return url === '/api/v3' || url.startsWith('/api/v3/') || url.startsWith('/api/v3?') ? url.slice(7) || '/' : url;
    },
    genReqId: () => crypto.randomUUID(),
    requestIdHeader: false,
    // X-Forwarded-For names the client only when it comes from a proxy CODEHOST_TRUST_PROXY trusts. A
    // hop count trusts that many hops nearest the server, whoever they are (Fastify itself ignores a
    // number: it cannot tell a proxy from a client that connects directly); addresses are checked.
    trustProxy: typeof config.trustProxy === 'number'
      ? (_address: string, hop: number) => hop < (config.trustProxy as number)
      : config.trustProxy,
    // Slow clients: headers, a whole request and an idle keep-alive connection each have a deadline
    // (408, or the connection closed); the deadlines are checked a few times per headers timeout.
    // The HTTP server is made here (Fastify sets these options only on a server it makes itself).
    serverFactory: (handler) => {
      const server = new GracefulServer({
        headersTimeout: config.timeouts.headersMs,
        requestTimeout: config.timeouts.requestMs,
        connectionsCheckingInterval: Math.min(1000, Math.max(50, Math.floor(config.timeouts.headersMs / 4))),
      }, handler);
      server.keepAliveTimeout = config.timeouts.keepAliveMs;
      return server;
    },
    bodyLimit: BODY_LIMIT_BYTES,
    // A request that reaches a kept-alive connection while the server stops is served (with
    // `Connection: close`), not refused: the client has already sent it.
    return503OnClosing: false,
    // A URL the router cannot take (malformed percent-encoding, a path value over the length limit)
    // answers the platform's error body, like every other 4xx.
    frameworkErrors: (error, _request, reply) => {
      const status = error.statusCode === 414 ? 414 : 400;
      // Answered before any hook runs: the test clock's `Date` is set here (src/http/conventions.ts).
      const now = date();
      if (now) (reply as unknown as FastifyReply).header('date', now);
      void (reply as unknown as FastifyReply).code(status).type('application/json; charset=utf-8')
        .send(new ApiError(status, status === 414 ? 'URI Too Long' : 'Bad Request: the URL is not valid').body(referenceUrl(urls())));
    },
  };
}
