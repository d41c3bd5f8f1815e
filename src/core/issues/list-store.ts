// SQL of the lists of a repository's issues and comments, and of an issue's comments and timeline
// events, with the facts a page of them shows (one query per kind of fact for the page).
import { type ExpressionBuilder, type Selectable } from 'kysely';
import type { Executor } from '../../db/index.ts';
import type { Database } from '../../db/schema.ts';
import { type TeamRow, type UserRow, teamsById, usersById } from '../accounts/store.ts';
import type { RepositoryRow } from '../repositories/representations.ts';
import { commentReactionCounts } from './reaction-store.ts';
import type { IssueEventsTable } from '../../db/tables/issues.ts';
import { authorAssociations, type CommentFacts, type CommentRow, type IssueRow } from './store.ts';

// --- Lists of an issue: its comments and its timeline events ---------------------------------------

export type IssueEventRow = Selectable<IssueEventsTable>;

/** How comments are listed: `sort` created (default) or updated, `direction` asc (default) or desc. */
export interface CommentListQuery {
  sort: 'created' | 'updated';
  direction: 'asc' | 'desc';
  since: string | null;
}

/**
 * One page of an issue's comments, or of a repository's (of all its issues and pull requests), those
 * updated at or after `since` when given; and how many there are (two queries).
 */
export async function commentPage(
  db: Executor,
  of: { issueId: number } | { repositoryId: number },
  query: CommentListQuery,
  page: { offset: number; limit: number },
): Promise<{ total: number; comments: CommentRow[] }> {
  let base = 'issueId' in of
    ? db.selectFrom('issue_comments').where('issue_id', '=', of.issueId)
    : db.selectFrom('issue_comments').where('repository_id', '=', of.repositoryId);
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
  /** Pull requests only (GET /repos/{owner}/{repo}/pulls); absent: issues and pull requests. */
  isPullRequest?: boolean;
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
  /**
   * A user's issues (the user's and an organization's lists): those assigned to them, they opened,
   * that mention them, any of these or that they commented on (`subscribed`), or all.
   */
  involving?: { userId: number; filter: 'assigned' | 'created' | 'mentioned' | 'subscribed' | 'all' };
}

/**
 * One page of the issues and pull requests of a repository (or of several: a user's lists), as the
 * query filters and sorts them, and how many there are.
 */
export async function issueListPage(
  db: Executor,
  repositories: number | readonly number[],
  query: IssueListQuery,
  page: { offset: number; limit: number },
): Promise<{ total: number; issues: IssueRow[] }> {
  if (typeof repositories !== 'number' && !repositories.length) return { total: 0, issues: [] };
  let base = typeof repositories === 'number'
    ? db.selectFrom('issues').where('issues.repository_id', '=', repositories)
    : db.selectFrom('issues').where('issues.repository_id', 'in', [...repositories]);
  if (query.involving && query.involving.filter !== 'all') base = base.where(involves(query.involving.userId, query.involving.filter));
  if (query.state !== 'all') base = base.where('issues.state', '=', query.state);
  if (query.isPullRequest !== undefined) base = base.where('issues.is_pull_request', '=', query.isPullRequest ? 1 : 0);
  if (query.since !== null) base = base.where('issues.updated_at', '>=', query.since);
  if (query.creatorId !== undefined) base = base.where('issues.author_id', '=', query.creatorId);
  if (query.assignee === 'any') base = base.where((eb) => eb.exists(assigneesOf(eb)));
  else if (query.assignee === 'none') base = base.where((eb) => eb.not(eb.exists(assigneesOf(eb))));
  else if (query.assignee !== undefined) base = base.where(involves(query.assignee, 'assigned'));
  if (query.mentionedId !== undefined) base = base.where(involves(query.mentionedId, 'mentioned'));
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

/** The issue's assignees (a subquery of an issue list's). */
const assigneesOf = (eb: ExpressionBuilder<Database, 'issues'>) => eb.selectFrom('issue_assignees as a').select('a.user_id').whereRef('a.issue_id', '=', 'issues.id');

/** Issues a user is involved in: assigned, opened, mentioned in, or (`subscribed`) any of these or commented on. */
function involves(userId: number, filter: 'assigned' | 'created' | 'mentioned' | 'subscribed') {
  return (eb: ExpressionBuilder<Database, 'issues'>) => {
    const assigned = eb.exists(assigneesOf(eb).where('a.user_id', '=', userId));
    const created = eb('issues.author_id', '=', userId);
    const mentioned = eb.exists(eb.selectFrom('issue_events as m').select('m.id').whereRef('m.issue_id', '=', 'issues.id').where('m.event', '=', 'mentioned').where('m.subject_user_id', '=', userId));
    if (filter === 'assigned') return assigned;
    if (filter === 'created') return created;
    if (filter === 'mentioned') return mentioned;
    const commented = eb.exists(eb.selectFrom('issue_comments as ic').select('ic.id').whereRef('ic.issue_id', '=', 'issues.id').where('ic.author_id', '=', userId));
    return eb.or([assigned, created, mentioned, commented]);
  };
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
