// SQL of the notifications area: subjects, threads and each user's last-change time (who follows a
// subject is subscription-store.ts). Every thread query starts from user_id so it reads one user's index range.
//
// Every query that answers the user (lists, counts, one thread, marking) keeps only the threads of
// repositories the user can read now, in the query itself, so pages, counts and marks agree: a
// thread of a repository the user lost is out of sight, and untouched, until access returns. The
// repositories to leave out are found first in one query that probes the index once per distinct
// repository of the user's threads (`hiddenRepositoryIds`); usually there are none, and the list
// queries stay the index-only range scans they were.
import { sql, type Insertable, type RawBuilder, type Selectable, type SqlBool } from 'kysely';
import type { Executor } from '../../db/index.ts';
import { reusableQuery } from '../../db/prepared.ts';
import { cachedRead } from '../../db/changes.ts';
import type { NotificationThreadsTable, ThreadSubscriptionsTable } from '../../db/tables/notifications.ts';
import { readableBy } from '../../core/access/index.ts';

export type ThreadRow = Selectable<NotificationThreadsTable>;
export type SubscriptionRow = Selectable<ThreadSubscriptionsTable>;
export type NewThread = Insertable<NotificationThreadsTable>;

/** Rows per multi-row insert (well under both databases' parameter limits). */
const CHUNK = 500;

export function chunks<T>(rows: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += CHUNK) out.push(rows.slice(i, i + CHUNK));
  return out;
}

