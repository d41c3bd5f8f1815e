// Code security configuration routes: the enterprise form, the organization form, and a repository's
// configuration. The configuration operations are one table (OPERATIONS), each written once and
// registered for each scope that has it, enterprise first, in the table's order; the rules are in
// service.ts, the response shapes in representations.ts.
import type { FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import { Type, type Static, type TSchema } from 'typebox';
import type { Api, Context } from '../../platform/context.ts';
import { CursorQuery, setCursorLinks } from '../../platform/pagination.ts';
import { ErrorBody, ValidationErrorBody, RowId } from '../../platform/schemas.ts';
import type { Urls } from '../../platform/urls.ts';
import type { CursorPage } from './cursor.ts';
import { AttachmentStatus, DefaultForNewRepos } from './features.ts';
import {
  Accepted, Configuration, configurationBody, DefaultRecord, defaultRecordBody, RepositoryConfiguration, repositoryConfigurationBody, RepositoryRecord,
  repositoryRecordBody, SetDefaultAnswer,
} from './representations.ts';
import { EnterpriseCreateBody, EnterpriseUpdateBody, OrganizationCreateBody, OrganizationUpdateBody } from './schemas.ts';
import { CodeSecurityService, type AttachScope, type Scope } from './service.ts';
import { type AccessRule, ALL_TOKENS, CLASSIC_TOKENS, type Principal } from '../../core/access/index.ts';

const enterpriseRead: AccessRule = { credentials: CLASSIC_TOKENS, scopes: ['read:enterprise'] };
const enterpriseWrite: AccessRule = { credentials: CLASSIC_TOKENS, scopes: ['admin:enterprise'] };
const organizationRead: AccessRule = { credentials: ALL_TOKENS, scopes: ['read:org'], permissions: [{ organization_administration: 'read' }] };
const organizationWrite: AccessRule = { credentials: ALL_TOKENS, scopes: ['write:org'], permissions: [{ organization_administration: 'write' }] };
const repositoryRead: AccessRule = { credentials: ALL_TOKENS, scopes: ['repo'], permissions: [{ administration: 'read' }] };

const tags = ['code-security'];
const security = [{ token: [] }];
const denied = { 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };
const invalid = { 422: ValidationErrorBody };

const EnterpriseParams = Type.Object({ enterprise: Type.String({ description: 'The slug of the enterprise' }) });
const EnterpriseConfigurationParams = Type.Object({ ...EnterpriseParams.properties, configuration_id: RowId('The id of the configuration') });
const OrgParams = Type.Object({ org: Type.String({ description: 'The organization name, not case sensitive' }) });
const OrgConfigurationParams = Type.Object({ ...OrgParams.properties, configuration_id: RowId('The id of the configuration') });

const ListQuery = Type.Object(CursorQuery);
const OrgListQuery = Type.Object({
  ...CursorQuery,
  target_type: Type.Optional(Type.Enum(['global', 'all'], { default: 'all', description: 'Only the global configurations, or all' })),
});
const RepositoriesQuery = Type.Object({
  ...CursorQuery,
  status: Type.Optional(Type.String({
    description: `Comma-separated attachment statuses (${AttachmentStatus.enum.join(', ')}), or all (the default)`,
  })),
});
const DefaultBody = Type.Object({
  default_for_new_repos: DefaultForNewRepos,
}, { additionalProperties: false });
const EnterpriseAttachBody = Type.Object({
  scope: Type.Enum(['all', 'all_without_configurations'], { description: 'The repositories to attach the configuration to' }),
}, { additionalProperties: false });
const OrganizationAttachBody = Type.Object({
  scope: Type.Enum(['all', 'all_without_configurations', 'public', 'private_or_internal', 'selected'], { description: 'The repositories to attach the configuration to' }),
  selected_repository_ids: Type.Optional(Type.Array(Type.Integer(), { maxItems: 1000, description: 'Ids of the repositories; only with the scope selected' })),
}, { additionalProperties: false });
const DetachBody = Type.Object({
  selected_repository_ids: Type.Array(RowId(), { minItems: 1, maxItems: 250, description: 'Ids of the repositories to detach (1 to 250)' }),
}, { additionalProperties: false });

const lastModified = (reply: FastifyReply, ...stamps: string[]) =>
  reply.header('last-modified', new Date(stamps.reduce((a, b) => (a > b ? a : b))).toUTCString());

type Kind = Scope['type'];

/** The owner a form's configurations belong to: its path, parameters, access rules, and how its scope is resolved. */
interface Owner {
  kind: Kind;
  path: string;
  params: TSchema;
  configurationParams: TSchema;
  read: AccessRule;
  write: AccessRule;
  scope: (service: CodeSecurityService, principal: Principal, params: Record<string, string>) => Promise<Scope>;
}

const OWNERS: readonly Owner[] = [
  {
    kind: 'enterprise',
    path: '/enterprises/:enterprise/code-security/configurations',
    params: EnterpriseParams,
    configurationParams: EnterpriseConfigurationParams,
    read: enterpriseRead,
    write: enterpriseWrite,
    scope: (service, principal, params) => service.enterpriseScope(principal, params.enterprise!),
  },
  {
    kind: 'organization',
    path: '/orgs/:org/code-security/configurations',
    params: OrgParams,
    configurationParams: OrgConfigurationParams,
    read: organizationRead,
    write: organizationWrite,
    scope: (service, principal, params) => service.organizationScope(principal, params.org!),
  },
];

/** What an operation's handler is given: the scope resolved, and the request as its schemas validated it. */
interface Call {
  service: CodeSecurityService;
  urls: Urls;
  scope: Scope;
  id: number;
  request: FastifyRequest;
  reply: FastifyReply;
}

/** One form of an operation: what differs between its enterprise and organization routes. */
interface Form {
  summary: string;
  querystring?: TSchema;
  body?: TSchema;
  response: Record<number, TSchema>;
  /** The platform documents 400 (not 422) for a bad request on some forms. */
  invalidStatus?: 400;
}

interface Operation {
  method: HTTPMethods;
  /** After the owner's `…/code-security/configurations`. */
  path: string;
  access: 'read' | 'write';
  /** The forms by owner kind: an operation one owner lacks has no form for it. */
  forms: Partial<Record<Kind, Form>>;
  handle: (call: Call) => Promise<unknown>;
}

const byId = '/:configuration_id';

/** A page's Link header (`before`, `after`), then its items. */
function linkPage<T, R>(call: Call, page: CursorPage<T>, body: (item: T) => R): R[] {
  const { request, reply, urls } = call;
  setCursorLinks(reply, request, urls.api, { next: page.next ? { after: page.next } : undefined, prev: page.prev ? { before: page.prev } : undefined });
  return page.items.map(body);
}

const OPERATIONS: readonly Operation[] = [
  {
    method: 'GET', path: '', access: 'read',
    forms: {
      enterprise: { summary: 'Get code security configurations for an enterprise', querystring: ListQuery, response: { 200: Type.Array(Configuration), ...denied, ...invalid } },
      organization: { summary: 'Get code security configurations for an organization', querystring: OrgListQuery, response: { 200: Type.Array(Configuration), ...denied, ...invalid } },
    },
    handle: async (call) => linkPage(call, await call.service.list(call.scope, call.request.query as Static<typeof OrgListQuery>), (row) => configurationBody(call.urls, call.scope, row)),
  },
  {
    method: 'POST', path: '', access: 'write',
    forms: {
      enterprise: {
        summary: 'Create a code security configuration for an enterprise',
        body: EnterpriseCreateBody,
        response: { 201: Configuration, 400: ValidationErrorBody, ...denied, ...invalid },
        invalidStatus: 400,
      },
      organization: { summary: 'Create a code security configuration', body: OrganizationCreateBody, response: { 201: Configuration, ...denied, ...invalid } },
    },
    handle: async ({ service, urls, scope, request, reply }) =>
      reply.code(201).send(configurationBody(urls, scope, await service.create(scope, request.body as Static<typeof OrganizationCreateBody>))),
  },
  {
    method: 'GET', path: '/defaults', access: 'read',
    forms: {
      enterprise: { summary: 'Get default code security configurations for an enterprise', response: { 200: Type.Array(DefaultRecord), ...denied } },
      organization: { summary: 'Get default code security configurations', response: { 200: Type.Array(DefaultRecord), ...denied } },
    },
    handle: async ({ service, urls, scope }) => (await service.defaults(scope)).map((record) => defaultRecordBody(urls, scope, record)),
  },
  {
    method: 'DELETE', path: '/detach', access: 'write',
    forms: {
      organization: { summary: 'Detach configurations from repositories', body: DetachBody, response: { 204: Type.Null(), ...denied, ...invalid } },
    },
    handle: async ({ service, scope, request, reply }) => {
      await service.detach(scope as Scope & { type: 'organization' }, (request.body as Static<typeof DetachBody>).selected_repository_ids);
      return reply.code(204).send(null);
    },
  },
  {
    method: 'GET', path: byId, access: 'read',
    forms: {
      enterprise: { summary: 'Retrieve a code security configuration of an enterprise', response: { 200: Configuration, ...denied, ...invalid } },
      organization: { summary: 'Get a code security configuration', response: { 200: Configuration, ...denied, ...invalid } },
    },
    handle: async ({ service, urls, scope, id, reply }) => {
      const row = await service.visibleConfiguration(scope, id);
      lastModified(reply, row.updated_at);
      return configurationBody(urls, scope, row);
    },
  },
  {
    method: 'PATCH', path: byId, access: 'write',
    forms: {
      enterprise: { summary: 'Update a custom code security configuration for an enterprise', body: EnterpriseUpdateBody, response: { 200: Configuration, ...denied, 409: ErrorBody, ...invalid } },
      organization: {
        summary: 'Update a code security configuration',
        body: OrganizationUpdateBody,
        response: { 200: Configuration, 204: Type.Null(), 400: ErrorBody, ...denied, 409: ErrorBody, ...invalid },
      },
    },
    handle: async ({ service, urls, scope, id, request, reply }) => {
      const { row, changed } = await service.update(scope, id, request.body as Static<typeof OrganizationUpdateBody>);
      // The organization form answers 204 when nothing changed; the enterprise form has no 204.
      if (!changed && scope.type === 'organization') return reply.code(204).send(null);
      return configurationBody(urls, scope, row);
    },
  },
  {
    method: 'DELETE', path: byId, access: 'write',
    forms: {
      enterprise: { summary: 'Delete a code security configuration for an enterprise', response: { 204: Type.Null(), ...denied, 409: ErrorBody, ...invalid } },
      organization: { summary: 'Delete a code security configuration', response: { 204: Type.Null(), 400: ErrorBody, ...denied, 409: ErrorBody, ...invalid } },
    },
    handle: async ({ service, scope, id, reply }) => {
      await service.delete(scope, id);
      return reply.code(204).send(null);
    },
  },
  {
    method: 'POST', path: `${byId}/attach`, access: 'write',
    forms: {
      enterprise: { summary: 'Attach an enterprise configuration to repositories', body: EnterpriseAttachBody, response: { 202: Accepted, ...denied, 409: ErrorBody, ...invalid } },
      organization: { summary: 'Attach a configuration to repositories', body: OrganizationAttachBody, response: { 202: Accepted, ...denied, ...invalid } },
    },
    handle: async ({ service, scope, id, request, reply }) => {
      await service.attach(scope, id, request.body as { scope: AttachScope; selected_repository_ids?: number[] });
      return reply.code(202).send({});
    },
  },
  {
    method: 'PUT', path: `${byId}/defaults`, access: 'write',
    forms: {
      enterprise: { summary: 'Set a code security configuration as a default for an enterprise', body: DefaultBody, response: { 200: SetDefaultAnswer, ...denied, ...invalid } },
      organization: { summary: 'Set a code security configuration as a default for an organization', body: DefaultBody, response: { 200: SetDefaultAnswer, ...denied, ...invalid } },
    },
    handle: async ({ service, urls, scope, id, request }) =>
      defaultRecordBody(urls, scope, await service.setDefault(scope, id, (request.body as Static<typeof DefaultBody>).default_for_new_repos)),
  },
  {
    method: 'GET', path: `${byId}/repositories`, access: 'read',
    forms: {
      enterprise: {
        summary: 'Get repositories associated with an enterprise code security configuration',
        querystring: RepositoriesQuery,
        response: { 200: Type.Array(RepositoryRecord), ...denied, ...invalid },
      },
      organization: {
        summary: 'Get repositories associated with a code security configuration',
        querystring: RepositoriesQuery,
        response: { 200: Type.Array(RepositoryRecord), ...denied, ...invalid },
      },
    },
    handle: async (call) =>
      linkPage(call, await call.service.repositories(call.scope, call.id, call.request.query as Static<typeof RepositoriesQuery>), (item) => repositoryRecordBody(call.urls, item)),
  },
];

export function codeSecurityRoutes(app: Api, ctx: Context): void {
  const service = new CodeSecurityService(ctx);
  const { urls } = ctx;

  for (const owner of OWNERS) {
    for (const operation of OPERATIONS) {
      const form = operation.forms[owner.kind];
      if (!form) continue;
      const access = operation.access === 'read' ? owner.read : owner.write;
      app.route({
        method: operation.method,
        url: `${owner.path}${operation.path}`,
        config: form.invalidStatus === undefined ? { access } : { access, invalidStatus: form.invalidStatus },
        schema: {
          summary: form.summary,
          tags,
          security,
          params: operation.path.startsWith(byId) ? owner.configurationParams : owner.params,
          ...(form.querystring ? { querystring: form.querystring } : {}),
          ...(form.body ? { body: form.body } : {}),
          response: form.response,
        },
        handler: async (request, reply) => {
          const params = request.params as Record<string, string> & { configuration_id?: number };
          const scope = await owner.scope(service, request.principal, params);
          return operation.handle({ service, urls, scope, id: params.configuration_id!, request, reply });
        },
      });
    }
  }

  app.get('/repos/:owner/:repo/code-security-configuration', {
    config: { access: repositoryRead },
    schema: {
      summary: 'Get the code security configuration associated with a repository',
      tags,
      security,
      params: Type.Object({ owner: Type.String(), repo: Type.String() }),
      response: { 200: RepositoryConfiguration, 204: Type.Null(), ...denied },
    },
  }, async (request, reply) => {
    const repository = await service.administeredRepository(request.principal, request.params.owner, request.params.repo);
    const found = await service.repositoryConfiguration(repository);
    if (!found) return reply.code(204).send(null);
    lastModified(reply, found.configuration.updated_at, found.attachment.updated_at);
    return repositoryConfigurationBody(urls, found);
  });
}
