// User migration routes: list, start, status, repositories, archive download (302 to a signed URL)
// and deletion, repository unlock; and the signed archive URL itself, which codehost serves.
// Only personal access tokens (classic) and OAuth tokens work here; only the owner sees a migration.
import { basename } from 'node:path';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Api, Context } from '../../platform/context.ts';
import { ApiError } from '../../platform/errors.ts';
import { PageQuery, pageParams, setPageLinks } from '../../platform/pagination.ts';
import type { UserRow } from '../../core/accounts/store.ts';
import { FullRepository } from '../../core/repositories/representations.ts';
import { ErrorBody, ValidationErrorBody, RowId } from '../../platform/schemas.ts';
import { UserMigration } from './representations.ts';
import { EXCLUDABLE, type UserMigrationService } from './service.ts';
import { type AccessRule, actingUser, CLASSIC_TOKENS } from '../../core/access/index.ts';

const access: AccessRule = { credentials: CLASSIC_TOKENS };
const tags = ['migrations'];
const security = [{ token: [] }];
const PAGE = { perPage: 30, maxPerPage: 100 };

const MigrationParams = Type.Object({ migration_id: RowId('The unique identifier of the migration') });
const Exclude = Type.Array(Type.Union(EXCLUDABLE.map((value) => Type.Literal(value))), {
  description: 'Attributes to leave out of the response (`repositories`)',
});
const denied = { 401: ErrorBody, 403: ErrorBody };

const StartBody = Type.Object({
  repositories: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
    maxItems: 1000,
    description: 'Repositories to export, by `name` or `owner/name`; empty only with org_metadata_only',
  }),
  lock_repositories: Type.Optional(Type.Boolean({ description: 'Lock the repositories while they are exported' })),
  exclude_metadata: Type.Optional(Type.Boolean({ description: 'Only the git source is exported' })),
  exclude_git_data: Type.Optional(Type.Boolean({ description: 'Leave out the repositories\' git data' })),
  exclude_attachments: Type.Optional(Type.Boolean({ description: 'Leave out attachments' })),
  exclude_releases: Type.Optional(Type.Boolean({ description: 'Leave out releases' })),
  exclude_owner_projects: Type.Optional(Type.Boolean({ description: 'Leave out projects owned by the user' })),
  org_metadata_only: Type.Optional(Type.Boolean({ description: 'Only organization metadata; `repositories` must then be empty and the other flags are ignored' })),
  exclude: Type.Optional(Exclude),
});

/** The user behind the token; the access rule admits only user tokens here. */
const caller = (request: FastifyRequest): UserRow => actingUser(request.principal)!;

const Archive = Type.Unsafe<unknown>({ type: 'string', format: 'binary', description: 'The archive (application/gzip)' });

/** A single `Range: bytes=...` of an object of `size` bytes; null when absent or not one we serve (the whole object is sent). */
function parseRange(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | null {
  const match = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!match || (match[1] === '' && match[2] === '')) return null;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (match[2] !== '' && Number(match[2]) < start) return null;
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}

