// The operator surface's account lifecycle (spec/admin-api.md "Lifecycle"): suspend and unsuspend a
// user (a user's deletion, which takes their repositories, is routed in src/admin/routes.ts).
import { Type } from 'typebox';
import type { Api, Context } from '../../platform/context.ts';
import { AccountWrites } from './writes.ts';

const hidden = { hide: true, tags: ['admin'] } as const;
const UserParams = Type.Object({ login: Type.String() });

export function accountAdminRoutes(app: Api, ctx: Context): void {
  const writes = new AccountWrites(ctx);

  app.put('/_admin/users/:login/suspended', {
    schema: {
      ...hidden,
      summary: 'Suspend a user',
      params: UserParams,
      body: Type.Optional(Type.Object({ reason: Type.Optional(Type.String({ maxLength: 1000 })) })),
    },
  }, async (request, reply) => {
    await writes.suspend(request.params.login, request.body?.reason ?? null);
    return reply.code(204).send();
  });

  app.delete('/_admin/users/:login/suspended', {
    schema: { ...hidden, summary: 'Unsuspend a user', params: UserParams },
  }, async (request, reply) => {
    await writes.unsuspend(request.params.login);
    return reply.code(204).send();
  });
}
