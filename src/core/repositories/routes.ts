// GET /repos/{owner}/{repo}: the full repository with its real counts and the caller's permissions.
import { Type } from 'typebox';
import { ALL_TOKENS, type AccessRule } from '../callers/access.ts';
import type { Area } from '../area.ts';
import type { Api, Context } from '../../platform/context.ts';
import { ErrorBody } from '../../platform/schemas.ts';
import { FullRepository } from './representations.ts';
import { RepositoryService } from './service.ts';

/** Public repositories answer anyone; private ones follow the service's rule (scope `repo`, or a permission). */
export const repositoryRead: AccessRule = { credentials: ALL_TOKENS, anonymous: true };

export const RepositoryParams = Type.Object({
  owner: Type.String({ description: 'The account owner of the repository, not case sensitive' }),
  repo: Type.String({ description: 'The name of the repository without the .git extension, not case sensitive' }),
});

export const denied = { 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };

function repositoryRoutes(app: Api, ctx: Context): void {
  const service = new RepositoryService(ctx);
  app.get('/repos/:owner/:repo', {
    config: { access: repositoryRead },
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
