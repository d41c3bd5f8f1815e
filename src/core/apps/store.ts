// Apps and their installations: lookups by slug and id, an app's installations (a page, one by id,
// the one on an account or covering a repository), and the repositories an installation token reaches.
import { sql, type Insertable, type RawBuilder, type Selectable, type SqlBool } from 'kysely';
import { idList, inIdList, isPostgres, reusableQuery, type IdList } from '../../db/prepared.ts';
import { cachedRead } from '../../db/changes.ts';
import type { Executor } from '../../db/index.ts';
import type { AppAuthorizationsTable, AppsTable, InstallationsTable } from '../../db/tables/apps.ts';
import type { UserRow } from '../accounts/store.ts';
import type { RepositoryRow } from '../repositories/representations.ts';

export type AppRow = Selectable<AppsTable>;
export type InstallationRow = Selectable<InstallationsTable>;
/** The account fields the simple user representation needs. */
export type AccountFacts = Pick<UserRow, 'id' | 'login' | 'type' | 'site_admin'>;
export interface InstallationWithAccount {
  installation: InstallationRow;
  account: AccountFacts;
}

export async function findApp(db: Executor, slug: string): Promise<AppRow | undefined> {
  return db.selectFrom('apps').selectAll().where('slug', '=', slug).executeTakeFirst();
}

