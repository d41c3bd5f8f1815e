// GET /repos/{owner}/{repo}: the full repository with its real counts and the caller's permissions.
import { Type } from 'typebox';
import { ALL_TOKENS, type AccessRule } from '../callers/access.ts';
import type { Area } from '../area.ts';
import type { Api, Context } from '../../platform/context.ts';
import { ErrorBody } from '../../platform/schemas.ts';
import { FullRepository } from './representations.ts';
import { REPOSITORY_READ, RepositoryService } from './service.ts';
import type { Permissions } from '../apps/permissions.ts';

/**
 * A read inside a repository: a public one answers anyone; a private one needs `repo` of a classic
 * token and one of `permissions` of a fine-grained one (checked by requireReadableRepository).
 */
export function repositoryRead(permissions: readonly Permissions[]): AccessRule {
  return { credentials: ALL_TOKENS, anonymous: true, privateOnly: true, scopes: ['repo'], permissions };
}

export const RepositoryParams = Type.Object({
  owner: Type.String({ description: 'The account owner of the repository, not case sensitive' }),
  repo: Type.String({ description: 'The name of the repository without the .git extension, not case sensitive' }),
});

export const denied = { 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };

function repositoryRoutes(app: Api, ctx: Context): void {
  const service = new RepositoryService(ctx);
  app.get('/repos/:owner/:repo', {
    config: { access: repositoryRead(REPOSITORY_READ) },
    schema: {
      summary: 'Get a repository',
      tags: ['repos'],
      security: [{ token: [] }],
      params: RepositoryParams,
      response: { 200: FullRepository, ...denied },
    },
  }, async (request) => service.get(request.principal, request.params.owner, request.params.repo));
}

export const repositories: Area = { name: 'repositories', routes: repositoryRoutes };
