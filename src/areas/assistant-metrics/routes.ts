// Assistant metrics for an organization and for a team (closed down; see service.ts), and the
// operator route that sets an organization's metrics policy and day records.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Api, Context } from '../../platform/context.ts';
import { PageQuery, setPageLinks } from '../../platform/pagination.ts';
import { ErrorBody, ValidationErrorBody } from '../../platform/schemas.ts';
import { DayRecord } from './representations.ts';
import { AssistantMetricsService, METRICS_POLICIES } from './service.ts';
import type { Scope } from './store.ts';
import { type AccessRule, ALL_TOKENS } from '../../core/access/index.ts';

const tags = ['assistant'];

// Organization owners, billing managers and enterprise owners; fine-grained tokens with the
// organization's assistant business permission or its administration (read).
const metricsRule: AccessRule = {
  credentials: ALL_TOKENS,
  scopes: ['manage_billing:assistant', 'read:org', 'read:enterprise'],
  permissions: [{ organization_assistant_business: 'read' }, { organization_administration: 'read' }],
};

const MetricsQuery = Type.Object({
  since: Type.Optional(Type.String({ description: 'ISO 8601 timestamp: the first day, at most 100 days ago' })),
  until: Type.Optional(Type.String({ description: 'ISO 8601 timestamp: the last day, not before since' })),
  ...PageQuery,
});
type MetricsQuery = { since?: string; until?: string; page?: number; per_page?: number };

const responses = { 200: Type.Array(DayRecord), 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 422: ValidationErrorBody, 500: ErrorBody };

export function assistantMetricsRoutes(app: Api, ctx: Context): void {
  const service = new AssistantMetricsService(ctx);

  const answer = async (scope: () => Promise<Scope>, request: FastifyRequest<{ Querystring: MetricsQuery }>, reply: FastifyReply) => {
    service.assertOpen();
    const { days, page, total } = await service.metrics(await scope(), request.query);
    reply.headers(service.sunsetHeaders());
    setPageLinks(reply, request, ctx.urls.api, page, { total, returned: days.length });
    return days;
  };

  app.get('/orgs/:org/assistant/metrics', {
    config: { access: metricsRule },
    schema: {
      summary: 'Get assistant metrics for an organization (closed down)',
      tags,
      security: [{ token: [] }],
      params: Type.Object({ org: Type.String({ description: 'The organization name, not case sensitive' }) }),
      querystring: MetricsQuery,
      response: responses,
    },
  }, async (request, reply) => answer(() => service.organization(request.principal, request.params.org), request, reply));

  app.get('/orgs/:org/team/:team_slug/assistant/metrics', {
    config: { access: metricsRule },
    schema: {
      summary: 'Get assistant metrics for a team (closed down)',
      tags,
      security: [{ token: [] }],
      params: Type.Object({ org: Type.String({ description: 'The organization name, not case sensitive' }), team_slug: Type.String({ description: 'The slug of the team' }) }),
      querystring: MetricsQuery,
      response: responses,
    },
  }, async (request, reply) => answer(() => service.team(request.principal, request.params.org, request.params.team_slug), request, reply));
}

export const OperatorBody = Type.Object({
  metrics_policy: Type.Optional(Type.Union(METRICS_POLICIES.map((p) => Type.Literal(p)))),
  // Each item is an operator day (see representations.ts), checked by the service so defaults apply.
  days: Type.Optional(Type.Array(Type.Unknown())),
});

export function assistantMetricsAdminRoutes(app: Api, ctx: Context): void {
  const service = new AssistantMetricsService(ctx);
  app.put('/_admin/orgs/:org/assistant', {
    schema: { hide: true, tags: ['admin'], params: Type.Object({ org: Type.String() }), body: OperatorBody },
  }, async (request) => service.setOperatorData(request.params.org, request.body));
}
