import { Type } from 'typebox';
import type { Area } from '../../core/area.ts';
import { checkEntries } from '../../platform/seed.ts';
import { issueTypeAdminRoutes, issueTypeRoutes } from './routes.ts';
import { IssueTypeInput, IssueTypeService } from './service.ts';

const SeedType = Type.Object({
  org: Type.String(),
  ...IssueTypeInput.properties,
  is_enabled: Type.Boolean({ default: true }),
});
const SeedOverride = Type.Object({
  repository: Type.String({ description: 'owner/name' }),
  name: Type.String({ description: 'The issue type name' }),
  is_enabled: Type.Boolean(),
});

export const issueTypes: Area = {
  name: 'issue-types',
  routes: issueTypeRoutes,
  admin: issueTypeAdminRoutes,
  seed: {
    issue_types: async (ctx, entries) => {
      const service = new IssueTypeService(ctx);
      for (const entry of checkEntries(SeedType, 'issue_types', entries)) await service.seedType(entry);
    },
    // After the types: a repository's override of one of its organization's types.
    issue_type_overrides: async (ctx, entries) => {
      const service = new IssueTypeService(ctx);
      for (const entry of checkEntries(SeedOverride, 'issue_type_overrides', entries)) {
        const [owner = '', repo = ''] = entry.repository.split('/');
        await service.setRepositoryOverride(owner, repo, entry.name, entry.is_enabled);
      }
    },
  },
};
