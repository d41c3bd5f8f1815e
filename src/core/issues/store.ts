// SQL of issues, pull requests, their assignees, review requests, comments and
// timeline events. Writes take the caller's transaction; the readers load what a representation needs.
import { sql, type ExpressionBuilder, type Selectable } from 'kysely';
import type { Executor } from '../../db/index.ts';
import type { Database } from '../../db/schema.ts';
import { type TeamRow, type UserRow, teamsById, usersById } from '../accounts/store.ts';
import type { RepositoryRow } from '../repositories/representations.ts';
import type { LabelRow } from '../repositories/label-store.ts';
import { commentReactionCounts, issueReactionCounts, type ReactionCounts } from './reaction-store.ts';
import type { IssueCommentsTable, IssueEventsTable, IssuesTable } from '../../db/tables/issues.ts';

export type IssueRow = Selectable<IssuesTable>;
export type CommentRow = Selectable<IssueCommentsTable>;
export type IssueTypeRow = Selectable<Database['issue_types']>;

/** Everything the Issue (and pull request) representation shows. */
export interface IssueFacts {
  issue: IssueRow;
  repository: RepositoryRow;
  owner: UserRow;
  author: UserRow;
  assignees: UserRow[];
  /** Its labels, by name. */
  labels: LabelRow[];
  requestedReviewers: UserRow[];
  requestedTeams: TeamRow[];
  /** Absent when the caller did not load it: the representation then shows `type: null`. */
  issueType?: IssueTypeRow | null;
  comments: number;
  /** The author's relation to the repository (`author_association`). */
  authorAssociation: AuthorAssociation;
  /** Who merged the pull request (the actor of its `merged` event); null when not merged. */
  mergedBy: UserRow | null;
  /** How many reactions of each content it has (its own, not its comments'). */
  reactions: ReactionCounts;
}

export interface CommentFacts {
  comment: CommentRow;
  author: UserRow;
  authorAssociation: AuthorAssociation;
  issue: IssueRow;
  repository: RepositoryRow;
  owner: UserRow;
  /** How many reactions of each content it has. */
  reactions: ReactionCounts;
}

/**
 * How a user stands to a repository, as the platform's `author_association` says: `OWNER` of the
 * repository's account, `MEMBER` of its organization, `COLLABORATOR` with direct access, else `NONE`.
 */
export type AuthorAssociation = 'OWNER' | 'MEMBER' | 'COLLABORATOR' | 'NONE';

/** The association of each of `userIds` with the repository, in two queries. */
export async function authorAssociations(
  db: Executor,
  repository: Pick<RepositoryRow, 'id' | 'owner_id'>,
  userIds: readonly number[],
): Promise<Map<number, AuthorAssociation>> {
  const ids = [...new Set(userIds)].filter((id) => id !== repository.owner_id);
  const out = new Map<number, AuthorAssociation>([[repository.owner_id, 'OWNER']]);
  if (ids.length === 0) return out;
  const members = await db.selectFrom('org_memberships').select('user_id').where('org_id', '=', repository.owner_id).where('user_id', 'in', ids).execute();
  const collaborators = await db.selectFrom('repository_collaborators').select('user_id').where('repository_id', '=', repository.id).where('user_id', 'in', ids).execute();
  for (const { user_id } of collaborators) out.set(user_id, 'COLLABORATOR');
  for (const { user_id } of members) out.set(user_id, 'MEMBER');
  for (const id of ids) if (!out.has(id)) out.set(id, 'NONE');
  return out;
}

export async function findIssue(db: Executor, repositoryId: number, number: number): Promise<IssueRow | undefined> {
  return db.selectFrom('issues').selectAll().where('repository_id', '=', repositoryId).where('number', '=', number).executeTakeFirst();
}

export async function findIssueById(db: Executor, id: number): Promise<IssueRow | undefined> {
  return db.selectFrom('issues').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * The issue, read in the caller's transaction and locked (PostgreSQL; SQLite runs one transaction at
 * a time) until it ends, so that concurrent changes of one issue apply one after the other.
 */
