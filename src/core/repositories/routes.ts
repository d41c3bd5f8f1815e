// GET /repos/{owner}/{repo}: the full repository with its real counts and the caller's permissions;
// the lists a repository's and an account's `*_url` fields name: its watchers, the caller's watch
// state, its teams, and an account's repositories; a user's permission on a repository.
import { Type } from 'typebox';
import type { Area } from '../area.ts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Api, Context } from '../../platform/context.ts';
import { PageQuery, sendPage } from '../../platform/pagination.ts';
import { ErrorBody, isRowId, RowId, ValidationErrorBody } from '../../platform/schemas.ts';
import { notFound } from '../../platform/errors.ts';
import { requestDocumentation } from '../../http/errors.ts';
import { findRepositoryName } from './store.ts';
import { isRepositoryName } from './names.ts';
import { SimpleUser, Team } from '../accounts/representations.ts';
import { CollaboratorPermission, FullRepository, RepositorySubscription } from './representations.ts';
import { REPOSITORY_READ, RepositoryService } from './service.ts';
import { type AccessRule, ALL_TOKENS, ANONYMOUS, type Permissions, USER_TOKENS, type UserPrincipal } from '../access/index.ts';

/**
 * A read inside a repository: a public one answers anyone; a private one needs `repo` of a classic
 * token and one of `permissions` of a fine-grained one (checked by requireReadableRepository).
 */
export function repositoryRead(permissions: readonly Permissions[]): AccessRule {
  return { credentials: ALL_TOKENS, anonymous: true, privateOnly: true, scopes: ['repo'], permissions };
}

/** The caller's own watch state of a repository: tokens acting as a user; a private repository as for any read. */
const ownSubscription: AccessRule = { credentials: USER_TOKENS, privateOnly: true, scopes: ['repo'], permissions: [{ metadata: 'read' }] };

/**
 * A repository's teams: an authenticated caller; classic and OAuth tokens need `public_repo` (or
 * `repo`, which a private repository needs), as on the platform.
 */
const repositoryTeams: AccessRule = { credentials: ALL_TOKENS, scopes: ['repo', 'public_repo'], permissions: [{ metadata: 'read' }] };

/**
 * A user's permission on a repository: any token kind (no anonymous caller: a user needs push access
 * there, ./service.ts), the repository read as any read inside it (`repo` on a private one;
 * `metadata: read`).
 */
const collaboratorPermission: AccessRule = { credentials: ALL_TOKENS, privateOnly: true, scopes: ['repo'], permissions: [{ metadata: 'read' }] };

export const RepositoryParams = Type.Object({
  owner: Type.String({ description: 'The account owner of the repository, not case sensitive' }),
  repo: Type.String({ description: 'The name of the repository without the .git extension, not case sensitive' }),
});

export const denied = { 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };

const security = [{ token: [] }];

/** A team with access to the repository: the Team, its `permission` on it and that permission's levels. */
const RepositoryTeam = Type.Object({
  ...Team.properties,
  permissions: Type.Object({ pull: Type.Boolean(), triage: Type.Boolean(), push: Type.Boolean(), maintain: Type.Boolean(), admin: Type.Boolean() }),
});

const Sort = Type.Union([Type.Literal('created'), Type.Literal('updated'), Type.Literal('pushed'), Type.Literal('full_name')], { description: 'Default: `full_name` for a user, `created` for an organization' });
const Direction = Type.Union([Type.Literal('asc'), Type.Literal('desc')], { description: 'Default: `asc` with `full_name`, else `desc`' });

/**
 * The id twin's first step (src/http/repository-paths.ts): `/repositories/{repository_id}/...` names
 * the repository its id is the id of; its current owner and name go in the parameters, so the route's
 * own validation, access and handler run unchanged. An id of no repository is a 404.
 */
export function repositoryIdParams(ctx: Context): (request: FastifyRequest) => Promise<void> {
  return async (request) => {
    const { repository_id: given, ...params } = request.params as Record<string, string>;
    // Decimal digits only (`1e3`, ` 1`, `0x1` name no repository), in RowId's range as its schema checks it.
    const id = /^[1-9][0-9]*$/.test(given ?? '') && isRowId(Number(given)) ? Number(given) : undefined;
    const repository = id === undefined ? undefined : await findRepositoryName(ctx.db.kysely, id);
    if (!repository) throw notFound();
    request.params = { ...params, owner: repository.owner, repo: repository.name };
  };
}

/**
 * The old name of a renamed or transferred repository: where /repos/{owner}/{repo}... would answer
 * 404, it answers as the platform does, a read 301 and a write 307 to /repositories/{id}, to a caller
 * who may read the repository (anyone else gets the 404 of no repository). Only 404s look (no cost on
 * the answers that find their repository); a former name is never the name of a repository (it is
 * dropped when one takes it). The onSend step of every /repos/{owner}/{repo} route
 * (src/http/repository-paths.ts).
 */
export function formerNameRedirect(ctx: Context): (request: FastifyRequest, reply: FastifyReply, payload: unknown) => Promise<unknown> {
  const service = new RepositoryService(ctx);
  return async (request, reply, payload) => {
    const { owner, repo } = request.params as { owner?: string; repo?: string };
    // Only names a repository could have had (a NUL byte or another stray character never reaches
    // the database); a lookup that fails leaves the 404 as it is.
    if (owner === undefined || repo === undefined || !/^[A-Za-z0-9-]{1,39}$/.test(owner) || !isRepositoryName(repo)) return payload;
    // Only a caller who may read the repository is led to it; anyone else keeps the 404.
    const id = await service.formerNameTarget(request.principal ?? ANONYMOUS, owner, repo).catch(() => undefined);
    if (id === undefined) return payload;
    const read = request.method === 'GET' || request.method === 'HEAD';
    // The same sub-path (and query) under the id: /repos/{old}/issues/1 → /repositories/{id}/issues/1.
    const url = `${ctx.urls.api}/repositories/${id}${request.url.replace(/^\/repos\/[^/?#]*\/[^/?#]*/, '')}`;
    reply.code(read ? 301 : 307).header('location', url).type('application/json; charset=utf-8');
    return JSON.stringify({ message: read ? 'Moved Permanently' : 'Temporary Redirect', url, documentation_url: requestDocumentation(ctx.urls, request) });
  };
}

