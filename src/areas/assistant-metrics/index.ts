import { Type } from 'typebox';
import type { Area } from '../../core/area.ts';
import { checkEntries } from '../../platform/seed.ts';
import { assistantMetricsAdminRoutes, assistantMetricsRoutes, OperatorBody } from './routes.ts';
import { AssistantMetricsService } from './service.ts';

const SeedEntry = Type.Object({ org: Type.String(), ...OperatorBody.properties });

export const assistantMetrics: Area = {
  name: 'assistant-metrics',
  routes: assistantMetricsRoutes,
  admin: assistantMetricsAdminRoutes,
  seed: {
    // Each entry is the operator route's body for one organization: `{org, metrics_policy, days}`.
    assistant: async (ctx, entries) => {
      const service = new AssistantMetricsService(ctx);
      for (const { org, ...data } of checkEntries(SeedEntry, 'assistant', entries)) await service.setOperatorData(org, data);
    },
  },
};
