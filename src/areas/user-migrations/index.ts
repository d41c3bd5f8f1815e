import type { Area } from '../../core/area.ts';
import { userMigrationAdminRoutes, userMigrationRoutes } from './routes.ts';
import { EXPORT, exportThreads, UserMigrationService } from './service.ts';

/** How often the sweep looks for expired archives. */
const EXPIRY_SWEEP_SECONDS = 3600;
/** How often the sweep looks for unfinished archive files of dead runs. */
const UNFINISHED_SWEEP_SECONDS = 600;

export const userMigrations: Area = {
  name: 'user-migrations',
  routes: (app, ctx) => userMigrationRoutes(app, ctx, new UserMigrationService(ctx)),
  admin: (app, ctx) => userMigrationAdminRoutes(app, new UserMigrationService(ctx)),
  async onActivity(ctx, trx, activity) {
    if (activity.name === 'user.deleted') await new UserMigrationService(ctx).sweepOrphanArchives(trx);
  },
  async close(ctx) {
    await exportThreads.of(ctx).close();
  },
  workers(ctx) {
    const service = new UserMigrationService(ctx);
    EXPORT.work(ctx.queue, service);
    ctx.periodic.every('user-migrations.expire-archives', EXPIRY_SWEEP_SECONDS, async () => {
      await service.expireArchives();
    });
    ctx.periodic.every('user-migrations.sweep-unfinished', UNFINISHED_SWEEP_SECONDS, async () => {
      await service.sweepUnfinished();
      await service.sweepOrphanArchives();
    });
  },
};
