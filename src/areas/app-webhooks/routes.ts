// App webhook routes: the configuration and the deliveries, with an app JWT only (every other
// credential is refused by the access rule); and the operator's raw events under /_admin.
import { Type } from 'typebox';
import type { Api, Context } from '../../platform/context.ts';
import { DEFAULT_PAGES, pageParams, PerPage, setCursorLinks } from '../../platform/pagination.ts';
import { findApp } from '../../core/apps/store.ts';
import { notFound } from '../../platform/errors.ts';
import { ErrorBody, ValidationErrorBody, RowId } from '../../platform/schemas.ts';
import { DeliveryDetail, DeliverySummary, HookConfig } from './representations.ts';
import { AppWebhookService } from './service.ts';
import { type AccessRule, callingApp } from '../../core/access/index.ts';

const jwt: AccessRule = { credentials: ['jwt'] };
const tags = ['apps'];
const security = [{ token: [] }];
const refused = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody };
const DeliveryParams = Type.Object({ delivery_id: RowId('The delivery id') });

/** `POST /_admin/apps/{app_slug}/deliveries/redeliver`: every failed delivery since a time. */
export const RedeliverFailedBody = Type.Object({
  since: Type.String({ minLength: 1, maxLength: 64, description: 'An ISO 8601 time' }),
  status: Type.Optional(Type.String({ maxLength: 64, description: '`failed` (the default and only value)' })),
});

export function appWebhookRoutes(app: Api, ctx: Context): void {
  const service = new AppWebhookService(ctx);

  app.get('/app/hook/config', {
    config: { access: jwt },
    schema: { summary: 'Get a webhook configuration for an app', tags, security, response: { 200: HookConfig, ...refused, 404: ErrorBody } },
  }, async (request) => service.getConfig(callingApp(request)));

  app.patch('/app/hook/config', {
    config: { access: jwt },
    schema: {
      summary: 'Update a webhook configuration for an app',
      tags,
      security,
      body: Type.Object({
        url: Type.Optional(Type.String({ description: 'The http(s) URL deliveries are posted to' })),
        content_type: Type.Optional(Type.String({ description: '`json` or `form`' })),
        secret: Type.Optional(Type.String({ description: 'Signs deliveries (X-Hub-Signature-256); an empty string removes it' })),
        insecure_ssl: Type.Optional(Type.Union([Type.String(), Type.Number()], { description: '`0` or `1`' })),
      }),
      response: { 200: HookConfig, ...refused, 404: ErrorBody, 422: ValidationErrorBody },
    },
  }, async (request) => service.updateConfig(callingApp(request), request.body));

  app.get('/app/hook/deliveries', {
    config: { access: jwt },
    schema: {
      summary: 'List deliveries for an app webhook',
      description: 'Newest first; deliveries stay listed for the retention period (3 days by default).',
      tags,
      security,
      querystring: Type.Object({
        per_page: Type.Optional(PerPage),
        cursor: Type.Optional(Type.String({ description: 'Where the page starts, as given in the Link header' })),
        status: Type.Optional(Type.Union([Type.Literal('success'), Type.Literal('failure')], {
          description: '`success`: status code 200-399; `failure`: 400-599, or no response at all',
        })),
      }),
      response: { 200: Type.Array(DeliverySummary), ...refused, 422: ValidationErrorBody },
    },
  }, async (request, reply) => {
    const { perPage } = pageParams(request.query, DEFAULT_PAGES);
    const { deliveries, next, prev } = await service.listDeliveries(callingApp(request), request.query, perPage);
    setCursorLinks(reply, request, ctx.urls.api, { next: next ? { cursor: next } : undefined, prev: prev ? { cursor: prev } : undefined }, ['cursor']);
    return deliveries;
  });

  app.get('/app/hook/deliveries/:delivery_id', {
    config: { access: jwt },
    schema: {
      summary: 'Get a delivery for an app webhook',
      tags,
      security,
      params: DeliveryParams,
      response: { 200: DeliveryDetail, ...refused, 404: ErrorBody, 422: ValidationErrorBody },
    },
  }, async (request) => service.getDelivery(callingApp(request), request.params.delivery_id));

  app.post('/app/hook/deliveries/:delivery_id/attempts', {
    config: { access: jwt },
    schema: {
      summary: 'Redeliver a delivery for an app webhook',
      description: 'A new attempt of the delivery: the same guid, a new id, `redelivery` true.',
      tags,
      security,
      params: DeliveryParams,
      response: { 202: Type.Object({}), ...refused, 422: ValidationErrorBody },
    },
  }, async (request, reply) => {
    await service.redeliver(callingApp(request), request.params.delivery_id);
    return reply.code(202).send({});
  });
}

