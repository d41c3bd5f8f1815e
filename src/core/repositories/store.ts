// Repositories: lookups by owner and name.
import type { Executor } from '../../db/index.ts';
import { findAccount } from '../accounts/store.ts';
import type { UserRow } from '../accounts/store.ts';
import type { RepositoryRow } from './representations.ts';

export async function findRepository(db: Executor, owner: string, name: string): Promise<(RepositoryRow & { owner: UserRow }) | undefined> {
  const account = await findAccount(db, owner);
  if (!account) return undefined;
  const repository = await db
    .selectFrom('repositories')
    .selectAll()
    .where('owner_id', '=', account.id)
    .where('name_lower', '=', name.replace(/\.git$/i, '').toLowerCase())
    .executeTakeFirst();
  return repository ? { ...repository, owner: account } : undefined;
}
