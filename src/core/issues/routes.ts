// The public reads of issues, pull requests and issue comments, each inside its repository; the
// writes are ./write-routes.ts.
import { Type } from 'typebox';
import type { Api, Context } from '../../platform/context.ts';
import type { FastifyReply } from 'fastify';
import { denied, repositoryRead, RepositoryParams } from '../repositories/routes.ts';
import { PageQuery, sendPage } from '../../platform/pagination.ts';
import { ValidationErrorBody } from '../../platform/schemas.ts';
import { Issue, IssueComment, IssueEvent, PullRequest } from './representations.ts';
import { ISSUE_READ, IssueService, PULL_READ } from './service.ts';

const security = [{ token: [] }];

export const IssueParams = Type.Object({ ...RepositoryParams.properties, issue_number: Type.String({ description: 'The number that identifies the issue' }) });

/** Issues, pull requests and comments change their `updated_at` with every change they show. */
function lastModified<T extends { updated_at: string }>(reply: FastifyReply, body: T): T {
  reply.header('last-modified', new Date(body.updated_at).toUTCString());
  return body;
}

export function issueRoutes(app: Api, ctx: Context): void {
  const service = new IssueService(ctx);

  app.get('/repos/:owner/:repo/issues/:issue_number', {
    config: { access: repositoryRead(ISSUE_READ) },
    schema: {
      summary: 'Get an issue (a pull request shows as an issue with `pull_request`)',
      tags: ['issues'],
      security,
      params: Type.Object({ ...RepositoryParams.properties, issue_number: Type.String({ description: 'The number that identifies the issue' }) }),
      response: { 200: Issue, ...denied },
    },
  }, async (request, reply) => {
    const { owner, repo, issue_number } = request.params;
    return lastModified(reply, await service.issue(request.principal, owner, repo, issue_number));
  });

  app.get('/repos/:owner/:repo/issues/comments/:comment_id', {
    config: { access: repositoryRead(ISSUE_READ) },
    schema: {
      summary: 'Get an issue comment',
      tags: ['issues'],
      security,
      params: Type.Object({ ...RepositoryParams.properties, comment_id: Type.String({ description: 'The unique identifier of the comment' }) }),
      response: { 200: IssueComment, ...denied },
    },
  }, async (request, reply) => {
    const { owner, repo, comment_id } = request.params;
    return lastModified(reply, await service.comment(request.principal, owner, repo, comment_id));
  });

  app.get('/repos/:owner/:repo/pulls/:pull_number', {
    config: { access: repositoryRead(PULL_READ) },
    schema: {
      summary: 'Get a pull request',
      tags: ['pulls'],
      security,
      params: Type.Object({ ...RepositoryParams.properties, pull_number: Type.String({ description: 'The number that identifies the pull request' }) }),
      response: { 200: PullRequest, ...denied },
    },
  }, async (request, reply) => {
    const { owner, repo, pull_number } = request.params;
    return lastModified(reply, await service.pull(request.principal, owner, repo, pull_number));
  });

  app.get('/repos/:owner/:repo/issues/:issue_number/comments', {
    config: { access: repositoryRead(ISSUE_READ) },
    schema: {
      summary: 'List issue comments (of an issue or a pull request), oldest first',
      tags: ['issues'],
      security,
      params: IssueParams,
      querystring: Type.Object({
        since: Type.Optional(Type.String({ format: 'date-time', description: 'Only comments updated at or after this time (ISO 8601)' })),
        ...PageQuery,
      }),
      response: { 200: Type.Array(IssueComment), ...denied, 422: ValidationErrorBody },
    },
  }, async (request, reply) => {
    const { owner, repo, issue_number } = request.params;
    return sendPage(request, reply, ctx.urls.api, (page) => service.comments(request.principal, owner, repo, issue_number, request.query.since, page));
  });

  app.get('/repos/:owner/:repo/issues/:issue_number/events', {
    config: { access: repositoryRead(ISSUE_READ) },
    schema: {
      summary: 'List issue events (of an issue or a pull request), oldest first',
      tags: ['issues'],
      security,
      params: IssueParams,
      querystring: Type.Object(PageQuery),
      response: { 200: Type.Array(IssueEvent), ...denied, 422: ValidationErrorBody },
    },
  }, async (request, reply) => {
    const { owner, repo, issue_number } = request.params;
    return sendPage(request, reply, ctx.urls.api, (page) => service.events(request.principal, owner, repo, issue_number, page));
  });

  app.get('/repos/:owner/:repo/issues/events/:event_id', {
    config: { access: repositoryRead(ISSUE_READ) },
    schema: {
      summary: 'Get an issue event',
      tags: ['issues'],
      security,
      params: Type.Object({ ...RepositoryParams.properties, event_id: Type.String({ description: 'The unique identifier of the event' }) }),
      response: { 200: IssueEvent, ...denied },
    },
  }, async (request) => {
    const { owner, repo, event_id } = request.params;
    return service.event(request.principal, owner, repo, event_id);
  });

}
