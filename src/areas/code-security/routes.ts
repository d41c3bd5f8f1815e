// Code security configuration routes: the enterprise form, the organization form, and a repository's
// configuration. Each operation's schema sits beside its thin handler; the rules are in service.ts.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Api, Context } from '../../platform/context.ts';
import { CursorQuery, setCursorLinks } from '../../platform/pagination.ts';
import { minimalRepository } from '../../core/repositories/representations.ts';
import { ErrorBody, ValidationErrorBody, RowId } from '../../platform/schemas.ts';
import {
  AttachmentStatus, Configuration, DefaultForNewRepos, DefaultRecord, EnterpriseCreateBody, EnterpriseUpdateBody,
  OrganizationCreateBody, OrganizationUpdateBody, RepositoryConfiguration, RepositoryRecord,
} from './schemas.ts';
import { CodeSecurityService, configurationBody, type CursorPage, type Scope } from './service.ts';
import type { ConfigurationRow } from './store.ts';
import { type AccessRule, ALL_TOKENS, CLASSIC_TOKENS } from '../../core/access/index.ts';

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
const SetDefaultAnswer = Type.Object({ default_for_new_repos: DefaultForNewRepos, configuration: Configuration });
const Accepted = Type.Object({}, { additionalProperties: true });

const lastModified = (reply: FastifyReply, ...stamps: string[]) =>
  reply.header('last-modified', new Date(stamps.reduce((a, b) => (a > b ? a : b))).toUTCString());

