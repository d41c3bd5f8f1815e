// Repositories: lookups by owner and name or by id, with their owners and the facts the full
// representation shows (counts, each one correlated subquery so a page of repositories is one
// query); and their changes. Lists: ./list-store.ts; who may access them: core/access.
import { sql, type ExpressionBuilder, type Insertable } from 'kysely';
import type { Executor } from '../../db/index.ts';
import { reusableQuery } from '../../db/prepared.ts';
import { cachedRow } from '../../db/changes.ts';
import type { Database } from '../../db/schema.ts';
import type { RepositoriesTable, RepositoryPermission } from '../../db/tables/repositories.ts';
import type { UserRow } from '../accounts/store.ts';
import type { RepositoryFacts, RepositoryOwner, RepositoryRow } from './representations.ts';

/** The repository `owner/name` (a `.git` suffix and the case of either ignored), with its owner's account. */
export async function findRepository(db: Executor, owner: string, name: string): Promise<(RepositoryRow & { owner: UserRow }) | undefined> {
  const ownerLower = owner.toLowerCase();
  const nameLower = name.replace(/\.git$/i, '').toLowerCase();
  const row = await repositoriesByName(db, `${ownerLower}/${nameLower}`, ownerLower, nameLower);
  return row ? repositoryWithOwner(row) : undefined;
}

export async function insertRepository(db: Executor, values: Insertable<RepositoriesTable>): Promise<RepositoryRow> {
  return db.insertInto('repositories').values(values).returningAll().executeTakeFirstOrThrow();
}

/**
 * The repository a deletion is about to delete, locked for it (PostgreSQL) before any other row the
 * deletion writes: concurrent deletions of one repository queue here, in one order, instead of
 * taking the rows its cascades reach in different orders (a deadlock), and the later ones find it
 * gone. SQLite runs one transaction at a time. Undefined when it is gone.
 */
export async function lockRepositoryToDelete(trx: Executor, id: number, postgres: boolean): Promise<{ id: number } | undefined> {
  const query = trx.selectFrom('repositories').select('id').where('id', '=', id);
  return (postgres ? query.forUpdate() : query).executeTakeFirst();
}

export async function deleteRepository(db: Executor, id: number): Promise<void> {
  await db.deleteFrom('repositories').where('id', '=', id).execute();
}

// --- Former names: renamed and transferred repositories ---------------------------------------------

/** The repository that was `owner/name` before a rename or transfer. */
export async function findFormerName(db: Executor, owner: string, name: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('repository_former_names')
    .select('repository_id')
    .where('owner_login_lower', '=', owner.toLowerCase())
    .where('name_lower', '=', name.replace(/\.git$/i, '').toLowerCase())
    .executeTakeFirst();
  return row?.repository_id;
}

/** A name taken by a repository is no longer a former name of another. */
export async function dropFormerName(db: Executor, ownerLogin: string, name: string): Promise<void> {
  await db.deleteFrom('repository_former_names').where('owner_login_lower', '=', ownerLogin.toLowerCase()).where('name_lower', '=', name.toLowerCase()).execute();
}

/** Moves a repository to `owner_id`/`name`, keeping its former name. */
export async function moveRepository(db: Executor, repository: RepositoryRow & { owner: { login: string } }, to: { owner_id: number; owner_login: string; name: string }, now: string): Promise<void> {
  await dropFormerName(db, to.owner_login, to.name);
  await db
    .insertInto('repository_former_names')
    .values({ owner_login_lower: repository.owner.login.toLowerCase(), name_lower: repository.name_lower, repository_id: repository.id })
    .onConflict((oc) => oc.columns(['owner_login_lower', 'name_lower']).doUpdateSet({ repository_id: repository.id }))
    .execute();
  await db
    .updateTable('repositories')
    .set({ owner_id: to.owner_id, name: to.name, name_lower: to.name.toLowerCase(), updated_at: now })
    .where('id', '=', repository.id)
    .execute();
}

/** What a transfer takes away: the old owner's team grants and its installations' selections of the repository. */
export async function detachFromOwner(db: Executor, repositoryId: number, formerOwnerId: number): Promise<void> {
  await db.deleteFrom('team_repositories').where('repository_id', '=', repositoryId).execute();
  await db
    .deleteFrom('installation_repositories')
    .where('repository_id', '=', repositoryId)
    .where('installation_id', 'in', (eb) => eb.selectFrom('installations').select('id').where('account_id', '=', formerOwnerId))
    .execute();
}

