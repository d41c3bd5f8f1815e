import type { Area } from '../core/area.ts';
import { activityAdminRoutes } from './routes.ts';
import { seedComments, seedIssues } from './seed.ts';

/** Platform activity in (issues, comments, state changes, raw events) and the outbox that fans it out. */
export const activity: Area = {
  name: 'activity',
  admin: activityAdminRoutes,
  seed: { issues: seedIssues, comments: seedComments },
};
