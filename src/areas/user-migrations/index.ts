import type { Area } from '../../core/area.ts';
import { userMigrationAdminRoutes, userMigrationRoutes } from './routes.ts';
import { EXPORT_QUEUE, UserMigrationService } from './service.ts';

/** How often the sweep looks for expired archives. */
const EXPIRY_SWEEP_SECONDS = 3600;

export const userMigrations: Area = {
  name: 'user-migrations',
  routes: (app, ctx) => userMigrationRoutes(app, ctx, new UserMigrationService(ctx)),
  admin: (app, ctx) => userMigrationAdminRoutes(app, new UserMigrationService(ctx)),
  workers(ctx) {
    const service = new UserMigrationService(ctx);
    ctx.queue.work<{ migrationId: number }>(EXPORT_QUEUE, ({ migrationId }) => service.exportMigration(migrationId), { concurrency: 2 });
    ctx.periodic.every('user-migrations.expire-archives', EXPIRY_SWEEP_SECONDS, async () => {
      await service.expireArchives();
    });
  },
};
