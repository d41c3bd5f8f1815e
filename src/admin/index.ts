// The operator surface as an area: the admin API routes. Seed files and the CLI use the same writers (src/core/<resource>/writes.ts).
import type { onRouteHookHandler } from 'fastify';
import type { Area } from '../core/area.ts';
import { membershipRoutes } from './membership-routes.ts';
import { adminRoutes } from './routes.ts';
import { adminListRoutes } from './list-routes.ts';
import { closedObjects } from '../platform/schemas.ts';

/**
 * The operator scope's onRoute hook: every operator route's body refuses a field it does not know (a
 * 422 naming it), whichever file declares the route.
 */
export const closeOperatorBodies: onRouteHookHandler = (route) => {
  const body = (route.schema as { body?: unknown } | undefined)?.body;
  if (body) route.schema = { ...route.schema, body: closedObjects(body) };
};

export function adminArea(areas: readonly Area[]): Area {
  return {
    name: 'admin',
    admin: (app, ctx) => {
      adminRoutes(app, ctx, areas);
      membershipRoutes(app, ctx, areas);
      adminListRoutes(app, ctx);
    },
  };
}
