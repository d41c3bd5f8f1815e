// The app API an app framework drives (octokit's auth-app, Probot): with the app's JWT, the app and
// its installations; with an installation token, the repositories it reaches and its revocation;
// and, for anyone, an app by its slug. Installation tokens are minted in areas/app-tokens.
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { Area } from '../area.ts';
import type { AppRow } from './store.ts';
import type { Api, Context } from '../../platform/context.ts';
import { sendNotModified, unchanged } from '../../http/conditional.ts';
import { DEFAULT_PAGES, PageQuery, pageParams, sendPage, setPageLinks } from '../../platform/pagination.ts';
import { ErrorBody, ValidationErrorBody, RowId } from '../../platform/schemas.ts';
import { FullRepository } from '../repositories/representations.ts';
import { App, Installation } from './representations.ts';
import { AppService } from './service.ts';
import { installationAdminRoutes } from './admin-routes.ts';
import { INSTALLATION_LIFECYCLE, InstallationWrites } from './writes.ts';
import { type AccessRule, ALL_TOKENS, callingApp, callingInstallation } from '../access/index.ts';

const jwt: AccessRule = { credentials: ['jwt'] };
const installationToken: AccessRule = { credentials: ['installation'] };
const anyone: AccessRule = { credentials: [...ALL_TOKENS, 'jwt'], anonymous: true };
const tags = ['apps'];
const security = [{ token: [] }];
const refused = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody };

const lastModified = (reply: FastifyReply, ...stamps: string[]) =>
  reply.header('last-modified', new Date(stamps.reduce((a, b) => (Date.parse(a) > Date.parse(b) ? a : b))).toUTCString());

/** With the app's JWT (and, for anyone, an app by its slug): the app and its installations. */
function appRoutes(app: Api, ctx: Context, service: AppService): void {
  app.get('/app', {
    config: { access: jwt },
    schema: {
      summary: 'Get the authenticated app',
      description: 'The app the JWT was signed for, with the number of its installations.',
      tags,
      security,
      response: { 200: App, ...refused },
    },
  }, async (request) => service.self(callingApp(request)));

  app.get('/apps/:app_slug', {
    config: { access: anyone },
    schema: {
      summary: 'Get an app',
      tags,
      params: Type.Object({ app_slug: Type.String({ description: 'The app’s slug' }) }),
      response: { 200: App, ...refused, 404: ErrorBody },
    },
  }, async (request, reply) => {
    const body = await service.bySlug(request.params.app_slug);
    lastModified(reply, body.updated_at);
    return body;
  });

  app.get('/app/installations', {
    config: { access: jwt },
    schema: {
      summary: 'List installations for the authenticated app',
      tags,
      security,
      querystring: Type.Object({
        ...PageQuery,
        since: Type.Optional(Type.String({ format: 'date-time', description: 'Only installations updated at or after this time' })),
      }),
      response: { 200: Type.Array(Installation), ...refused, 422: ValidationErrorBody },
    },
  }, async (request, reply) => {
    const since = request.query.since === undefined ? undefined : new Date(request.query.since).toISOString();
    return sendPage(request, reply, ctx.urls.api, async (page) => {
      const { total, installations } = await service.listInstallations(callingApp(request), { offset: page.offset, limit: page.perPage, since });
      return { total, items: installations };
    });
  });

  // The app's installations one at a time: by id, or the one covering a repository, an organization
  // or a user (any account by login). What the app is not installed on is a 404.
  const lookups = [
    {
      path: '/app/installations/:installation_id',
      summary: 'Get an installation for the authenticated app',
      params: Type.Object({ installation_id: RowId('The installation id') }),
      find: (app: AppRow, p: Record<string, unknown>) => service.getInstallation(app, p.installation_id as number),
    },
    {
      path: '/repos/:owner/:repo/installation',
      summary: 'Get a repository installation for the authenticated app',
      params: Type.Object({ owner: Type.String(), repo: Type.String() }),
      find: (app: AppRow, p: Record<string, unknown>) => service.repositoryInstallation(app, p.owner as string, p.repo as string),
    },
    {
      path: '/orgs/:org/installation',
      summary: 'Get an organization installation for the authenticated app',
      params: Type.Object({ org: Type.String() }),
      find: (app: AppRow, p: Record<string, unknown>) => service.accountInstallation(app, p.org as string, 'Organization'),
    },
    {
      path: '/users/:username/installation',
      summary: 'Get a user installation for the authenticated app',
      params: Type.Object({ username: Type.String() }),
      find: (app: AppRow, p: Record<string, unknown>) => service.accountInstallation(app, p.username as string, 'any'),
    },
  ];
  for (const { path, summary, params, find } of lookups) {
    app.get(path, {
      config: { access: jwt },
      schema: { summary, tags, security, params, response: { 200: Installation, ...refused, 404: ErrorBody, 422: ValidationErrorBody } },
    }, async (request, reply) => {
      const calling = callingApp(request);
      const body = await find(calling, request.params as Record<string, unknown>);
      lastModified(reply, body.updated_at, calling.updated_at);
      return body;
    });
  }
}

