// Repositories: lookups by owner and name or by id, with their owners and the facts the full
// representation shows (counts), each fact one correlated subquery so a page of repositories is one
// query.
import type { ExpressionBuilder } from 'kysely';
import type { Executor } from '../../db/index.ts';
import type { Database } from '../../db/schema.ts';
import { findAccount } from '../accounts/store.ts';
import type { UserRow } from '../accounts/store.ts';
import type { RepositoryFacts, RepositoryOwner, RepositoryRow } from './representations.ts';

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

/** The counted facts of the repository of the outer query: open issues and pull requests, watchers. */
function factColumns(eb: ExpressionBuilder<Database, 'repositories'>) {
  return [
    eb.selectFrom('issues').select(eb.fn.countAll<number>().as('n')).whereRef('issues.repository_id', '=', 'repositories.id').where('issues.state', '=', 'open').as('open_issues'),
    eb
      .selectFrom('repository_subscriptions')
      .select(eb.fn.countAll<number>().as('n'))
      .whereRef('repository_subscriptions.repository_id', '=', 'repositories.id')
      .where('repository_subscriptions.subscribed', '=', 1)
      .as('subscribers'),
  ] as const;
}

type FactCounts = { open_issues: number | string | null; subscribers: number | string | null };

/** codehost keeps no stars and no forks: those facts are zero for every repository. */
const factsOf = (row: FactCounts): RepositoryFacts => ({
  open_issues: Number(row.open_issues ?? 0),
  subscribers: Number(row.subscribers ?? 0),
  stargazers: 0,
  forks: 0,
});

/** The facts of some repositories, by id (one query). */
export async function repositoryFacts(db: Executor, repositoryIds: readonly number[]): Promise<Map<number, RepositoryFacts>> {
  if (!repositoryIds.length) return new Map();
  const rows = await db
    .selectFrom('repositories')
    .select((eb) => ['repositories.id', ...factColumns(eb)])
    .where('repositories.id', 'in', repositoryIds)
    .execute();
  return new Map(rows.map((row) => [row.id, factsOf(row)]));
}

export interface RepositoryWithFacts {
  repository: RepositoryRow;
  owner: RepositoryOwner;
  facts: RepositoryFacts;
}

/** Repositories by id with their owners and facts (one query); unknown ids are left out. */
export async function repositoriesWithFacts(db: Executor, repositoryIds: readonly number[]): Promise<RepositoryWithFacts[]> {
  if (!repositoryIds.length) return [];
  const rows = await db
    .selectFrom('repositories')
    .innerJoin('users', 'users.id', 'repositories.owner_id')
    .selectAll('repositories')
    .select((eb) => ['users.login as owner_login', 'users.type as owner_type', 'users.site_admin as owner_site_admin', ...factColumns(eb)])
    .where('repositories.id', 'in', repositoryIds)
    .execute();
  return rows.map(({ owner_login, owner_type, owner_site_admin, open_issues, subscribers, ...repository }) => ({
    repository: repository as RepositoryRow,
    owner: { id: repository.owner_id, login: owner_login, type: owner_type, site_admin: owner_site_admin },
    facts: factsOf({ open_issues, subscribers }),
  }));
}
