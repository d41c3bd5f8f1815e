// The pull request operations a client makes (who may: ./pull-service.ts): the repository's list, an
// update, requested reviewers, reviews. A pull request answers in its full form (as GET
// …/pulls/{pull_number}), list items included.
import { Type } from 'typebox';
import type { Api, Context } from '../../platform/context.ts';
import { denied, repositoryRead, RepositoryParams } from '../repositories/routes.ts';
import { PageQuery, sendPage } from '../../platform/pagination.ts';
import { ValidationErrorBody } from '../../platform/schemas.ts';
import { SimpleUser, Team } from '../accounts/representations.ts';
import { ALL_TOKENS, type AccessRule } from '../access/index.ts';
import { PullRequest } from './representations.ts';
import { lastModified } from './routes.ts';
import { PullRequestReview } from './review-representations.ts';
import { PULL_READ } from './service.ts';
import { PULL_WRITE, PullRequestService } from './pull-service.ts';

const security = [{ token: [] }];
const tags = ['pulls'];

/** A write on a pull request: any token kind; `public_repo` (a public repository) or `repo`; `pull_requests: write`. */
const pullWrite: AccessRule = { credentials: ALL_TOKENS, scopes: ['repo', 'public_repo'], permissions: PULL_WRITE };

const PullParams = Type.Object({ ...RepositoryParams.properties, pull_number: Type.String({ description: 'The number that identifies the pull request' }) });
const written = { ...denied, 422: ValidationErrorBody };

const ListQuery = Type.Object({
  state: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('closed'), Type.Literal('all')], { description: 'Default: `open`' })),
  head: Type.Optional(Type.String({ description: '`user:ref-name`: codehost\'s pull requests all have the default branch as head, so only it matches' })),
  base: Type.Optional(Type.String({ description: 'A branch name: codehost\'s pull requests all have the default branch as base, so only it matches' })),
  sort: Type.Optional(Type.Union([Type.Literal('created'), Type.Literal('updated'), Type.Literal('popularity'), Type.Literal('long-running')], {
    description: 'Default: `created`; `popularity` by comments, `long-running` by age',
  })),
  direction: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')], { description: 'Default: `desc` when sorting by `created`, `asc` otherwise' })),
  ...PageQuery,
});

const ChangeBody = Type.Object({
  title: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'The title of the pull request' })),
  body: Type.Optional(Type.Union([Type.String({ maxLength: 65536 }), Type.Null()], { description: 'The contents of the pull request' })),
  state: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('closed')])),
  base: Type.Optional(Type.String({ description: 'The base branch: codehost keeps one branch per pull request, so only the default branch (422 otherwise)' })),
  maintainer_can_modify: Type.Optional(Type.Boolean({ description: 'codehost keeps no forks: ignored' })),
});

const ReviewersBody = Type.Object({
  reviewers: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: 100, description: 'Logins of users' })),
  team_reviewers: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: 100, description: 'Slugs of the organization\'s teams' })),
});

const ReviewBody = Type.Object({
  commit_id: Type.Optional(Type.String({ description: 'The head commit: codehost keeps one commit per pull request' })),
  body: Type.Optional(Type.String({ maxLength: 65536, description: 'The review\'s text; REQUEST_CHANGES and COMMENT need one' })),
  event: Type.Optional(Type.Union([Type.Literal('APPROVE'), Type.Literal('REQUEST_CHANGES'), Type.Literal('COMMENT')], { description: 'None: a PENDING review' })),
  comments: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }), { description: 'Line comments: codehost keeps none (422)' })),
});