export async function lockIssue(trx: Executor, issueId: number, postgres: boolean): Promise<IssueRow> {
  const query = trx.selectFrom('issues').selectAll().where('id', '=', issueId);
  return (postgres ? query.forNoKeyUpdate() : query).executeTakeFirstOrThrow();
}

export async function findCommentById(db: Executor, id: number): Promise<CommentRow | undefined> {
  return db.selectFrom('issue_comments').selectAll().where('id', '=', id).executeTakeFirst();
}

/** A comment on an issue or pull request of the repository. */
export async function findComment(db: Executor, repositoryId: number, commentId: number): Promise<CommentRow | undefined> {
  return db
    .selectFrom('issue_comments')
    .innerJoin('issues', 'issues.id', 'issue_comments.issue_id')
    .selectAll('issue_comments')
    .where('issues.repository_id', '=', repositoryId)
    .where('issue_comments.id', '=', commentId)
    .executeTakeFirst();
}

/** `findComment` in a writing transaction, the row held until it commits (PostgreSQL): edits and deletions of one comment queue. */
export async function lockComment(trx: Executor, repositoryId: number, commentId: number, postgres: boolean): Promise<CommentRow | undefined> {
  const query = trx
    .selectFrom('issue_comments')
    .innerJoin('issues', 'issues.id', 'issue_comments.issue_id')
    .selectAll('issue_comments')
    .where('issues.repository_id', '=', repositoryId)
    .where('issue_comments.id', '=', commentId);
  return (postgres ? query.forUpdate('issue_comments') : query).executeTakeFirst();
}

export async function updateComment(trx: Executor, commentId: number, values: Pick<CommentRow, 'body' | 'updated_at'>): Promise<void> {
  await trx.updateTable('issue_comments').set(values).where('id', '=', commentId).execute();
}

export async function deleteComment(trx: Executor, commentId: number): Promise<void> {
  await trx.deleteFrom('issue_comments').where('id', '=', commentId).execute();
}

/** An issue's labels, by name. */
export async function issueLabels(db: Executor, issueId: number): Promise<LabelRow[]> {
  return db
    .selectFrom('issue_labels')
    .innerJoin('labels', 'labels.id', 'issue_labels.label_id')
    .selectAll('labels')
    .where('issue_labels.issue_id', '=', issueId)
    .orderBy('labels.name_lower')
    .execute();
}

export async function addIssueLabels(trx: Executor, issueId: number, labelIds: readonly number[]): Promise<void> {
  if (labelIds.length) await trx.insertInto('issue_labels').values(labelIds.map((label_id) => ({ issue_id: issueId, label_id }))).execute();
}

export async function removeIssueLabels(trx: Executor, issueId: number, labelIds: readonly number[]): Promise<void> {
  if (labelIds.length) await trx.deleteFrom('issue_labels').where('issue_id', '=', issueId).where('label_id', 'in', labelIds).execute();
}

/**
 * Takes the repository's next issue number: one statement that increments its counter row (locking
 * it until the transaction ends, so concurrent creations queue and each gets its own number), or
 * creates the row from the highest number there is. Call it in the transaction that inserts the
 * issue: a rollback gives the number back.
 */
export async function nextIssueNumber(trx: Executor, repositoryId: number): Promise<number> {
  const row = await trx
    .insertInto('issue_numbers')
    .values({
      repository_id: repositoryId,
      last_number: trx
        .selectFrom('issues')
        .select(sql<number>`coalesce(max(number), 0) + 1`.as('next'))
        .where('repository_id', '=', repositoryId),
    })
    .onConflict((oc) => oc.column('repository_id').doUpdateSet({ last_number: sql<number>`issue_numbers.last_number + 1` }))
    .returning('last_number')
    .executeTakeFirstOrThrow();
  return Number(row.last_number);
}

