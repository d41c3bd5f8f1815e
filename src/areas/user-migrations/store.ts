// SQL of user migrations: the migration rows, their repositories and locks, and the batched reads the
// export streams from (keyset pagination, so memory stays flat whatever the repository's size).
import { sql, type Selectable } from 'kysely';
import type { Executor } from '../../db/index.ts';
import { idList, inIdList, isPostgres, reusableQuery, type IdList } from '../../db/prepared.ts';
import type { RepositoryRow } from '../../core/repositories/representations.ts';
import type { UserRow } from '../../core/accounts/store.ts';
import type { IssueCommentsTable, IssuesTable } from '../../db/tables/issues.ts';
import type { TeamsTable } from '../../db/tables/accounts.ts';
import type { UserMigrationsTable } from '../../db/tables/user-migrations.ts';

export type MigrationRow = Selectable<UserMigrationsTable>;
export type IssueRow = Selectable<IssuesTable>;
type IssueCommentRow = Selectable<IssueCommentsTable>;

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

/**
 * Locks the repositories of `ownerId` that no migration holds yet; returns how many it locked. One
 * that moved to another owner meanwhile (a transfer committed since the start read it) is not locked.
 */
export async function lockRepositories(db: Executor, migrationId: number, ownerId: number, repositoryIds: number[]): Promise<number> {
  if (!repositoryIds.length) return 0;
  const result = await db
    .updateTable('repositories')
    .set({ locked_by_migration_id: migrationId })
    .where('id', 'in', repositoryIds)
    .where('owner_id', '=', ownerId)
    .where('locked_by_migration_id', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * The migration that locks a repository (null: none), read inside a write's transaction; on
 * PostgreSQL the row stays held until it commits, so a migration's lock waits for the write.
 */
export async function repositoryLock(trx: Executor, repositoryId: number, postgres: boolean): Promise<number | null> {
  let query = trx.selectFrom('repositories').select('locked_by_migration_id').where('id', '=', repositoryId);
  if (postgres) query = query.forUpdate();
  return (await query.executeTakeFirst())?.locked_by_migration_id ?? null;
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
export async function migrationRepositories(db: Executor, migrationIds: number[]): Promise<(RepositoryRow & { migration_id: number; owner: UserRow })[]> {
  if (!migrationIds.length) return [];
  const rows = await db
    .selectFrom('user_migration_repositories as m')
    .innerJoin('repositories as r', 'r.id', 'm.repository_id')
    .selectAll('r')
    .select('m.migration_id')
    .where('m.migration_id', 'in', migrationIds)
    .orderBy('m.migration_id')
    .orderBy('m.position')
    .execute();
  const owners = await usersById(db, [...new Set(rows.map((r) => r.owner_id))]);
  return rows.map((r) => ({ ...r, owner: owners.get(r.owner_id)! }));
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
 * another run took it over, or it had already finished or failed. `trx` is the caller's transaction.
 */
export async function failExport(trx: Executor, id: number, run: string | null, failure: string, now: string): Promise<boolean> {
  let update = trx.updateTable('user_migrations').set({ state: 'failed', failure, updated_at: now }).where('id', '=', id);
  update = run === null ? update.where('state', 'in', ['pending', 'exporting']) : update.where('export_run', '=', run).where('state', '=', 'exporting');
  const result = await update.executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) return false;
  await unlockAll(trx, id);
  return true;
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

/**
 * Forgets the archive (deleted or expired); the migration itself stays. Returns the key it had, if
 * any. `trx` is the caller's transaction (the read and the update are one).
 */
export async function dropArchive(trx: Executor, id: number, now: string): Promise<string | null> {
  const row = await trx.selectFrom('user_migrations').select('archive_key').where('id', '=', id).executeTakeFirst();
  if (!row?.archive_key) return null;
  const result = await trx
    .updateTable('user_migrations')
    .set({ archive_key: null, archive_deleted_at: now })
    .where('id', '=', id)
    .where('archive_key', '=', row.archive_key)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0 ? row.archive_key : null;
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
/** What a record shows of a user (a simple user). */
export type SimpleUserRow = Pick<UserRow, 'id' | 'login' | 'type' | 'site_admin'>;
/** What a record shows of a team. */
export type SimpleTeamRow = Pick<TeamWithOrg, 'id' | 'name' | 'slug' | 'org_login'>;

// Each batch of the export is read by reusable statements (src/db/prepared.ts), the same text
// whatever the batch holds: a batch's ids are one array parameter on PostgreSQL (a JSON array on
// SQLite), so PostgreSQL parses and plans each statement once per export, not once per batch. The
// issue and the users a record names come in its own row, not in statements of their own.

/**
 * The row of `table` a batch's row names by id, joined to it. On PostgreSQL a LATERAL subquery with
 * OFFSET 0 (which the planner keeps as written): one primary-key probe per row of the batch. A plain
 * join planned without statistics (tables just filled, not yet analyzed: the benchmark's, or after
 * an import) hashes the whole issues table for every batch. SQLite probes by rowid either way, and
 * has no LATERAL. `left`: the batch's row stays, with nulls, when the id names nothing.
 */
function byId(postgres: boolean, alias: string, columns: string[], table: string, id: string, left = false) {
  if (postgres) {
    return sql.raw(`${left ? 'left join' : 'cross join'} lateral (select ${columns.join(', ')} from ${table} where id = ${id} offset 0) ${alias}${left ? ' on true' : ''}`);
  }
  return sql.raw(`${left ? 'left join' : 'join'} ${table} ${alias} on ${alias}.id = ${id}`);
}

/**
 * A batch of one repository's rows after `after` in `key` order (`id`, or an issue's `number`), read
 * as a range of the `(repository_id, key)` index, in its order. With `repository_id = $1 ... order by
 * id` PostgreSQL may walk the primary key in id order and filter by repository, through every other
 * repository's rows (with statistics, estimating them spread evenly: the last repository's first
 * batch, and each repository's last, read the whole table), or, without statistics, read all of the
 * repository's rows after the key and sort them, for every batch. As a range of (repository_id, key)
 * ordered by both, only that index answers it, in order. SQLite takes the index for the plain form
 * (and not for the row comparison). Answers the condition and the order, for the table as `alias`.
 */
function afterInRepository(postgres: boolean, alias: string, key: 'id' | 'number', repositoryId: unknown, after: unknown) {
  if (!postgres) return { where: sql`repository_id = ${repositoryId} and ${sql.ref(key)} > ${after}`, order: sql.raw(`${alias}.${key}`) };
  return { where: sql`(repository_id, ${sql.ref(key)}) > (${repositoryId}, ${after}) and repository_id <= ${repositoryId}`, order: sql.raw(`${alias}.repository_id, ${alias}.${key}`) };
}

/** The batch size, written into the statements' text (it is the same for every batch). */
const LIMIT = sql.lit(BATCH);

/** What a record shows of its author. */
interface AuthorColumns {
  author_id: number;
  author_login: string;
  author_type: string;
  author_site_admin: number;
}
/** The columns of a user a record shows. */
const AUTHOR = ['login', 'type', 'site_admin'];
const AUTHOR_COLUMNS = sql.raw('u.login as author_login, u.type as author_type, u.site_admin as author_site_admin');

export type ExportIssueRow = Pick<IssueRow, 'id' | 'number' | 'title' | 'body' | 'state' | 'state_reason' | 'is_pull_request' | 'merged_at' | 'closed_at' | 'locked' | 'active_lock_reason' | 'created_at' | 'updated_at'>
  & AuthorColumns & { comment_count: number | string | null };

function issuesStatement(postgres: boolean, repositoryId: unknown, pullRequests: unknown, afterNumber: unknown) {
  const batch = afterInRepository(postgres, 'i', 'number', repositoryId, afterNumber);
  return sql<ExportIssueRow>`select i.id, i.number, i.title, i.body, i.state, i.state_reason, i.is_pull_request, i.merged_at, i.closed_at,
      i.locked, i.active_lock_reason, i.created_at, i.updated_at, i.author_id, ${AUTHOR_COLUMNS},
      (select count(*) from issue_comments c where c.issue_id = i.id) as comment_count
    from (select * from issues i where ${batch.where} and is_pull_request = ${pullRequests} order by ${batch.order} limit ${LIMIT}) i
    ${byId(postgres, 'u', AUTHOR, 'users', 'i.author_id')}
    order by ${batch.order}`;
}
const issuesQuery = reusableQuery('export_issues', (db, repositoryId: number, pullRequests: number, afterNumber: number) => issuesStatement(isPostgres(db), repositoryId, pullRequests, afterNumber));

/** A batch of a repository's issues or pull requests after `afterNumber`, by number, with their authors and comment counts. */
export async function issuesAfter(db: Executor, repositoryId: number, pullRequests: boolean, afterNumber: number) {
  return issuesQuery(db, repositoryId, pullRequests ? 1 : 0, afterNumber);
}

function assigneesStatement(postgres: boolean, issueIds: unknown) {
  return sql<SimpleUserRow & { issue_id: number }>`select a.issue_id, u.id, u.login, u.type, u.site_admin
    from (select * from issue_assignees where ${inIdList(postgres, 'issue_id', issueIds)}) a
    ${byId(postgres, 'u', ['id', ...AUTHOR, 'login_lower'], 'users', 'a.user_id')}
    order by u.login_lower`;
}
const assigneesQuery = reusableQuery('export_assignees', (db, issueIds: IdList) => assigneesStatement(isPostgres(db), issueIds));

/** Assignees of some issues, by login. */
export async function assigneesOf(db: Executor, issueIds: number[]): Promise<Map<number, SimpleUserRow[]>> {
  const out = new Map<number, SimpleUserRow[]>();
  if (!issueIds.length) return out;
  const rows = await assigneesQuery(db, idList(db, issueIds));
  for (const { issue_id, ...user } of rows) out.set(issue_id, [...(out.get(issue_id) ?? []), user]);
  return out;
}

/** A team named by `id` with its organization's login (none when the team, or its organization, is gone), as `alias`. */
function teamById(postgres: boolean, alias: string, id: string) {
  const team = 'select t.id, t.name, t.slug, o.login as org_login from teams t join users o on o.id = t.org_id';
  return postgres ? sql.raw(`left join lateral (${team} where t.id = ${id} offset 0) ${alias} on true`) : sql.raw(`left join (${team}) ${alias} on ${alias}.id = ${id}`);
}

function reviewRequestsStatement(postgres: boolean, issueIds: unknown) {
  return sql<{ issue_id: number; user_id: number | null; login: string | null; type: string | null; site_admin: number | null; team_id: number | null; name: string | null; slug: string | null; org_login: string | null }>`
    select r.issue_id, u.id as user_id, u.login, u.type, u.site_admin, t.id as team_id, t.name, t.slug, t.org_login
    from (select * from issue_review_requests where ${inIdList(postgres, 'issue_id', issueIds)}) r
    ${byId(postgres, 'u', ['id', ...AUTHOR], 'users', 'r.user_id', true)}
    ${teamById(postgres, 't', 'r.team_id')}
    order by r.id`;
}
const reviewRequestsQuery = reusableQuery('export_review_requests', (db, issueIds: IdList) => reviewRequestsStatement(isPostgres(db), issueIds));

/** Requested reviewers (users and teams) of some pull requests; a user or team gone since is left out. */
export async function reviewRequestsOf(db: Executor, issueIds: number[]): Promise<Map<number, { users: SimpleUserRow[]; teams: SimpleTeamRow[] }>> {
  const out = new Map<number, { users: SimpleUserRow[]; teams: SimpleTeamRow[] }>();
  if (!issueIds.length) return out;
  const rows = await reviewRequestsQuery(db, idList(db, issueIds));
  for (const row of rows) {
    const entry = out.get(row.issue_id) ?? { users: [], teams: [] };
    if (row.user_id !== null) entry.users.push({ id: row.user_id, login: row.login!, type: row.type!, site_admin: row.site_admin! });
    if (row.team_id !== null) entry.teams.push({ id: row.team_id, name: row.name!, slug: row.slug!, org_login: row.org_login! });
    out.set(row.issue_id, entry);
  }
  return out;
}

export type ExportCommentRow = Pick<IssueCommentRow, 'id' | 'body' | 'created_at' | 'updated_at'> & Pick<IssueRow, 'number' | 'is_pull_request'> & AuthorColumns;

function commentsStatement(postgres: boolean, repositoryId: unknown, afterId: unknown) {
  const batch = afterInRepository(postgres, 'c', 'id', repositoryId, afterId);
  return sql<ExportCommentRow>`select c.id, c.body, c.created_at, c.updated_at, i.number, i.is_pull_request, c.author_id, ${AUTHOR_COLUMNS}
    from (select * from issue_comments c where ${batch.where} order by ${batch.order} limit ${LIMIT}) c
    ${byId(postgres, 'i', ['number', 'is_pull_request'], 'issues', 'c.issue_id')}
    ${byId(postgres, 'u', AUTHOR, 'users', 'c.author_id')}
    order by ${batch.order}`;
}
const commentsQuery = reusableQuery('export_comments', (db, repositoryId: number, afterId: number) => commentsStatement(isPostgres(db), repositoryId, afterId));

/** A batch of a repository's issue comments after `afterId`, by id, each with its issue's number and kind and its author. */
export async function commentsAfter(db: Executor, repositoryId: number, afterId: number) {
  return commentsQuery(db, repositoryId, afterId);
}

interface ExportEventRow {
  id: number;
  event: string;
  created_at: string;
  number: number;
  actor_id: number;
  actor_login: string;
  actor_type: string;
  actor_site_admin: number;
  subject_id: number | null;
  subject_login: string | null;
  subject_type: string | null;
  subject_site_admin: number | null;
  team_id: number | null;
  team_name: string | null;
  team_slug: string | null;
  team_org_login: string | null;
}

function eventsStatement(postgres: boolean, repositoryId: unknown, afterId: unknown) {
  const batch = afterInRepository(postgres, 'e', 'id', repositoryId, afterId);
  return sql<ExportEventRow>`select e.id, e.event, e.created_at, i.number, e.actor_id, a.login as actor_login, a.type as actor_type, a.site_admin as actor_site_admin,
      s.id as subject_id, s.login as subject_login, s.type as subject_type, s.site_admin as subject_site_admin,
      t.id as team_id, t.name as team_name, t.slug as team_slug, t.org_login as team_org_login
    from (select * from issue_events e where ${batch.where} order by ${batch.order} limit ${LIMIT}) e
    ${byId(postgres, 'i', ['number'], 'issues', 'e.issue_id')}
    ${byId(postgres, 'a', AUTHOR, 'users', 'e.actor_id')}
    ${byId(postgres, 's', ['id', ...AUTHOR], 'users', 'e.subject_user_id', true)}
    ${teamById(postgres, 't', 'e.subject_team_id')}
    order by ${batch.order}`;
}
const eventsQuery = reusableQuery('export_events', (db, repositoryId: number, afterId: number) => eventsStatement(isPostgres(db), repositoryId, afterId));

/**
 * A batch of a repository's issue events after `afterId`, by id, each with its issue's number, its
 * actor, and the user or team it concerns (null when none, or gone since).
 */
export async function eventsAfter(db: Executor, repositoryId: number, afterId: number) {
  const rows = await eventsQuery(db, repositoryId, afterId);
  return rows.map((r) => ({
    id: r.id,
    event: r.event,
    created_at: r.created_at,
    number: r.number,
    actor: { id: r.actor_id, login: r.actor_login, type: r.actor_type, site_admin: r.actor_site_admin },
    subject: r.subject_id === null ? null : { id: r.subject_id, login: r.subject_login!, type: r.subject_type!, site_admin: r.subject_site_admin! },
    team: r.team_id === null ? null : { id: r.team_id, name: r.team_name!, slug: r.team_slug!, org_login: r.team_org_login! },
  }));
}

/** Which of `ids` are still migrations (a deleted user's are gone). */
export async function existingMigrations(db: Executor, ids: number[]): Promise<Set<number>> {
  if (!ids.length) return new Set();
  const rows = await db.selectFrom('user_migrations').select('id').where('id', 'in', ids).execute();
  return new Set(rows.map((row) => row.id));
}
