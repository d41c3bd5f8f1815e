import type { LifecycleArea } from '../../core/area.ts';
import { notificationAdminRoutes, notificationRoutes } from './routes.ts';
import { MARK_READ, NotificationService } from './service.ts';

/** Notification threads fed by platform activity, and the notifications API. */
export const notifications: LifecycleArea = {
  name: 'notifications',
  lifecycle: {
    'repository.transferred': { handled: 'onAccessChanged: the transfer tells the areas its repository\'s access changed; threads of who can no longer read it go' },
    'repository.renamed': { handled: 'reads: threads name the repository by id and render its current name' },
    'repository.deleted': { handled: 'cascade: its threads and subscriptions go with the repository (onAccessChanged too)' },
    'repository.archived': { unaffected: 'an archived repository stays readable, and so do its threads, as on the platform' },
    'user.suspended': { handled: 'reads: a suspended user\'s tokens are refused where every token is read (core/access/principal.ts)' },
    'user.deleted': { handled: 'cascade: the user\'s threads and subscriptions go with the account' },
    'installation.suspend': { unaffected: 'notifications are users\', not installations\'' },
    'installation.deleted': { unaffected: 'notifications are users\', not installations\'' },
  },
  routes: notificationRoutes,
  admin: notificationAdminRoutes,
  workers(ctx) {
    MARK_READ.work(ctx.queue, new NotificationService(ctx));
  },
  onActivity: (ctx, trx, row) => new NotificationService(ctx).onActivity(trx, row),
  onAccessChanged: (ctx, trx, change) => new NotificationService(ctx).onAccessChanged(trx, change),
};