export async function insertIssue(trx: Executor, values: Omit<IssueRow, 'id' | 'locked' | 'active_lock_reason'>): Promise<IssueRow> {
  return trx.insertInto('issues').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function updateIssue(
  trx: Executor,
  issueId: number,
  values: Partial<Pick<IssueRow, 'title' | 'body' | 'state' | 'state_reason' | 'closed_at' | 'merged_at' | 'locked' | 'active_lock_reason' | 'updated_at'>>,
): Promise<void> {
  await trx.updateTable('issues').set(values).where('id', '=', issueId).execute();
}

export async function assigneeIds(db: Executor, issueId: number): Promise<number[]> {
  const rows = await db.selectFrom('issue_assignees').select('user_id').where('issue_id', '=', issueId).execute();
  return rows.map((r) => r.user_id);
}

export async function addAssignees(trx: Executor, issueId: number, userIds: readonly number[]): Promise<void> {
  if (userIds.length) await trx.insertInto('issue_assignees').values(userIds.map((user_id) => ({ issue_id: issueId, user_id }))).execute();
}

export async function removeAssignees(trx: Executor, issueId: number, userIds: readonly number[]): Promise<void> {
  if (userIds.length) await trx.deleteFrom('issue_assignees').where('issue_id', '=', issueId).where('user_id', 'in', userIds).execute();
}

export async function reviewRequests(db: Executor, issueId: number): Promise<{ userIds: number[]; teamIds: number[] }> {
  const rows = await db.selectFrom('issue_review_requests').select(['user_id', 'team_id']).where('issue_id', '=', issueId).orderBy('id').execute();
  return {
    userIds: rows.flatMap((r) => (r.user_id === null ? [] : [r.user_id])),
    teamIds: rows.flatMap((r) => (r.team_id === null ? [] : [r.team_id])),
  };
}

export async function addReviewRequests(trx: Executor, issueId: number, requests: { userIds: readonly number[]; teamIds: readonly number[] }): Promise<void> {
  const rows = [
    ...requests.userIds.map((user_id) => ({ issue_id: issueId, user_id, team_id: null })),
    ...requests.teamIds.map((team_id) => ({ issue_id: issueId, user_id: null, team_id })),
  ];
  if (rows.length) await trx.insertInto('issue_review_requests').values(rows).execute();
}

export async function removeReviewRequests(trx: Executor, issueId: number, requests: { userIds: readonly number[]; teamIds: readonly number[] }): Promise<void> {
  if (requests.userIds.length) await trx.deleteFrom('issue_review_requests').where('issue_id', '=', issueId).where('user_id', 'in', requests.userIds).execute();
  if (requests.teamIds.length) await trx.deleteFrom('issue_review_requests').where('issue_id', '=', issueId).where('team_id', 'in', requests.teamIds).execute();
}

export async function insertComment(trx: Executor, values: Omit<CommentRow, 'id'>): Promise<CommentRow> {
  return trx.insertInto('issue_comments').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function insertEvents(trx: Executor, events: Omit<Selectable<IssueEventsTable>, 'id'>[]): Promise<void> {
  if (events.length) await trx.insertInto('issue_events').values(events).execute();
}

/**
 * The organization's issue type of that name (any case), if it is enabled and not turned off for
 * the repository.
 */
export async function usableIssueType(db: Executor, orgId: number, repositoryId: number, name: string): Promise<IssueTypeRow | undefined> {
  const type = await db
    .selectFrom('issue_types')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('name_lower', '=', name.trim().toLowerCase())
    .where('is_enabled', '=', 1)
    .executeTakeFirst();
  if (!type) return undefined;
  const off = await db
    .selectFrom('issue_type_disabled_repositories')
    .select('issue_type_id')
    .where('issue_type_id', '=', type.id)
    .where('repository_id', '=', repositoryId)
    .executeTakeFirst();
  return off ? undefined : type;
}

export async function loadIssueFacts(db: Executor, issueId: number): Promise<IssueFacts> {
  const issue = await db.selectFrom('issues').selectAll().where('id', '=', issueId).executeTakeFirstOrThrow();
  const repository = await db.selectFrom('repositories').selectAll().where('id', '=', issue.repository_id).executeTakeFirstOrThrow();
  return issueFactsOf(db, issue, repository);
}

/** The facts of an issue whose row and repository the caller has loaded already (a read that checked them). */
export async function issueFactsOf(db: Executor, issue: IssueFacts['issue'], repository: IssueFacts['repository']): Promise<IssueFacts> {
  return (await issuePageFacts(db, [issue], repository))[0]!;
}

/** Rows grouped by the issue they belong to, in the order given. */
function byIssue<T>(rows: readonly T[], issueOf: (row: T) => number): Map<number, T[]> {
  const out = new Map<number, T[]>();
  for (const row of rows) {
    const id = issueOf(row);
    if (!out.has(id)) out.set(id, []);
    out.get(id)!.push(row);
  }
  return out;
}

/**
 * The facts of issues of one repository (a page of a list, or one issue): each kind of fact in one
 * query for them all — their authors, assignees (by login), labels (by name), review requests
 * (users, teams by slug), types, comment counts, authors' associations, who merged them, reactions.
 */
export async function issuePageFacts(db: Executor, issues: readonly IssueRow[], repository: RepositoryRow): Promise<IssueFacts[]> {
  if (!issues.length) return [];
  const ids = issues.map((issue) => issue.id);
  const people = new Map((await usersById(db, [...new Set([repository.owner_id, ...issues.map((issue) => issue.author_id)])])).map((u) => [u.id, u]));
  const assignees = byIssue(await db
    .selectFrom('issue_assignees')
    .innerJoin('users', 'users.id', 'issue_assignees.user_id')
    .selectAll('users')
    .select('issue_assignees.issue_id as assigned_issue_id')
    .where('issue_assignees.issue_id', 'in', ids)
    .orderBy('users.login_lower')
    .execute(), (row) => row.assigned_issue_id);
  const labels = byIssue(await db
    .selectFrom('issue_labels')
    .innerJoin('labels', 'labels.id', 'issue_labels.label_id')
    .selectAll('labels')
    .select('issue_labels.issue_id as labeled_issue_id')
    .where('issue_labels.issue_id', 'in', ids)
    .orderBy('labels.name_lower')
    .execute(), (row) => row.labeled_issue_id);
  const pulls = issues.filter((issue) => issue.is_pull_request).map((issue) => issue.id);
  const requests = byIssue(pulls.length
    ? await db.selectFrom('issue_review_requests').select(['issue_id', 'user_id', 'team_id']).where('issue_id', 'in', pulls).orderBy('id').execute()
    : [], (row) => row.issue_id);
  const allRequests = [...requests.values()].flat();
  const reviewers = new Map((await usersById(db, [...new Set(allRequests.flatMap((r) => (r.user_id === null ? [] : [r.user_id])))])).map((u) => [u.id, u]));
  const teamIds = [...new Set(allRequests.flatMap((r) => (r.team_id === null ? [] : [r.team_id])))];
  const teams = teamIds.length ? await db.selectFrom('teams').selectAll().where('id', 'in', teamIds).orderBy('slug').execute() : [];
  const typeIds = [...new Set(issues.flatMap((issue) => (issue.issue_type_id === null ? [] : [issue.issue_type_id])))];
  const types = new Map((typeIds.length ? await db.selectFrom('issue_types').selectAll().where('id', 'in', typeIds).execute() : []).map((t) => [t.id, t]));
  const counts = new Map((await db
    .selectFrom('issue_comments')
    .select((eb) => ['issue_id', eb.fn.countAll<number>().as('count')])
    .where('issue_id', 'in', ids)
    .groupBy('issue_id')
    .execute()).map((row) => [row.issue_id, Number(row.count)]));
  const associations = await authorAssociations(db, repository, issues.map((issue) => issue.author_id));
  const merged = issues.filter((issue) => issue.merged_at !== null).map((issue) => issue.id);
  const mergers = merged.length ? await mergedBy(db, merged) : new Map<number, UserRow>();
  const reactions = await issueReactionCounts(db, ids);
  return issues.map((issue) => {
    const asked = requests.get(issue.id) ?? [];
    return {
      issue,
      repository,
      owner: people.get(repository.owner_id)!,
      author: people.get(issue.author_id)!,
      assignees: (assignees.get(issue.id) ?? []).map(({ assigned_issue_id: _id, ...user }) => user),
      labels: (labels.get(issue.id) ?? []).map(({ labeled_issue_id: _id, ...label }) => label),
      requestedReviewers: asked.flatMap((r) => (r.user_id !== null && reviewers.has(r.user_id) ? [reviewers.get(r.user_id)!] : [])),
      requestedTeams: teams.filter((team) => asked.some((r) => r.team_id === team.id)),
      issueType: issue.issue_type_id === null ? null : (types.get(issue.issue_type_id) ?? null),
      comments: counts.get(issue.id) ?? 0,
      authorAssociation: associations.get(issue.author_id)!,
      mergedBy: mergers.get(issue.id) ?? null,
      reactions: reactions.get(issue.id)!,
    };
  });
}

/** Who merged each of the pull requests: the actor of its latest `merged` event. */
async function mergedBy(db: Executor, issueIds: readonly number[]): Promise<Map<number, UserRow>> {
  const rows = await db
    .selectFrom('issue_events')
    .innerJoin('users', 'users.id', 'issue_events.actor_id')
    .selectAll('users')
    .select('issue_events.issue_id as merged_issue_id')
    .where('issue_events.issue_id', 'in', issueIds)
    .where('issue_events.event', '=', 'merged')
    .orderBy('issue_events.id', 'desc')
    .execute();
  const out = new Map<number, UserRow>();
  for (const { merged_issue_id: issueId, ...user } of rows) if (!out.has(issueId)) out.set(issueId, user);
  return out;
}

export async function loadCommentFacts(db: Executor, commentId: number): Promise<CommentFacts> {
  const comment = await db.selectFrom('issue_comments').selectAll().where('id', '=', commentId).executeTakeFirstOrThrow();
  const issue = await db.selectFrom('issues').selectAll().where('id', '=', comment.issue_id).executeTakeFirstOrThrow();
  const repository = await db.selectFrom('repositories').selectAll().where('id', '=', issue.repository_id).executeTakeFirstOrThrow();
  const users = await usersById(db, [comment.author_id, repository.owner_id]);
  return {
    comment,
    issue,
    repository,
    author: users.find((u) => u.id === comment.author_id)!,
    authorAssociation: (await authorAssociations(db, repository, [comment.author_id])).get(comment.author_id)!,
    owner: users.find((u) => u.id === repository.owner_id)!,
    reactions: (await commentReactionCounts(db, [comment.id])).get(comment.id)!,
  };
}

/** The issue an author opened with this title, if any (seed files are idempotent). */
export async function findIssueByTitle(db: Executor, repositoryId: number, authorId: number, title: string): Promise<{ id: number } | undefined> {
  return db.selectFrom('issues').select('id').where('repository_id', '=', repositoryId).where('author_id', '=', authorId).where('title', '=', title).executeTakeFirst();
}

/** The comment an author made with this body on an issue, if any (seed files are idempotent). */
export async function findCommentByBody(db: Executor, issueId: number, authorId: number, body: string): Promise<{ id: number } | undefined> {
  return db.selectFrom('issue_comments').select('id').where('issue_id', '=', issueId).where('author_id', '=', authorId).where('body', '=', body).executeTakeFirst();
}

// --- Lists of an issue: its comments and its timeline events ---------------------------------------

export type IssueEventRow = Selectable<IssueEventsTable>;

/**
 * One page of an issue's comments, oldest first, those updated at or after `since` when given; and
 * how many there are (two queries).
 */
export async function commentPage(
  db: Executor,
  issueId: number,
  since: string | null,
  page: { offset: number; limit: number },
): Promise<{ total: number; comments: CommentRow[] }> {
  let base = db.selectFrom('issue_comments').where('issue_id', '=', issueId);
  if (since !== null) base = base.where('updated_at', '>=', since);
  const [count, comments] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    base.selectAll().orderBy('created_at').orderBy('id').limit(page.limit).offset(page.offset).execute(),
  ]);
  return { total: Number(count.n), comments };
}

