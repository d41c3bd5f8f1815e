import type { Area } from '../../core/area.ts';
import { appTokenRoutes } from './routes.ts';

export const appTokens: Area = {
  name: 'app-tokens',
  routes: appTokenRoutes,
};
