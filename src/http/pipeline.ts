// The request pipeline: what every answer shares (at the root), then the three encapsulated scopes,
// each registering only the hooks that apply to it — the platform API (./api.ts), the operator
// surface /_admin (./operator.ts) and the meta routes (./meta.ts). No hook decides from a route's
// config whether it runs.
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import swagger from '@fastify/swagger';
import type { Api, Context } from '../platform/context.ts';
import { apiScope, decorateCaller, type ApiScope } from './api.ts';
import { installConventions, type ConventionOptions } from './conventions.ts';
import { metaScope, type MetaScope } from './meta.ts';
import { metrics } from './metrics.ts';
import { installOperationIds } from './openapi.ts';
import { operatorNotFoundScope, operatorScope, type OperatorScope } from './operator.ts';
import { installRouteConfig } from './route-config.ts';

/** The test double's request steps, each null where it is not present (production has none). */
export interface TestDoubleSteps {
  /** The request journal: its clock starts first of all, its entry is recorded as the answer is sent. */
  journal: { start: onRequestHookHandler; record: (request: FastifyRequest, reply: FastifyReply, payload: unknown) => Promise<unknown> } | null;
  /** Reset and snapshots wait for the requests it holds. */
  gate: onRequestHookHandler | null;
  /** Injected faults, after the caller is known. */
  faults: ApiScope['faults'];
}

export interface PipelineParts {
  testDouble: TestDoubleSteps;
  api: Omit<ApiScope, 'gate' | 'faults'>;
  operator: Omit<OperatorScope, 'gate'>;
  meta: Pick<MetaScope, 'routes'>;
}

export async function installPipeline(app: Api, ctx: Context, parts: PipelineParts, options: ConventionOptions = {}): Promise<void> {
  const { journal, gate, faults } = parts.testDouble;
  installRouteConfig(app);
  decorateCaller(app, parts.api.anonymous);
  app.decorateRequest('operator', false);
  // Why a credential was refused (core/access/explain.ts), for the journal.
  app.decorateRequest('explanation', null);
  if (journal) app.addHook('onRequest', journal.start);

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
  installOperationIds(app);
  installConventions(app, ctx, options);
  const measured = metrics(ctx);
  app.addHook('onResponse', measured.record);
  if (journal) app.addHook('onSend', journal.record);

  await app.register(metaScope(ctx, { gate, metrics: measured.route, routes: parts.meta.routes }));
  await app.register(operatorScope(ctx, { ...parts.operator, gate }));
  await app.register(operatorNotFoundScope(ctx, gate), { prefix: '/_admin' });
  await app.register(apiScope(ctx, { ...parts.api, gate, faults }));
}
