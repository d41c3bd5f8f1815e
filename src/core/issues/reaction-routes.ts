// Reactions to issues (and pull requests) and to issue comments (who may: ./activity-service.ts).
// The platform sends no webhook event and no notification for them.
import { Type } from 'typebox';
import type { Api, Context } from '../../platform/context.ts';
import { denied, repositoryRead, RepositoryParams } from '../repositories/routes.ts';
import { PageQuery, sendPage } from '../../platform/pagination.ts';
import { ValidationErrorBody } from '../../platform/schemas.ts';
import { Reaction, ReactionContent } from './representations.ts';
import { ISSUE_WRITE, IssueWriteService, type ReactionTarget } from './activity-service.ts';
import { ISSUE_READ } from './service.ts';
import { ALL_TOKENS, type AccessRule } from '../access/index.ts';
import { IssueParams } from './routes.ts';

const security = [{ token: [] }];
const tags = ['reactions'];
/** As a comment: any token kind, `public_repo` (`repo` on a private repository), `issues` write (or `pull_requests` on a pull request). */
const reactionWrite: AccessRule = { credentials: ALL_TOKENS, scopes: ['repo', 'public_repo'], permissions: ISSUE_WRITE };
const written = { ...denied, 422: ValidationErrorBody };

const CommentParams = Type.Object({ ...RepositoryParams.properties, comment_id: Type.String({ description: 'The unique identifier of the comment' }) });
const ReactionId = Type.String({ description: 'The unique identifier of the reaction' });
const IssueReactionParams = Type.Object({ ...IssueParams.properties, reaction_id: ReactionId });
const CommentReactionParams = Type.Object({ ...CommentParams.properties, reaction_id: ReactionId });
const ListQuery = Type.Object({
  content: Type.Optional(ReactionContent),
  ...PageQuery,
});
const ReactionBody = Type.Object({ content: ReactionContent });

export function reactionRoutes(app: Api, ctx: Context): void {
  const service = new IssueWriteService(ctx);
  const subjects: { path: string; params: typeof IssueParams | typeof CommentParams; reactionParams: typeof IssueReactionParams | typeof CommentReactionParams; of: string; one: string }[] = [
    { path: '/repos/:owner/:repo/issues/:issue_number/reactions', params: IssueParams, reactionParams: IssueReactionParams, of: 'an issue', one: 'an issue reaction' },
    { path: '/repos/:owner/:repo/issues/comments/:comment_id/reactions', params: CommentParams, reactionParams: CommentReactionParams, of: 'an issue comment', one: 'an issue comment reaction' },
  ];
  const targetOf = (params: { issue_number?: string; comment_id?: string }): ReactionTarget =>
    (params.issue_number !== undefined ? { issue: params.issue_number } : { comment: params.comment_id! });

  for (const { path, params, reactionParams, of, one } of subjects) {
    app.get(path, {
      config: { access: repositoryRead(ISSUE_READ) },
      schema: { summary: `List reactions for ${of}`, tags, security, params, querystring: ListQuery, response: { 200: Type.Array(Reaction), ...denied, 422: ValidationErrorBody } },
    }, async (request, reply) => sendPage(request, reply, ctx.urls.api, (page) =>
      service.reactions(request.principal, request.params.owner, request.params.repo, targetOf(request.params), request.query.content, page)));

    app.post(path, {
      config: { access: reactionWrite, createsContent: true },
      schema: { summary: `Create reaction for ${of}`, tags, security, params, body: ReactionBody, response: { 200: Reaction, 201: Reaction, ...written } },
    }, async (request, reply) => {
      const { created, reaction } = await service.react(request.principal, request.params.owner, request.params.repo, targetOf(request.params), request.body.content);
      return reply.code(created ? 201 : 200).send(reaction);
    });

    app.delete(`${path}/:reaction_id`, {
      config: { access: reactionWrite },
      schema: { summary: `Delete ${one}`, tags, security, params: reactionParams, response: { 204: Type.Null(), ...denied } },
    }, async (request, reply) => {
      await service.unreact(request.principal, request.params.owner, request.params.repo, targetOf(request.params), request.params.reaction_id);
      return reply.code(204).send(null);
    });
  }
}