/** The installations on a repository's owner that cover it (all repositories, or it selected). */
export async function installationsCovering(db: Executor, repository: { id: number; owner_id: number }): Promise<number[]> {
  const rows = await db
    .selectFrom('installations')
    .select('installations.id')
    .where('installations.account_id', '=', repository.owner_id)
    .where((eb) => eb.or([
      eb('installations.repository_selection', '=', 'all'),
      eb.exists(eb.selectFrom('installation_repositories').select('installation_repositories.repository_id')
        .whereRef('installation_repositories.installation_id', '=', 'installations.id')
        .where('installation_repositories.repository_id', '=', repository.id)),
    ]))
    .execute();
  return rows.map((row) => row.id);
}

export async function setGitPath(db: Executor, id: number, gitPath: string): Promise<void> {
  await db.updateTable('repositories').set({ git_path: gitPath }).where('id', '=', id).execute();
}

/** A user's watch state of a repository (created or replaced). */
export async function setSubscription(db: Executor, repositoryId: number, userId: number, state: { subscribed: boolean; ignored: boolean }, now: string) {
  const flags = { subscribed: state.subscribed ? 1 : 0, ignored: state.ignored ? 1 : 0 };
  return db
    .insertInto('repository_subscriptions')
    .values({ repository_id: repositoryId, user_id: userId, ...flags, created_at: now })
    .onConflict((oc) => oc.columns(['repository_id', 'user_id']).doUpdateSet(flags))
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findRepositoryById(db: Executor, id: number): Promise<RepositoryRow | undefined> {
  return db.selectFrom('repositories').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * The repository as a writing transaction sees it, share-locked until the transaction ends
 * (PostgreSQL): a migration cannot lock it (an UPDATE of the row) until the write has committed, and a
 * write that comes after the lock sees it. SQLite runs one transaction at a time.
 */
export async function repositoryForWrite(trx: Executor, id: number, postgres: boolean): Promise<RepositoryRow | undefined> {
  const query = trx.selectFrom('repositories').selectAll().where('id', '=', id);
  return (postgres ? query.forShare() : query).executeTakeFirst();
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
  /**
   * The `repository_versions` version these were read with (the same statement): equal versions
   * mean an equal representation (null: no version row).
   */
  version: number | null;
}

/** Repositories by id with their owners, facts and version (one query); unknown ids are left out. */
export async function repositoriesWithFacts(db: Executor, repositoryIds: readonly number[]): Promise<RepositoryWithFacts[]> {
  if (!repositoryIds.length) return [];
  const rows = await db
    .selectFrom('repositories')
    .innerJoin('users', 'users.id', 'repositories.owner_id')
    .leftJoin('repository_versions', 'repository_versions.repository_id', 'repositories.id')
    .selectAll('repositories')
    .select((eb) => ['users.login as owner_login', 'users.type as owner_type', 'users.site_admin as owner_site_admin', 'repository_versions.version as representation_version', ...factColumns(eb)])
    .where('repositories.id', 'in', repositoryIds)
    .execute();
  return rows.map(({ owner_login, owner_type, owner_site_admin, open_issues, subscribers, representation_version, ...repository }) => ({
    repository: repository as RepositoryRow,
    owner: { id: repository.owner_id, login: owner_login, type: owner_type, site_admin: owner_site_admin },
    facts: factsOf({ open_issues, subscribers }),
    version: representation_version === null ? null : Number(representation_version),
  }));
}

export async function setCollaborator(db: Executor, repositoryId: number, userId: number, permission: RepositoryPermission, now: string) {
  return db
    .insertInto('repository_collaborators')
    .values({ repository_id: repositoryId, user_id: userId, permission, created_at: now })
    .onConflict((oc) => oc.columns(['repository_id', 'user_id']).doUpdateSet({ permission }))
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A user's direct permission on a repository, if they are its collaborator. */
export async function collaboratorPermission(db: Executor, repositoryId: number, userId: number): Promise<RepositoryPermission | undefined> {
  const row = await db.selectFrom('repository_collaborators').select('permission').where('repository_id', '=', repositoryId).where('user_id', '=', userId).executeTakeFirst();
  return row?.permission as RepositoryPermission | undefined;
}

/** Whether the user was a collaborator. */
export async function removeCollaborator(db: Executor, repositoryId: number, userId: number): Promise<boolean> {
  const removed = await db.deleteFrom('repository_collaborators').where('repository_id', '=', repositoryId).where('user_id', '=', userId).returning('user_id').executeTakeFirst();
  return removed !== undefined;
}

/** Removes a user's direct access to every repository of an owner; returns those repositories. */
export async function removeCollaboratorOfOwner(db: Executor, ownerId: number, userId: number): Promise<number[]> {
  const rows = await db
    .deleteFrom('repository_collaborators')
    .where('user_id', '=', userId)
    .where('repository_id', 'in', (eb) => eb.selectFrom('repositories').select('id').where('owner_id', '=', ownerId))
    .returning('repository_id')
    .execute();
  return rows.map((r) => r.repository_id);
}

/** Whether the team has the repository (with any permission). */
export async function teamHasRepository(db: Executor, teamId: number, repositoryId: number): Promise<boolean> {
  const row = await db.selectFrom('team_repositories').select('team_id').where('team_id', '=', teamId).where('repository_id', '=', repositoryId).executeTakeFirst();
  return row !== undefined;
}

export async function setTeamRepository(db: Executor, teamId: number, repositoryId: number, permission: RepositoryPermission): Promise<void> {
  await db
    .insertInto('team_repositories')
    .values({ team_id: teamId, repository_id: repositoryId, permission })
    .onConflict((oc) => oc.columns(['team_id', 'repository_id']).doUpdateSet({ permission }))
    .execute();
}

export async function removeTeamRepository(db: Executor, teamId: number, repositoryId: number): Promise<void> {
  await db.deleteFrom('team_repositories').where('team_id', '=', teamId).where('repository_id', '=', repositoryId).execute();
}

export async function updateRepository(
  db: Executor,
  repositoryId: number,
  values: { visibility?: string; description?: string | null; archived?: boolean },
  now: string,
): Promise<RepositoryRow> {
  return db
    .updateTable('repositories')
    .set({
      ...(values.visibility !== undefined ? { visibility: values.visibility } : {}),
      ...(values.description !== undefined ? { description: values.description } : {}),
      ...(values.archived !== undefined ? { archived: values.archived ? 1 : 0 } : {}),
      updated_at: now,
    })
    .where('id', '=', repositoryId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Every repository with its owner, oldest first, one page at a time, with the total. */
/** One page of every repository (ids, oldest first), and how many there are. */
export async function repositoryIdPage(db: Executor, page: { limit: number; offset: number }): Promise<{ ids: number[]; total: number }> {
  const [rows, count] = await Promise.all([
    db.selectFrom('repositories').select('id').orderBy('id').limit(page.limit).offset(page.offset).execute(),
    db.selectFrom('repositories').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { ids: rows.map((row) => row.id), total: Number(count.n) };
}

/** The owner's login and the name of the repository with this id (what `/repositories/{id}/...` stands for). */
export async function findRepositoryName(db: Executor, id: number): Promise<{ owner: string; name: string } | undefined> {
  return db
    .selectFrom('repositories')
    .innerJoin('users', 'users.id', 'repositories.owner_id')
    .select(['users.login as owner', 'repositories.name as name'])
    .where('repositories.id', '=', id)
    .executeTakeFirst();
}

/** Which of `ids` are repositories' ids (the git data sweep's bulk comparison). */
export async function existingRepositoryIds(db: Executor, ids: readonly number[]): Promise<Set<number>> {
  if (!ids.length) return new Set();
  const rows = await db.selectFrom('repositories').select('id').where('id', 'in', ids).execute();
  return new Set(rows.map((row) => row.id));
}

// Every route under /repos/{owner}/{repo} starts with `findRepository`: one named statement on
// PostgreSQL (src/db/prepared.ts), so its columns are named, never `*` (a prepared statement's
// columns are fixed when it is prepared). `repositoryWithOwner` names each of them again, so a
// column added to either table fails the typecheck here until it is listed.
const repositoryByName = reusableQuery('repository_by_name', (db, ownerLower: string, nameLower: string) =>
  db
    .selectFrom('repositories as r')
    .innerJoin('users as u', 'u.id', 'r.owner_id')
    .select([
      'r.id', 'r.owner_id', 'r.name', 'r.name_lower', 'r.description', 'r.visibility', 'r.language', 'r.topics', 'r.default_branch',
      'r.git_path', 'r.locked_by_migration_id', 'r.security_and_analysis', 'r.created_at', 'r.updated_at', 'r.pushed_at', 'r.archived',
      'u.login as owner_login', 'u.login_lower as owner_login_lower', 'u.type as owner_type', 'u.name as owner_name', 'u.email as owner_email',
      'u.site_admin as owner_site_admin', 'u.created_at as owner_created_at', 'u.updated_at as owner_updated_at',
      'u.suspended_at as owner_suspended_at', 'u.suspended_reason as owner_suspended_reason',
    ])
    .where('u.login_lower', '=', ownerLower)
    .where('r.name_lower', '=', nameLower),
);

// The row, kept between requests while nothing changed (src/db/changes.ts); each answer is made anew from it.
const repositoriesByName = cachedRow('repository_by_name', repositoryByName);

function repositoryWithOwner(row: Awaited<ReturnType<typeof repositoryByName>>[number]): RepositoryRow & { owner: UserRow } {
  const owner: UserRow = {
    id: row.owner_id,
    login: row.owner_login,
    login_lower: row.owner_login_lower,
    type: row.owner_type,
    name: row.owner_name,
    email: row.owner_email,
    site_admin: row.owner_site_admin,
    created_at: row.owner_created_at,
    updated_at: row.owner_updated_at,
    suspended_at: row.owner_suspended_at,
    suspended_reason: row.owner_suspended_reason,
  };
  const repository: RepositoryRow = {
    id: row.id,
    owner_id: row.owner_id,
    name: row.name,
    name_lower: row.name_lower,
    description: row.description,
    visibility: row.visibility,
    language: row.language,
    topics: row.topics,
    default_branch: row.default_branch,
    git_path: row.git_path,
    locked_by_migration_id: row.locked_by_migration_id,
    security_and_analysis: row.security_and_analysis,
    created_at: row.created_at,
    updated_at: row.updated_at,
    pushed_at: row.pushed_at,
    archived: row.archived,
  };
  return { ...repository, owner };
}

/** The git data folders (under the data directory) of the repositories the account owns. */
export async function ownedGitPaths(db: Executor, ownerId: number): Promise<string[]> {
  const rows = await db.selectFrom('repositories').select('git_path').where('owner_id', '=', ownerId).where('git_path', 'is not', null).execute();
  return rows.map((row) => row.git_path!);
}

/** Records, in a deleting transaction, the git data paths it leaves to remove once it has committed. */
export async function recordGitDataRemovals(db: Executor, paths: string[], now: string): Promise<void> {
  if (!paths.length) return;
  await db.insertInto('git_data_removals').values(paths.map((path) => ({ path, recorded_at: now }))).onConflict((oc) => oc.column('path').doNothing()).execute();
}

/** Up to `limit` git data paths deletions left to remove, oldest first. */
export async function pendingGitDataRemovals(db: Executor, limit: number): Promise<string[]> {
  const rows = await db.selectFrom('git_data_removals').select('path').orderBy('recorded_at').orderBy('path').limit(limit).execute();
  return rows.map((row) => row.path);
}

/** Forgets git data paths once removed. */
export async function forgetGitDataRemovals(db: Executor, paths: string[]): Promise<void> {
  if (!paths.length) return;
  await db.deleteFrom('git_data_removals').where('path', 'in', paths).execute();
}

// What a raw event (the operator's POST /_admin/events) names, each by its name, in one statement
// (named on PostgreSQL): the event route read them in a statement each. A name not given is null,
// and matches nothing.
const idsByName = reusableQuery('ids_by_name', (_db, ownerLower: string | null, nameLower: string | null, senderLower: string | null, accountLower: string | null) =>
  sql<{ repository_id: number | null; owner_id: number | null; sender_id: number | null; account_id: number | null }>`select
    (select r.id from repositories r inner join users u on u.id = r.owner_id where u.login_lower = ${ownerLower} and r.name_lower = ${nameLower}) as repository_id,
    (select id from users where login_lower = ${ownerLower}) as owner_id,
    (select id from users where login_lower = ${senderLower}) as sender_id,
    (select id from users where login_lower = ${accountLower}) as account_id`);

/**
 * The ids of a repository `owner/name` (as findRepository reads it: a `.git` suffix and the case of
 * either ignored) with its owner's, and of two accounts by login, each null when not given or not
 * found.
 */
export async function findIdsByName(
  db: Executor,
  names: { repository?: { owner: string; name: string }; sender?: string; account?: string },
): Promise<{ repository: { id: number; owner_id: number } | null; sender_id: number | null; account_id: number | null }> {
  const { repository } = names;
  const [row] = await idsByName(
    db,
    repository ? repository.owner.toLowerCase() : null,
    repository ? repository.name.replace(/\.git$/i, '').toLowerCase() : null,
    names.sender?.toLowerCase() ?? null,
    names.account?.toLowerCase() ?? null,
  );
  return {
    repository: row?.repository_id != null && row.owner_id != null ? { id: Number(row.repository_id), owner_id: Number(row.owner_id) } : null,
    sender_id: row?.sender_id == null ? null : Number(row.sender_id),
    account_id: row?.account_id == null ? null : Number(row.account_id),
  };
}
