import type { LifecycleArea } from '../../core/area.ts';
import { notificationAdminRoutes, notificationRoutes } from './routes.ts';
import { notificationHandlers } from './fan-out.ts';
import { loadMonitor } from './polling.ts';

/** Notification threads fed by platform activity, and the notifications API. */
export const notifications: LifecycleArea = {
  name: 'notifications',
  lifecycle: {
    'repository.transferred': { handled: 'access.changed: the transfer records that its repository\'s access changed (handled in its transaction); threads of who can no longer read it go' },
    'repository.renamed': { handled: 'reads: threads name the repository by id and render its current name' },
    'repository.deleted': { handled: 'cascade: its threads and subscriptions go with the repository (access.changed too)' },
    'repository.archived': { unaffected: 'an archived repository stays readable, and so do its threads, as on the platform' },
    'user.suspended': { handled: 'reads: a suspended user\'s tokens are refused where every token is read (core/access/principal.ts)' },
    'user.deleted': { handled: 'cascade: the user\'s threads and subscriptions go with the account' },
    'installation.suspend': { unaffected: 'notifications are users\', not installations\'' },
    'installation.deleted': { unaffected: 'notifications are users\', not installations\'' },
  },
  routes: notificationRoutes,
  admin: notificationAdminRoutes,
  handlers: notificationHandlers,
  async close(ctx) {
    loadMonitor.of(ctx).stop();
  },
};