/** With an installation token: the repositories it reaches, and its revocation. */
function installationRoutes(app: Api, ctx: Context, service: AppService): void {
  app.get('/installation/repositories', {
    config: { access: installationToken },
    schema: {
      summary: 'List repositories accessible to the app installation',
      description: 'The repositories the installation token reaches: its installation’s, narrowed to those the token names.',
      tags,
      security,
      querystring: Type.Object(PageQuery),
      response: {
        200: Type.Object({
          total_count: Type.Integer(),
          repository_selection: Type.Union([Type.Literal('all'), Type.Literal('selected')]),
          repositories: Type.Array(FullRepository),
        }),
        304: Type.Null({ description: 'Not modified' }),
        ...refused,
        422: ValidationErrorBody,
      },
    },
  }, async (request, reply) => {
    const params = pageParams(request.query, DEFAULT_PAGES);
    const page = { offset: params.offset, limit: params.perPage };
    // A poll is decided from the tag (one statement) before a repository is loaded or rendered.
    const etag = await service.installationRepositoriesTag(callingInstallation(request), page);
    if (etag) {
      reply.header('etag', etag);
      if (unchanged(request, reply)) return sendNotModified(ctx, request, reply);
    }
    const body = await service.installationRepositories(callingInstallation(request), page);
    setPageLinks(reply, request, ctx.urls.api, params, { total: body.total_count, returned: body.repositories.length });
    return body;
  });

  app.delete('/installation/token', {
    config: { access: installationToken },
    schema: {
      summary: 'Revoke an installation access token',
      description: 'The calling installation token stops working at once.',
      tags,
      security,
      response: { 204: Type.Null(), ...refused },
    },
  }, async (request, reply) => {
    await service.revoke(callingInstallation(request));
    return reply.code(204).send(null);
  });
}

/** An installation's lifecycle, by its app (src/core/apps/writes.ts). */
function installationLifecycleRoutes(app: Api, ctx: Context): void {
  const writes = new InstallationWrites(ctx);
  const InstallationParams = Type.Object({ installation_id: RowId('The installation id') });
  for (const { method, path, summary, action } of INSTALLATION_LIFECYCLE) {
    app.route({
      method,
      url: `/app/installations/:installation_id${path}`,
      config: { access: jwt },
      schema: { summary, tags, security, params: InstallationParams, response: { 204: Type.Null(), ...refused, 404: ErrorBody, 422: ValidationErrorBody } },
      handler: async (request, reply) => {
        await writes[action](callingApp(request), request.params.installation_id);
        return reply.code(204).send(null);
      },
    });
  }
}

function routes(app: Api, ctx: Context): void {
  const service = new AppService(ctx);
  appRoutes(app, ctx, service);
  installationRoutes(app, ctx, service);
  installationLifecycleRoutes(app, ctx);
}

export const apps: Area = { name: 'apps', routes, admin: installationAdminRoutes };