/** How a repository's comments are listed: `sort` created (default) or updated, `direction` asc (default) or desc. */
export interface CommentListQuery {
  sort: 'created' | 'updated';
  direction: 'asc' | 'desc';
  since: string | null;
}

/** One page of a repository's comments (of all its issues and pull requests), and how many there are. */
export async function repositoryCommentPage(
  db: Executor,
  repositoryId: number,
  query: CommentListQuery,
  page: { offset: number; limit: number },
): Promise<{ total: number; comments: CommentRow[] }> {
  let base = db.selectFrom('issue_comments').where('repository_id', '=', repositoryId);
  if (query.since !== null) base = base.where('updated_at', '>=', query.since);
  const [count, comments] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    base.selectAll().orderBy(query.sort === 'updated' ? 'updated_at' : 'created_at', query.direction).orderBy('id', query.direction).limit(page.limit).offset(page.offset).execute(),
  ]);
  return { total: Number(count.n), comments };
}

/**
 * What a list of a repository's issues asks (GET /repos/{owner}/{repo}/issues), people already
 * resolved to ids (a login that names no user names no issue: the caller answers an empty page).
 */
export interface IssueListQuery {
  state: 'open' | 'closed' | 'all';
  /** A user's id, `any` (some assignee) or `none`. */
  assignee?: number | 'any' | 'none';
  creatorId?: number;
  mentionedId?: number;
  /** Lowercase names of labels an issue must all have. */
  labels: string[];
  /** An issue type's name (lowercase), `any` or `none`. */
  type?: string | 'any' | 'none';
  sort: 'created' | 'updated' | 'comments';
  direction: 'asc' | 'desc';
  since: string | null;
}

