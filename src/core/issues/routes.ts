// The public reads of issues, pull requests and issue comments, each inside its repository; the
// writes are ./write-routes.ts.
import { Type } from 'typebox';
import type { Api, Context } from '../../platform/context.ts';
import type { FastifyReply } from 'fastify';
import { denied, repositoryRead, RepositoryParams } from '../repositories/routes.ts';
import { PageQuery, sendPage } from '../../platform/pagination.ts';
import { ValidationErrorBody } from '../../platform/schemas.ts';
import { Issue, IssueComment, IssueEvent, IssueWithRepository } from './representations.ts';
import { ISSUE_READ, IssueService } from './service.ts';
import { USER_TOKENS, type AccessRule, type UserPrincipal } from '../access/index.ts';

const security = [{ token: [] }];

export const IssueParams = Type.Object({ ...RepositoryParams.properties, issue_number: Type.String({ description: 'The number that identifies the issue' }) });

/** Issues, pull requests and comments change their `updated_at` with every change they show. */
export function lastModified<T extends { updated_at: string }>(reply: FastifyReply, body: T): T {
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

  listRoutes(app, ctx, service);
}

/** A repository's issues (pull requests included) and its comments, filtered, sorted and paged. */
function listRoutes(app: Api, ctx: Context, service: IssueService): void {
  const Direction = (description: string) => Type.Union([Type.Literal('asc'), Type.Literal('desc')], { description });
  const Since = Type.String({ format: 'date-time', description: 'Only those updated at or after this time (ISO 8601)' });
  const Login = (what: string) => Type.String({ minLength: 1, description: what });

  app.get('/repos/:owner/:repo/issues', {
    config: { access: repositoryRead(ISSUE_READ) },
    schema: {
      summary: 'List repository issues (pull requests included, as issues with `pull_request`)',
      tags: ['issues'],
      security,
      params: Type.Object(RepositoryParams.properties),
      querystring: Type.Object({
        milestone: Type.Optional(Type.String({ description: 'codehost keeps no milestones: `none` (or no filter) lists issues, anything else none' })),
        state: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('closed'), Type.Literal('all')], { description: 'Default: `open`' })),
        assignee: Type.Optional(Login('A login, `*` for any assignee, `none` for none')),
        type: Type.Optional(Login('An issue type\'s name, `*` for any type, `none` for none')),
        creator: Type.Optional(Login('The login of who opened it')),
        mentioned: Type.Optional(Login('The login of a user mentioned in it')),
        labels: Type.Optional(Type.String({ description: 'Comma-separated label names, all of which an issue has' })),
        sort: Type.Optional(Type.Union([Type.Literal('created'), Type.Literal('updated'), Type.Literal('comments')], { description: 'Default: `created`' })),
        direction: Type.Optional(Direction('Default: `desc`')),
        since: Type.Optional(Since),
        ...PageQuery,
      }),
      response: { 200: Type.Array(Issue), ...denied, 422: ValidationErrorBody },
    },
  }, async (request, reply) => {
    const { owner, repo } = request.params;
    return sendPage(request, reply, ctx.urls.api, (page) => service.issues(request.principal, owner, repo, request.query, page));
  });

  // The user's issues, and an organization's: a user's token (its reach into private repositories
  // as for every list; a fine-grained one `issues: read`).
  const userIssues: AccessRule = { credentials: USER_TOKENS, permissions: [{ issues: 'read' }] };
  const UserIssueQuery = Type.Object({
    filter: Type.Optional(Type.Union([
      Type.Literal('assigned'), Type.Literal('created'), Type.Literal('mentioned'), Type.Literal('subscribed'), Type.Literal('repos'), Type.Literal('all'),
    ], {
      description: 'Default: `assigned`; `subscribed`: assigned, created, mentioned or commented on; `repos` and `all`: every issue of those repositories',
    })),
    state: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('closed'), Type.Literal('all')], { description: 'Default: `open`' })),
    labels: Type.Optional(Type.String({ description: 'Comma-separated label names, all of which an issue has' })),
    sort: Type.Optional(Type.Union([Type.Literal('created'), Type.Literal('updated'), Type.Literal('comments')], { description: 'Default: `created`' })),
    direction: Type.Optional(Direction('Default: `desc`')),
    since: Type.Optional(Since),
    ...PageQuery,
  });
  for (const [path, summary, tags] of [
    ['/issues', 'List issues assigned to the authenticated user', ['issues']],
    ['/user/issues', 'List user account issues assigned to the authenticated user', ['issues']],
  ] as const) {
    app.get(path, {
      config: { access: userIssues },
      schema: { summary, tags: [...tags], security, querystring: UserIssueQuery, response: { 200: Type.Array(IssueWithRepository), ...denied, 422: ValidationErrorBody } },
    }, async (request, reply) => sendPage(request, reply, ctx.urls.api, (page) => service.userIssues(request.principal as UserPrincipal, undefined, request.query, page)));
  }
  app.get('/orgs/:org/issues', {
    config: { access: userIssues },
    schema: {
      summary: 'List organization issues assigned to the authenticated user', tags: ['issues'], security,
      params: Type.Object({ org: Type.String({ description: 'The organization name, not case sensitive' }) }),
      querystring: UserIssueQuery, response: { 200: Type.Array(IssueWithRepository), ...denied, 422: ValidationErrorBody },
    },
  }, async (request, reply) => sendPage(request, reply, ctx.urls.api, (page) => service.userIssues(request.principal as UserPrincipal, request.params.org, request.query, page)));

  app.get('/repos/:owner/:repo/issues/comments', {
    config: { access: repositoryRead(ISSUE_READ) },
    schema: {
      summary: 'List issue comments for a repository',
      tags: ['issues'],
      security,
      params: Type.Object(RepositoryParams.properties),
      querystring: Type.Object({
        sort: Type.Optional(Type.Union([Type.Literal('created'), Type.Literal('updated')], { description: 'Default: `created`' })),
        direction: Type.Optional(Direction('Default: `asc`')),
        since: Type.Optional(Since),
        ...PageQuery,
      }),
      response: { 200: Type.Array(IssueComment), ...denied, 422: ValidationErrorBody },
    },
  }, async (request, reply) => {
    const { owner, repo } = request.params;
    return sendPage(request, reply, ctx.urls.api, (page) => service.repositoryComments(request.principal, owner, repo, request.query, page));
  });
}
