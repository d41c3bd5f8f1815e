// SQL of issues, pull requests, their assignees, review requests, comments and
// timeline events. Writes take the caller's transaction; the readers load what a representation needs.
import { sql, type Selectable } from 'kysely';
import type { Executor } from '../../db/index.ts';
import type { Database } from '../../db/schema.ts';
import { type TeamRow, type UserRow, usersById } from '../accounts/store.ts';
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
