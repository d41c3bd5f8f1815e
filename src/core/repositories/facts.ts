// The facts of repositories (open issues and pull requests, watchers, stars, forks), loaded in one
// query for any number of them: every full Repository representation is built from these.
import type { Executor } from '../../db/index.ts';
import { notFound } from '../../platform/errors.ts';
import type { Urls } from '../../platform/urls.ts';
import { fullRepository, type FullRepository, type RepositoryFacts, type RepositoryOwner, type RepositoryRow } from './representations.ts';
import { repositoryFacts } from './store.ts';

export { repositoriesWithFacts, type RepositoryWithFacts } from './store.ts';

/** The facts of some repositories, by id (an unknown id has no entry). */
export async function loadRepositoryFacts(db: Executor, repositoryIds: readonly number[]): Promise<Map<number, RepositoryFacts>> {
  return repositoryFacts(db, [...new Set(repositoryIds)]);
}

/** One repository's full representation, its facts loaded. */
export async function representRepository(
  db: Executor,
  urls: Urls,
  repository: RepositoryRow,
  owner: RepositoryOwner,
  permissions?: { admin: boolean; push: boolean; pull: boolean },
  showSecurity = false,
): Promise<FullRepository> {
  const facts = (await loadRepositoryFacts(db, [repository.id])).get(repository.id);
  // Deleted since it was read (a request racing its deletion): gone, as for any request after.
  if (!facts) throw notFound('Repository not found');
  return fullRepository(urls, repository, owner, facts, permissions, showSecurity);
}