export function appWebhookAdminRoutes(app: Api, ctx: Context): void {
  const service = new AppWebhookService(ctx);

  app.post('/_admin/events', {
    schema: {
      hide: true,
      tags: ['admin'],
      body: Type.Object({
        event: Type.String({ minLength: 1, maxLength: 100, pattern: '^[a-z][a-z0-9_]*$' }),
        action: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
        repository: Type.Optional(Type.String()),
        /** The account of an event without a repository (default: the sender's). */
        account: Type.Optional(Type.String()),
        sender: Type.Optional(Type.String()),
        payload: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      }),
    },
  }, async (request, reply) => reply.code(201).send({ deliveries: await service.recordEvent(request.body) }));

  // An app's deliveries as the app sees them (GET /app/hook/deliveries…), for the operator's tools
  // (the testing helper's `deliveries(app)`, the console), which hold no app's private key.
  const appBySlug = async (slug: string) => {
    const found = await findApp(ctx.db.kysely, slug);
    if (!found) throw notFound(`No app ${slug}`);
    return found;
  };
  const AppParams = Type.Object({ app_slug: Type.String({ minLength: 1, maxLength: 256 }) });
  app.get('/_admin/apps/:app_slug/deliveries', {
    schema: {
      hide: true,
      tags: ['admin'],
      params: AppParams,
      querystring: Type.Object({
        per_page: Type.Optional(PerPage),
        cursor: Type.Optional(Type.String()),
        status: Type.Optional(Type.Union([Type.Literal('success'), Type.Literal('failure')])),
      }),
    },
  }, async (request) => {
    const { perPage } = pageParams(request.query, DEFAULT_PAGES);
    return (await service.listDeliveries(await appBySlug(request.params.app_slug), request.query, perPage)).deliveries;
  });
  // Deliveries you can carry (docs/testing.md): the posted requests as a fixtures file, and every
  // failed delivery since a time redelivered in one call.
  app.get('/_admin/apps/:app_slug/deliveries/fixtures', {
    schema: {
      hide: true,
      tags: ['admin'],
      params: AppParams,
      querystring: Type.Object({ since: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })) }),
    },
  }, async (request) => service.fixtures(await appBySlug(request.params.app_slug), request.query.since));
  app.post('/_admin/apps/:app_slug/deliveries/redeliver', {
    schema: {
      hide: true,
      tags: ['admin'],
      params: AppParams,
      body: RedeliverFailedBody,
    },
  }, async (request, reply) => {
    const app = await appBySlug(request.params.app_slug);
    return reply.code(202).send({ queued: await service.redeliverFailed(app, request.body) });
  });
  app.get('/_admin/apps/:app_slug/deliveries/:delivery_id', {
    schema: { hide: true, tags: ['admin'], params: Type.Intersect([AppParams, DeliveryParams]) },
  }, async (request) => service.getDelivery(await appBySlug(request.params.app_slug), request.params.delivery_id));
  app.post('/_admin/apps/:app_slug/deliveries/:delivery_id/attempts', {
    schema: { hide: true, tags: ['admin'], params: Type.Intersect([AppParams, DeliveryParams]) },
  }, async (request, reply) => {
    await service.redeliver(await appBySlug(request.params.app_slug), request.params.delivery_id);
    return reply.code(202).send({});
  });
}