export function pullRoutes(app: Api, ctx: Context): void {
  const service = new PullRequestService(ctx);

  app.get('/repos/:owner/:repo/pulls', {
    config: { access: repositoryRead(PULL_READ) },
    schema: { summary: 'List pull requests', tags, security, params: Type.Object(RepositoryParams.properties), querystring: ListQuery, response: { 200: Type.Array(PullRequest), ...denied, 422: ValidationErrorBody } },
  }, async (request, reply) => {
    const { owner, repo } = request.params;
    return sendPage(request, reply, ctx.urls.api, (page) => service.pulls(request.principal, owner, repo, request.query, page));
  });

  app.get('/repos/:owner/:repo/pulls/:pull_number', {
    config: { access: repositoryRead(PULL_READ) },
    schema: { summary: 'Get a pull request', tags, security, params: PullParams, response: { 200: PullRequest, ...denied } },
  }, async (request, reply) => {
    const { owner, repo, pull_number } = request.params;
    return lastModified(reply, await service.pull(request.principal, owner, repo, pull_number));
  });

  app.patch('/repos/:owner/:repo/pulls/:pull_number', {
    config: { access: pullWrite },
    schema: { summary: 'Update a pull request', tags, security, params: PullParams, body: ChangeBody, response: { 200: PullRequest, ...written } },
  }, async (request) => {
    const { owner, repo, pull_number } = request.params;
    const { maintainer_can_modify: _ignored, ...change } = request.body;
    return service.changePull(request.principal, owner, repo, pull_number, change);
  });

  app.post('/repos/:owner/:repo/pulls/:pull_number/requested_reviewers', {
    config: { access: pullWrite },
    schema: { summary: 'Request reviewers for a pull request', tags, security, params: PullParams, body: ReviewersBody, response: { 201: PullRequest, ...written } },
  }, async (request, reply) => {
    const { owner, repo, pull_number } = request.params;
    return reply.code(201).send(await service.changeReviewers(request.principal, owner, repo, pull_number, 'add', request.body));
  });

  app.delete('/repos/:owner/:repo/pulls/:pull_number/requested_reviewers', {
    config: { access: pullWrite },
    schema: { summary: 'Remove requested reviewers from a pull request', tags, security, params: PullParams, body: ReviewersBody, response: { 200: PullRequest, ...written } },
  }, async (request) => {
    const { owner, repo, pull_number } = request.params;
    return service.changeReviewers(request.principal, owner, repo, pull_number, 'remove', request.body ?? {});
  });

  app.get('/repos/:owner/:repo/pulls/:pull_number/requested_reviewers', {
    config: { access: repositoryRead(PULL_READ) },
    schema: {
      summary: 'Get all requested reviewers for a pull request', tags, security, params: PullParams,
      response: { 200: Type.Object({ users: Type.Array(SimpleUser), teams: Type.Array(Team) }), ...denied },
    },
  }, async (request) => {
    const { owner, repo, pull_number } = request.params;
    return service.requestedReviewers(request.principal, owner, repo, pull_number);
  });

  reviewRoutes(app, ctx, service);
}

/** A pull request's reviews: made, listed (oldest first), one by id. */
function reviewRoutes(app: Api, ctx: Context, service: PullRequestService): void {
  app.post('/repos/:owner/:repo/pulls/:pull_number/reviews', {
    config: { access: pullWrite, createsContent: true },
    schema: { summary: 'Create a review for a pull request', tags, security, params: PullParams, body: ReviewBody, response: { 200: PullRequestReview, ...written } },
  }, async (request) => {
    const { owner, repo, pull_number } = request.params;
    return service.createReview(request.principal, owner, repo, pull_number, request.body ?? {});
  });

  app.get('/repos/:owner/:repo/pulls/:pull_number/reviews', {
    config: { access: repositoryRead(PULL_READ) },
    schema: {
      summary: 'List reviews for a pull request', tags, security, params: PullParams, querystring: Type.Object(PageQuery),
      response: { 200: Type.Array(PullRequestReview), ...denied, 422: ValidationErrorBody },
    },
  }, async (request, reply) => {
    const { owner, repo, pull_number } = request.params;
    return sendPage(request, reply, ctx.urls.api, (page) => service.reviews(request.principal, owner, repo, pull_number, page));
  });

  app.get('/repos/:owner/:repo/pulls/:pull_number/reviews/:review_id', {
    config: { access: repositoryRead(PULL_READ) },
    schema: {
      summary: 'Get a review for a pull request', tags, security,
      params: Type.Object({ ...PullParams.properties, review_id: Type.String({ description: 'The unique identifier of the review' }) }),
      response: { 200: PullRequestReview, ...denied },
    },
  }, async (request) => {
    const { owner, repo, pull_number, review_id } = request.params;
    return service.review(request.principal, owner, repo, pull_number, review_id);
  });
}
