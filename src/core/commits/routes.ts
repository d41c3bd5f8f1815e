// A repository's commits and branches (of its git data), commit statuses and check runs (who may:
// ./service.ts). A ref in a path is a sha, a branch or a tag name.
import { Type } from 'typebox';
import type { Api, Context } from '../../platform/context.ts';
import { denied, repositoryRead, RepositoryParams } from '../repositories/routes.ts';
import { PageQuery, pageParams, sendPage, setPageLinks, DEFAULT_PAGES } from '../../platform/pagination.ts';
import { ErrorBody, ValidationErrorBody } from '../../platform/schemas.ts';
import { ALL_TOKENS, type AccessRule } from '../access/index.ts';
import { Branch, CheckConclusion, CheckRun, CheckStatus, CombinedStatus, CommitBody, Status, StatusState } from './representations.ts';
import { CHECKS_READ, CHECKS_WRITE, CommitService, CONTENTS_READ, STATUSES_READ, STATUSES_WRITE } from './service.ts';

const security = [{ token: [] }];
const read = { ...denied, 409: ErrorBody, 422: ValidationErrorBody };
const written = { ...denied, 409: ErrorBody, 422: ValidationErrorBody };

/** Statuses are read with the repository (a private one: `repo` or `repo:status`, or `statuses: read`). */
const statusRead: AccessRule = { ...repositoryRead(STATUSES_READ), scopes: ['repo', 'repo:status'] };
const statusWrite: AccessRule = { credentials: ALL_TOKENS, scopes: ['repo:status'], permissions: STATUSES_WRITE };
/** Check runs are made by apps alone: an installation token. */
const checkWrite: AccessRule = { credentials: ['installation'], permissions: CHECKS_WRITE };

const RefParams = Type.Object({ ...RepositoryParams.properties, ref: Type.String({ description: 'A commit sha, a branch name or a tag name' }) });
const ShaParams = Type.Object({ ...RepositoryParams.properties, sha: Type.String({ description: 'The commit sha' }) });
const BranchParams = Type.Object({ ...RepositoryParams.properties, branch: Type.String({ description: 'The name of the branch' }) });
const CheckRunParams = Type.Object({ ...RepositoryParams.properties, check_run_id: Type.String({ description: 'The id of the check run' }) });

const Url = Type.String({ maxLength: 2048 });
const Time = Type.String({ format: 'date-time' });
const Output = Type.Object({
  title: Type.String({ maxLength: 1024 }),
  summary: Type.String({ maxLength: 65535 }),
  text: Type.Optional(Type.String({ maxLength: 65535 })),
});
const checkRunFields = {
  details_url: Type.Optional(Url),
  external_id: Type.Optional(Type.String({ maxLength: 1024 })),
  status: Type.Optional(CheckStatus),
  started_at: Type.Optional(Time),
  conclusion: Type.Optional(CheckConclusion),
  completed_at: Type.Optional(Time),
  output: Type.Optional(Output),
};
const CheckRunName = Type.String({ minLength: 1, maxLength: 1024 });

const CheckRunList = Type.Object({ total_count: Type.Integer(), check_runs: Type.Array(CheckRun) });

