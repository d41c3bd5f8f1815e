// buildApp(config): the database, the queue, the platform's conventions, then each area's routes.
import { mkdirSync } from 'node:fs';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { issues } from './core/issues/index.ts';
import { registerDispatcher } from './activity/outbox.ts';
import { adminArea } from './admin/index.ts';
import { installFaults } from './admin/faults.ts';
import { installJournal } from './admin/journal.ts';
import { installGate } from './admin/test-support.ts';
import { adminTokenInForce, type AdminTokenInForce } from './admin/token.ts';
import { consoleRoutes } from './console/routes.ts';
import { appWebhooks } from './areas/app-webhooks/index.ts';
import { appTokens } from './areas/app-tokens/index.ts';
import { assistantMetrics } from './areas/assistant-metrics/index.ts';
import { codeSecurity } from './areas/code-security/index.ts';
import { issueTypes } from './areas/issue-types/index.ts';
import { notifications } from './areas/notifications/index.ts';
import { updaterAccess } from './areas/updater-access/index.ts';
import { userMigrations } from './areas/user-migrations/index.ts';
import { listeningAddress, publicUrls, type Config } from './config.ts';
import { openDatabase } from './db/index.ts';
import { databaseUnavailable } from './db/errors.ts';
import { ApiError } from './platform/errors.ts';
import { isMigrated, migrateToLatest, ping } from './db/migrate.ts';
import { createQueue } from './jobs/index.ts';
import { Periodic } from './jobs/periodic.ts';
import { Clock } from './platform/clock.ts';
import type { Area, LifecycleArea } from './core/area.ts';
import type { Api, Context } from './platform/context.ts';
import { accounts } from './core/accounts/routes.ts';
import { apps } from './core/apps/routes.ts';
import { repositories } from './core/repositories/routes.ts';
import { installCors } from './platform/cors.ts';
import { BODY_LIMIT_BYTES, installConventions, type ConventionOptions } from './platform/http.ts';
import { referenceUrl } from './platform/urls.ts';
import { installOperationIds } from './platform/openapi.ts';
import { installMetrics } from './platform/metrics.ts';
import { RateLimiter, SWEEP_SECONDS } from './platform/rate-limit.ts';
import { installRootDocument } from './platform/root.ts';
import { installRouteConfig } from './platform/route-config.ts';
import { Secrets, settleSecretKey } from './platform/secrets.ts';
import { gracefulHttp } from './platform/shutdown.ts';
import { probeWrite } from './platform/settings-store.ts';
import { installRepositoryIdPaths } from './core/repositories/routes.ts';
import { ALL_TOKENS, installCallers } from './core/access/index.ts';
import { callers } from './core/access/routes.ts';

/** The shared resources' public reads (src/core), registered before the areas; issues come in AREAS' order. */
const CORE: readonly Area[] = [accounts, repositories, apps, callers];

/** Every area, in registration order (also the order of their seed keys and activity consumers). */
export const AREAS: readonly LifecycleArea[] = [
  appTokens,
  updaterAccess,
  codeSecurity,
  assistantMetrics,
  issueTypes,
  // After issue types: seeded issues may name a type.
  issues,
  notifications,
  appWebhooks,
  userMigrations,
];

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

export interface Server {
  app: Api;
  ctx: Context;
  /** Which admin token is in force (and the token, when this start generated it); known once listening. */
  adminToken: AdminTokenInForce | null;
  /** True when the database was created by this start (no migrations had run). */
  freshDatabase: boolean;
  listen(): Promise<string>;
  close(): Promise<void>;
}

