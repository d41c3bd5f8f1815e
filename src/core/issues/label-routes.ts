// A repository's labels and an issue's (who may: ./activity-service.ts). Names in paths are the
// label's name, URL-encoded as its `url` gives it.
import { Type } from 'typebox';
import type { Api, Context } from '../../platform/context.ts';
import { denied, repositoryRead, RepositoryParams } from '../repositories/routes.ts';
import { PageQuery, sendPage } from '../../platform/pagination.ts';
import { ValidationErrorBody } from '../../platform/schemas.ts';
import { Label } from '../repositories/representations.ts';
import { ISSUE_WRITE, IssueWriteService } from './activity-service.ts';
import { ISSUE_READ } from './service.ts';
import { ALL_TOKENS, type AccessRule } from '../access/index.ts';
import { IssueParams } from './routes.ts';
import { MAX_LABELS } from './writes.ts';

const security = [{ token: [] }];
const tags = ['issues'];
const labelWrite: AccessRule = { credentials: ALL_TOKENS, scopes: ['repo', 'public_repo'], permissions: ISSUE_WRITE };
const written = { ...denied, 422: ValidationErrorBody };

const Name = Type.String({ minLength: 1, maxLength: 50, description: 'The name of the label' });
const Color = Type.String({ pattern: '^#?[0-9a-fA-F]{6}$', description: 'The hexadecimal color code, without the leading #' });
const Description = Type.Union([Type.String({ maxLength: 100 }), Type.Null()], { description: 'A short description of the label' });
/** Names, or objects with a `name`, as the platform takes them; at most 100 on an issue. */
export const LabelNames = Type.Array(Type.Union([Name, Type.Object({ name: Name })]), { maxItems: MAX_LABELS });
/** `{labels: [...]}` (the platform also takes the bare array, which codehost does not: the form clients send). */
const IssueLabelsBody = Type.Object({ labels: LabelNames });

const LabelParams = Type.Object({ ...RepositoryParams.properties, name: Type.String({ description: 'The name of the label' }) });
const IssueLabelParams = Type.Object({ ...IssueParams.properties, name: Type.String({ description: 'The name of the label' }) });

const names = (body: { labels: (string | { name: string })[] }) => body.labels.map((label) => (typeof label === 'string' ? label : label.name));

export function labelRoutes(app: Api, ctx: Context): void {
  const service = new IssueWriteService(ctx);
  const repositoryOnly = Type.Object(RepositoryParams.properties);

  app.get('/repos/:owner/:repo/labels', {
    config: { access: repositoryRead(ISSUE_READ) },
    schema: { summary: 'List labels for a repository', tags, security, params: repositoryOnly, querystring: Type.Object(PageQuery), response: { 200: Type.Array(Label), ...denied, 422: ValidationErrorBody } },
  }, async (request, reply) => sendPage(request, reply, ctx.urls.api, (page) => service.labels(request.principal, request.params.owner, request.params.repo, page)));

  app.post('/repos/:owner/:repo/labels', {
    config: { access: labelWrite, createsContent: true },
    schema: {
      summary: 'Create a label', tags, security, params: repositoryOnly,
      body: Type.Object({ name: Name, color: Type.Optional(Color), description: Type.Optional(Description) }),
      response: { 201: Label, ...written },
    },
  }, async (request, reply) => reply.code(201).send(await service.createLabel(request.principal, request.params.owner, request.params.repo, request.body)));

  app.get('/repos/:owner/:repo/labels/:name', {
    config: { access: repositoryRead(ISSUE_READ) },
    schema: { summary: 'Get a label', tags, security, params: LabelParams, response: { 200: Label, ...denied } },
  }, async (request) => service.label(request.principal, request.params.owner, request.params.repo, request.params.name));

  app.patch('/repos/:owner/:repo/labels/:name', {
    config: { access: labelWrite },
    schema: {
      summary: 'Update a label', tags, security, params: LabelParams,
      body: Type.Object({ new_name: Type.Optional(Name), color: Type.Optional(Color), description: Type.Optional(Description) }),
      response: { 200: Label, ...written },
    },
  }, async (request) => service.updateLabel(request.principal, request.params.owner, request.params.repo, request.params.name, request.body));

  app.delete('/repos/:owner/:repo/labels/:name', {
    config: { access: labelWrite },
    schema: { summary: 'Delete a label', tags, security, params: LabelParams, response: { 204: Type.Null(), ...written } },
  }, async (request, reply) => {
    await service.deleteLabel(request.principal, request.params.owner, request.params.repo, request.params.name);
    return reply.code(204).send(null);
  });

  app.get('/repos/:owner/:repo/issues/:issue_number/labels', {
    config: { access: repositoryRead(ISSUE_READ) },
    schema: { summary: 'List labels for an issue', tags, security, params: IssueParams, response: { 200: Type.Array(Label), ...denied } },
  }, async (request) => service.issueLabels(request.principal, request.params.owner, request.params.repo, request.params.issue_number));

  app.post('/repos/:owner/:repo/issues/:issue_number/labels', {
    config: { access: labelWrite },
    schema: { summary: 'Add labels to an issue', tags, security, params: IssueParams, body: IssueLabelsBody, response: { 200: Type.Array(Label), ...written } },
  }, async (request) => service.labelIssue(request.principal, request.params.owner, request.params.repo, request.params.issue_number, { labels_added: names(request.body) }));

  app.put('/repos/:owner/:repo/issues/:issue_number/labels', {
    config: { access: labelWrite },
    schema: { summary: 'Set labels for an issue', tags, security, params: IssueParams, body: IssueLabelsBody, response: { 200: Type.Array(Label), ...written } },
  }, async (request) => service.labelIssue(request.principal, request.params.owner, request.params.repo, request.params.issue_number, { labels: names(request.body) }));

  app.delete('/repos/:owner/:repo/issues/:issue_number/labels', {
    config: { access: labelWrite },
    schema: { summary: 'Remove all labels from an issue', tags, security, params: IssueParams, response: { 204: Type.Null(), ...written } },
  }, async (request, reply) => {
    await service.labelIssue(request.principal, request.params.owner, request.params.repo, request.params.issue_number, { labels: [] });
    return reply.code(204).send(null);
  });

  app.delete('/repos/:owner/:repo/issues/:issue_number/labels/:name', {
    config: { access: labelWrite },
    schema: { summary: 'Remove a label from an issue', tags, security, params: IssueLabelParams, response: { 200: Type.Array(Label), ...written } },
  }, async (request) => service.labelIssue(request.principal, request.params.owner, request.params.repo, request.params.issue_number, { labels_removed: [request.params.name] }));
}
