// The operator surface as an area: the admin API routes. Seed files and the CLI use the same writers (src/core/<resource>/writes.ts).
import type { Area } from '../core/area.ts';
import { membershipRoutes } from './membership-routes.ts';
import { adminRoutes } from './routes.ts';
import { adminListRoutes } from './list-routes.ts';
import { closedObjects } from '../platform/schemas.ts';

export function adminArea(areas: readonly Area[]): Area {
  return {
    name: 'admin',
    admin: (app, ctx) => {
      // Every operator route's body refuses a field it does not know (a 422 naming it), whichever
      // file declares the route: this area's routes come first, every other area's after them.
      app.addHook('onRoute', (route) => {
        const body = (route.schema as { body?: unknown } | undefined)?.body;
        if (route.config?.admin && body) route.schema = { ...route.schema, body: closedObjects(body) };
      });
      adminRoutes(app, ctx, areas);
      membershipRoutes(app, ctx, areas);
      adminListRoutes(app, ctx);
    },
  };
}
