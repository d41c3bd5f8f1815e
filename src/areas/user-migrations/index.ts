import type { Area } from '../../platform/context.ts';

export const userMigrations: Area = {
  name: 'user-migrations',
};
