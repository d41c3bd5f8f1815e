// The notifications API (personal access tokens (classic) and OAuth app tokens with `notifications`
// or `repo`; fine-grained, app user and installation tokens get 403), and the operator row that
// creates a thread for a subject no issue activity produces.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Api, Context } from '../../platform/context.ts';
import { ApiError } from '../../platform/errors.ts';
import { sendNotModified, unchanged } from '../../http/conditional.ts';
import { findRepository } from '../../core/repositories/store.ts';
import { DEFAULT_PAGES, PageQuery, pageParams, setPageLinks } from '../../platform/pagination.ts';
import { ErrorBody, ValidationErrorBody, RowId } from '../../platform/schemas.ts';
import { loadMonitor, pollInterval } from './polling.ts';
import { NotificationThread, ThreadSubscription } from './representations.ts';
import { REASONS } from './reasons.ts';
import { MARK_READ_MESSAGE, NotificationService, type ListValidator } from './service.ts';
import { type AccessRule, CLASSIC_TOKENS, requireAccess } from '../../core/access/index.ts';

const access: AccessRule = { credentials: CLASSIC_TOKENS, scopes: ['notifications', 'repo'] };
const config = { access } as const;
const tags = ['activity'];
const security = [{ token: [] }];

const Timestamp = (description: string) => Type.String({ format: 'date-time', description });
const ListQuery = Type.Object({
  all: Type.Optional(Type.Boolean({ description: 'Show read notifications too' })),
  participating: Type.Optional(Type.Boolean({ description: 'Only notifications in which the user is directly participating or mentioned' })),
  since: Type.Optional(Timestamp('Only threads updated at or after this time')),
  before: Type.Optional(Timestamp('Only threads updated before this time')),
  ...PageQuery,
});
const MarkReadBody = Type.Object({
  last_read_at: Type.Optional(Timestamp('Threads updated after this time stay unread; default now')),
  read: Type.Optional(Type.Boolean({ description: 'Whether the notifications have been read (default true)' })),
});
const ThreadParams = Type.Object({ thread_id: RowId('The thread `id`') });
const RepositoryParams = Type.Object({ owner: Type.String(), repo: Type.String() });
const NotModified = Type.Null({ description: 'Not modified' });
const Accepted = Type.Object({ message: Type.String(), url: Type.Optional(Type.String()) });
const errors = { 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };

const AdminNotificationBody = Type.Object({
  login: Type.String({ minLength: 1 }),
  repository: Type.String({ pattern: '^[^/]+/[^/]+$', description: 'owner/name' }),
  subject: Type.Object({
    type: Type.String({ minLength: 1, maxLength: 100 }),
    title: Type.String({ minLength: 1, maxLength: 1024 }),
    url: Type.String({ minLength: 1, maxLength: 2048 }),
  }),
  reason: Type.Union(REASONS.map((r) => Type.Literal(r))),
});

/** 205 Reset Content: no body at all (not even `null`). */
const resetContent = (reply: FastifyReply) => reply.code(205).send();

function userId(request: FastifyRequest): number {
  const principal = request.principal;
  // The access rule admits only classic and OAuth tokens, which act as a user.
  if (principal.type !== 'user') throw new ApiError(401, 'Requires authentication');
  return principal.user.id;
}

