// The writes a client makes on issues and their comments (who may: ./activity-service.ts): open,
// change, assign, lock and unlock; comment, edit, delete. Each answers as the reads show the issue or the comment.
import { Readable } from 'node:stream';
import { Type } from 'typebox';
import type { Api, Context } from '../../platform/context.ts';
import { denied, RepositoryParams } from '../repositories/routes.ts';
import { ValidationErrorBody } from '../../platform/schemas.ts';
import { Issue, IssueComment } from './representations.ts';
import { ISSUE_WRITE, IssueWriteService } from './activity-service.ts';
import { ALL_TOKENS, type AccessRule } from '../access/index.ts';
import { MAX_ASSIGNEES } from './writes.ts';
import { IssueParams } from './routes.ts';
import { LabelNames } from './label-routes.ts';

const security = [{ token: [] }];

/**
 * A write on an issue or a comment: any token kind; classic and OAuth tokens need `public_repo` on a
 * public repository, `repo` on a private one; fine-grained credentials `issues` or `pull_requests`
 * write, narrowed by the issue's kind in the service.
 */
const issueWrite: AccessRule = { credentials: ALL_TOKENS, scopes: ['repo', 'public_repo'], permissions: ISSUE_WRITE };

/** A comment's body, as the platform bounds it (65,536 characters). */
const CommentBody = Type.Object({ body: Type.String({ minLength: 1, maxLength: 65536, description: 'The contents of the comment' }) });

const Title = Type.Union([Type.String({ minLength: 1, maxLength: 256 }), Type.Integer()], { description: 'The title of the issue' });
const IssueText = Type.Union([Type.String({ maxLength: 65536 }), Type.Null()], { description: 'The contents of the issue' });
const Assignees = Type.Array(Type.String({ minLength: 1 }), { maxItems: MAX_ASSIGNEES, description: 'Logins of the users to assign (who has write access)' });
const Milestone = Type.Union([Type.String(), Type.Integer(), Type.Null()], { description: 'codehost keeps no milestones: a milestone is refused (422), null is none' });

const OpenBody = Type.Object({
  title: Title,
  body: Type.Optional(IssueText),
  assignees: Type.Optional(Assignees),
  labels: Type.Optional(LabelNames),
  milestone: Type.Optional(Milestone),
  type: Type.Optional(Type.Union([Type.String({ minLength: 1 }), Type.Null()], { description: 'The name of one of the organization\'s issue types' })),
});

const ChangeBody = Type.Object({
  title: Type.Optional(Title),
  body: Type.Optional(IssueText),
  state: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('closed')])),
  state_reason: Type.Optional(Type.Union([Type.Literal('completed'), Type.Literal('not_planned'), Type.Literal('reopened'), Type.Null()])),
  assignees: Type.Optional(Assignees),
  labels: Type.Optional(LabelNames),
  milestone: Type.Optional(Milestone),
});

const AssigneesBody = Type.Object({ assignees: Type.Optional(Assignees) });

const written = { ...denied, 422: ValidationErrorBody };