export function codeSecurityRoutes(app: Api, ctx: Context): void {
  const service = new CodeSecurityService(ctx);
  const { urls } = ctx;

  /** A page of configurations with its Link header. */
  const configurationPage = (request: FastifyRequest, reply: FastifyReply, scope: Scope, page: CursorPage<ConfigurationRow>) => {
    setCursorLinks(reply, request, urls.api, { next: page.next ? { after: page.next } : undefined, prev: page.prev ? { before: page.prev } : undefined });
    return page.items.map((row) => configurationBody(urls, scope, row));
  };

  const repositoryPage = (request: FastifyRequest, reply: FastifyReply, page: Awaited<ReturnType<CodeSecurityService['repositories']>>) => {
    setCursorLinks(reply, request, urls.api, { next: page.next ? { after: page.next } : undefined, prev: page.prev ? { before: page.prev } : undefined });
    return page.items.map(({ attachment, repository, owner }) => ({
      status: attachment.status as (typeof AttachmentStatus.enum)[number],
      repository: minimalRepository(urls, repository, owner),
    }));
  };

  // --- Enterprise --------------------------------------------------------------------------------

  app.get('/enterprises/:enterprise/code-security/configurations', {
    config: { access: enterpriseRead },
    schema: {
      summary: 'Get code security configurations for an enterprise',
      tags,
      security,
      params: EnterpriseParams,
      querystring: ListQuery,
      response: { 200: Type.Array(Configuration), ...denied, ...invalid },
    },
  }, async (request, reply) => {
    const scope = await service.enterpriseScope(request.principal, request.params.enterprise);
    return configurationPage(request, reply, scope, await service.list(scope, request.query));
  });

  app.post('/enterprises/:enterprise/code-security/configurations', {
    // The platform documents 400 (not 422) for a bad request here.
    config: { access: enterpriseWrite, invalidStatus: 400 },
    schema: {
      summary: 'Create a code security configuration for an enterprise',
      tags,
      security,
      params: EnterpriseParams,
      body: EnterpriseCreateBody,
      response: { 201: Configuration, 400: ValidationErrorBody, ...denied, ...invalid },
    },
  }, async (request, reply) => {
    const scope = await service.enterpriseScope(request.principal, request.params.enterprise);
    return reply.code(201).send(configurationBody(urls, scope, await service.create(scope, request.body)));
  });

  app.get('/enterprises/:enterprise/code-security/configurations/defaults', {
    config: { access: enterpriseRead },
    schema: {
      summary: 'Get default code security configurations for an enterprise',
      tags,
      security,
      params: EnterpriseParams,
      response: { 200: Type.Array(DefaultRecord), ...denied },
    },
  }, async (request) => {
    const scope = await service.enterpriseScope(request.principal, request.params.enterprise);
    return (await service.defaults(scope)).map((record) => ({ ...record, configuration: configurationBody(urls, scope, record.configuration) }));
  });

  app.get('/enterprises/:enterprise/code-security/configurations/:configuration_id', {
    config: { access: enterpriseRead },
    schema: {
      summary: 'Retrieve a code security configuration of an enterprise',
      tags,
      security,
      params: EnterpriseConfigurationParams,
      response: { 200: Configuration, ...denied, ...invalid },
    },
  }, async (request, reply) => {
    const scope = await service.enterpriseScope(request.principal, request.params.enterprise);
    const row = await service.visibleConfiguration(scope, request.params.configuration_id);
    lastModified(reply, row.updated_at);
    return configurationBody(urls, scope, row);
  });

  app.patch('/enterprises/:enterprise/code-security/configurations/:configuration_id', {
    config: { access: enterpriseWrite },
    schema: {
      summary: 'Update a custom code security configuration for an enterprise',
      tags,
      security,
      params: EnterpriseConfigurationParams,
      body: EnterpriseUpdateBody,
      response: { 200: Configuration, ...denied, 409: ErrorBody, ...invalid },
    },
  }, async (request) => {
    const scope = await service.enterpriseScope(request.principal, request.params.enterprise);
    const { row } = await service.update(scope, request.params.configuration_id, request.body);
    return configurationBody(urls, scope, row);
  });

  app.delete('/enterprises/:enterprise/code-security/configurations/:configuration_id', {
    config: { access: enterpriseWrite },
    schema: {
      summary: 'Delete a code security configuration for an enterprise',
      tags,
      security,
      params: EnterpriseConfigurationParams,
      response: { 204: Type.Null(), ...denied, 409: ErrorBody, ...invalid },
    },
  }, async (request, reply) => {
    const scope = await service.enterpriseScope(request.principal, request.params.enterprise);
    await service.delete(scope, request.params.configuration_id);
    return reply.code(204).send(null);
  });

  app.post('/enterprises/:enterprise/code-security/configurations/:configuration_id/attach', {
    config: { access: enterpriseWrite },
    schema: {
      summary: 'Attach an enterprise configuration to repositories',
      tags,
      security,
      params: EnterpriseConfigurationParams,
      body: Type.Object({
        scope: Type.Enum(['all', 'all_without_configurations'], { description: 'The repositories to attach the configuration to' }),
      }, { additionalProperties: false }),
      response: { 202: Accepted, ...denied, 409: ErrorBody, ...invalid },
    },
  }, async (request, reply) => {
    const scope = await service.enterpriseScope(request.principal, request.params.enterprise);
    await service.attach(scope, request.params.configuration_id, request.body);
    return reply.code(202).send({});
  });

  app.put('/enterprises/:enterprise/code-security/configurations/:configuration_id/defaults', {
    config: { access: enterpriseWrite },
    schema: {
      summary: 'Set a code security configuration as a default for an enterprise',
      tags,
      security,
      params: EnterpriseConfigurationParams,
      body: DefaultBody,
      response: { 200: SetDefaultAnswer, ...denied, ...invalid },
    },
  }, async (request) => {
    const scope = await service.enterpriseScope(request.principal, request.params.enterprise);
    const result = await service.setDefault(scope, request.params.configuration_id, request.body.default_for_new_repos);
    return { default_for_new_repos: result.default_for_new_repos, configuration: configurationBody(urls, scope, result.configuration) };
  });

  app.get('/enterprises/:enterprise/code-security/configurations/:configuration_id/repositories', {
    config: { access: enterpriseRead },
    schema: {
      summary: 'Get repositories associated with an enterprise code security configuration',
      tags,
      security,
      params: EnterpriseConfigurationParams,
      querystring: RepositoriesQuery,
      response: { 200: Type.Array(RepositoryRecord), ...denied, ...invalid },
    },
  }, async (request, reply) => {
    const scope = await service.enterpriseScope(request.principal, request.params.enterprise);
    return repositoryPage(request, reply, await service.repositories(scope, request.params.configuration_id, request.query));
  });

  // --- Organization ------------------------------------------------------------------------------

  app.get('/orgs/:org/code-security/configurations', {
    config: { access: organizationRead },
    schema: {
      summary: 'Get code security configurations for an organization',
      tags,
      security,
      params: OrgParams,
      querystring: OrgListQuery,
      response: { 200: Type.Array(Configuration), ...denied, ...invalid },
    },
  }, async (request, reply) => {
    const scope = await service.organizationScope(request.principal, request.params.org);
    return configurationPage(request, reply, scope, await service.list(scope, request.query));
  });

  app.post('/orgs/:org/code-security/configurations', {
    config: { access: organizationWrite },
    schema: {
      summary: 'Create a code security configuration',
      tags,
      security,
      params: OrgParams,
      body: OrganizationCreateBody,
      response: { 201: Configuration, ...denied, ...invalid },
    },
  }, async (request, reply) => {
    const scope = await service.organizationScope(request.principal, request.params.org);
    return reply.code(201).send(configurationBody(urls, scope, await service.create(scope, request.body)));
  });

  app.get('/orgs/:org/code-security/configurations/defaults', {
    config: { access: organizationRead },
    schema: {
      summary: 'Get default code security configurations',
      tags,
      security,
      params: OrgParams,
      response: { 200: Type.Array(DefaultRecord), ...denied },
    },
  }, async (request) => {
    const scope = await service.organizationScope(request.principal, request.params.org);
    return (await service.defaults(scope)).map((record) => ({ ...record, configuration: configurationBody(urls, scope, record.configuration) }));
  });

  app.delete('/orgs/:org/code-security/configurations/detach', {
    config: { access: organizationWrite },
    schema: {
      summary: 'Detach configurations from repositories',
      tags,
      security,
      params: OrgParams,
      body: Type.Object({
        selected_repository_ids: Type.Array(RowId(), { minItems: 1, maxItems: 250, description: 'Ids of the repositories to detach (1 to 250)' }),
      }, { additionalProperties: false }),
      response: { 204: Type.Null(), ...denied, ...invalid },
    },
  }, async (request, reply) => {
    const scope = await service.organizationScope(request.principal, request.params.org);
    await service.detach(scope, request.body.selected_repository_ids);
    return reply.code(204).send(null);
  });

  app.get('/orgs/:org/code-security/configurations/:configuration_id', {
    config: { access: organizationRead },
    schema: {
      summary: 'Get a code security configuration',
      tags,
      security,
      params: OrgConfigurationParams,
      response: { 200: Configuration, ...denied, ...invalid },
    },
  }, async (request, reply) => {
    const scope = await service.organizationScope(request.principal, request.params.org);
    const row = await service.visibleConfiguration(scope, request.params.configuration_id);
    lastModified(reply, row.updated_at);
    return configurationBody(urls, scope, row);
  });

  app.patch('/orgs/:org/code-security/configurations/:configuration_id', {
    config: { access: organizationWrite },
    schema: {
      summary: 'Update a code security configuration',
      tags,
      security,
      params: OrgConfigurationParams,
      body: OrganizationUpdateBody,
      response: { 200: Configuration, 204: Type.Null(), 400: ErrorBody, ...denied, 409: ErrorBody, ...invalid },
    },
  }, async (request, reply) => {
    const scope = await service.organizationScope(request.principal, request.params.org);
    const { row, changed } = await service.update(scope, request.params.configuration_id, request.body);
    if (!changed) return reply.code(204).send(null);
    return configurationBody(urls, scope, row);
  });

  app.delete('/orgs/:org/code-security/configurations/:configuration_id', {
    config: { access: organizationWrite },
    schema: {
      summary: 'Delete a code security configuration',
      tags,
      security,
      params: OrgConfigurationParams,
      response: { 204: Type.Null(), 400: ErrorBody, ...denied, 409: ErrorBody, ...invalid },
    },
  }, async (request, reply) => {
    const scope = await service.organizationScope(request.principal, request.params.org);
    await service.delete(scope, request.params.configuration_id);
    return reply.code(204).send(null);
  });

  app.post('/orgs/:org/code-security/configurations/:configuration_id/attach', {
    config: { access: organizationWrite },
    schema: {
      summary: 'Attach a configuration to repositories',
      tags,
      security,
      params: OrgConfigurationParams,
      body: Type.Object({
        scope: Type.Enum(['all', 'all_without_configurations', 'public', 'private_or_internal', 'selected'], { description: 'The repositories to attach the configuration to' }),
        selected_repository_ids: Type.Optional(Type.Array(Type.Integer(), { maxItems: 1000, description: 'Ids of the repositories; only with the scope selected' })),
      }, { additionalProperties: false }),
      response: { 202: Accepted, ...denied, ...invalid },
    },
  }, async (request, reply) => {
    const scope = await service.organizationScope(request.principal, request.params.org);
    await service.attach(scope, request.params.configuration_id, request.body);
    return reply.code(202).send({});
  });

  app.put('/orgs/:org/code-security/configurations/:configuration_id/defaults', {
    config: { access: organizationWrite },
    schema: {
      summary: 'Set a code security configuration as a default for an organization',
      tags,
      security,
      params: OrgConfigurationParams,
      body: DefaultBody,
      response: { 200: SetDefaultAnswer, ...denied, ...invalid },
    },
  }, async (request) => {
    const scope = await service.organizationScope(request.principal, request.params.org);
    const result = await service.setDefault(scope, request.params.configuration_id, request.body.default_for_new_repos);
    return { default_for_new_repos: result.default_for_new_repos, configuration: configurationBody(urls, scope, result.configuration) };
  });

  app.get('/orgs/:org/code-security/configurations/:configuration_id/repositories', {
    config: { access: organizationRead },
    schema: {
      summary: 'Get repositories associated with a code security configuration',
      tags,
      security,
      params: OrgConfigurationParams,
      querystring: RepositoriesQuery,
      response: { 200: Type.Array(RepositoryRecord), ...denied, ...invalid },
    },
  }, async (request, reply) => {
    const scope = await service.organizationScope(request.principal, request.params.org);
    return repositoryPage(request, reply, await service.repositories(scope, request.params.configuration_id, request.query));
  });

  // --- Repository --------------------------------------------------------------------------------

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
    return {
      status: found.attachment.status as (typeof AttachmentStatus.enum)[number],
      configuration: configurationBody(urls, found.scope, found.configuration),
    };
  });
}
