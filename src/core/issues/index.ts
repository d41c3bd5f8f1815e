import type { Area } from '../area.ts';
import { activityAdminRoutes } from './admin-routes.ts';
import { issueRoutes } from './routes.ts';
import { seedComments, seedIssues } from './seed.ts';

/** Issues, pull requests and comments: their public reads, their operator routes (each write is platform activity) and seed keys. */
export const issues: Area = {
  name: 'issues',
  routes: issueRoutes,
  admin: activityAdminRoutes,
  seed: { issues: seedIssues, comments: seedComments },
};
