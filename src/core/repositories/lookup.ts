// What writers look up of repositories before they act, or a 404 naming what is missing. Below the
// writes (any resource's writes may use them).
import type { Executor } from '../../db/index.ts';
import { notFound } from '../../platform/errors.ts';
import type { UserRow } from '../accounts/store.ts';
import type { RepositoryRow } from './representations.ts';
import { findRepository, repositoryForWrite } from './store.ts';
import { assertRepositoryWritable } from '../access/index.ts';

export async function requireRepository(db: Executor, owner: string, name: string): Promise<RepositoryRow & { owner: UserRow }> {
  const repository = await findRepository(db, owner, name);
  if (!repository) throw notFound(`Repository not found: ${owner}/${name}`);
  return repository;
}

/** The ids of an account's repositories named `name` or `owner/name` (404 for one it does not have). */
export async function accountRepositoryIds(db: Executor, account: Pick<UserRow, 'login'>, names: readonly string[]): Promise<number[]> {
  const ids: number[] = [];
  for (const name of names) {
    const repository = await findRepository(db, account.login, name.includes('/') ? name.split('/')[1]! : name);
    if (!repository) throw notFound(`Repository not found: ${name}`);
    ids.push(repository.id);
  }
  return ids;
}

/**
 * Checks again, in the writing transaction, that no migration has locked the repository (nor the
 * operator archived it) since it was found, and holds it so that none can until the write commits.
 */
export async function stillWritable(trx: Executor, repositoryId: number, postgres: boolean): Promise<void> {
  const repository = await repositoryForWrite(trx, repositoryId, postgres);
  if (!repository) throw notFound('Repository not found');
  assertRepositoryWritable(repository);
}