export function userMigrationRoutes(app: Api, ctx: Context, service: UserMigrationService): void {
  app.get('/user/migrations', {
    config: { access },
    schema: {
      summary: 'List user migrations',
      tags,
      security,
      querystring: Type.Object(PageQuery),
      response: { 200: Type.Array(UserMigration), ...denied, 422: ValidationErrorBody },
    },
  }, async (request, reply) => {
    const page = pageParams(request.query, PAGE);
    const { migrations, total } = await service.list(caller(request), { limit: page.perPage, offset: page.offset });
    setPageLinks(reply, request, ctx.urls.api, page, { total, returned: migrations.length });
    return migrations;
  });

  app.post('/user/migrations', {
    config: { access },
    schema: {
      summary: 'Start a user migration',
      tags,
      security,
      body: StartBody,
      response: { 201: UserMigration, 400: ErrorBody, ...denied, 422: ValidationErrorBody },
    },
  }, async (request, reply) => reply.code(201).send(await service.start(caller(request), request.body, request.principal)));

  app.get('/user/migrations/:migration_id', {
    config: { access },
    schema: {
      summary: 'Get a user migration status',
      tags,
      security,
      params: MigrationParams,
      querystring: Type.Object({ exclude: Type.Optional(Exclude) }),
      response: { 200: UserMigration, ...denied, 404: ErrorBody, 422: ValidationErrorBody },
    },
  }, async (request, reply) => {
    const migration = await service.get(caller(request), request.params.migration_id, request.query.exclude);
    reply.header('last-modified', new Date(migration.updated_at).toUTCString());
    return migration;
  });

  app.get('/user/migrations/:migration_id/repositories', {
    config: { access },
    schema: {
      summary: 'List repositories for a user migration',
      tags,
      security,
      params: MigrationParams,
      querystring: Type.Object(PageQuery),
      response: { 200: Type.Array(FullRepository), ...denied, 404: ErrorBody, 422: ValidationErrorBody },
    },
  }, async (request, reply) => {
    const page = pageParams(request.query, PAGE);
    const { repositories, total } = await service.repositories(caller(request), request.params.migration_id, { limit: page.perPage, offset: page.offset });
    setPageLinks(reply, request, ctx.urls.api, page, { total, returned: repositories.length });
    return repositories;
  });

  app.get('/user/migrations/:migration_id/archive', {
    config: { access },
    schema: {
      summary: 'Download a user migration archive',
      description: 'Redirects to a short-lived signed URL of the tar.gz archive. The body is that URL too (text/plain): clients that do not follow the redirect read it there.',
      tags,
      security,
      params: MigrationParams,
      response: {
        302: Type.String({
          description: 'The signed URL of the archive, as in Location (text/plain)',
          examples: ['http://127.0.0.1:3000/api/v3/_storage/user-migrations/1/archive.tar.gz?expires=1795352367&signature=2OmxLQ'],
        }),
        ...denied,
        404: ErrorBody,
      },
    },
  }, async (request, reply) => {
    const location = await service.archiveLocation(caller(request), request.params.migration_id);
    // PyGithub's get_archive_url returns the body of this answer: the URL, as plain text.
    return reply.code(302).header('location', location).type('text/plain; charset=utf-8').send(location);
  });

  app.delete('/user/migrations/:migration_id/archive', {
    config: { access },
    schema: {
      summary: 'Delete a user migration archive',
      tags,
      security,
      params: MigrationParams,
      response: { 204: Type.Null(), ...denied, 404: ErrorBody },
    },
  }, async (request, reply) => {
    await service.deleteArchive(caller(request), request.params.migration_id);
    return reply.code(204).send(null);
  });

  app.delete('/user/migrations/:migration_id/repos/:repo_name/lock', {
    config: { access },
    schema: {
      summary: 'Unlock a user repository',
      tags,
      security,
      params: Type.Object({ ...MigrationParams.properties, repo_name: Type.String({ description: 'The name of the repository' }) }),
      response: { 204: Type.Null(), ...denied, 404: ErrorBody, 422: ValidationErrorBody },
    },
  }, async (request, reply) => {
    await service.unlock(caller(request), request.params.migration_id, request.params.repo_name);
    return reply.code(204).send(null);
  });

  signedArchiveRoute(app, service);
}

/**
 * The signed URL: the signature is the credential, so this route takes no token, counts against no
 * rate limit and ignores any Authorization header a client carries over from the redirect.
 */
function signedArchiveRoute(app: Api, service: UserMigrationService): void {
  app.get('/_storage/user-migrations/:migration_id/archive.tar.gz', {
    schema: {
      summary: 'Fetch a user migration archive by its signed URL',
      description: 'The Location of the archive download redirect. Supports a single `Range`.',
      tags,
      security: [],
      params: MigrationParams,
      querystring: Type.Object({ expires: Type.Optional(Type.String()), signature: Type.Optional(Type.String()) }),
      response: { 200: Archive, 206: Archive, 403: ErrorBody, 404: ErrorBody, 416: ErrorBody },
    },
  }, async (request, reply) => {
    const { migration_id: id } = request.params;
    const archive = await service.signedArchive(id, request.query.expires, request.query.signature);
    const range = parseRange(request.headers.range, archive.size);
    if (range === 'unsatisfiable') throw new ApiError(416, 'Range Not Satisfiable', { headers: { 'content-range': `bytes */${archive.size}` } });
    reply
      .header('content-type', 'application/gzip')
      .header('accept-ranges', 'bytes')
      .header('etag', `"${basename(archive.key, '.tar.gz')}"`)
      .header('cache-control', 'private, max-age=0')
      .header('content-disposition', `attachment; filename="migration-${id}-${archive.guid}.tar.gz"`);
    if (!range) return reply.header('content-length', archive.size).send(service.storage.read(archive.key));
    return reply
      .code(206)
      .header('content-range', `bytes ${range.start}-${range.end}/${archive.size}`)
      .header('content-length', range.end - range.start + 1)
      .send(service.storage.read(archive.key, range));
  });
}

/** The operator's view of an export, which `codehost admin GET /migrations/ID --follow` polls. */
export function userMigrationAdminRoutes(app: Api, service: UserMigrationService): void {
  app.get('/_admin/migrations/:migration_id', {
    schema: { hide: true, tags: ['admin'], params: MigrationParams },
  }, async (request) => service.adminView(request.params.migration_id));
}