export async function createServer(
  config: Config,
  options: { logger?: boolean | object; logStream?: { write(line: string): void } } & ConventionOptions = {},
): Promise<Server> {
  const app = Fastify({
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
    requestTimeout: config.timeouts.requestMs,
    keepAliveTimeout: config.timeouts.keepAliveMs,
    http: {
      headersTimeout: config.timeouts.headersMs,
      requestTimeout: config.timeouts.requestMs,
      connectionsCheckingInterval: Math.min(1000, Math.max(50, Math.floor(config.timeouts.headersMs / 4))),
    },
    bodyLimit: BODY_LIMIT_BYTES,
    // A request that reaches a kept-alive connection while the server stops is served (with
    // `Connection: close`), not refused: the client has already sent it.
    return503OnClosing: false,
    // A URL the router cannot take (malformed percent-encoding, a path value over the length limit)
    // answers the platform's error body, like every other 4xx.
    frameworkErrors: (error, _request, reply) => {
      const status = error.statusCode === 414 ? 414 : 400;
      void (reply as unknown as FastifyReply).code(status).type('application/json; charset=utf-8')
        .send(new ApiError(status, status === 414 ? 'URI Too Long' : 'Bad Request: the URL is not valid').body(referenceUrl(ctx.urls)));
    },
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as Api;
  const http = gracefulHttp(app.server);

  // What codehost writes (the database, which may hold the generated secret key; archives; git data,
  // also through git) is for its own user only: the data directory 0700, its files 0600.
  process.umask(0o077);
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });

  const db = openDatabase({
    databaseUrl: config.databaseUrl,
    sqlitePath: `${config.dataDir}/codehost.db`,
    poolSize: config.databasePoolSize,
    pooler: config.databasePooler,
    connectTimeoutMs: config.databaseConnectTimeoutMs,
    lookupCacheMs: config.lookupCacheMs,
    log: app.log,
  });
  const applied = await migrateToLatest(db);
  const freshDatabase = applied.includes('0001_core');

  // The admin token is settled by listen(): a generated one is made only when it will be shown.
  // One key for every process of the database: another key refuses to start (src/platform/secrets.ts).
  const secretKey = await settleSecretKey(db.kysely, config.secretKey).catch(async (error: unknown) => {
    await db.close().catch(() => undefined);
    throw error;
  });

  const clock = new Clock(config.testClock);
  const queue = createQueue(db, config, app.log);
  const ctx: Context = {
    config,
    db,
    clock,
    queue,
    // The settings' URLs; when they follow the address, fixed by listen() (port 0 is known only then).
    urls: { api: config.apiUrl, web: config.webUrl },
    secrets: new Secrets(secretKey),
    rateLimiter: new RateLimiter(db.kysely, clock, { block: config.rateLimit.block, cacheMs: config.lookupCacheMs }),
    log: app.log,
    periodic: new Periodic(app.log),
    perServer: new Map(),
  };
  installRouteConfig(app);
  // First of the request hooks: a reset or snapshot restore waits for requests and jobs in flight.
  installGate(app, ctx);
  ctx.periodic.every('rate-limits.sweep', SWEEP_SECONDS, async () => {
    await ctx.rateLimiter.sweep();
  });

  await app.register(swagger, {
    openapi: {
      info: { title: 'codehost', description: 'The code-hosting platform REST API, self-hosted.', version: '0.1.0' },
      // Read when the document is built (after listen), so it names the address the server prints.
      servers: [{ get url() { return ctx.urls.api; } }],
      components: {
        securitySchemes: {
          token: { type: 'http', scheme: 'bearer', description: 'A personal, OAuth, app user or installation token; an app JWT on /app routes' },
          basic: { type: 'http', scheme: 'basic', description: 'An app client id and client secret' },
        },
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  installOperationIds(app);

  installCors(app, config.corsOrigins);
  installConventions(app, ctx, { compileSchemas: options.compileSchemas });
  installCallers(app, ctx);
  installFaults(app, ctx);
  installMetrics(app, ctx);
  installJournal(app, ctx);
  installRootDocument(app, ctx.urls, { credentials: [...ALL_TOKENS, 'jwt'], anonymous: true });

  // Not held by the test double's gate: it reads no state, and answers while a reset or restore runs.
  app.get('/healthz', { config: { ungated: true }, schema: { hide: true } }, async () => ({ status: 'ok' }));
  // Ready: the database answers, is migrated and accepts a write. The probe runs at most once a
  // second, however often a load balancer asks.
  let readiness: { at: number; answer: Promise<{ ready: boolean; status: string; reason?: string }> } | null = null;
  let wasReady = true;
  let migrated = false;
  const checkReadiness = async (): Promise<{ ready: boolean; status: string; reason?: string }> => {
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
  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    if (!readiness || Date.now() - readiness.at >= 1_000) readiness = { at: Date.now(), answer: checkReadiness() };
    const { ready, ...body } = await readiness.answer;
    if (ready !== wasReady) {
      if (ready) app.log.info('ready again: the database answers and accepts writes');
      else app.log.error(body, 'not ready');
      wasReady = ready;
    }
    if (!ready) return reply.code(503).send(body);
    return body;
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  installRepositoryIdPaths(app, ctx);
  for (const area of [...CORE, ...AREAS]) area.routes?.(app, ctx);
  const admin = adminArea(AREAS);
  admin.admin?.(app, ctx);
  for (const area of [...CORE, ...AREAS]) area.admin?.(app, ctx);
  consoleRoutes(app, ctx);

  if (config.jobs.worker) {
    registerDispatcher(ctx, AREAS);
    for (const area of [...CORE, ...AREAS]) area.workers?.(ctx);
  }

  let closed = false;
  const server: Server = {
    app,
    ctx,
    adminToken: null,
    freshDatabase,
    async listen() {
      await app.listen({ port: config.port, host: config.host });
      server.adminToken = await adminTokenInForce(db, config);
      if (config.jobs.worker) {
        await queue.start();
        ctx.periodic.start();
      }
      const bound = app.server.address();
      const address = listeningAddress(config.host, typeof bound === 'object' && bound ? bound.port : config.port);
      Object.assign(ctx.urls, publicUrls(config, address));
      return address;
    },
    async close() {
      if (closed) return;
      closed = true;
      ctx.periodic.stop();
      http.drain(); // keep-alive connections: `Connection: close`, idle ones closed after a grace
      await app.close(); // no new connections; finishes in-flight requests
      await queue.stop(10_000);
      for (const area of [...CORE, ...AREAS]) await area.close?.(ctx);
      await db.close();
    },
  };
  return server;
}