export async function insertApp(db: Executor, values: Insertable<AppsTable>): Promise<AppRow> {
  return db.insertInto('apps').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function updateApp(db: Executor, id: number, values: Pick<AppsTable, 'permissions' | 'events' | 'updated_at'>): Promise<AppRow> {
  return db.updateTable('apps').set(values).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

/** An installation and, for a selection, its repositories. */
export async function insertInstallation(trx: Executor, values: Insertable<InstallationsTable>, repositoryIds: readonly number[]): Promise<InstallationRow> {
  const installation = await trx.insertInto('installations').values(values).returningAll().executeTakeFirstOrThrow();
  if (repositoryIds.length) {
    await trx.insertInto('installation_repositories').values(repositoryIds.map((id) => ({ installation_id: installation.id, repository_id: id }))).execute();
  }
  return installation;
}

/** Replaces what an installation covers: all of its account's repositories, or these. */
export async function setInstallationRepositories(trx: Executor, id: number, selection: 'all' | readonly number[], now: string): Promise<InstallationRow> {
  await trx.deleteFrom('installation_repositories').where('installation_id', '=', id).execute();
  if (selection !== 'all' && selection.length) {
    await trx.insertInto('installation_repositories').values(selection.map((repositoryId) => ({ installation_id: id, repository_id: repositoryId }))).execute();
  }
  return trx.updateTable('installations').set({ repository_selection: selection === 'all' ? 'all' : 'selected', updated_at: now }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export async function updateInstallationGrant(db: Executor, id: number, permissions: string, now: string): Promise<InstallationRow> {
  return db.updateTable('installations').set({ permissions, updated_at: now }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

/** A user's authorization of an app (its scopes replaced when it exists). */
export async function upsertAuthorization(db: Executor, values: Insertable<AppAuthorizationsTable>) {
  return db
    .insertInto('app_authorizations')
    .values(values)
    .onConflict((oc) => oc.columns(['app_id', 'user_id']).doUpdateSet({ scopes: values.scopes, updated_at: values.updated_at }))
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** An app's owner (apps created without one have none). */
export async function findAppOwner(db: Executor, app: Pick<AppRow, 'owner_id'>): Promise<AccountFacts | undefined> {
  if (app.owner_id === null) return undefined;
  return db.selectFrom('users').select(['id', 'login', 'type', 'site_admin']).where('id', '=', app.owner_id).executeTakeFirst();
}

export async function countInstallations(db: Executor, appId: number): Promise<number> {
  const row = await db.selectFrom('installations').select((eb) => eb.fn.countAll<number>().as('n')).where('app_id', '=', appId).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Installations joined with their accounts, the shape every lookup below answers. */
function installationsWithAccounts(db: Executor, appId: number) {
  return db
    .selectFrom('installations')
    .innerJoin('users as account', 'account.id', 'installations.account_id')
    .selectAll('installations')
    .select(['account.login as account_login', 'account.type as account_type', 'account.site_admin as account_site_admin'])
    .where('installations.app_id', '=', appId);
}

type JoinedRow = InstallationRow & { account_login: string; account_type: string; account_site_admin: UserRow['site_admin'] };

function split({ account_login, account_type, account_site_admin, ...installation }: JoinedRow): InstallationWithAccount {
  return {
    installation,
    account: { id: installation.account_id, login: account_login, type: account_type, site_admin: account_site_admin },
  };
}

/** One page of an app's installations, oldest first; `since` keeps those updated at or after it. */
export async function listInstallations(
  db: Executor,
  appId: number,
  page: { offset: number; limit: number; since?: string },
): Promise<{ total: number; installations: InstallationWithAccount[] }> {
  let count = db.selectFrom('installations').select((eb) => eb.fn.countAll<number>().as('n')).where('app_id', '=', appId);
  let rows = installationsWithAccounts(db, appId);
  if (page.since !== undefined) {
    count = count.where('updated_at', '>=', page.since);
    rows = rows.where('installations.updated_at', '>=', page.since);
  }
  const [total, found] = await Promise.all([
    count.executeTakeFirstOrThrow(),
    rows.orderBy('installations.id').limit(page.limit).offset(page.offset).execute(),
  ]);
  return { total: Number(total.n), installations: found.map((row) => split(row as JoinedRow)) };
}

export async function findInstallation(db: Executor, appId: number, installationId: number): Promise<InstallationWithAccount | undefined> {
  const row = await installationsWithAccounts(db, appId).where('installations.id', '=', installationId).executeTakeFirst();
  return row && split(row as JoinedRow);
}

/** The app's installation on an account (an app is installed at most once per account). */
export async function findInstallationOnAccount(db: Executor, appId: number, accountId: number): Promise<InstallationWithAccount | undefined> {
  const row = await installationsWithAccounts(db, appId).where('installations.account_id', '=', accountId).executeTakeFirst();
  return row && split(row as JoinedRow);
}

/** The app's installation on a repository's owner, if it covers the repository (all, or among the selected). */
export async function findInstallationCovering(
  db: Executor,
  appId: number,
  repository: Pick<RepositoryRow, 'id' | 'owner_id'>,
): Promise<InstallationWithAccount | undefined> {
  const row = await installationsWithAccounts(db, appId)
    .where('installations.account_id', '=', repository.owner_id)
    .where((eb) => eb.or([
      eb('installations.repository_selection', '=', 'all'),
      eb.exists(
        eb.selectFrom('installation_repositories as ir')
          .select('ir.repository_id')
          .whereRef('ir.installation_id', '=', 'installations.id')
          .where('ir.repository_id', '=', repository.id),
      ),
    ]))
    .executeTakeFirst();
  return row && split(row as JoinedRow);
}

export interface RepositoryScope {
  installationId: number;
  accountId: number;
  /** The token's own list, when it was narrowed (or its installation selects). */
  repositoryIds: readonly number[] | null;
}

/**
 * The repositories an installation token reaches, as a condition on `r` (a `repositories` row): the
 * account's, those its installation covers now, and (`named`) those the token names when it names
 * any. The page and its poll's tag read this one definition; the values may be a reusable query's
 * placeholders (the poll's statement is one text for any scope, see `repositoryVersionsStatement`).
 */
function reachedBy(installationId: unknown, accountId: unknown, named: RawBuilder<SqlBool> | null) {
  return sql<SqlBool>`r.owner_id = ${accountId}
      and (exists (select 1 from installations i where i.id = ${installationId} and i.repository_selection = 'all')
        or exists (select 1 from installation_repositories ir where ir.installation_id = ${installationId} and ir.repository_id = r.id))
      ${named ? sql`and ${named}` : sql``}`;
}

/** One page of the repositories an installation token reaches (`reachedBy`), and how many there are in all. */
export async function installationRepositoryPage(
  db: Executor,
  scope: RepositoryScope,
  page: { offset: number; limit: number },
): Promise<{ total: number; repositories: RepositoryRow[] }> {
  if (scope.repositoryIds !== null && scope.repositoryIds.length === 0) return { total: 0, repositories: [] };
  const named = scope.repositoryIds === null ? null : sql<SqlBool>`r.id in (${sql.join([...scope.repositoryIds])})`;
  const reached = db.selectFrom('repositories as r').where(reachedBy(scope.installationId, scope.accountId, named));
  const [total, rows] = await Promise.all([
    reached.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    reached.selectAll('r').orderBy('r.id').limit(page.limit).offset(page.offset).execute(),
  ]);
  return { total: Number(total.n), repositories: rows };
}

/**
 * What a page of `installationRepositoryPage` is made of, in one statement and without reading the
 * repositories: how many there are, and the page's repositories as `id:version` (their
 * `repository_versions`), comma-separated in id order, with how many of them have no version.
 * Undefined when the app has no such installation (its answer is a 404).
 */
export async function installationRepositoryVersions(
  db: Executor,
  appId: number,
  scope: RepositoryScope,
  page: { offset: number; limit: number },
): Promise<{ total: number; page: string; unversioned: number } | undefined> {
  const key = `${appId}:${scope.installationId}:${scope.accountId}:${scope.repositoryIds?.join(',') ?? '*'}:${page.limit}:${page.offset}`;
  const row = await repositoryVersions(db, key, async () => {
    // Only when it is read: a kept answer needs no parameter.
    const ids = scope.repositoryIds && idList(db, scope.repositoryIds);
    return (await repositoryVersionsQuery(db, appId, scope.installationId, scope.accountId, ids, page.limit, page.offset))[0];
  });
  if (!row) return undefined;
  return { total: Number(row.total), page: row.page ?? '', unversioned: Number(row.unversioned) };
}

/**
 * `installationRepositoryVersions`' statement: one text for any scope (the token's list a
 * parameter: an array on PostgreSQL, a JSON array on SQLite, null for none), so that it is built
 * once and, on PostgreSQL, planned once per connection (src/db/prepared.ts).
 */
function repositoryVersionsStatement(appId: unknown, installationId: unknown, accountId: unknown, ids: unknown, limit: unknown, offset: unknown, postgres: boolean) {
  // The token's list is a value: an int4[] on PostgreSQL, a JSON array on SQLite, null when it names none.
  const none = postgres ? sql`cast(${ids} as int4[]) is null` : sql`${ids} is null`;
  const named = sql<SqlBool>`(${none} or ${inIdList(postgres, 'r.id', ids)})`;
  const reached = reachedBy(installationId, accountId, named);
  return sql<{ total: number | string; page: string | null; unversioned: number | string }>`select counted.total, listed.page, listed.unversioned
    from installations inst
    cross join (select count(*) as total from repositories r where ${reached}) counted
    cross join (
      select string_agg(cast(p.id as text) || ':' || coalesce(cast(v.version as text), '-'), ',' order by p.id) as page,
        count(*) - count(v.version) as unversioned
      from (select r.id from repositories r where ${reached} order by r.id limit ${limit} offset ${offset}) p
      left join repository_versions v on v.repository_id = p.id
    ) listed
    where inst.id = ${installationId} and inst.app_id = ${appId}`;
}

// Kept between requests while nothing changed (src/db/changes.ts).
const repositoryVersions = cachedRead<string, { total: number | string; page: string | null; unversioned: number | string } | undefined>('installation_repository_versions');

// Every poll of an installation's repositories runs one of these (docs/performance.md, "Third round, repository lists").
const repositoryVersionsQuery = reusableQuery('installation_repository_versions', (db, appId: number, installationId: number, accountId: number, ids: IdList | null, limit: number, offset: number) =>
  repositoryVersionsStatement(appId, installationId, accountId, ids, limit, offset, isPostgres(db)));

/** Revokes one token: it stops working at once on this process, within CODEHOST_LOOKUP_CACHE_MS on others (src/db/changes.ts). */
export async function deleteToken(db: Executor, tokenId: number): Promise<void> {
  await db.deleteFrom('tokens').where('id', '=', tokenId).execute();
}

/** Every app with its owner's login (null when it has none), oldest first, one page at a time, with the total. */
export async function listApps(db: Executor, page: { limit: number; offset: number }): Promise<{ rows: Array<AppRow & { owner_login: string | null }>; total: number }> {
  const rows = await db
    .selectFrom('apps')
    .leftJoin('users', 'users.id', 'apps.owner_id')
    .selectAll('apps')
    .select('users.login as owner_login')
    .orderBy('apps.id')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  const count = await db.selectFrom('apps').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return { rows, total: Number(count.n) };
}

/**
 * Sets (a time) or clears (null) an installation's suspension; whether it changed (two at once: one
 * changes it, the other finds nothing to do).
 */
export async function setInstallationSuspended(db: Executor, installationId: number, suspendedAt: string | null, now: string): Promise<boolean> {
  const changed = await db
    .updateTable('installations')
    .set({ suspended_at: suspendedAt, updated_at: now })
    .where('id', '=', installationId)
    .where('suspended_at', suspendedAt === null ? 'is not' : 'is', null)
    .executeTakeFirst();
  return Number(changed.numUpdatedRows) > 0;
}

/** Deletes an installation: its repositories and tokens go with it (the foreign keys cascade); whether it was there. */
export async function deleteInstallation(db: Executor, installationId: number): Promise<boolean> {
  const deleted = await db.deleteFrom('installations').where('id', '=', installationId).executeTakeFirst();
  return Number(deleted.numDeletedRows) > 0;
}