export async function upsertSubject(
  db: Executor,
  subject: { repository_id: number; issue_id: number | null; subject_key: string; type: string; title: string; url: string | null },
  now: string,
): Promise<number> {
  const row = await db
    .insertInto('notification_subjects')
    .values({ ...subject, created_at: now, updated_at: now })
    .onConflict((oc) => oc.column('subject_key').doUpdateSet({ title: subject.title, type: subject.type, updated_at: now }))
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/**
 * Records notifications. A thread that exists takes the new reason and latest comment only from a
 * newer outbox row than the one that last set them (rows may be dispatched out of order); it
 * becomes unread and leaves "done" unless the user read it after the activity happened.
 */
export async function upsertThreads(db: Executor, rows: readonly NewThread[]): Promise<void> {
  const newer = sql`excluded.last_activity_id >= notification_threads.last_activity_id`;
  const readSince = sql`notification_threads.last_read_at is not null and notification_threads.last_read_at > excluded.updated_at`;
  for (const chunk of chunks(rows)) {
    await db
      .insertInto('notification_threads')
      .values(chunk)
      .onConflict((oc) =>
        oc.columns(['user_id', 'subject_id']).doUpdateSet({
          reason: sql`case when ${newer} then excluded.reason else notification_threads.reason end`,
          latest_comment_id: sql`case when ${newer} then excluded.latest_comment_id else notification_threads.latest_comment_id end`,
          last_activity_id: sql`case when ${newer} then excluded.last_activity_id else notification_threads.last_activity_id end`,
          unread: sql`case when ${readSince} then notification_threads.unread else 1 end`,
          done: sql`case when ${readSince} then notification_threads.done else 0 end`,
          updated_at: sql`case when excluded.updated_at > notification_threads.updated_at then excluded.updated_at else notification_threads.updated_at end`,
        }),
      )
      .execute();
  }
}

/**
 * Something in these users' notifications changed (their threads, their thread subscriptions): their
 * inbox version moves and their Last-Modified moves forward (never back). Every write of threads or
 * thread subscriptions calls it in its transaction: the conditional GETs are decided from it.
 */
export async function touchInboxes(db: Executor, userIds: readonly number[], now: string): Promise<void> {
  const sorted = [...new Set(userIds)].sort((a, b) => a - b);
  for (const chunk of chunks(sorted)) {
    await db
      .insertInto('notification_inboxes')
      .values(chunk.map((user_id) => ({ user_id, modified_at: now, version: 1 })))
      .onConflict((oc) =>
        oc.column('user_id').doUpdateSet({
          version: sql`notification_inboxes.version + 1`,
          modified_at: sql`case when excluded.modified_at > notification_inboxes.modified_at then excluded.modified_at else notification_inboxes.modified_at end`,
        }),
      )
      .execute();
  }
}

/**
 * Locks the user's inbox row until the transaction ends (PostgreSQL; SQLite runs one transaction at a
 * time), before a write of their threads or thread subscriptions: a repository's deletion moves the
 * inboxes of its threads' users before its cascade removes the threads, so a write that locked a
 * thread first and the inbox last could wait for the deletion while the deletion waits for it.
 */
export async function lockInbox(db: Executor, userId: number, postgres: boolean): Promise<void> {
  if (postgres) await db.selectFrom('notification_inboxes').select('user_id').where('user_id', '=', userId).forUpdate().execute();
}

/** The users who have threads in some repositories (whose lists a change of access there changes). */
export async function usersWithThreadsIn(db: Executor, repositoryIds: readonly number[]): Promise<number[]> {
  if (!repositoryIds.length) return [];
  const rows = await db.selectFrom('notification_threads').select('user_id').distinct().where('repository_id', 'in', repositoryIds).execute();
  return rows.map((r) => r.user_id);
}

/**
 * Unread, as the partial index `notification_threads_unread_by_user` (migration 0018) is defined:
 * with a literal, not a parameter, or neither database would use it.
 */
const unread = (column: string) => sql<SqlBool>`${sql.ref(column)} = 1`;

/** Past this many hidden repositories, queries test access thread by thread instead of by a list. */
const HIDDEN_LIST_MAX = 100;

/**
 * The distinct repositories of the user's threads, as the CTE `walk(repository_id)` (its last row is
 * null): a loose index scan of (user_id, repository_id, ...), one probe per repository, whatever the
 * number of threads (a DISTINCT over the user's range read every one of them: 1,000,000 index
 * entries for an inbox of 1,000,000 threads).
 */
const walkRepositories = (userId: number) => sql`with recursive walk(repository_id) as (
  select (select w.repository_id from notification_threads w where w.user_id = ${userId} order by w.repository_id limit 1)
  union all
  select (select w.repository_id from notification_threads w where w.user_id = ${userId} and w.repository_id > walk.repository_id order by w.repository_id limit 1)
  from walk where walk.repository_id is not null
)`;

/** Of the walk, the repositories the user cannot read now (access tested once per repository). */
const hiddenOf = (userId: number, columns = sql`walk.repository_id`) => sql`select ${columns} from walk where walk.repository_id is not null and not ${readableBy(userId, 'walk.repository_id')}`;

/** The repositories among those of the user's threads that the user cannot read now (one query). */
export async function hiddenRepositoryIds(db: Executor, userId: number): Promise<number[]> {
  const { rows } = await sql<{ repository_id: number }>`${walkRepositories(userId)} ${hiddenOf(userId)}`.execute(db);
  return rows.map((r) => r.repository_id);
}

/** A repository of the user's threads, as the lists are decided from it. */
export interface ListedRepository {
  id: number;
  /** Its `repository_versions` version (null: the repository is gone). */
  version: number | null;
  /** Whether the user can read it now. */
  readable: boolean;
}

/** What the user's lists are decided from (null: the user has no inbox row, nothing ever changed). */
export interface ListValidator {
  repositories: ListedRepository[];
  inbox: { version: number; modifiedAt: string; repositoriesDigest: string | null } | null;
  /** The thread asked for (`threadId`), if it is the user's (null: it is not, or none was asked for). */
  thread: { repositoryId: number; updatedAt: string; lastReadAt: string | null } | null;
}

/** Each repository of the walk: its id, its version and whether the user can read it now (1 or 0). */
const listedColumns = (userId: unknown) =>
  sql`walk.repository_id, v.version, case when ${readableBy(sql<number>`${userId}`, 'walk.repository_id')} then 1 else 0 end as readable`;
const listedFrom = sql`from walk left join repository_versions v on v.repository_id = walk.repository_id
    where walk.repository_id is not null`;

type ValidatorRow = { repository_id: number | null; version: number | string | null; readable: number | null; modified_at: string | null; digest: string | null; kind: string };

/** `listValidator`'s statement; with `threadId`, also the thread's row. Its values may be a reusable query's placeholders. */
function validatorStatement(userId: number, threadId?: number) {
  const thread = threadId === undefined
    ? sql``
    : sql`union all
    select t.repository_id, null, null, t.updated_at, t.last_read_at, 't' from notification_threads t where t.id = ${threadId} and t.user_id = ${userId}`;
  return sql<ValidatorRow>`${walkRepositories(userId)}
    select ${listedColumns(userId)}, null as modified_at, null as digest, 'r' as kind
    ${listedFrom}
    union all
    select null, i.version, null, i.modified_at, i.repositories_digest, 'i' from notification_inboxes i where i.user_id = ${userId}
    ${thread}`;
}

// Every poll runs one of these. Named statements on PostgreSQL: planning this one (the access test's
// subqueries) cost four times running it (docs/performance.md, "Polls on PostgreSQL: planned once").
const listValidatorQuery = reusableQuery('notifications_list_validator', (_db, userId: number) => validatorStatement(userId));
const threadValidatorQuery = reusableQuery('notifications_thread_validator', (_db, userId: number, threadId: number) => validatorStatement(userId, threadId));

/**
 * What a list needs before its page, in one statement: each repository of the user's threads (the
 * walk: one index probe per repository) with its version and whether the user can read it now, and
 * the user's inbox (version, Last-Modified, and the digest of the repositories it was last decided
 * from). A conditional GET is answered from this alone. With `threadId`, the same statement also
 * reads that thread of the user by primary key (one thread's GETs are decided from it too).
 */
export async function listValidator(db: Executor, userId: number, threadId?: number): Promise<ListValidator> {
  return validators(db, threadId === undefined ? userId : `${userId}:${threadId}`, async () =>
    validatorOf(threadId === undefined ? await listValidatorQuery(db, userId) : await threadValidatorQuery(db, userId, threadId)));
}

// Kept between requests while nothing changed (src/db/changes.ts): a poll that changes nothing runs no
// statement. Shared by the requests that read it: never changed after `validatorOf`.
// A validator holds a part per repository of the user's threads: at most 200,000 parts kept in all.
const validators = cachedRead<number | string, ListValidator>('notifications_validator', { limit: 200_000, weight: (v) => 1 + v.repositories.length });

/** The validator's rows (kind r: a repository, i: the inbox, t: the thread), as what the lists are decided from. */
function validatorOf(rows: readonly ValidatorRow[]): ListValidator {
  const repositories: ListedRepository[] = [];
  let inbox: ListValidator['inbox'] = null;
  let found: ListValidator['thread'] = null;
  for (const row of rows) {
    if (row.kind === 'i') inbox = { version: Number(row.version), modifiedAt: row.modified_at!, repositoriesDigest: row.digest };
    else if (row.kind === 't') found = { repositoryId: Number(row.repository_id), updatedAt: row.modified_at!, lastReadAt: row.digest };
    else repositories.push({ id: Number(row.repository_id), version: row.version === null ? null : Number(row.version), readable: Number(row.readable) === 1 });
  }
  repositories.sort((a, b) => a.id - b.id);
  return { repositories, inbox, thread: found };
}

/**
 * The repositories of the user's lists changed (a version, access, one gone) since they were last
 * decided: the inbox records them, its version moves and its Last-Modified moves to `now` (never
 * back). Once per change: of concurrent polls that saw the same change, one moves the version and the
 * others read what it recorded (so two parallel polls give the same tag).
 */
export async function recordListedRepositories(db: Executor, userId: number, digest: string, now: string): Promise<{ version: number; modifiedAt: string }> {
  const row = await db
    .insertInto('notification_inboxes')
    .values({ user_id: userId, modified_at: now, version: 1, repositories_digest: digest })
    .onConflict((oc) =>
      oc
        .column('user_id')
        .doUpdateSet({
          version: sql`notification_inboxes.version + 1`,
          repositories_digest: digest,
          modified_at: sql`case when excluded.modified_at > notification_inboxes.modified_at then excluded.modified_at else notification_inboxes.modified_at end`,
        })
        .where(sql<SqlBool>`notification_inboxes.repositories_digest is distinct from excluded.repositories_digest`),
    )
    .returning(['version', 'modified_at'])
    .executeTakeFirst();
  const recorded = row ?? (await db.selectFrom('notification_inboxes').select(['version', 'modified_at']).where('user_id', '=', userId).executeTakeFirstOrThrow());
  return { version: Number(recorded.version), modifiedAt: recorded.modified_at };
}

/** The condition that leaves out hidden repositories' threads (null: nothing to leave out). */
function readableOnly(userId: number, hidden: readonly number[], column: string) {
  if (!hidden.length) return null;
  if (hidden.length > HIDDEN_LIST_MAX) return readableBy(userId, column);
  return sql<SqlBool>`${sql.ref(column)} not in (${sql.join([...hidden])})`;
}

export interface ThreadFilter {
  userId: number;
  repositoryId?: number;
  /** Read threads too (done ones never). */
  all: boolean;
  /** Only these reasons. */
  reasons?: readonly string[];
  since?: string;
  before?: string;
}

const threadColumns = [
  't.id', 't.user_id', 't.subject_id', 't.repository_id', 't.reason', 't.unread', 't.done', 't.updated_at', 't.last_read_at',
  't.latest_comment_id', 't.created_at', 's.type as subject_type', 's.title as subject_title', 's.url as subject_url',
  'i.number as issue_number', 'i.is_pull_request',
] as const;

export type ThreadWithSubject = NonNullable<Awaited<ReturnType<typeof findThread>>>;

/** A thread of a list page: what its representation is made of. */
export type ListedThread = Pick<
  ThreadWithSubject,
  'id' | 'repository_id' | 'reason' | 'unread' | 'updated_at' | 'last_read_at' | 'latest_comment_id' | 'subject_type' | 'subject_title' | 'subject_url' | 'issue_number' | 'is_pull_request'
>;

/** A list's page with what it is decided from, read in one statement (one snapshot). */
export interface ListPage {
  validator: ListValidator;
  /** The page, newest update first. */
  threads: ListedThread[];
  /** How many threads the filter covers in all. */
  total: number;
}

type PageRow = ListedThread & ValidatorRow & { total: number | string | null };

/**
 * `listPage`'s statement for one shape of filter (which of its values are present): the values are
 * parameters (a reusable query's placeholders), so each shape is built once and, on PostgreSQL,
 * planned once per connection.
 *
 * The rows, told apart by `kind`: the validator's (r: each repository of the user's threads, with its
 * version and whether the user can read it now; i: the inbox), c: the count, p: the page's threads.
 * The threads of repositories the user cannot read are left out by the `listed` rows themselves.
 * The list and its count keep their index when nothing is hidden (the usual case): each has a variant
 * for hidden repositories, and an uncorrelated test (evaluated once) chooses one. With the filter on
 * `repository_id` always present, the count could no longer be read from the partial index of unread
 * threads alone (SQLite: 4 times the time), and SQLite chose another index for the page.
 * LIMIT and OFFSET are each an uncorrelated subquery (cast to bigint: a page past 2^31 threads can be
 * asked for), so that PostgreSQL guesses them alike in the generic plan and in a plan made for one
 * run's values: as plain parameters, the generic plan (which guesses a tenth of the rows for
 * each) cost more than a plan knowing offset 0 and limit 50 once users had 1,000 threads, and
 * PostgreSQL then planned the statement anew on every run (about 3 ms; test/areas/notifications/notifications-list-plan.test.ts).
 * No ORDER BY over the union (a union's rows come in no defined order): it cost SQLite a sort of
 * every branch, a sixth of the statement's time; the page's rows are put in order by `listPage`.
 */
function pageStatement(filter: ThreadFilter, params: { userId: unknown; repositoryId?: unknown; since?: unknown; before?: unknown; limit: unknown; offset: unknown }) {
  const { userId } = params;
  const conditions = [sql<SqlBool>`t.user_id = ${userId}`];
  // Unread implies not done, so the unread list is one range of the partial index of unread threads
  // (user_id, updated_at, id) where unread = 1; its predicate is written as a literal, which both
  // databases need to use it.
  conditions.push(filter.all ? sql<SqlBool>`t.done = 0` : unread('t.unread'));
  if (filter.repositoryId !== undefined) conditions.push(sql<SqlBool>`t.repository_id = ${params.repositoryId}`);
  if (filter.reasons) conditions.push(sql<SqlBool>`t.reason in (${sql.join([...filter.reasons])})`);
  if (filter.since !== undefined) conditions.push(sql<SqlBool>`t.updated_at >= ${params.since}`);
  if (filter.before !== undefined) conditions.push(sql<SqlBool>`t.updated_at < ${params.before}`);
  const covered = sql.join(conditions, sql` and `);
  const anyHidden = sql<SqlBool>`exists (select 1 from listed h where h.readable = 0)`;
  const readable = sql<SqlBool>`t.repository_id not in (select h.repository_id from listed h where h.readable = 0)`;
  const page = (only: RawBuilder<SqlBool>) => sql`select 'p', p.repository_id, null, null, null, null, null, p.id, p.reason, p.unread, p.updated_at, p.last_read_at,
      p.latest_comment_id, p.subject_type, p.subject_title, p.subject_url, p.issue_number, p.is_pull_request
    from (
      select t.id, t.repository_id, t.reason, t.unread, t.updated_at, t.last_read_at, t.latest_comment_id,
        s.type as subject_type, s.title as subject_title, s.url as subject_url, i.number as issue_number, i.is_pull_request
      from notification_threads t
      inner join notification_subjects s on s.id = t.subject_id
      left join issues i on i.id = s.issue_id
      where ${covered} and ${only}
      order by t.updated_at desc, t.id desc
      limit (select cast(${params.limit} as bigint)) offset (select cast(${params.offset} as bigint))
    ) p`;
  return sql<PageRow>`${walkRepositories(userId as number)}, listed(repository_id, version, readable) as materialized (
      select ${listedColumns(userId)} ${listedFrom}
    )
    select 'r' as kind, l.repository_id, l.version, l.readable, cast(null as text) as modified_at, cast(null as text) as digest,
      cast(null as bigint) as total, cast(null as integer) as id, cast(null as text) as reason, cast(null as integer) as unread,
      cast(null as text) as updated_at, cast(null as text) as last_read_at, cast(null as integer) as latest_comment_id,
      cast(null as text) as subject_type, cast(null as text) as subject_title, cast(null as text) as subject_url,
      cast(null as integer) as issue_number, cast(null as integer) as is_pull_request
    from listed l
    union all
    select 'i', null, i.version, null, i.modified_at, i.repositories_digest, null, null, null, null, null, null, null, null, null, null, null, null
    from notification_inboxes i where i.user_id = ${userId}
    union all
    select 'c', null, null, null, null, null, case when ${anyHidden}
        then (select count(*) from notification_threads t where ${covered} and ${readable})
        else (select count(*) from notification_threads t where ${covered}) end,
      null, null, null, null, null, null, null, null, null, null, null
    union all
    ${page(sql<SqlBool>`not ${anyHidden}`)}
    union all
    ${page(sql<SqlBool>`${anyHidden} and ${readable}`)}`;
}

/** The reusable statement of each shape of filter, made on first use. */
const pageQueries = new Map<string, (db: Executor, ...params: unknown[]) => Promise<PageRow[]>>();

/**
 * A page of the user's threads (newest update first), how many the filter covers in all, and what
 * the list is decided from (as `listValidator` reads it), in one statement: one round trip, one
 * snapshot. Threads of repositories the user cannot read now are left out.
 */
export async function listPage(db: Executor, filter: ThreadFilter, limit: number, offset: number): Promise<ListPage> {
  const present = { repositoryId: filter.repositoryId, since: filter.since, before: filter.before };
  const names = (Object.keys(present) as (keyof typeof present)[]).filter((key) => present[key] !== undefined);
  const shape = [filter.all ? 'all' : 'unread', filter.reasons?.join('|') ?? '', ...names].join(':');
  let query = pageQueries.get(shape);
  if (!query) {
    query = reusableQuery(`notifications_list_${pageQueries.size}`, (_db, userId: unknown, limit: unknown, offset: unknown, ...values: unknown[]) =>
      pageStatement(filter, { userId, limit, offset, ...Object.fromEntries(names.map((name, i) => [name, values[i]])) }));
    pageQueries.set(shape, query);
  }
  const rows = await query(db, filter.userId, limit, offset, ...names.map((name) => present[name]));
  const threads: ListedThread[] = [];
  let total = 0;
  for (const row of rows) {
    if (row.kind === 'p') threads.push(row);
    else if (row.kind === 'c') total = Number(row.total);
  }
  // The page's order, as its subquery chose it (timestamps are ISO text, compared as text; ids break ties).
  threads.sort((a, b) => (a.updated_at === b.updated_at ? b.id - a.id : a.updated_at < b.updated_at ? 1 : -1));
  return { validator: validatorOf(rows.filter((row) => row.kind === 'r' || row.kind === 'i')), threads, total };
}

export async function findThread(db: Executor, userId: number, threadId: number) {
  return db
    .selectFrom('notification_threads as t')
    .innerJoin('notification_subjects as s', 's.id', 't.subject_id')
    .leftJoin('issues as i', 'i.id', 's.issue_id')
    .select(threadColumns)
    .where('t.id', '=', threadId)
    .where('t.user_id', '=', userId)
    .where(readableBy(userId, 't.repository_id'))
    .executeTakeFirst();
}

export async function findThreadBySubject(db: Executor, userId: number, subjectId: number) {
  const row = await db.selectFrom('notification_threads').select('id').where('user_id', '=', userId).where('subject_id', '=', subjectId).executeTakeFirst();
  return row ? findThread(db, userId, row.id) : undefined;
}

export async function updateThread(db: Executor, threadId: number, values: { unread: 0; last_read_at: string; done?: 1 }): Promise<void> {
  await db.updateTable('notification_threads').set(values).where('id', '=', threadId).execute();
}

/** The threads a mark-as-read (or unread) covers: updated at or before `until`, of one repository or all. */
export interface MarkSelection {
  userId: number;
  repositoryId: number | null;
  until: string;
  /** true: mark unread threads read; false: mark read (not done) threads unread. */
  read: boolean;
}

/**
 * The covered threads. Marking read walks the partial index of the user's unread threads, from
 * which each marked thread drops out (no entry moves); marking unread walks (user_id, done, ...).
 */
function marked(db: Executor, selection: MarkSelection, hidden: readonly number[]) {
  let query = db
    .selectFrom('notification_threads')
    .select('id')
    .where('user_id', '=', selection.userId)
    .where(selection.read ? unread('unread') : sql<SqlBool>`unread = 0`)
    .where('updated_at', '<=', selection.until);
  const readable = readableOnly(selection.userId, hidden, 'notification_threads.repository_id');
  if (readable) query = query.where(readable);
  if (!selection.read) query = query.where('done', '=', 0);
  if (selection.repositoryId !== null) query = query.where('repository_id', '=', selection.repositoryId);
  return query;
}

/** Whether more than `threshold` threads are covered (reads at most threshold + 1 index entries). */
export async function coversMoreThan(db: Executor, selection: MarkSelection, hidden: readonly number[], threshold: number): Promise<boolean> {
  const row = await marked(db, selection, hidden).limit(1).offset(threshold).executeTakeFirst();
  return row !== undefined;
}

/** Where a background marking has got to: covered threads come in (updated_at, id) order. */
export interface MarkPosition {
  updated_at: string;
  id: number;
}

/**
 * Marks up to `limit` covered threads, the first in (updated_at, id) order after `after` (if any);
 * returns how many were chosen, how many changed and the position of the last chosen. A marking in
 * batches passes each batch's position to the next, so each batch starts where the last ended: on
 * PostgreSQL the rows marked before leave dead entries in the index of unread threads until vacuum,
 * and a batch that started from the beginning of the range stepped over all of them (quadratic in
 * the inbox: 1,000,000 threads were not done in 120 s). The ids are chosen first (from the index
 * alone) and the update goes by primary key (with the selection as a subquery of the update,
 * PostgreSQL hash-joined the whole table and SQLite skip-scanned every user's index range), with
 * the row's own conditions repeated: PostgreSQL re-checks them on a row that a concurrent
 * transaction changed since the choice, so a thread that new activity reached after `until` is left
 * unread without locking the chosen rows first (a lock is a write of each row, as many as the
 * update's). On SQLite the transaction alone serializes it. On PostgreSQL the ids go in one array
 * parameter (10,000 parameters cost more to send and plan than the update itself).
 */
export async function markThreads(
  db: Executor,
  selection: MarkSelection,
  hidden: readonly number[],
  readAt: string,
  limit: number,
  postgres: boolean,
  after: MarkPosition | null = null,
): Promise<{ chosen: number; changed: number; last: MarkPosition | null }> {
  let chosen = marked(db, selection, hidden).select('updated_at').orderBy('updated_at').orderBy('id').limit(limit);
  if (after) chosen = chosen.where(sql<SqlBool>`(updated_at, id) > (${after.updated_at}, ${after.id})`);
  const rows = await chosen.execute();
  if (!rows.length) return { chosen: 0, changed: 0, last: null };
  const ids = rows.map((r) => r.id);
  let update = db
    .updateTable('notification_threads')
    .set(selection.read ? { unread: 0, last_read_at: readAt } : { unread: 1 })
    .where(postgres ? sql<SqlBool>`id = any(${ids}::int4[])` : sql<SqlBool>`id in (${sql.join(ids)})`)
    .where(selection.read ? unread('unread') : sql<SqlBool>`unread = 0`)
    .where('updated_at', '<=', selection.until);
  if (!selection.read) update = update.where('done', '=', 0);
  const result = await update.executeTakeFirst();
  const last = rows[rows.length - 1]!;
  return { chosen: rows.length, changed: Number(result.numUpdatedRows), last: { updated_at: last.updated_at, id: last.id } };
}
