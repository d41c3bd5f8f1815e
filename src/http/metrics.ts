// Prometheus metrics at /metrics: request counts and latencies by route and status, queue depth;
// behind a bearer token when CODEHOST_METRICS_TOKEN is set.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { onResponseHookHandler } from 'fastify';
import type { Api, Context } from '../platform/context.ts';
import { ApiError } from '../platform/errors.ts';
import { clientAddress } from '../platform/rate-limit.ts';
import { bearerCredential, hashSecret, secretMatches } from '../platform/tokens.ts';
import { routeConfig } from './route-config.ts';

/** The request counts and latencies (`record`, an onResponse hook of every scope) and GET /metrics (`route`, of the meta scope). */
export function metrics(ctx: Context): { record: onResponseHookHandler; route: (meta: Api) => void } {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const labelNames = ['method', 'route', 'status_code'] as const;
  const requests = new Counter({ name: 'codehost_http_requests_total', help: 'HTTP requests', labelNames, registers: [registry] });
  const latency = new Histogram({
    name: 'codehost_http_request_duration_seconds',
    help: 'HTTP request latency',
    labelNames,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  new Gauge({
    name: 'codehost_jobs_pending',
    help: 'Background jobs ready to run or running',
    registers: [registry],
    async collect() {
      // With the database away, /metrics still answers (its 503 counts matter then); the gauge keeps its last value.
      await ctx.queue.backlog().then(({ pending }) => this.set(pending), () => undefined);
    },
  });

  const record: onResponseHookHandler = (request, reply, done) => {
    const labels = { method: request.method, route: routeConfig(request).url ?? 'unmatched', status_code: String(reply.statusCode) };
    requests.inc(labels);
    latency.observe(labels, reply.elapsedTime / 1000);
    done();
  };

  // Set, the token is asked for: the metrics name every route and its traffic. Compared as digests,
  // in constant time.
  const expected = ctx.config.metricsToken === null ? null : hashSecret(ctx.config.metricsToken);
  const route = (app: Api) => app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (expected) {
      const given = bearerCredential(request.headers.authorization);
      if (given === null) throw new ApiError(401, 'Requires authentication', { headers: { 'www-authenticate': 'Bearer realm="metrics"' } });
      // A wrong token is a failed login of the client's address, limited like the API's and /_admin's.
      await ctx.rateLimiter.guardLogin(clientAddress(request), ctx.config.rateLimit.failedLoginsPerHour, async () => {
        if (!secretMatches(given, expected)) throw new ApiError(401, 'Bad credentials', { headers: { 'www-authenticate': 'Bearer realm="metrics"' } });
      }, (error) => error instanceof ApiError && error.status === 401);
    }
    reply.type(registry.contentType);
    return registry.metrics();
  });
  return { record, route };
}
