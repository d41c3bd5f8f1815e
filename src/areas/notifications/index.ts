import type { Area } from '../../core/area.ts';
import { notificationAdminRoutes, notificationRoutes } from './routes.ts';
import { MARK_READ, NotificationService } from './service.ts';

/** Notification threads fed by platform activity, and the notifications API. */
export const notifications: Area = {
  name: 'notifications',
  routes: notificationRoutes,
  admin: notificationAdminRoutes,
  workers(ctx) {
    MARK_READ.work(ctx.queue, new NotificationService(ctx));
  },
  onActivity: (ctx, trx, row) => new NotificationService(ctx).onActivity(trx, row),
  onAccessChanged: (ctx, trx, change) => new NotificationService(ctx).onAccessChanged(trx, change),
};
