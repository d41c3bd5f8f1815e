// App token management routes: Basic authentication with the app's client id and secret (a wrong
// pair, or a path client_id that is not the caller's, is a 404), and installation tokens (app JWT).
import { Type } from 'typebox';
import type { Api, Context } from '../../platform/context.ts';
import { ErrorBody, ValidationErrorBody, RowId } from '../../platform/schemas.ts';
import { Authorization } from '../../core/apps/representations.ts';
import { AppTokenService } from './service.ts';
import { type AccessRule, callingApp } from '../../core/access/index.ts';

const basic: AccessRule = { credentials: ['basic'] };
const ClientIdParams = Type.Object({ client_id: Type.String() });
const AccessTokenBody = Type.Object({ access_token: Type.String({ minLength: 1, description: 'The OAuth or app user access token' }) });
const PermissionsBody = Type.Record(Type.String(), Type.Union([Type.Literal('read'), Type.Literal('write')]));
const tags = ['apps'];

export function appTokenRoutes(app: Api, ctx: Context): void {
  const service = new AppTokenService(ctx);
  const config = { access: basic, basicApp: true } as const;
  const errors = { 404: ErrorBody, 422: ValidationErrorBody };

  app.post('/applications/:client_id/token', {
    config,
    schema: {
      summary: 'Check a token',
      tags,
      security: [{ basic: [] }],
      params: ClientIdParams,
      body: AccessTokenBody,
      response: { 200: Authorization, ...errors },
    },
  }, async (request) => service.check(callingApp(request, request.params.client_id), request.body.access_token));

  app.patch('/applications/:client_id/token', {
    config,
    schema: { summary: 'Reset a token', tags, security: [{ basic: [] }], params: ClientIdParams, body: AccessTokenBody, response: { 200: Authorization, ...errors } },
  }, async (request) => service.reset(callingApp(request, request.params.client_id), request.body.access_token));

  app.delete('/applications/:client_id/token', {
    config,
    schema: { summary: 'Delete an app token', tags, security: [{ basic: [] }], params: ClientIdParams, body: AccessTokenBody, response: { 204: Type.Null(), ...errors } },
  }, async (request, reply) => {
    await service.deleteToken(callingApp(request, request.params.client_id), request.body.access_token);
    return reply.code(204).send(null);
  });

  app.delete('/applications/:client_id/grant', {
    config,
    schema: { summary: 'Delete an app authorization', tags, security: [{ basic: [] }], params: ClientIdParams, body: AccessTokenBody, response: { 204: Type.Null(), ...errors } },
  }, async (request, reply) => {
    await service.deleteGrant(callingApp(request, request.params.client_id), request.body.access_token);
    return reply.code(204).send(null);
  });

  app.post('/applications/:client_id/token/scoped', {
    config,
    schema: {
      summary: 'Create a scoped access token',
      tags,
      security: [{ basic: [] }],
      params: ClientIdParams,
      body: Type.Object({
        access_token: Type.String({ minLength: 1 }),
        target: Type.Optional(Type.String()),
        target_id: Type.Optional(RowId()),
        repositories: Type.Optional(Type.Array(Type.String())),
        repository_ids: Type.Optional(Type.Array(Type.Integer())),
        permissions: Type.Optional(PermissionsBody),
      }),
      response: { 200: Authorization, ...errors },
    },
  }, async (request) => service.scoped(callingApp(request, request.params.client_id), request.body));

  app.post('/app/installations/:installation_id/access_tokens', {
    config: { access: { credentials: ['jwt'] } },
    schema: {
      summary: 'Create an installation access token for an app',
      tags,
      security: [{ token: [] }],
      params: Type.Object({ installation_id: RowId() }),
      body: Type.Object({
        repositories: Type.Optional(Type.Array(Type.String())),
        repository_ids: Type.Optional(Type.Array(Type.Integer())),
        permissions: Type.Optional(PermissionsBody),
      }),
      response: {
        201: Type.Object({
          token: Type.String(),
          expires_at: Type.String(),
          permissions: PermissionsBody,
          repository_selection: Type.String(),
          repositories: Type.Optional(Type.Array(Type.Object({ id: Type.Integer(), name: Type.String(), full_name: Type.String() }, { additionalProperties: true }))),
        }),
        401: ErrorBody,
        403: ErrorBody,
        ...errors,
      },
    },
  }, async (request, reply) => {
    return reply.code(201).send(await service.createInstallationToken(callingApp(request), request.params.installation_id, request.body));
  });
}
