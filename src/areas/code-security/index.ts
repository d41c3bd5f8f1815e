import type { LifecycleArea } from '../../core/area.ts';
import { codeSecurityAdminRoutes, seedLicenses } from './admin.ts';
import { codeSecurityRoutes } from './routes.ts';
import { CodeSecurityService } from './service.ts';

export const codeSecurity: LifecycleArea = {
  name: 'code-security',
  routes: codeSecurityRoutes,
  admin: codeSecurityAdminRoutes,
  seed: { licenses: seedLicenses },
  lifecycle: {
    'repository.transferred': {
      applied: 'in the write: the old owner\'s configuration lets go of it and of its license; the new owner\'s default applies, as for a new repository',
    },
    'repository.renamed': { unaffected: 'attachments and license seats name repositories by id' },
    'repository.deleted': { handled: 'cascade: its attachment and its license seat go with the repository' },
    'repository.archived': { handled: 'apply job: an archived repository refuses the settings (its attachment fails), as every write to it' },
    'user.suspended': { unaffected: 'configurations belong to organizations and enterprises; their owners\' tokens are refused when suspended' },
    'user.deleted': { unaffected: 'configurations belong to organizations and enterprises, not users' },
    'installation.suspend': { unaffected: 'an installation acts on configurations through its permissions, read at each request' },
    'installation.deleted': { unaffected: 'an installation acts on configurations through its permissions, read at each request' },
  },
  handlers: {
    'repository.moving': async (ctx, trx, { payload: move }) => {
      if (move.transferred) await new CodeSecurityService(ctx).onTransferred(trx, move.repositoryId);
    },
    // In the dispatch that consumes the creation, exactly once: a crash after the repository
    // committed leaves the activity's job, which attaches the configuration when it runs again.
    'repository.created': (ctx, trx, activity) => new CodeSecurityService(ctx).attachDefault(trx, activity.repository_id!),
  },
};
