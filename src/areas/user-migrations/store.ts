// SQL of user migrations: the migration rows, their repositories and locks, and the batched reads the
// export streams from (keyset pagination, so memory stays flat whatever the repository's size).
import type { Selectable } from 'kysely';
import type { Executor } from '../../db/index.ts';
import type { RepositoryRow } from '../../core/repositories/representations.ts';
import type { UserRow } from '../../core/accounts/store.ts';
import type { IssuesTable } from '../../core/issues/tables.ts';
import type { TeamsTable } from '../../db/schema.ts';
import type { UserMigrationsTable } from './tables.ts';

export type MigrationRow = Selectable<UserMigrationsTable>;
export type IssueRow = Selectable<IssuesTable>;

export type MigrationInsert = Omit<MigrationRow, 'id'>;

export async function insertMigration(db: Executor, values: MigrationInsert, repositoryIds: number[]): Promise<MigrationRow> {
  const row = await db.insertInto('user_migrations').values(values).returningAll().executeTakeFirstOrThrow();
  if (repositoryIds.length) {
    await db
      .insertInto('user_migration_repositories')
      .values(repositoryIds.map((repository_id, position) => ({ migration_id: row.id, repository_id, position })))
      .execute();
  }
  return row;
}

/** The owner's exports pending or exporting. */
export async function countExportsInProgress(db: Executor, ownerId: number): Promise<number> {
  const row = await db
    .selectFrom('user_migrations')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('owner_id', '=', ownerId)
    .where('state', 'in', ['pending', 'exporting'])
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** A user's archives kept on disk: finished ones not yet deleted (with their bytes), and exports in progress, which will be. */
export async function keptArchives(db: Executor, ownerId: number): Promise<{ count: number; bytes: number }> {
  const row = await db
    .selectFrom('user_migrations')
    .select((eb) => [eb.fn.countAll<number | string>().as('count'), eb.fn.coalesce(eb.fn.sum<number | string>('archive_size'), eb.lit(0)).as('bytes')])
    .where('owner_id', '=', ownerId)
    .where((eb) => eb.or([eb('state', 'in', ['pending', 'exporting']), eb.and([eb('state', '=', 'exported'), eb('archive_key', 'is not', null)])]))
    .executeTakeFirstOrThrow();
  return { count: Number(row.count), bytes: Number(row.bytes) };
}

/** Locks the repositories that no migration holds yet; returns how many it locked. */
export async function lockRepositories(db: Executor, migrationId: number, repositoryIds: number[]): Promise<number> {
  if (!repositoryIds.length) return 0;
  const result = await db
    .updateTable('repositories')
    .set({ locked_by_migration_id: migrationId })
    .where('id', 'in', repositoryIds)
    .where('locked_by_migration_id', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function unlockRepository(db: Executor, migrationId: number, repositoryId: number): Promise<boolean> {
  const result = await db
    .updateTable('repositories')
    .set({ locked_by_migration_id: null })
    .where('id', '=', repositoryId)
    .where('locked_by_migration_id', '=', migrationId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function lockedRepositories(db: Executor, migrationId: number): Promise<RepositoryRow[]> {
  return db.selectFrom('repositories').selectAll().where('locked_by_migration_id', '=', migrationId).orderBy('id').execute();
}

export async function findMigration(db: Executor, id: number): Promise<MigrationRow | undefined> {
  return db.selectFrom('user_migrations').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listMigrations(db: Executor, ownerId: number, limit: number, offset: number): Promise<{ rows: MigrationRow[]; total: number }> {
  const rows = await db.selectFrom('user_migrations').selectAll().where('owner_id', '=', ownerId).orderBy('id').limit(limit).offset(offset).execute();
  const { count } = await db
    .selectFrom('user_migrations')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('owner_id', '=', ownerId)
    .executeTakeFirstOrThrow();
  return { rows, total: Number(count) };
}

/** The repositories of some migrations, in request order, with their owners. */
export async function migrationRepositories(
  db: Executor,
  migrationIds: number[],
  page?: { limit: number; offset: number },
): Promise<(RepositoryRow & { migration_id: number; owner: UserRow })[]> {
  if (!migrationIds.length) return [];
  let query = db
    .selectFrom('user_migration_repositories as m')
    .innerJoin('repositories as r', 'r.id', 'm.repository_id')
    .selectAll('r')
    .select('m.migration_id')
    .where('m.migration_id', 'in', migrationIds)
    .orderBy('m.migration_id')
    .orderBy('m.position');
  if (page) query = query.limit(page.limit).offset(page.offset);
  const rows = await query.execute();
  const owners = await usersById(db, [...new Set(rows.map((r) => r.owner_id))]);
  return rows.map((r) => ({ ...r, owner: owners.get(r.owner_id)! }));
}

export async function countMigrationRepositories(db: Executor, migrationId: number): Promise<number> {
  const { count } = await db
    .selectFrom('user_migration_repositories')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('migration_id', '=', migrationId)
    .executeTakeFirstOrThrow();
  return Number(count);
}

export async function usersById(db: Executor, ids: number[]): Promise<Map<number, UserRow>> {
  if (!ids.length) return new Map();
  const rows = await db.selectFrom('users').selectAll().where('id', 'in', ids).execute();
  return new Map(rows.map((u) => [u.id, u]));
}

// --- State changes of the export ----------------------------------------------------------------

/** Starts a run: a pending migration, or one whose earlier run died while exporting. */
export async function beginExport(db: Executor, id: number, run: string, now: string): Promise<MigrationRow | undefined> {
  return db
    .updateTable('user_migrations')
    .set({ state: 'exporting', export_run: run, records_exported: 0, updated_at: now })
    .where('id', '=', id)
    .where('state', 'in', ['pending', 'exporting'])
    .returningAll()
    .executeTakeFirst();
}

export async function recordProgress(db: Executor, id: number, run: string, records: number): Promise<void> {
  await db.updateTable('user_migrations').set({ records_exported: records }).where('id', '=', id).where('export_run', '=', run).execute();
}

/** Finishes the run; false when another run has taken the migration over. */
export async function finishExport(db: Executor, id: number, run: string, archive: { key: string; size: number }, now: string): Promise<boolean> {
  const result = await db
    .updateTable('user_migrations')
    .set({ state: 'exported', archive_key: archive.key, archive_size: archive.size, exported_at: now, updated_at: now })
    .where('id', '=', id)
    .where('export_run', '=', run)
    .where('state', '=', 'exporting')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Fails a migration and releases its repositories in the same transaction (a failed migration has
 * nothing to move, so nothing stays locked for it). With `run`, only while that run still holds the
 * export; without, whichever run held it last (a job out of attempts). False when nothing changed:
 * another run took it over, or it had already finished or failed.
 */
export async function failExport(db: Executor, id: number, run: string | null, failure: string, now: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    let update = trx.updateTable('user_migrations').set({ state: 'failed', failure, updated_at: now }).where('id', '=', id);
    update = run === null ? update.where('state', 'in', ['pending', 'exporting']) : update.where('export_run', '=', run).where('state', '=', 'exporting');
    const result = await update.executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) return false;
    await unlockAll(trx, id);
    return true;
  });
}

async function unlockAll(trx: Executor, migrationId: number): Promise<void> {
  await trx.updateTable('repositories').set({ locked_by_migration_id: null }).where('locked_by_migration_id', '=', migrationId).execute();
}

/** The run each of these migrations' exports is in, for those exporting now. */
export async function exportingRuns(db: Executor, ids: number[]): Promise<Map<number, string>> {
  if (!ids.length) return new Map();
  const rows = await db.selectFrom('user_migrations').select(['id', 'export_run']).where('id', 'in', ids).where('state', '=', 'exporting').execute();
  return new Map(rows.flatMap((r) => (r.export_run === null ? [] : [[r.id, r.export_run] as const])));
}

/** Forgets the archive (deleted or expired); the migration itself stays. Returns the key it had, if any. */
export async function dropArchive(db: Executor, id: number, now: string): Promise<string | null> {
  return db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom('user_migrations').select('archive_key').where('id', '=', id).executeTakeFirst();
    if (!row?.archive_key) return null;
    const result = await trx
      .updateTable('user_migrations')
      .set({ archive_key: null, archive_deleted_at: now })
      .where('id', '=', id)
      .where('archive_key', '=', row.archive_key)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0 ? row.archive_key : null;
  });
}

/** Migrations whose archive was exported at or before `cutoff` and is still stored. */
export async function expiredArchives(db: Executor, cutoff: string, limit: number): Promise<number[]> {
  const rows = await db
    .selectFrom('user_migrations')
    .select('id')
    .where('archive_key', 'is not', null)
    .where('exported_at', '<=', cutoff)
    .orderBy('exported_at')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

// --- What the export reads -------------------------------------------------------------------------

export const BATCH = 500;

/**
 * The users an export names: the migration's owner and everyone who wrote, acted on, was assigned to
 * or was asked to review something in the repositories; a page of them after `afterId`.
 */
export async function involvedUsers(db: Executor, ownerId: number, repositoryIds: number[], afterId: number, limit: number): Promise<UserRow[]> {
  let query = db.selectFrom('users').selectAll().where('id', '>', afterId);
  if (repositoryIds.length) {
    const issueIds = db.selectFrom('issues').select('id').where('repository_id', 'in', repositoryIds);
    // The nullable columns come first, so the union's type admits them.
    const involved = db
      .selectFrom('issue_events')
      .select('subject_user_id as user_id')
      .where('repository_id', 'in', repositoryIds)
      .where('subject_user_id', 'is not', null)
      .union(db.selectFrom('issue_review_requests').select('user_id').where('issue_id', 'in', issueIds).where('user_id', 'is not', null))
      .union(db.selectFrom('issues').select('author_id as user_id').where('repository_id', 'in', repositoryIds))
      .union(db.selectFrom('issue_comments').select('author_id as user_id').where('repository_id', 'in', repositoryIds))
      .union(db.selectFrom('issue_events').select('actor_id as user_id').where('repository_id', 'in', repositoryIds))
      .union(db.selectFrom('issue_assignees').select('user_id').where('issue_id', 'in', issueIds));
    query = query.where((eb) => eb.or([eb('id', '=', ownerId), eb('id', 'in', involved)]));
  } else {
    query = query.where('id', '=', ownerId);
  }
  return query.orderBy('id').limit(limit).execute();
}

/** The organizations a user belongs to (any role), with the user's roles. */
export async function userOrganizations(db: Executor, userId: number): Promise<{ org: UserRow; roles: string[] }[]> {
  const rows = await db
    .selectFrom('org_memberships as m')
    .innerJoin('users as o', 'o.id', 'm.org_id')
    .selectAll('o')
    .select('m.role')
    .where('m.user_id', '=', userId)
    .orderBy('o.id')
    .execute();
  const byOrg = new Map<number, { org: UserRow; roles: string[] }>();
  for (const { role, ...org } of rows) {
    const entry = byOrg.get(org.id) ?? { org, roles: [] };
    entry.roles.push(role);
    byOrg.set(org.id, entry);
  }
  return [...byOrg.values()];
}

export type TeamRow = Selectable<TeamsTable>;
/** A team with its organization's login (its URLs name it). */
export type TeamWithOrg = TeamRow & { org_login: string };

/** A page of a repository's issues or pull requests, by number, with their comment counts. */
export async function issuesAfter(db: Executor, repositoryId: number, pullRequests: boolean, afterNumber: number, limit: number) {
  return db
    .selectFrom('issues as i')
    .selectAll('i')
    .select((eb) =>
      eb.selectFrom('issue_comments as c').select((c) => c.fn.countAll<number>().as('n')).whereRef('c.issue_id', '=', 'i.id').as('comment_count'),
    )
    .where('i.repository_id', '=', repositoryId)
    .where('i.is_pull_request', '=', pullRequests ? 1 : 0)
    .where('i.number', '>', afterNumber)
    .orderBy('i.number')
    .limit(limit)
    .execute();
}

export async function issuesById(db: Executor, ids: number[]): Promise<Map<number, IssueRow>> {
  if (!ids.length) return new Map();
  const rows = await db.selectFrom('issues').selectAll().where('id', 'in', ids).execute();
  return new Map(rows.map((i) => [i.id, i]));
}

export async function teamsById(db: Executor, ids: number[]): Promise<Map<number, TeamWithOrg>> {
  if (!ids.length) return new Map();
  const rows = await db.selectFrom('teams as t').innerJoin('users as o', 'o.id', 't.org_id').selectAll('t').select('o.login as org_login').where('t.id', 'in', ids).execute();
  return new Map(rows.map((t) => [t.id, t]));
}

/** Assignees of some issues, by login. */
export async function assigneesOf(db: Executor, issueIds: number[]): Promise<Map<number, UserRow[]>> {
  const out = new Map<number, UserRow[]>();
  if (!issueIds.length) return out;
  const rows = await db
    .selectFrom('issue_assignees as a')
    .innerJoin('users as u', 'u.id', 'a.user_id')
    .selectAll('u')
    .select('a.issue_id')
    .where('a.issue_id', 'in', issueIds)
    .orderBy('u.login_lower')
    .execute();
  for (const { issue_id, ...user } of rows) out.set(issue_id, [...(out.get(issue_id) ?? []), user]);
  return out;
}

/** Requested reviewers (users and teams) of some pull requests. */
export async function reviewRequestsOf(db: Executor, issueIds: number[]): Promise<Map<number, { users: UserRow[]; teams: TeamWithOrg[] }>> {
  const out = new Map<number, { users: UserRow[]; teams: TeamWithOrg[] }>();
  if (!issueIds.length) return out;
  const rows = await db.selectFrom('issue_review_requests').selectAll().where('issue_id', 'in', issueIds).orderBy('id').execute();
  const users = await usersById(db, rows.flatMap((r) => (r.user_id === null ? [] : [r.user_id])));
  const teams = await teamsById(db, rows.flatMap((r) => (r.team_id === null ? [] : [r.team_id])));
  for (const row of rows) {
    const entry = out.get(row.issue_id) ?? { users: [], teams: [] };
    const user = row.user_id === null ? undefined : users.get(row.user_id);
    const team = row.team_id === null ? undefined : teams.get(row.team_id);
    if (user) entry.users.push(user);
    if (team) entry.teams.push(team);
    out.set(row.issue_id, entry);
  }
  return out;
}

/** A page of a repository's issue comments, by id. */
export async function commentsAfter(db: Executor, repositoryId: number, afterId: number, limit: number) {
  return db.selectFrom('issue_comments').selectAll().where('repository_id', '=', repositoryId).where('id', '>', afterId).orderBy('id').limit(limit).execute();
}

/** A page of a repository's issue events, by id. */
export async function eventsAfter(db: Executor, repositoryId: number, afterId: number, limit: number) {
  return db.selectFrom('issue_events').selectAll().where('repository_id', '=', repositoryId).where('id', '>', afterId).orderBy('id').limit(limit).execute();
}

/** Which of `ids` are still migrations (a deleted user's are gone). */
export async function existingMigrations(db: Executor, ids: number[]): Promise<Set<number>> {
  if (!ids.length) return new Set();
  const rows = await db.selectFrom('user_migrations').select('id').where('id', 'in', ids).execute();
  return new Set(rows.map((row) => row.id));
}
