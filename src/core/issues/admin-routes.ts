// The operator surface's activity rows (spec/admin-api.md): open an issue or pull request, comment,
// change state, assign, request reviews. Each answers as the public API shows the issue or comment.
import { Type } from 'typebox';
import type { Api, Context } from '../../platform/context.ts';
import { ErrorBody, ValidationErrorBody } from '../../platform/schemas.ts';
import { commentRepresentation, Issue, IssueComment, issueRepresentation } from './representations.ts';
import { IssueWrites } from './writes.ts';

const Logins = (description: string) => Type.Array(Type.String({ minLength: 1 }), { maxItems: 100, description });
const Title = Type.String({ minLength: 1, maxLength: 256 });
const Body = Type.String({ maxLength: 65536 });

export const IssueBody = Type.Object({
  author: Type.String({ minLength: 1 }),
  title: Title,
  body: Type.Optional(Body),
  pull_request: Type.Optional(Type.Boolean()),
  assignees: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: 10, description: 'logins' })),
  reviewers: Type.Optional(Logins('logins of requested reviewers (pull requests)')),
  team_reviewers: Type.Optional(Logins('slugs of requested teams of the organization (pull requests)')),
  type: Type.Optional(Type.String({ minLength: 1, description: 'issue type name' })),
});

export const CommentBody = Type.Object({
  author: Type.String({ minLength: 1 }),
  body: Type.String({ minLength: 1, maxLength: 65536 }),
});

export const IssueChangeBody = Type.Object({
  actor: Type.String({ minLength: 1 }),
  state: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('closed'), Type.Literal('merged')])),
  assignees: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: 10, description: 'the new assignees (replaces them)' })),
  reviewers: Type.Optional(Logins('the requested reviewers (replaces them)')),
  team_reviewers: Type.Optional(Logins('the requested teams (replaces them)')),
});

const RepositoryParams = Type.Object({ owner: Type.String(), repo: Type.String() });
const IssueParams = Type.Object({ owner: Type.String(), repo: Type.String(), number: Type.Integer({ minimum: 1 }) });
const errors = { 403: ErrorBody, 404: ErrorBody, 422: ValidationErrorBody };
const hidden = { hide: true, tags: ['admin'] } as const;

export function activityAdminRoutes(app: Api, ctx: Context): void {
  const service = new IssueWrites(ctx);
  const { urls } = ctx;

  app.post('/_admin/repos/:owner/:repo/issues', {
    schema: { ...hidden, summary: 'Open an issue or pull request', params: RepositoryParams, body: IssueBody, response: { 201: Issue, ...errors } },
  }, async (request, reply) => {
    const facts = await service.createIssue(request.params.owner, request.params.repo, request.body);
    return reply.code(201).send(issueRepresentation(urls, facts));
  });

  app.post('/_admin/repos/:owner/:repo/issues/:number/comments', {
    schema: { ...hidden, summary: 'Comment on an issue or pull request', params: IssueParams, body: CommentBody, response: { 201: IssueComment, ...errors } },
  }, async (request, reply) => {
    const facts = await service.createComment(request.params.owner, request.params.repo, request.params.number, request.body);
    return reply.code(201).send(commentRepresentation(urls, facts));
  });

  app.patch('/_admin/repos/:owner/:repo/issues/:number', {
    schema: { ...hidden, summary: 'Change state, assignees or requested reviewers', params: IssueParams, body: IssueChangeBody, response: { 200: Issue, ...errors } },
  }, async (request) => {
    const facts = await service.updateIssue(request.params.owner, request.params.repo, request.params.number, request.body);
    return issueRepresentation(urls, facts);
  });
}
