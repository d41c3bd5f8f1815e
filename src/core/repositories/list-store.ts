// The lists of repositories, one query each that filters, pages and counts: an account's
// repositories as a credential may see them (its reach into private ones, `readableBy` of
// core/access), a repository's watchers and the teams given it.
import { sql, type SqlBool } from 'kysely';
import type { Executor } from '../../db/index.ts';
import type { RepositoryPermission } from '../../db/tables/repositories.ts';
import type { TeamRow, UserRow } from '../accounts/store.ts';
import { memberAccess, readableBy } from '../access/index.ts';

const TRUE = sql<SqlBool>`1 = 1`;
const FALSE = sql<SqlBool>`1 = 0`;
const ids = (values: readonly number[]) => sql.join(values.map((v) => sql`${v}`));

/**
 * Where a credential reaches private (and internal) repositories, besides every public one; null:
 * nowhere. A private repository is listed when all three hold.
 */
export interface PrivateReach {
  /** The user whose own access must read it (`readableBy`); null: no user (an installation). */
  userId: number | null;
  /** Owners all of whose repositories the credential reaches, or null: every owner. Besides them, `installationIds`. */
  ownerIds: readonly number[] | null;
  /** Installations with selected repositories: the repositories they cover are reached too. */
  installationIds: readonly number[];
  /** The credential's own selection of repositories; null: no narrowing. */
  repositoryIds: readonly number[] | null;
}

/** Which repositories a list is about, before what the caller may see. */
export interface RepositoryListFilter {
  /** Repositories of this owner. */
  ownerId?: number;
  /** Repositories a user owns (`owner`), has access to through an organization, a team or as a collaborator without owning them (`member`), or either. */
  affiliation?: { userId: number; owner: boolean; member: boolean };
  visibility?: 'public' | 'private';
  /** Nothing matches (e.g. forks: codehost keeps none). */
  none?: boolean;
}

export interface RepositoryListOrder {
  sort: 'created' | 'updated' | 'pushed' | 'full_name';
  direction: 'asc' | 'desc';
}

function filterCondition(filter: RepositoryListFilter) {
  if (filter.none) return FALSE;
  const parts = [TRUE];
  if (filter.ownerId !== undefined) parts.push(sql<SqlBool>`r.owner_id = ${filter.ownerId}`);
  if (filter.visibility === 'public') parts.push(sql<SqlBool>`r.visibility = 'public'`);
  if (filter.visibility === 'private') parts.push(sql<SqlBool>`r.visibility <> 'public'`);
  const affiliation = filter.affiliation;
  if (affiliation) {
    const owned = sql<SqlBool>`r.owner_id = ${affiliation.userId}`;
    const member = sql<SqlBool>`(r.owner_id <> ${affiliation.userId} and ${memberAccess(sql`${affiliation.userId}`, sql.ref('r.id'), sql.ref('r.owner_id'))})`;
    if (affiliation.owner && affiliation.member) parts.push(sql<SqlBool>`(${owned} or ${member})`);
    else if (affiliation.owner) parts.push(owned);
    else if (affiliation.member) parts.push(member);
    else parts.push(FALSE);
  }
  return sql<SqlBool>`(${sql.join(parts, sql` and `)})`;
}

function reachCondition(reach: PrivateReach | null) {
  if (!reach) return sql<SqlBool>`r.visibility = 'public'`;
  const user = reach.userId === null ? TRUE : readableBy(reach.userId, 'r.id');
  let owners = TRUE;
  if (reach.ownerIds !== null) {
    const alternatives = [
      ...(reach.ownerIds.length ? [sql<SqlBool>`r.owner_id in (${ids(reach.ownerIds)})`] : []),
      ...(reach.installationIds.length
        ? [sql<SqlBool>`exists (select 1 from installation_repositories ir where ir.repository_id = r.id and ir.installation_id in (${ids(reach.installationIds)}))`]
        : []),
    ];
    owners = alternatives.length ? sql<SqlBool>`(${sql.join(alternatives, sql` or `)})` : FALSE;
  }
  const selected = reach.repositoryIds === null ? TRUE : reach.repositoryIds.length ? sql<SqlBool>`r.id in (${ids(reach.repositoryIds)})` : FALSE;
  return sql<SqlBool>`(r.visibility = 'public' or (${user} and ${owners} and ${selected}))`;
}

