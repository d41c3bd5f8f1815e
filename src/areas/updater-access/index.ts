import type { Area } from '../../core/area.ts';
import { updaterAccessRoutes } from './routes.ts';

export const updaterAccess: Area = {
  name: 'updater-access',
  routes: updaterAccessRoutes,
};