/** What the notifications routes share: the service, the polling headers, lists, marking read, a thread's 304. */
function notificationHttp(ctx: Context) {
  const service = new NotificationService(ctx);
  const load = loadMonitor.of(ctx);

  // The Last-Modified of the validator last answered: a poll that changes nothing names the same time again.
  let lastModified = { at: '', header: '' };
  const polling = (reply: FastifyReply, modifiedAt: string | null) => {
    reply.header('x-poll-interval', String(pollInterval(ctx.config.notifications.pollInterval, load.utilization())));
    if (!modifiedAt) return;
    if (lastModified.at !== modifiedAt) lastModified = { at: modifiedAt, header: new Date(modifiedAt).toUTCString() };
    reply.header('last-modified', lastModified.header);
  };

  const readableRepository = async (request: FastifyRequest<{ Params: { owner: string; repo: string } }>) => {
    const repository = await findRepository(ctx.db.kysely, request.params.owner, request.params.repo);
    await requireAccess(ctx.db.kysely, request.principal, 'read', { repository });
    return repository!;
  };

  /**
   * A thread's GETs: the validators (ETag, Last-Modified) from one statement, and a 304 when the
   * client's copy is current, before the thread is loaded. A thread the user cannot see is not
   * decided here (its read answers 404). True: answered (304).
   */
  const notModified = async (request: FastifyRequest<{ Params: { thread_id: number } }>, reply: FastifyReply, route: 'thread' | 'subscription') => {
    const validator = await service.threadValidator(userId(request), request.params.thread_id, route);
    if (!validator) return false;
    polling(reply, validator.modifiedAt);
    reply.header('etag', validator.etag);
    if (!unchanged(request, reply)) return false;
    await sendNotModified(ctx, request, reply);
    return true;
  };

  const list = async (
    request: FastifyRequest<{ Querystring: { all?: boolean; participating?: boolean; since?: string; before?: string; page?: number; per_page?: number } }>,
    reply: FastifyReply,
    repositoryId: number | undefined,
    limits: { perPage: number; maxPerPage: number },
  ) => {
    const params = pageParams(request.query, limits);
    const user = userId(request);
    const { all, participating, since, before } = request.query;
    const key = JSON.stringify([repositoryId ?? null, all ?? null, participating ?? null, since ?? null, before ?? null, params.page, params.perPage]);
    // A conditional request is decided from the validator alone (one statement): a poll that changes
    // nothing loads no thread. Otherwise the page is read with its validator, in one statement.
    let validator: ListValidator | undefined;
    if (request.headers['if-none-match'] !== undefined || request.headers['if-modified-since'] !== undefined) {
      validator = await service.listValidator(user, key);
      polling(reply, validator.modifiedAt);
      reply.header('etag', validator.etag);
      if (unchanged(request, reply)) return sendNotModified(ctx, request, reply);
    }
    const result = await service.list(user, key, { ...request.query, repositoryId, page: params.page, perPage: params.perPage }, validator);
    // The validator of the page (the one a page kept under it was written for, or the one read with the page).
    polling(reply, result.validator.modifiedAt);
    reply.header('etag', result.validator.etag);
    setPageLinks(reply, request, ctx.urls.api, params, { total: result.total, returned: result.returned });
    // Already JSON, written by serializers compiled from the 200 schema.
    return reply.type('application/json; charset=utf-8').send(result.body);
  };

  const markRead = async (request: FastifyRequest<{ Body: { last_read_at?: string; read?: boolean } }>, reply: FastifyReply, repositoryId?: number, url?: string) => {
    const outcome = await service.markRead(userId(request), { ...request.body, repositoryId });
    if (outcome === 'queued') return reply.code(202).send({ message: MARK_READ_MESSAGE, ...(url ? { url } : {}) });
    return resetContent(reply);
  };

  return { ctx, service, readableRepository, notModified, list, markRead };
}

type NotificationHttp = ReturnType<typeof notificationHttp>;

export function notificationRoutes(app: Api, ctx: Context): void {
  const http = notificationHttp(ctx);
  inboxRoutes(app, http);
  threadRoutes(app, http);
  subscriptionRoutes(app, http);
  repositoryInboxRoutes(app, http);
}

/** The user's list and marking it read. */
function inboxRoutes(app: Api, http: NotificationHttp): void {
  app.get('/notifications', {
    config,
    schema: {
      summary: 'List notifications for the authenticated user',
      tags,
      security,
      querystring: ListQuery,
      response: { 200: Type.Array(NotificationThread), 304: NotModified, ...errors, 422: ValidationErrorBody },
    },
  }, async (request, reply) => http.list(request, reply, undefined, { perPage: 50, maxPerPage: 50 }));

  app.put('/notifications', {
    config,
    schema: {
      summary: 'Mark notifications as read',
      tags,
      security,
      body: MarkReadBody,
      response: { 202: Accepted, 205: Type.Null({ description: 'Reset Content' }), ...errors, 422: ValidationErrorBody },
    },
  }, async (request, reply) => http.markRead(request, reply));
}

