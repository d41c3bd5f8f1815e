// createServer(config): the database, the queue, the request pipeline's scopes (src/http/), then each
// area's routes in them.
import { mkdirSync } from 'node:fs';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify from 'fastify';
import { issues } from './core/issues/index.ts';
import { commits } from './core/commits/index.ts';
import { adminArea, closeOperatorBodies } from './admin/index.ts';
import { jobsDrainRoute } from './admin/routes.ts';
import { testDoubleAloneRoutes, testDoubleConsume, testDoubleRoutes, testDoubleSteps } from './testing/plugin.ts';
import { adminTokenInForce, checkAdminToken, type AdminTokenInForce } from './admin/token.ts';
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
import { migrateToLatest } from './db/migrate.ts';
import { createQueue } from './jobs/index.ts';
import { Periodic } from './jobs/periodic.ts';
import { Clock } from './platform/clock.ts';
import type { Area, LifecycleArea } from './core/area.ts';
import type { Api, Context } from './platform/context.ts';
import { accounts } from './core/accounts/routes.ts';
import { apps } from './core/apps/routes.ts';
import { formerNameRedirect, repositories, repositoryIdParams } from './core/repositories/routes.ts';
import type { ConventionOptions } from './http/compilers.ts';
import { installPipeline } from './http/pipeline.ts';
import { serverOptions, type LogOptions } from './http/server.ts';
import { GracefulServer } from './http/shutdown.ts';
import { RateLimiter } from './platform/rate-limit.ts';
import { Secrets, settleSecretKey } from './platform/secrets.ts';
import { ALL_TOKENS, ANONYMOUS, callerResolution } from './core/access/index.ts';
import { callers } from './core/access/routes.ts';
import { registerWorkers } from './jobs/registry.ts';
import { workers } from './workers.ts';
import { vendorNames } from './platform/vendor.ts';

/** What `codehost replay` posts with (src/cli/replay.ts): the delivery engine's signing and address guard. */
export { refusedReceiver, replayFixtures, type Fixture, type FixturesFile } from './areas/app-webhooks/index.ts';

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
  commits,
  notifications,
  appWebhooks,
  userMigrations,
];

export interface Server {
  app: Api;
  ctx: Context;
  /** Which admin token is in force (and the token, when this start generated it); known once listening. */
  adminToken: AdminTokenInForce | null;
  /** True when the database was created by this start (no migrations had run). */
  freshDatabase: boolean;
  listen(): Promise<string>;
  /** `idleGraceMs`: how long a keep-alive connection idle at the stop stays open (default 500 ms). */
  close(options?: { idleGraceMs?: number }): Promise<void>;
}

export async function createServer(config: Config, options: LogOptions & ConventionOptions = {}): Promise<Server> {
  const app = Fastify(serverOptions(config, options, () => ctx.urls, () => (ctx.clock.adjustable ? ctx.clock.httpDate() : null))).withTypeProvider<TypeBoxTypeProvider>() as unknown as Api;

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
  // Outside production, each job and sweep holds the test double's gate while it runs.
  const consume = testDoubleConsume(config, () => ctx);
  const queue = createQueue(db, config, app.log, { consume });
  const ctx: Context = {
    config,
    db,
    clock,
    queue,
    // The settings' URLs; when they follow the address, fixed by listen() (port 0 is known only then).
    urls: { api: config.apiUrl, web: config.webUrl },
    vendor: vendorNames(config.vendorWord),
    secrets: new Secrets(secretKey),
    rateLimiter: new RateLimiter(db.kysely, clock, { block: config.rateLimit.block, cacheMs: config.lookupCacheMs }),
    log: app.log,
    periodic: new Periodic(app.log, { consume }),
    perServer: new Map(),
  };
  await installPipeline(app, ctx, {
    testDouble: testDoubleSteps(ctx),
    api: {
      resolveCaller: callerResolution(ctx),
      anonymous: ANONYMOUS,
      repositoryPaths: { byId: repositoryIdParams(ctx), formerName: formerNameRedirect(ctx) },
      rootAccess: { credentials: [...ALL_TOKENS, 'jwt'], anonymous: true },
      routes: (api) => {
        for (const area of [...CORE, ...AREAS]) area.routes?.(api, ctx);
      },
    },
    operator: {
      checkAdminToken: (request) => checkAdminToken(ctx, request),
      onRoute: closeOperatorBodies,
      routes: (gated) => {
        adminArea(AREAS).admin?.(gated, ctx);
        testDoubleRoutes(gated, ctx);
        for (const area of [...CORE, ...AREAS]) area.admin?.(gated, ctx);
      },
      ungatedRoutes: (ungated, gated) => {
        // The jobs drain waits for jobs, which hold the gate; reset and snapshots take it alone.
        jobsDrainRoute(ungated, ctx);
        testDoubleAloneRoutes(ungated, gated, ctx, AREAS);
      },
    },
    meta: { routes: (meta) => consoleRoutes(meta, ctx) },
  }, { compileSchemas: options.compileSchemas });

  registerWorkers(workers(ctx, AREAS), { queue, periodic: ctx.periodic, worker: config.jobs.worker });

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
    async close(options = {}) {
      if (closed) return;
      closed = true;
      ctx.periodic.stop();
      (app.server as GracefulServer).drain(options.idleGraceMs); // keep-alive connections: `Connection: close`, idle ones closed after a grace
      await app.close(); // no new connections; finishes in-flight requests
      await queue.stop(10_000);
      for (const area of [...CORE, ...AREAS]) await area.close?.(ctx);
      await db.close();
    },
  };
  return server;
}
