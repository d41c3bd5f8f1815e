// Issue types: a repository's types (public repositories answer without authentication), and the
// organization's create, list, update and delete.
import { Type } from 'typebox';
import { repositoryRead } from '../../core/repositories/routes.ts';
import type { Api, Context } from '../../platform/context.ts';
import { ErrorBody, RowId, SimpleValidationErrorBody } from '../../platform/schemas.ts';
import { IssueType } from './representations.ts';
import { IssueTypeInput, IssueTypeService } from './service.ts';
import { type AccessRule, ALL_TOKENS } from '../../core/access/index.ts';

const tags = ['issue-types'];
const security = [{ token: [] }];

const orgRead: AccessRule = { credentials: ALL_TOKENS, scopes: ['read:org'], permissions: [{ organization_issue_types: 'read' }] };
const orgWrite: AccessRule = { credentials: ALL_TOKENS, scopes: ['admin:org'], permissions: [{ organization_issue_types: 'write' }] };
/** The organization's writes answer the platform's simple validation body: `errors` is an array of strings. */
const orgWriteConfig = { access: orgWrite, errorStrings: true };

const OrgParams = Type.Object({ org: Type.String({ description: 'The organization name, not case sensitive' }) });
const TypeParams = Type.Object({ ...OrgParams.properties, issue_type_id: RowId('The id of the issue type') });
const denied = { 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };

export function issueTypeRoutes(app: Api, ctx: Context): void {
  const service = new IssueTypeService(ctx);

  app.get('/repos/:owner/:repo/issue-types', {
    config: { access: repositoryRead([{ metadata: 'read' }]) },
    schema: {
      summary: 'List issue types for a repository',
      tags,
      security,
      params: Type.Object({
        owner: Type.String({ description: 'The account owner of the repository, not case sensitive' }),
        repo: Type.String({ description: 'The name of the repository without the .git extension, not case sensitive' }),
      }),
      response: { 200: Type.Array(IssueType), ...denied },
    },
  }, async (request) => service.listForRepository(request.principal, request.params.owner, request.params.repo));

  app.get('/orgs/:org/issue-types', {
    config: { access: orgRead },
    schema: { summary: 'List issue types for an organization', tags, security, params: OrgParams, response: { 200: Type.Array(IssueType), ...denied } },
  }, async (request) => service.list(await service.organization(request.principal, request.params.org)));

  app.post('/orgs/:org/issue-types', {
    config: orgWriteConfig,
    schema: {
      summary: 'Create issue type for an organization',
      tags,
      security,
      params: OrgParams,
      body: IssueTypeInput,
      response: { 200: IssueType, 400: ErrorBody, ...denied, 422: SimpleValidationErrorBody },
    },
  }, async (request) => service.create(await service.organization(request.principal, request.params.org), request.body));

  app.put('/orgs/:org/issue-types/:issue_type_id', {
    config: orgWriteConfig,
    schema: {
      summary: 'Update issue type for an organization',
      tags,
      security,
      params: TypeParams,
      body: IssueTypeInput,
      response: { 200: IssueType, 400: ErrorBody, ...denied, 422: SimpleValidationErrorBody },
    },
  }, async (request) => service.update(await service.organization(request.principal, request.params.org), request.params.issue_type_id, request.body));

  app.delete('/orgs/:org/issue-types/:issue_type_id', {
    config: orgWriteConfig,
    schema: {
      summary: 'Delete issue type for an organization',
      tags,
      security,
      params: TypeParams,
      response: { 204: Type.Null(), ...denied, 422: SimpleValidationErrorBody },
    },
  }, async (request, reply) => {
    await service.delete(await service.organization(request.principal, request.params.org), request.params.issue_type_id);
    return reply.code(204).send(null);
  });
}

/** Operator surface: a repository's override of one of its organization's types. */
export function issueTypeAdminRoutes(app: Api, ctx: Context): void {
  const service = new IssueTypeService(ctx);
  app.put('/_admin/repos/:owner/:repo/issue-types/:name', {
    schema: {
      hide: true,
      tags: ['admin'],
      params: Type.Object({ owner: Type.String(), repo: Type.String(), name: Type.String() }),
      body: Type.Object({ is_enabled: Type.Boolean({ description: 'false: the repository disables the type' }) }),
    },
  }, async (request) => service.setRepositoryOverride(request.params.owner, request.params.repo, request.params.name, request.body.is_enabled));
}