/** One thread: get it, mark it read, mark it done. */
function threadRoutes(app: Api, http: NotificationHttp): void {
  app.get('/notifications/threads/:thread_id', {
    config,
    schema: {
      summary: 'Get a thread',
      tags,
      security,
      params: ThreadParams,
      response: { 200: NotificationThread, 304: NotModified, ...errors, 422: ValidationErrorBody },
    },
  }, async (request, reply) => {
    if (await http.notModified(request, reply, 'thread')) return reply;
    return http.service.thread(userId(request), request.params.thread_id);
  });

  app.patch('/notifications/threads/:thread_id', {
    config,
    schema: {
      summary: 'Mark a thread as read',
      tags,
      security,
      params: ThreadParams,
      response: { 205: Type.Null({ description: 'Reset Content' }), ...errors, 422: ValidationErrorBody },
    },
  }, async (request, reply) => {
    await http.service.markThreadRead(userId(request), request.params.thread_id);
    return resetContent(reply);
  });

  app.delete('/notifications/threads/:thread_id', {
    config,
    schema: {
      summary: 'Mark a thread as done',
      tags,
      security,
      params: ThreadParams,
      response: { 204: Type.Null(), ...errors, 422: ValidationErrorBody },
    },
  }, async (request, reply) => {
    await http.service.markThreadDone(userId(request), request.params.thread_id);
    return reply.code(204).send(null);
  });
}

/** A thread's subscription: get, set, delete. */
function subscriptionRoutes(app: Api, http: NotificationHttp): void {
  app.get('/notifications/threads/:thread_id/subscription', {
    config,
    schema: {
      summary: 'Get a thread subscription for the authenticated user',
      tags,
      security,
      params: ThreadParams,
      response: { 200: ThreadSubscription, 304: NotModified, ...errors, 422: ValidationErrorBody },
    },
  }, async (request, reply) => {
    if (await http.notModified(request, reply, 'subscription')) return reply;
    return http.service.subscription(userId(request), request.params.thread_id);
  });

  app.put('/notifications/threads/:thread_id/subscription', {
    config,
    schema: {
      summary: 'Set a thread subscription',
      tags,
      security,
      params: ThreadParams,
      body: Type.Object({ ignored: Type.Optional(Type.Boolean({ description: 'Block all notifications from this thread' })) }),
      response: { 200: ThreadSubscription, ...errors, 422: ValidationErrorBody },
    },
  }, async (request) => http.service.setSubscription(userId(request), request.params.thread_id, request.body.ignored ?? false));

  app.delete('/notifications/threads/:thread_id/subscription', {
    config,
    schema: {
      summary: 'Delete a thread subscription',
      tags,
      security,
      params: ThreadParams,
      response: { 204: Type.Null(), ...errors, 422: ValidationErrorBody },
    },
  }, async (request, reply) => {
    await http.service.deleteSubscription(userId(request), request.params.thread_id);
    return reply.code(204).send(null);
  });
}

/** A repository's list and marking it read. */
function repositoryInboxRoutes(app: Api, http: NotificationHttp): void {
  app.get('/repos/:owner/:repo/notifications', {
    config,
    schema: {
      summary: 'List repository notifications for the authenticated user',
      tags,
      security,
      params: RepositoryParams,
      querystring: ListQuery,
      response: { 200: Type.Array(NotificationThread), 304: NotModified, ...errors, 422: ValidationErrorBody },
    },
  }, async (request, reply) => {
    const repository = await http.readableRepository(request);
    return http.list(request, reply, repository.id, DEFAULT_PAGES);
  });

  app.put('/repos/:owner/:repo/notifications', {
    config,
    schema: {
      summary: 'Mark repository notifications as read',
      tags,
      security,
      params: RepositoryParams,
      body: MarkReadBody,
      response: { 202: Accepted, 205: Type.Null({ description: 'Reset Content' }), ...errors, 422: ValidationErrorBody },
    },
  }, async (request, reply) => {
    const repository = await http.readableRepository(request);
    return http.markRead(request, reply, repository.id, `${http.ctx.urls.api}/repos/${repository.owner.login}/${repository.name}/notifications`);
  });
}

export function notificationAdminRoutes(app: Api, ctx: Context): void {
  const service = new NotificationService(ctx);
  app.post('/_admin/notifications', {
    schema: {
      hide: true,
      tags: ['admin'],
      summary: 'Create or update a user\'s thread for a subject no issue activity produces',
      body: AdminNotificationBody,
      response: { 201: NotificationThread, 404: ErrorBody, 422: ValidationErrorBody },
    },
  }, async (request, reply) => reply.code(201).send(await service.notify(request.body)));
}
