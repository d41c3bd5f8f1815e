// The operator surface's installation lifecycle (spec/admin-api.md "Lifecycle"): as the app's own
// PUT / DELETE /app/installations/{id}/suspended and DELETE /app/installations/{id}.
import { Type } from 'typebox';
import type { Api, Context } from '../../platform/context.ts';
import { RowId } from '../../platform/schemas.ts';
import { INSTALLATION_LIFECYCLE, InstallationWrites, requireApp } from './writes.ts';

const hidden = { hide: true, tags: ['admin'] } as const;
const Params = Type.Object({ app_slug: Type.String(), installation_id: RowId('The installation id') });

export function installationAdminRoutes(app: Api, ctx: Context): void {
  const writes = new InstallationWrites(ctx);
  for (const { method, path, summary, action } of INSTALLATION_LIFECYCLE) {
    app.route({
      method,
      url: `/_admin/apps/:app_slug/installations/:installation_id${path}`,
      schema: { ...hidden, summary, params: Params },
      handler: async (request, reply) => {
        await writes[action](await requireApp(ctx.db.kysely, request.params.app_slug), request.params.installation_id);
        return reply.code(204).send();
      },
    });
  }
}
