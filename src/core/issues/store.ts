// SQL of issues, pull requests, their assignees, review requests, comments and
// timeline events. Writes take the caller's transaction; the readers load what a representation needs.
import { sql, type Selectable } from 'kysely';
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
  const issueId = issue.id;
  const [owner, author] = await usersById(db, [repository.owner_id, issue.author_id]).then((users) => [
    users.find((u) => u.id === repository.owner_id)!,
    users.find((u) => u.id === issue.author_id)!,
  ]);
  const assignees = await db
    .selectFrom('issue_assignees')
    .innerJoin('users', 'users.id', 'issue_assignees.user_id')
    .selectAll('users')
    .where('issue_assignees.issue_id', '=', issueId)
    .orderBy('users.login_lower')
    .execute();
  const labels = await issueLabels(db, issueId);
  const requests = await reviewRequests(db, issueId);
  const requestedTeams = requests.teamIds.length
    ? await db.selectFrom('teams').selectAll().where('id', 'in', requests.teamIds).orderBy('slug').execute()
    : [];
  const issueType = issue.issue_type_id === null
    ? null
    : ((await db.selectFrom('issue_types').selectAll().where('id', '=', issue.issue_type_id).executeTakeFirst()) ?? null);
  const count = await db
    .selectFrom('issue_comments')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('issue_id', '=', issueId)
    .executeTakeFirstOrThrow();
  return {
    issue,
    repository,
    owner: owner!,
    author: author!,
    assignees,
    labels,
    requestedReviewers: await usersById(db, requests.userIds),
    requestedTeams,
    issueType,
    comments: Number(count.count),
    authorAssociation: (await authorAssociations(db, repository, [issue.author_id])).get(issue.author_id)!,
    mergedBy: issue.merged_at === null ? null : await mergedBy(db, issueId),
    reactions: await issueReactionCounts(db, issueId),
  };
}

async function mergedBy(db: Executor, issueId: number): Promise<UserRow | null> {
  const row = await db
    .selectFrom('issue_events')
    .innerJoin('users', 'users.id', 'issue_events.actor_id')
    .selectAll('users')
    .where('issue_events.issue_id', '=', issueId)
    .where('issue_events.event', '=', 'merged')
    .orderBy('issue_events.id', 'desc')
    .executeTakeFirst();
  return row ?? null;
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
 * The facts of a page of comments of one issue: their authors in one query, their reaction counts
 * in one grouped query (the issue, its repository and owner are the caller's, already loaded).
 */
export async function loadCommentPageFacts(
  db: Executor,
  comments: readonly CommentRow[],
  context: { issue: IssueRow; repository: RepositoryRow; owner: UserRow },
): Promise<CommentFacts[]> {
  const authorIds = [...new Set(comments.map((c) => c.author_id))];
  const authors = new Map((await usersById(db, authorIds)).map((u) => [u.id, u]));
  const associations = await authorAssociations(db, context.repository, authorIds);
  const reactions = await commentReactionCounts(db, comments.map((c) => c.id));
  return comments.map((comment) => ({
    comment, author: authors.get(comment.author_id)!, authorAssociation: associations.get(comment.author_id)!, reactions: reactions.get(comment.id)!, ...context,
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
