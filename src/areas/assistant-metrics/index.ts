import type { Area } from '../../platform/context.ts';

export const assistantMetrics: Area = {
  name: 'assistant-metrics',
};
