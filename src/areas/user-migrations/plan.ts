// What an export writes, gathered on the API thread before the export thread starts: the migration,
// its owner and repositories, and the few records rendered with the core representations themselves
// (repositories, organizations), so the export thread loads neither them nor their schemas.
import type { Executor } from '../../db/index.ts';
import { organization } from '../../core/accounts/representations.ts';
import { loadRepositoryFacts } from '../../core/repositories/facts.ts';
import { fullRepository } from '../../core/repositories/representations.ts';
import type { Urls } from '../../platform/urls.ts';
import { archiveContents, type ExportPlan } from './archive.ts';
import * as store from './store.ts';

export async function exportPlan(db: Executor, urls: Urls, migration: store.MigrationRow): Promise<ExportPlan> {
  const owner = (await store.usersById(db, [migration.owner_id])).get(migration.owner_id)!;
  // Only what the user owns when the export runs: a repository moved to another owner since the
  // start is not the user's to export any more.
  const repositories = (await store.migrationRepositories(db, [migration.id])).filter((repo) => repo.owner_id === migration.owner_id);
  const contents = archiveContents(migration);
  const facts = contents.repositoryMetadata ? await loadRepositoryFacts(db, repositories.map((r) => r.id)) : null;
  const organizations = contents.organizations ? await store.userOrganizations(db, owner.id) : [];
  return {
    migration,
    owner,
    repositories,
    records: {
      repositories: facts ? repositories.map((repo) => JSON.stringify(fullRepository(urls, repo, repo.owner, facts.get(repo.id)!))) : [],
      // An organization with the exporting user's roles in it.
      organizations: organizations.map(({ org, roles }) => JSON.stringify({ ...organization(urls, org), roles })),
    },
  };
}