/** One page of a repository's issues and pull requests, as the query filters and sorts them, and how many there are. */
export async function issueListPage(
  db: Executor,
  repositoryId: number,
  query: IssueListQuery,
  page: { offset: number; limit: number },
): Promise<{ total: number; issues: IssueRow[] }> {
  let base = db.selectFrom('issues').where('issues.repository_id', '=', repositoryId);
  if (query.state !== 'all') base = base.where('issues.state', '=', query.state);
  if (query.since !== null) base = base.where('issues.updated_at', '>=', query.since);
  if (query.creatorId !== undefined) base = base.where('issues.author_id', '=', query.creatorId);
  const assigned = (eb: ExpressionBuilder<Database, 'issues'>) => eb.selectFrom('issue_assignees as a').select('a.user_id').whereRef('a.issue_id', '=', 'issues.id');
  if (query.assignee === 'any') base = base.where((eb) => eb.exists(assigned(eb)));
  else if (query.assignee === 'none') base = base.where((eb) => eb.not(eb.exists(assigned(eb))));
  else if (query.assignee !== undefined) base = base.where((eb) => eb.exists(assigned(eb).where('a.user_id', '=', query.assignee as number)));
  if (query.mentionedId !== undefined) {
    const mentioned = query.mentionedId;
    base = base.where((eb) => eb.exists(eb.selectFrom('issue_events as m').select('m.id').whereRef('m.issue_id', '=', 'issues.id').where('m.event', '=', 'mentioned').where('m.subject_user_id', '=', mentioned)));
  }
  for (const name of query.labels) {
    base = base.where((eb) => eb.exists(eb.selectFrom('issue_labels as il').innerJoin('labels as l', 'l.id', 'il.label_id').select('il.label_id')
      .whereRef('il.issue_id', '=', 'issues.id').where('l.name_lower', '=', name)));
  }
  if (query.type === 'any') base = base.where('issues.issue_type_id', 'is not', null);
  else if (query.type === 'none') base = base.where('issues.issue_type_id', 'is', null);
  else if (query.type !== undefined) {
    const type = query.type;
    base = base.where('issues.issue_type_id', 'in', (eb) => eb.selectFrom('issue_types').select('issue_types.id').where('issue_types.name_lower', '=', type));
  }
  const ordered = query.sort === 'comments'
    ? base.orderBy((eb) => eb.selectFrom('issue_comments as c').select((inner) => inner.fn.countAll<number>().as('n')).whereRef('c.issue_id', '=', 'issues.id'), query.direction)
    : base.orderBy(query.sort === 'updated' ? 'issues.updated_at' : 'issues.created_at', query.direction);
  const [count, issues] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ordered.selectAll('issues').orderBy('issues.id', query.direction).limit(page.limit).offset(page.offset).execute(),
  ]);
  return { total: Number(count.n), issues };
}