/** The owners of the private repositories a list could show a user (to look up an app's installations on them). */
export async function privateOwnerIds(db: Executor, filter: RepositoryListFilter, userId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('repositories as r')
    .select('r.owner_id')
    .distinct()
    .where(filterCondition(filter))
    .where('r.visibility', '<>', 'public')
    .where(readableBy(userId, 'r.id'))
    .execute();
  return rows.map((row) => row.owner_id);
}

/** Every repository of the filter the credential reaches (ids, unordered): where a list of what is in them looks. */
export async function reachedRepositoryIds(db: Executor, filter: RepositoryListFilter, reach: PrivateReach | null): Promise<number[]> {
  const rows = await db.selectFrom('repositories as r').select('r.id').where(filterCondition(filter)).where(reachCondition(reach)).execute();
  return rows.map((row) => row.id);
}

/** One page of the repositories a list shows (ids, in order), and how many there are in all (two queries). */
export async function repositoryPage(
  db: Executor,
  filter: RepositoryListFilter,
  reach: PrivateReach | null,
  order: RepositoryListOrder,
  page: { offset: number; limit: number },
): Promise<{ total: number; ids: number[] }> {
  const base = db
    .selectFrom('repositories as r')
    .innerJoin('users as o', 'o.id', 'r.owner_id')
    .where(filterCondition(filter))
    .where(reachCondition(reach));
  const direction = order.direction;
  let ordered = base.select('r.id');
  if (order.sort === 'full_name') ordered = ordered.orderBy('o.login_lower', direction).orderBy('r.name_lower', direction);
  else if (order.sort === 'updated') ordered = ordered.orderBy('r.updated_at', direction);
  else if (order.sort === 'pushed') ordered = ordered.orderBy(sql`coalesce(r.pushed_at, r.created_at)`, direction);
  else ordered = ordered.orderBy('r.created_at', direction);
  const [count, rows] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ordered.orderBy('r.id', direction).limit(page.limit).offset(page.offset).execute(),
  ]);
  return { total: Number(count.n), ids: rows.map((row) => row.id) };
}

/** A user's watch state of a repository, if they have one. */
export async function findSubscription(db: Executor, repositoryId: number, userId: number) {
  return db.selectFrom('repository_subscriptions').selectAll().where('repository_id', '=', repositoryId).where('user_id', '=', userId).executeTakeFirst();
}

/**
 * One page of a repository's watchers (subscribed, and still able to read it), in the order they
 * started watching, and how many there are (two queries).
 */
export async function subscriberPage(db: Executor, repositoryId: number, page: { offset: number; limit: number }): Promise<{ total: number; users: UserRow[] }> {
  const base = db
    .selectFrom('repository_subscriptions as s')
    .innerJoin('users', 'users.id', 's.user_id')
    .where('s.repository_id', '=', repositoryId)
    .where('s.subscribed', '=', 1)
    .where(readableBy('s.user_id', repositoryId));
  const [count, users] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    base.selectAll('users').orderBy('s.created_at').orderBy('users.id').limit(page.limit).offset(page.offset).execute(),
  ]);
  return { total: Number(count.n), users };
}

/** The teams with access to a repository, with their permission on it, whose organization is one of `orgIds` (by team id; two queries). */
export async function repositoryTeamPage(
  db: Executor,
  repositoryId: number,
  orgIds: readonly number[],
  page: { offset: number; limit: number },
): Promise<{ total: number; teams: (TeamRow & { permission: RepositoryPermission })[] }> {
  if (!orgIds.length) return { total: 0, teams: [] };
  const base = db
    .selectFrom('team_repositories as tr')
    .innerJoin('teams', 'teams.id', 'tr.team_id')
    .where('tr.repository_id', '=', repositoryId)
    .where('teams.org_id', 'in', [...orgIds]);
  const [count, rows] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    base.selectAll('teams').select('tr.permission').orderBy('teams.id').limit(page.limit).offset(page.offset).execute(),
  ]);
  return { total: Number(count.n), teams: rows.map((row) => ({ ...row, permission: row.permission as RepositoryPermission })) };
}

/** The organizations whose teams have access to a repository (one query). */
export async function repositoryTeamOrgIds(db: Executor, repositoryId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('team_repositories as tr')
    .innerJoin('teams', 'teams.id', 'tr.team_id')
    .select('teams.org_id')
    .distinct()
    .where('tr.repository_id', '=', repositoryId)
    .execute();
  return rows.map((row) => row.org_id);
}
