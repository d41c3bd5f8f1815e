import type { Area } from '../../core/area.ts';
import { notificationAdminRoutes, notificationRoutes } from './routes.ts';
import { MARK_READ_QUEUE, NotificationService, type MarkReadJob } from './service.ts';

/** Notification threads fed by platform activity, and the notifications API. */
export const notifications: Area = {
  name: 'notifications',
  routes: notificationRoutes,
  admin: notificationAdminRoutes,
  workers(ctx) {
    const service = new NotificationService(ctx);
    ctx.queue.work<MarkReadJob>(MARK_READ_QUEUE, (job) => service.runMarkRead(job));
  },
  onActivity: (ctx, trx, row) => new NotificationService(ctx).onActivity(trx, row),
  onAccessChanged: (ctx, trx, change) => new NotificationService(ctx).onAccessChanged(trx, change),
};