/** One page of an issue's timeline events, oldest first, and how many there are (two queries). */
export async function eventPage(db: Executor, issueId: number, page: { offset: number; limit: number }): Promise<{ total: number; events: IssueEventRow[] }> {
  const base = db.selectFrom('issue_events').where('issue_id', '=', issueId);
  const [count, events] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    base.selectAll().orderBy('created_at').orderBy('id').limit(page.limit).offset(page.offset).execute(),
  ]);
  return { total: Number(count.n), events };
}

/** An issue event of the repository. */
export async function findEvent(db: Executor, repositoryId: number, eventId: number): Promise<IssueEventRow | undefined> {
  return db.selectFrom('issue_events').selectAll().where('repository_id', '=', repositoryId).where('id', '=', eventId).executeTakeFirst();
}

/**
 * The facts of a page of comments of a repository: their authors in one query, their reaction counts
 * in one grouped query, their issues in one (unless the page is of one issue the caller has loaded:
 * `issue`; the repository and its owner are the caller's).
 */
export async function loadCommentPageFacts(
  db: Executor,
  comments: readonly CommentRow[],
  context: { issue?: IssueRow; repository: RepositoryRow; owner: UserRow },
): Promise<CommentFacts[]> {
  const authorIds = [...new Set(comments.map((c) => c.author_id))];
  const authors = new Map((await usersById(db, authorIds)).map((u) => [u.id, u]));
  const associations = await authorAssociations(db, context.repository, authorIds);
  const reactions = await commentReactionCounts(db, comments.map((c) => c.id));
  const issueIds = [...new Set(comments.map((c) => c.issue_id))];
  const issues = new Map(context.issue
    ? [[context.issue.id, context.issue]]
    : issueIds.length ? (await db.selectFrom('issues').selectAll().where('id', 'in', issueIds).execute()).map((i) => [i.id, i]) : []);
  return comments.map((comment) => ({
    comment, author: authors.get(comment.author_id)!, authorAssociation: associations.get(comment.author_id)!, reactions: reactions.get(comment.id)!,
    issue: issues.get(comment.issue_id)!, repository: context.repository, owner: context.owner,
  }));
}

