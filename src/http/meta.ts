// The meta scope: health, readiness, the reference (/docs), the OpenAPI document, metrics and the
// console's static files. The gate (test double) first where it holds them, then CORS as the API
// answers it; no version, no caller, no rate limit; the
// metrics' own token where it is set. /healthz is outside the test double's gate: it reads no state,
// and answers while a reset or restore runs.
import type { onRequestHookHandler } from 'fastify';
import swaggerUi from '@fastify/swagger-ui';
import { databaseUnavailable } from '../db/errors.ts';
import { isMigrated, ping } from '../db/migrate.ts';
import type { Api, Context } from '../platform/context.ts';
import { probeWrite } from '../platform/settings-store.ts';
import { cors } from './cors.ts';

export interface MetaScope {
  gate: onRequestHookHandler | null;
  metrics: (meta: Api) => void;
  /** The console's files, where it is served. */
  routes: (meta: Api) => void;
}

type Readiness = { ready: boolean; status: string; reason?: string };

/**
 * Ready: the database answers, is migrated and accepts a write. The probe runs at most once a
 * second, however often a load balancer asks.
 */
function readinessRoute(meta: Api, ctx: Context): void {
  const { db } = ctx;
  let readiness: { at: number; answer: Promise<Readiness> } | null = null;
  let wasReady = true;
  let migrated = false;
  const checkReadiness = async (): Promise<Readiness> => {
    try {
      await ping(db);
    } catch (error) {
      return { ready: false, status: 'database unreachable', reason: databaseUnavailable(error) ?? (error as Error).message };
    }
    try {
      // Migrations are never undone: once migrated, always migrated.
      if (!migrated && !(migrated = await isMigrated(db))) return { ready: false, status: 'migrations pending' };
      await probeWrite(db.kysely);
      return { ready: true, status: 'ready' };
    } catch (error) {
      return { ready: false, status: 'database not writable', reason: databaseUnavailable(error) ?? (error as Error).message };
    }
  };
  meta.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    if (!readiness || Date.now() - readiness.at >= 1_000) readiness = { at: Date.now(), answer: checkReadiness() };
    const { ready, ...body } = await readiness.answer;
    if (ready !== wasReady) {
      if (ready) ctx.log.info('ready again: the database answers and accepts writes');
      else ctx.log.error(body, 'not ready');
      wasReady = ready;
    }
    if (!ready) return reply.code(503).send(body);
    return body;
  });
}

export function metaScope(ctx: Context, scope: MetaScope) {
  const answerCors = cors(ctx.config.corsOrigins, ctx.vendor);
  return async (meta: Api) => {
    await meta.register(async (ungated: Api) => {
      ungated.addHook('onRequest', answerCors);
      ungated.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
    });
    await meta.register(async (gated: Api) => {
      if (scope.gate) gated.addHook('onRequest', scope.gate);
      gated.addHook('onRequest', answerCors);
      // Tags start folded: with every one of its ~150 operations listed open at once, Swagger UI
      // stops rendering after the first few tags (test/console/browser.test.ts opens one).
      await gated.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'none' } });
      readinessRoute(gated, ctx);
      gated.get('/openapi.json', { schema: { hide: true } }, async () => gated.swagger());
      scope.metrics(gated);
      scope.routes(gated);
    });
  };
}
