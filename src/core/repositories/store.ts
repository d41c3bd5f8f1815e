// Repositories: lookups by owner and name.
import type { Executor } from '../../db/index.ts';
import { findAccount } from '../accounts/store.ts';
import type { UserRow } from '../callers/principal.ts';
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

/** Every repository with its owner, oldest first, one page at a time, with the total. */
export async function listRepositories(db: Executor, page: { limit: number; offset: number }): Promise<{ rows: Array<RepositoryRow & { owner: UserRow }>; total: number }> {
  const repositories = await db.selectFrom('repositories').selectAll().orderBy('id').limit(page.limit).offset(page.offset).execute();
  const ownerIds = [...new Set(repositories.map((r) => r.owner_id))];
  const owners = ownerIds.length ? await db.selectFrom('users').selectAll().where('id', 'in', ownerIds).execute() : [];
  const byId = new Map(owners.map((o) => [o.id, o]));
  const count = await db.selectFrom('repositories').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return { rows: repositories.map((r) => ({ ...r, owner: byId.get(r.owner_id)! })), total: Number(count.n) };
}
