import type { Area } from '../../platform/context.ts';

export const appWebhooks: Area = {
  name: 'app-webhooks',
};
