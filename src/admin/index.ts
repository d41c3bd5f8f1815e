// The operator surface as an area: the admin API routes. Seed files and the CLI use the same service.
import type { Area } from '../core/area.ts';
import { adminRoutes } from './routes.ts';
import { adminListRoutes } from './list-routes.ts';
import { AdminService } from './service.ts';

export function adminArea(areas: readonly Area[]): Area {
  return {
    name: 'admin',
    admin: (app, ctx) => {
      adminRoutes(app, ctx, new AdminService(ctx, areas));
      adminListRoutes(app, ctx);
    },
  };
}
