import type { LifecycleArea } from '../../core/area.ts';
import { userMigrationAdminRoutes, userMigrationRoutes } from './routes.ts';
import { exportThreads, UserMigrationService } from './service.ts';

export const userMigrations: LifecycleArea = {
  name: 'user-migrations',
  lifecycle: {
    'repository.transferred': {
      applied: 'in the write: a locked repository does not move (403); an export exports, and a migration lists, only what its user owns / may read when it runs',
    },
    'repository.renamed': { applied: 'in the write: a locked repository is not renamed (403; its unlock names it)' },
    'repository.deleted': { handled: 'cascade: it leaves every migration\'s repositories (and its lock goes with the row)' },
    'repository.archived': { unaffected: 'an archived repository is exported as it is, as on the platform' },
    'user.suspended': { handled: 'reads: a suspended user\'s tokens are refused where every token is read, the migration API\'s included' },
    'user.deleted': { handler: 'the user\'s archives are removed once the deletion committed (rows cascade)' },
    'installation.suspend': { unaffected: 'migrations are a user\'s, reached by user tokens only' },
    'installation.deleted': { unaffected: 'migrations are a user\'s, reached by user tokens only' },
  },
  routes: (app, ctx) => userMigrationRoutes(app, ctx, new UserMigrationService(ctx)),
  admin: (app, ctx) => userMigrationAdminRoutes(app, new UserMigrationService(ctx)),
  handlers: {
    // A repository a migration locked does not move (transfer or rename): 403.
    'repository.moving': (ctx, trx, { payload: move }) => new UserMigrationService(ctx).refuseLockedMove(trx, move),
    'user.deleted': async (ctx, trx) => {
      await new UserMigrationService(ctx).sweepOrphanArchives(trx);
    },
  },
  async close(ctx) {
    await exportThreads.of(ctx).close();
  },
};
