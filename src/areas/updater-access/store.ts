// SQL of updater repository access.
import type { Executor } from '../../db/index.ts';

export type OwnerType = 'organization' | 'enterprise';

export interface ListOwner {
  type: OwnerType;
  id: number;
}

/** Keeps `IN (...)` lists well under both engines' limits on bound parameters. */
const CHUNK = 500;

function chunks<T>(values: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < values.length; i += CHUNK) out.push(values.slice(i, i + CHUNK));
  return out;
}

export async function defaultLevel(db: Executor, owner: ListOwner): Promise<string | null> {
  const row = await db
    .selectFrom('updater_access_settings')
    .select('default_level')
    .where('owner_type', '=', owner.type)
    .where('owner_id', '=', owner.id)
    .executeTakeFirst();
  return row?.default_level ?? null;
}

export async function setDefaultLevel(db: Executor, owner: ListOwner, level: string, now: string): Promise<void> {
  await db
    .insertInto('updater_access_settings')
    .values({ owner_type: owner.type, owner_id: owner.id, default_level: level, updated_at: now })
    .onConflict((oc) => oc.columns(['owner_type', 'owner_id']).doUpdateSet({ default_level: level, updated_at: now }))
    .execute();
}

export async function countRepositories(db: Executor, owner: ListOwner): Promise<number> {
  const row = await db
    .selectFrom('updater_access_repositories')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('owner_type', '=', owner.type)
    .where('owner_id', '=', owner.id)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** One page of the list's repositories with their owners, by repository id. */
export async function pageOfRepositories(db: Executor, owner: ListOwner, limit: number, offset: number) {
  const repositories = await db
    .selectFrom('updater_access_repositories as access')
    .innerJoin('repositories', 'repositories.id', 'access.repository_id')
    .selectAll('repositories')
    .where('access.owner_type', '=', owner.type)
    .where('access.owner_id', '=', owner.id)
    .orderBy('repositories.id')
    .limit(limit)
    .offset(offset)
    .execute();
  const ownerIds = [...new Set(repositories.map((r) => r.owner_id))];
  const owners = ownerIds.length ? await db.selectFrom('users').selectAll().where('id', 'in', ownerIds).execute() : [];
  const byId = new Map(owners.map((o) => [o.id, o]));
  return repositories.map((repository) => ({ repository, owner: byId.get(repository.owner_id)! }));
}

/**
 * The ids among `ids` of repositories the list may name: those of the organization, or of an
 * organization of the enterprise.
 */
export async function repositoriesWithin(db: Executor, owner: ListOwner, ids: readonly number[]): Promise<Set<number>> {
  const found = new Set<number>();
  for (const part of chunks(ids)) {
    let query = db.selectFrom('repositories').select('id').where('id', 'in', part);
    query = owner.type === 'organization'
      ? query.where('owner_id', '=', owner.id)
      : query.where('owner_id', 'in', db.selectFrom('organizations').select('id').where('enterprise_id', '=', owner.id));
    for (const row of await query.execute()) found.add(row.id);
  }
  return found;
}

export async function addRepositories(db: Executor, owner: ListOwner, ids: readonly number[], now: string): Promise<void> {
  for (const part of chunks(ids)) {
    await db
      .insertInto('updater_access_repositories')
      .values(part.map((id) => ({ owner_type: owner.type, owner_id: owner.id, repository_id: id, created_at: now })))
      .onConflict((oc) => oc.columns(['owner_type', 'owner_id', 'repository_id']).doNothing())
      .execute();
  }
}

export async function removeRepositories(db: Executor, owner: ListOwner, ids: readonly number[]): Promise<void> {
  for (const part of chunks(ids)) {
    await db
      .deleteFrom('updater_access_repositories')
      .where('owner_type', '=', owner.type)
      .where('owner_id', '=', owner.id)
      .where('repository_id', 'in', part)
      .execute();
  }
}

/**
 * A repository moved to account `ownerId`: it leaves the lists that may no longer name it (an
 * organization's other than its new owner's, an enterprise's the new owner is not an organization of).
 */
export async function dropFromListsOutOfReach(db: Executor, repositoryId: number, ownerId: number): Promise<void> {
  await db
    .deleteFrom('updater_access_repositories')
    .where('repository_id', '=', repositoryId)
    .where((eb) => eb.or([
      eb.and([eb('owner_type', '=', 'organization'), eb('owner_id', '!=', ownerId)]),
      eb.and([
        eb('owner_type', '=', 'enterprise'),
        eb('owner_id', 'not in', eb.selectFrom('organizations').select('enterprise_id').where('id', '=', ownerId).where('enterprise_id', 'is not', null)),
      ]),
    ]))
    .execute();
}
