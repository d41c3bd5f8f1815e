import type { Area } from '../../platform/context.ts';

export const updaterAccess: Area = {
  name: 'updater-access',
};
