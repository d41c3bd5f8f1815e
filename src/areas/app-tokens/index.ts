import type { Area } from '../../platform/context.ts';
import { appTokenRoutes } from './routes.ts';

export const appTokens: Area = {
  name: 'app-tokens',
  routes: appTokenRoutes,
};