/** Everything a page of issue events shows: the users and teams they name (two queries). */
export interface EventFacts {
  event: IssueEventRow;
  actor: UserRow;
  subjectUser: UserRow | null;
  subjectTeam: TeamRow | null;
  repository: RepositoryRow;
  owner: UserRow;
}

export async function loadEventPageFacts(
  db: Executor,
  events: readonly IssueEventRow[],
  context: { repository: RepositoryRow; owner: UserRow },
): Promise<EventFacts[]> {
  const userIds = events.flatMap((e) => (e.subject_user_id === null ? [e.actor_id] : [e.actor_id, e.subject_user_id]));
  const teamIds = events.flatMap((e) => (e.subject_team_id === null ? [] : [e.subject_team_id]));
  const [users, teams] = await Promise.all([usersById(db, [...new Set(userIds)]), teamsById(db, teamIds)]);
  const userById = new Map(users.map((u) => [u.id, u]));
  const teamById = new Map(teams.map((t) => [t.id, t]));
  return events.map((event) => ({
    event,
    actor: userById.get(event.actor_id)!,
    subjectUser: event.subject_user_id === null ? null : (userById.get(event.subject_user_id) ?? null),
    subjectTeam: event.subject_team_id === null ? null : (teamById.get(event.subject_team_id) ?? null),
    ...context,
  }));
}