export function commitRoutes(app: Api, ctx: Context): void {
  const service = new CommitService(ctx);
  const tags = ['repos'];

  app.get('/repos/:owner/:repo/commits/:ref', {
    config: { access: repositoryRead(CONTENTS_READ) },
    schema: { summary: 'Get a commit', tags, security, params: RefParams, response: { 200: CommitBody, ...read } },
  }, async (request) => service.commit(request.principal, request.params.owner, request.params.repo, request.params.ref));

  app.get('/repos/:owner/:repo/branches/:branch', {
    config: { access: repositoryRead(CONTENTS_READ) },
    schema: { summary: 'Get a branch', tags, security, params: BranchParams, response: { 200: Branch, ...denied } },
  }, async (request) => service.branch(request.principal, request.params.owner, request.params.repo, request.params.branch));

  app.post('/repos/:owner/:repo/statuses/:sha', {
    config: { access: statusWrite, createsContent: true },
    schema: {
      summary: 'Create a commit status', tags, security, params: ShaParams,
      body: Type.Object({
        state: StatusState,
        target_url: Type.Optional(Type.Union([Url, Type.Null()])),
        description: Type.Optional(Type.Union([Type.String({ maxLength: 140 }), Type.Null()])),
        context: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
      }),
      response: { 201: Status, ...written },
    },
  }, async (request, reply) => reply.code(201).send(await service.createStatus(request.principal, request.params.owner, request.params.repo, request.params.sha, request.body)));

  app.get('/repos/:owner/:repo/commits/:ref/statuses', {
    config: { access: statusRead },
    schema: { summary: 'List commit statuses for a reference', tags, security, params: RefParams, querystring: Type.Object(PageQuery), response: { 200: Type.Array(Status), ...read } },
  }, async (request, reply) => sendPage(request, reply, ctx.urls.api, (page) => service.statuses(request.principal, request.params.owner, request.params.repo, request.params.ref, page)));

  app.get('/repos/:owner/:repo/commits/:ref/status', {
    config: { access: statusRead },
    schema: { summary: 'Get the combined status for a specific reference', tags, security, params: RefParams, querystring: Type.Object(PageQuery), response: { 200: CombinedStatus, ...read } },
  }, async (request, reply) => {
    const page = pageParams(request.query, DEFAULT_PAGES);
    const { total, body } = await service.combinedStatus(request.principal, request.params.owner, request.params.repo, request.params.ref, page);
    setPageLinks(reply, request, ctx.urls.api, page, { total, returned: body.statuses.length });
    return body;
  });

  const checks = ['checks'];

  app.post('/repos/:owner/:repo/check-runs', {
    config: { access: checkWrite, createsContent: true },
    schema: {
      summary: 'Create a check run', tags: checks, security, params: Type.Object(RepositoryParams.properties),
      body: Type.Object({ name: CheckRunName, head_sha: Type.String({ minLength: 1, maxLength: 255 }), ...checkRunFields }),
      response: { 201: CheckRun, ...written },
    },
  }, async (request, reply) => reply.code(201).send(await service.createCheckRun(request.principal, request.params.owner, request.params.repo, request.body)));

  app.patch('/repos/:owner/:repo/check-runs/:check_run_id', {
    config: { access: checkWrite },
    schema: {
      summary: 'Update a check run', tags: checks, security, params: CheckRunParams,
      body: Type.Object({ name: Type.Optional(CheckRunName), ...checkRunFields }),
      response: { 200: CheckRun, ...written },
    },
  }, async (request) => service.updateCheckRun(request.principal, request.params.owner, request.params.repo, request.params.check_run_id, request.body));

  app.get('/repos/:owner/:repo/check-runs/:check_run_id', {
    config: { access: repositoryRead(CHECKS_READ) },
    schema: { summary: 'Get a check run', tags: checks, security, params: CheckRunParams, response: { 200: CheckRun, ...denied } },
  }, async (request) => service.checkRun(request.principal, request.params.owner, request.params.repo, request.params.check_run_id));

  app.get('/repos/:owner/:repo/commits/:ref/check-runs', {
    config: { access: repositoryRead(CHECKS_READ) },
    schema: {
      summary: 'List check runs for a Git reference', tags: checks, security, params: RefParams,
      querystring: Type.Object({
        check_name: Type.Optional(Type.String()),
        status: Type.Optional(Type.Union([Type.Literal('queued'), Type.Literal('in_progress'), Type.Literal('completed')])),
        filter: Type.Optional(Type.Union([Type.Literal('latest'), Type.Literal('all')], { description: 'Default: `latest`' })),
        app_id: Type.Optional(Type.Integer({ minimum: 1 })),
        ...PageQuery,
      }),
      response: { 200: CheckRunList, ...read },
    },
  }, async (request, reply) => {
    const { check_name, status, filter, app_id } = request.query;
    const page = pageParams(request.query, DEFAULT_PAGES);
    const { total, items } = await service.checkRuns(request.principal, request.params.owner, request.params.repo, request.params.ref, {
      ...(check_name !== undefined ? { name: check_name } : {}),
      ...(status !== undefined ? { status } : {}),
      ...(app_id !== undefined ? { appId: app_id } : {}),
      latest: filter !== 'all',
    }, page);
    setPageLinks(reply, request, ctx.urls.api, page, { total, returned: items.length });
    return { total_count: total, check_runs: items };
  });
}
