import type { Area } from '../../core/area.ts';
import { codeSecurityAdminRoutes, seedLicenses } from './admin.ts';
import { registerApplyWorker } from './apply.ts';
import { codeSecurityRoutes } from './routes.ts';
import { CodeSecurityService } from './service.ts';

export const codeSecurity: Area = {
  name: 'code-security',
  routes: codeSecurityRoutes,
  admin: codeSecurityAdminRoutes,
  workers: registerApplyWorker,
  seed: { licenses: seedLicenses },
  async onActivity(ctx, trx, activity) {
    // In the dispatch that consumes the creation, exactly once: a crash after the repository
    // committed leaves the activity's job, which attaches the configuration when it runs again.
    if (activity.name === 'repository.created') await new CodeSecurityService(ctx).attachDefault(trx, activity.repository_id!);
  },
};