function repositoryRoutes(app: Api, ctx: Context): void {
  const service = new RepositoryService(ctx);
  app.get('/repos/:owner/:repo', {
    config: { access: repositoryRead(REPOSITORY_READ) },
    schema: {
      summary: 'Get a repository',
      tags: ['repos'],
      security,
      params: RepositoryParams,
      response: { 200: FullRepository, ...denied },
    },
  }, async (request) => service.get(request.principal, request.params.owner, request.params.repo));

  app.get('/repositories/:repository_id', {
    config: { access: repositoryRead(REPOSITORY_READ) },
    schema: {
      summary: 'Get a repository by its id (where a renamed or transferred repository\'s old name redirects)',
      tags: ['repos'],
      security,
      params: Type.Object({ repository_id: RowId('The id of the repository') }),
      response: { 200: FullRepository, ...denied },
    },
  }, async (request) => service.getById(request.principal, request.params.repository_id));

  app.get('/repos/:owner/:repo/collaborators/:username/permission', {
    config: { access: collaboratorPermission },
    schema: {
      summary: 'Get repository permissions for a user',
      tags: ['repos'],
      security,
      params: Type.Object({ ...RepositoryParams.properties, username: Type.String({ description: 'The handle of the user account' }) }),
      response: { 200: CollaboratorPermission, ...denied },
    },
  }, async (request) => {
    const { owner, repo, username } = request.params;
    return service.collaboratorPermission(request.principal, owner, repo, username);
  });

  app.get('/repos/:owner/:repo/subscribers', {
    config: { access: repositoryRead([{ metadata: 'read' }]) },
    schema: {
      summary: 'List watchers',
      tags: ['activity'],
      security,
      params: RepositoryParams,
      querystring: Type.Object(PageQuery),
      response: { 200: Type.Array(SimpleUser), ...denied, 422: ValidationErrorBody },
    },
  }, async (request, reply) => sendPage(request, reply, ctx.urls.api, (page) => service.subscribers(request.principal, request.params.owner, request.params.repo, page)));

  app.get('/repos/:owner/:repo/subscription', {
    config: { access: ownSubscription },
    schema: {
      summary: 'Get a repository subscription (the caller\'s watch state; 404 when none)',
      tags: ['activity'],
      security,
      params: RepositoryParams,
      response: { 200: RepositorySubscription, ...denied },
    },
  }, async (request) => service.subscription(request.principal as UserPrincipal, request.params.owner, request.params.repo));

  app.get('/repos/:owner/:repo/teams', {
    config: { access: repositoryTeams },
    schema: {
      summary: 'List repository teams',
      tags: ['repos'],
      security,
      params: RepositoryParams,
      querystring: Type.Object(PageQuery),
      response: { 200: Type.Array(RepositoryTeam), ...denied, 422: ValidationErrorBody },
    },
  }, async (request, reply) => sendPage(request, reply, ctx.urls.api, (page) => service.teams(request.principal, request.params.owner, request.params.repo, page)));

  app.get('/users/:username/repos', {
    config: { access: repositoryRead(REPOSITORY_READ) },
    schema: {
      summary: 'List repositories for a user (the private ones the caller reads too)',
      tags: ['repos'],
      security,
      params: Type.Object({ username: Type.String({ description: 'The handle of the user account' }) }),
      querystring: Type.Object({
        type: Type.Optional(Type.Union([Type.Literal('all'), Type.Literal('owner'), Type.Literal('member')], { default: 'owner' })),
        sort: Type.Optional(Sort),
        direction: Type.Optional(Direction),
        ...PageQuery,
      }),
      response: { 200: Type.Array(FullRepository), ...denied, 422: ValidationErrorBody },
    },
  }, async (request, reply) => {
    const { type = 'owner', sort, direction } = request.query;
    return sendPage(request, reply, ctx.urls.api, (page) => service.listForUser(request.principal, request.params.username, type, { sort, direction }, page));
  });

  app.get('/orgs/:org/repos', {
    config: { access: repositoryRead(REPOSITORY_READ) },
    schema: {
      summary: 'List organization repositories (the private ones the caller reads too)',
      tags: ['repos'],
      security,
      params: Type.Object({ org: Type.String({ description: 'The organization name, not case sensitive' }) }),
      querystring: Type.Object({
        type: Type.Optional(Type.Union(
          ['all', 'public', 'private', 'forks', 'sources', 'member'].map((t) => Type.Literal(t as 'all' | 'public' | 'private' | 'forks' | 'sources' | 'member')),
          { default: 'all' },
        )),
        sort: Type.Optional(Sort),
        direction: Type.Optional(Direction),
        ...PageQuery,
      }),
      response: { 200: Type.Array(FullRepository), ...denied, 422: ValidationErrorBody },
    },
  }, async (request, reply) => {
    const { type = 'all', sort, direction } = request.query;
    return sendPage(request, reply, ctx.urls.api, (page) => service.listForOrg(request.principal, request.params.org, type, { sort, direction }, page));
  });
}

export const repositories: Area = { name: 'repositories', routes: repositoryRoutes };
