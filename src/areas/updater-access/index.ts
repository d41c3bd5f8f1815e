import type { LifecycleArea } from '../../core/area.ts';
import { updaterAccessRoutes } from './routes.ts';
import { UpdaterAccessService } from './service.ts';

export const updaterAccess: LifecycleArea = {
  name: 'updater-access',
  routes: updaterAccessRoutes,
  lifecycle: {
    'repository.transferred': {
      applied: 'in the write: the lists that may no longer name it (the old organization\'s, an enterprise the new owner is outside of) drop it',
    },
    'repository.renamed': { unaffected: 'lists name repositories by id' },
    'repository.deleted': { handled: 'cascade: its rows in every list go with the repository' },
    'repository.archived': { unaffected: 'an archived repository stays its organization\'s, as on the platform the list keeps it' },
    'user.suspended': { unaffected: 'lists belong to organizations and enterprises, read by their owners\' tokens (refused when suspended)' },
    'user.deleted': { unaffected: 'lists belong to organizations and enterprises, not users' },
    'installation.suspend': { unaffected: 'an installation acts on a list through its permissions, read at each request' },
    'installation.deleted': { unaffected: 'an installation acts on a list through its permissions, read at each request' },
  },
  handlers: {
    'repository.moving': async (ctx, trx, { payload: move }) => {
      if (move.transferred) await new UpdaterAccessService(ctx).onTransferred(trx, move.repositoryId, move.toOwnerId);
    },
  },
};
