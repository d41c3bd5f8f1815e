import type { Area } from '../../core/area.ts';
import { userMigrationAdminRoutes, userMigrationRoutes } from './routes.ts';
import { EXPORT_QUEUE, UserMigrationService } from './service.ts';

/** How often the sweep looks for expired archives. */
const EXPIRY_SWEEP_SECONDS = 3600;
/** How often the sweep looks for unfinished archive files of dead runs. */
const UNFINISHED_SWEEP_SECONDS = 600;
/** Exports of one user running at once (across processes): the others wait while other users' run. */
const EXPORTS_RUNNING_PER_USER = 1;

export const userMigrations: Area = {
  name: 'user-migrations',
  routes: (app, ctx) => userMigrationRoutes(app, ctx, new UserMigrationService(ctx)),
  admin: (app, ctx) => userMigrationAdminRoutes(app, new UserMigrationService(ctx)),
  async onActivity(ctx, trx, activity) {
    if (activity.name === 'user.deleted') await new UserMigrationService(ctx).sweepOrphanArchives(trx);
  },
  workers(ctx) {
    const service = new UserMigrationService(ctx);
    ctx.queue.work<{ migrationId: number }>(EXPORT_QUEUE, ({ migrationId }) => service.exportMigration(migrationId), {
      concurrency: 2,
      groupConcurrency: EXPORTS_RUNNING_PER_USER,
      exhausted: ({ migrationId }) => service.exportExhausted(migrationId),
    });
    ctx.periodic.every('user-migrations.expire-archives', EXPIRY_SWEEP_SECONDS, async () => {
      await service.expireArchives();
    });
    ctx.periodic.every('user-migrations.sweep-unfinished', UNFINISHED_SWEEP_SECONDS, async () => {
      await service.sweepUnfinished();
      await service.sweepOrphanArchives();
    });
  },
};
