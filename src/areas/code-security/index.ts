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
  onRepositoryCreated: (ctx, repository) => new CodeSecurityService(ctx).attachDefault(repository),
};
