import { Type } from 'typebox';
import type { LifecycleArea } from '../../core/area.ts';
import { checkEntries } from '../../platform/seed.ts';
import { assistantMetricsAdminRoutes, assistantMetricsRoutes, OperatorBody } from './routes.ts';
import { AssistantMetricsService } from './service.ts';

const SeedEntry = Type.Object({ org: Type.String(), ...OperatorBody.properties });

export const assistantMetrics: LifecycleArea = {
  name: 'assistant-metrics',
  lifecycle: {
    'repository.transferred': { unaffected: 'metrics are an organization\'s, by day: they name no repository' },
    'repository.renamed': { unaffected: 'metrics name no repository' },
    'repository.deleted': { unaffected: 'metrics name no repository' },
    'repository.archived': { unaffected: 'metrics name no repository' },
    'user.suspended': { unaffected: 'metrics are counts of an organization\'s, read by its owners\' tokens (refused when suspended)' },
    'user.deleted': { handled: 'cascade: an organization\'s metrics go with its account; a user\'s are only counted' },
    'installation.suspend': { unaffected: 'an installation reads metrics through its permissions, read at each request' },
    'installation.deleted': { unaffected: 'an installation reads metrics through its permissions, read at each request' },
  },
  routes: assistantMetricsRoutes,
  admin: assistantMetricsAdminRoutes,
  seed: {
    // Each entry is the operator route's body for one organization: `{org, metrics_policy, days}`.
    assistant: async (ctx, entries, trx) => {
      const service = new AssistantMetricsService(ctx, trx);
      for (const { org, ...data } of checkEntries(SeedEntry, 'assistant', entries)) await service.setOperatorData(org, data);
    },
  },
};
