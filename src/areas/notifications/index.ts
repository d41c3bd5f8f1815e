import type { Area } from '../../platform/context.ts';

export const notifications: Area = {
  name: 'notifications',
};
