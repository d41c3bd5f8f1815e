import { Type } from 'typebox';
import type { LifecycleArea } from '../../core/area.ts';
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

export const issueTypes: LifecycleArea = {
  name: 'issue-types',
  lifecycle: {
    'repository.transferred': { handled: 'reads: a repository\'s types are its current owner\'s; the old organization\'s overrides name types the new owner does not have' },
    'repository.renamed': { unaffected: 'overrides name repositories by id' },
    'repository.deleted': { handled: 'cascade: its overrides go with the repository' },
    'repository.archived': { unaffected: 'types are read, not written, through a repository' },
    'user.suspended': { unaffected: 'types are an organization\'s; its owners\' tokens are refused when suspended' },
    'user.deleted': { handled: 'cascade: an organization\'s types go with its account' },
    'installation.suspend': { unaffected: 'an installation reads types through its permissions, read at each request' },
    'installation.deleted': { unaffected: 'an installation reads types through its permissions, read at each request' },
  },
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
