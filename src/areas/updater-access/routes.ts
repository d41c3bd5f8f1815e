// Updater repository access, organization and enterprise forms: list the accessible repositories,
// add and remove some, set the default level.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Api, Context } from '../../platform/context.ts';
import { PageQuery, setPageLinks } from '../../platform/pagination.ts';
import { ErrorBody, ValidationErrorBody } from '../../platform/schemas.ts';
import { DefaultLevel, UpdaterAccessList } from './representations.ts';
import { UpdaterAccessService } from './service.ts';
import type { ListOwner } from './store.ts';
import { type AccessRule, ALL_TOKENS, USER_TOKENS } from '../../core/access/index.ts';

const tags = ['updater'];
const security = [{ token: [] }];

// Organization form: owners, or installation and app user tokens with organization Administration.
const orgRead: AccessRule = { credentials: ALL_TOKENS, scopes: ['read:org'], permissions: [{ organization_administration: 'read' }] };
const orgWrite: AccessRule = { credentials: ALL_TOKENS, scopes: ['write:org'], permissions: [{ organization_administration: 'write' }] };
// Enterprise form: enterprise owners, so only tokens that act as a user.
const enterpriseRead: AccessRule = { credentials: USER_TOKENS, scopes: ['read:enterprise'], permissions: [{ enterprise_administration: 'read' }] };
const enterpriseWrite: AccessRule = { credentials: USER_TOKENS, scopes: ['admin:enterprise'], permissions: [{ enterprise_administration: 'write' }] };

const OrgParams = Type.Object({ org: Type.String({ description: 'The organization name, not case sensitive' }) });
const EnterpriseParams = Type.Object({ enterprise: Type.String({ description: 'The slug of the enterprise' }) });
const UpdateBody = Type.Object({
  repository_ids_to_add: Type.Optional(Type.Array(Type.Integer(), { description: 'Repositories the updater may access from now on' })),
  repository_ids_to_remove: Type.Optional(Type.Array(Type.Integer(), { description: 'Repositories the updater may no longer access' })),
});
const DefaultLevelBody = Type.Object({ default_level: DefaultLevel });

const denied = { 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };

export function updaterAccessRoutes(app: Api, ctx: Context): void {
  const service = new UpdaterAccessService(ctx);

  const list = async (owner: ListOwner, request: FastifyRequest<{ Querystring: { page?: number; per_page?: number } }>, reply: FastifyReply) => {
    const { list: body, page, total } = await service.list(owner, request.query);
    setPageLinks(reply, request, ctx.urls.api, page, { total, returned: body.accessible_repositories.length });
    return body;
  };

  const forms = [
    {
      prefix: '/orgs/:org/updater/repository-access',
      params: OrgParams,
      read: orgRead,
      write: orgWrite,
      who: 'an organization',
      owner: (request: FastifyRequest) => service.organization(request.principal, (request.params as { org: string }).org),
    },
    {
      prefix: '/enterprises/:enterprise/updater/repository-access',
      params: EnterpriseParams,
      read: enterpriseRead,
      write: enterpriseWrite,
      who: 'an enterprise',
      owner: (request: FastifyRequest) => service.enterprise(request.principal, (request.params as { enterprise: string }).enterprise),
    },
  ];

  for (const form of forms) {
    app.get(form.prefix, {
      config: { access: form.read },
      schema: {
        summary: `List the repositories the updater can access in ${form.who}`,
        tags,
        security,
        params: form.params,
        querystring: Type.Object(PageQuery),
        response: { 200: UpdaterAccessList, ...denied, 422: ValidationErrorBody },
      },
    }, async (request, reply) => list(await form.owner(request), request, reply));

    app.patch(form.prefix, {
      config: { access: form.write },
      schema: {
        summary: `Update the repositories the updater can access in ${form.who}`,
        tags,
        security,
        params: form.params,
        body: UpdateBody,
        response: { 204: Type.Null(), 400: ErrorBody, ...denied, 422: ValidationErrorBody },
      },
    }, async (request, reply) => {
      await service.update(await form.owner(request), request.body);
      return reply.code(204).send(null);
    });

    app.put(`${form.prefix}/default-level`, {
      config: { access: form.write },
      schema: {
        summary: `Set the updater's default repository access level for ${form.who}`,
        tags,
        security,
        params: form.params,
        body: DefaultLevelBody,
        response: { 204: Type.Null(), 400: ErrorBody, ...denied, 422: ValidationErrorBody },
      },
    }, async (request, reply) => {
      await service.setDefaultLevel(await form.owner(request), request.body.default_level);
      return reply.code(204).send(null);
    });
  }
}