export function issueWriteRoutes(app: Api, ctx: Context): void {
  const service = new IssueWriteService(ctx);
  const RepositoryOnly = Type.Object(RepositoryParams.properties);

  app.post('/repos/:owner/:repo/issues', {
    config: { access: issueWrite, createsContent: true },
    schema: { summary: 'Create an issue', tags: ['issues'], security, params: RepositoryOnly, body: OpenBody, response: { 201: Issue, ...written } },
  }, async (request, reply) => {
    const { title, ...rest } = request.body;
    return reply.code(201).send(await service.openIssue(request.principal, request.params.owner, request.params.repo, { ...rest, title: String(title) }));
  });

  app.patch('/repos/:owner/:repo/issues/:issue_number', {
    config: { access: issueWrite },
    schema: { summary: 'Update an issue (or a pull request in its issue form)', tags: ['issues'], security, params: IssueParams, body: ChangeBody, response: { 200: Issue, ...written } },
  }, async (request) => {
    const { owner, repo, issue_number } = request.params;
    const { title, ...rest } = request.body;
    return service.changeIssue(request.principal, owner, repo, issue_number, { ...rest, ...(title !== undefined ? { title: String(title) } : {}) });
  });

  app.post('/repos/:owner/:repo/issues/:issue_number/assignees', {
    config: { access: issueWrite },
    schema: { summary: 'Add assignees to an issue', tags: ['issues'], security, params: IssueParams, body: AssigneesBody, response: { 201: Issue, ...written } },
  }, async (request, reply) => {
    const { owner, repo, issue_number } = request.params;
    return reply.code(201).send(await service.assign(request.principal, owner, repo, issue_number, 'add', request.body.assignees ?? []));
  });

  app.delete('/repos/:owner/:repo/issues/:issue_number/assignees', {
    config: { access: issueWrite },
    schema: { summary: 'Remove assignees from an issue', tags: ['issues'], security, params: IssueParams, body: AssigneesBody, response: { 200: Issue, ...written } },
  }, async (request) => {
    const { owner, repo, issue_number } = request.params;
    return service.assign(request.principal, owner, repo, issue_number, 'remove', request.body.assignees ?? []);
  });

  app.get('/repos/:owner/:repo/assignees/:assignee', {
    config: { access: { credentials: ALL_TOKENS, anonymous: true, privateOnly: true, scopes: ['repo'], permissions: [{ metadata: 'read' }] } },
    schema: {
      summary: 'Check if a user can be assigned',
      tags: ['issues'],
      security,
      params: Type.Object({ ...RepositoryParams.properties, assignee: Type.String({ description: 'The login of the user' }) }),
      response: { 204: Type.Null(), ...denied },
    },
  }, async (request, reply) => {
    const { owner, repo, assignee } = request.params;
    await service.requireAssignable(request.principal, owner, repo, assignee);
    // An empty stream: neither the GET nor its HEAD (whose step gives a body it knows a length) says a
    // Content-Length, as a 204 has none.
    return reply.code(204).send(Readable.from([]) as unknown as null);
  });

  const LockBody = Type.Object({
    lock_reason: Type.Optional(Type.Union([Type.Literal('off-topic'), Type.Literal('too heated'), Type.Literal('resolved'), Type.Literal('spam')], { description: 'Why the conversation is locked' })),
  });
  app.put('/repos/:owner/:repo/issues/:issue_number/lock', {
    config: { access: issueWrite },
    schema: { summary: 'Lock an issue', tags: ['issues'], security, params: IssueParams, body: LockBody, response: { 204: Type.Null(), ...written } },
  }, async (request, reply) => {
    const { owner, repo, issue_number } = request.params;
    await service.setLocked(request.principal, owner, repo, issue_number, { reason: request.body?.lock_reason ?? null });
    return reply.code(204).send(null);
  });
  app.delete('/repos/:owner/:repo/issues/:issue_number/lock', {
    config: { access: issueWrite },
    schema: { summary: 'Unlock an issue', tags: ['issues'], security, params: IssueParams, response: { 204: Type.Null(), ...written } },
  }, async (request, reply) => {
    const { owner, repo, issue_number } = request.params;
    await service.setLocked(request.principal, owner, repo, issue_number, null);
    return reply.code(204).send(null);
  });

  commentWriteRoutes(app, service);
}

/** Creating, editing and deleting comments. */
function commentWriteRoutes(app: Api, service: IssueWriteService): void {
  app.post('/repos/:owner/:repo/issues/:issue_number/comments', {
    config: { access: issueWrite, createsContent: true },
    schema: {
      summary: 'Create an issue comment (on an issue or a pull request)',
      tags: ['issues'],
      security,
      params: IssueParams,
      body: CommentBody,
      response: { 201: IssueComment, ...written },
    },
  }, async (request, reply) => {
    const { owner, repo, issue_number } = request.params;
    return reply.code(201).send(await service.createComment(request.principal, owner, repo, issue_number, request.body.body));
  });

  const CommentParams = Type.Object({ ...RepositoryParams.properties, comment_id: Type.String({ description: 'The unique identifier of the comment' }) });

  app.patch('/repos/:owner/:repo/issues/comments/:comment_id', {
    config: { access: issueWrite },
    schema: {
      summary: 'Update an issue comment',
      tags: ['issues'],
      security,
      params: CommentParams,
      body: CommentBody,
      response: { 200: IssueComment, ...written },
    },
  }, async (request) => {
    const { owner, repo, comment_id } = request.params;
    return service.editComment(request.principal, owner, repo, comment_id, request.body.body);
  });

  app.delete('/repos/:owner/:repo/issues/comments/:comment_id', {
    config: { access: issueWrite },
    schema: {
      summary: 'Delete an issue comment',
      tags: ['issues'],
      security,
      params: CommentParams,
      response: { 204: Type.Null(), ...written },
    },
  }, async (request, reply) => {
    const { owner, repo, comment_id } = request.params;
    await service.deleteComment(request.principal, owner, repo, comment_id);
    return reply.code(204).send(null);
  });
}
