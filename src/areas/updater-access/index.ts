import type { Area } from '../../platform/context.ts';
import { updaterAccessRoutes } from './routes.ts';

export const updaterAccess: Area = {
  name: 'updater-access',
  routes: updaterAccessRoutes,
};
