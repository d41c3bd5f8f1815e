// Platform activity written through the operator surface: open an issue or pull request, comment,
// change state (close, reopen, merge), assign, request reviews. Each write stores its change (the
// issue tables and its timeline events) and its outbox rows in ONE transaction.
//
// The outbox rows each write records, and their payloads: src/core/activities.ts (`IssueActivities`).
import type { Executor } from '../../db/index.ts';
import { Service } from '../../platform/service.ts';
import { invalidField, notFound } from '../../platform/errors.ts';
import { findAccount, findTeam, type TeamRow, type UserRow } from '../accounts/store.ts';
import { findRepository } from '../repositories/store.ts';
import { stillWritable } from '../repositories/lookup.ts';
import { isRowId } from '../../platform/schemas.ts';
import type { RepositoryRow } from '../repositories/representations.ts';
import { parseMentions } from '../../activity/mentions.ts';
import { recordActivity, type ActivityRecorder } from '../../activity/outbox.ts';
import type { CommentActions, IssueActions, IssueActivities, IssueActivityFacts } from '../activities.ts';
import { subjectSnapshot } from './snapshot.ts';
import * as store from './store.ts';
import { namedRequests, requestChange } from './review-requests.ts';
import type { CommentFacts, IssueFacts, IssueRow } from './store.ts';
import * as accounts from '../accounts/store.ts';
import { assertRepositoryWritable } from '../access/index.ts';
import * as labels from '../repositories/label-store.ts';
import type { LabelRow } from '../repositories/label-store.ts';
import { labelRepresentation } from '../repositories/representations.ts';
import { recordRepositoryActivity } from '../repositories/activities.ts';


const recordIssueActivity: ActivityRecorder<IssueActivities> = recordActivity;

export interface CreateIssueInput {
  author: string;
  title: string;
  body?: string;
  pull_request?: boolean;
  assignees?: string[];
  reviewers?: string[];
  team_reviewers?: string[];
  type?: string;
  /** Its labels by name (a name the repository lacks is made). */
  labels?: string[];
}

export interface CreateCommentInput {
  author: string;
  body: string;
}

export interface UpdateIssueInput {
  actor: string;
  title?: string;
  /** A new body; null empties it. */
  body?: string | null;
  state?: 'open' | 'closed' | 'merged';
  /** Why it closed (`completed`, `not_planned`) or reopened; the platform's default for the change otherwise. */
  state_reason?: 'completed' | 'not_planned' | 'reopened' | null;
  /** The assignees (the given list replaces the current one). */
  assignees?: string[];
  /** Assignees added to, or removed from, the current ones (POST / DELETE …/assignees). */
  assignees_added?: string[];
  assignees_removed?: string[];
  /** The labels by name (the given list replaces the current one; a name the repository lacks is made), or some added or removed. */
  labels?: string[];
  labels_added?: string[];
  labels_removed?: string[];
  /** The requested reviewers (the given list replaces the current one), users and teams separately. */
  reviewers?: string[];
  team_reviewers?: string[];
  /** Reviewers added to, or removed from, the requested ones (POST / DELETE …/requested_reviewers). */
  reviewers_added?: string[];
  reviewers_removed?: string[];
  team_reviewers_added?: string[];
  team_reviewers_removed?: string[];
}

type Repository = RepositoryRow & { owner: UserRow };

interface Mentioned {
  userIds: number[];
  teamIds: number[];
}

const unique = <T>(values: readonly T[]) => [...new Set(values)];

/** The platform's bounds on an issue's assignees and labels. */
export const MAX_ASSIGNEES = 10;
export const MAX_LABELS = 100;
const without = (values: readonly number[], removed: readonly number[]) => values.filter((v) => !removed.includes(v));

export class IssueWrites extends Service {
  async createIssue(ownerLogin: string, repositoryName: string, input: CreateIssueInput): Promise<IssueFacts> {
    const repository = await this.writableRepository(ownerLogin, repositoryName);
    return this.openIssue(repository, await this.user(input.author), input);
  }

  /** An issue (or pull request) by `author` in a repository found writable: the public API's caller, or the operator's author. */
  async openIssue(repository: Repository, author: UserRow, input: Omit<CreateIssueInput, 'author'>): Promise<IssueFacts> {
    const isPullRequest = input.pull_request ?? false;
    const assignees = await this.users(input.assignees);
    const reviewers = await this.reviewers(repository, isPullRequest, author, input.reviewers, input.team_reviewers);
    const mentioned = await this.mentions(input.body);
    const issueType = input.type === undefined ? null : await this.issueType(repository, isPullRequest, input.type);
    const now = this.now();

    // The facts of the snapshot are the answer too: the issue as this write left it.
    return await this.transaction(async (trx) => {
      await stillWritable(trx, repository.id, this.ctx.db.dialect === 'postgres');
      const issue = await store.insertIssue(trx, {
        repository_id: repository.id,
        number: await store.nextIssueNumber(trx, repository.id),
        author_id: author.id,
        title: input.title,
        body: input.body ?? null,
        state: 'open',
        state_reason: null,
        is_pull_request: isPullRequest ? 1 : 0,
        merged_at: null,
        closed_at: null,
        issue_type_id: issueType?.id ?? null,
        created_at: now,
        updated_at: now,
      });
      await store.addAssignees(trx, issue.id, assignees.map((u) => u.id));
      const { added: labeled } = await this.labelChange(trx, repository, issue.id, author, { ...(input.labels?.length ? { labels: input.labels } : {}) });
      await store.addIssueLabels(trx, issue.id, labeled.map((l) => l.id));
      await store.addReviewRequests(trx, issue.id, reviewers);
      await store.insertEvents(trx, [
        ...assignees.map((u) => this.event(issue, author, 'assigned', { user: u.id })),
        ...reviewers.userIds.map((id) => this.event(issue, author, 'review_requested', { user: id })),
        ...reviewers.teamIds.map((id) => this.event(issue, author, 'review_requested', { team: id })),
        ...mentioned.userIds.map((id) => this.event(issue, author, 'mentioned', { user: id })),
      ]);
      const facts = await store.loadIssueFacts(trx, issue.id);
      await this.record(trx, issue, author, facts, 'opened', {
        mentioned_user_ids: mentioned.userIds,
        mentioned_team_ids: mentioned.teamIds,
        assignee_ids: assignees.map((u) => u.id),
        requested_reviewer_ids: reviewers.userIds,
        requested_team_ids: reviewers.teamIds,
      });
      // As the platform sends them: `opened`, then a `labeled` per label.
      for (const label of labeled) await this.record(trx, issue, author, facts, 'labeled', { label: labelRepresentation(this.ctx.urls, repository.owner, repository, label) });
      return facts;
    });
  }

  async createComment(ownerLogin: string, repositoryName: string, number: number, input: CreateCommentInput): Promise<CommentFacts> {
    const repository = await this.writableRepository(ownerLogin, repositoryName);
    const issue = await this.issue(repository, number);
    return this.commentOn(repository, issue, await this.user(input.author), input.body);
  }

  /**
   * A comment by `author` on an issue of a repository found writable (the public API's caller, who
   * may write there, or the operator's author): its `mentioned` events, and `issue_comment.created`.
   */
  async commentOn(repository: Pick<RepositoryRow, 'id'>, issue: IssueRow, author: UserRow, body: string): Promise<CommentFacts> {
    const mentioned = await this.mentions(body);
    const now = this.now();
    return this.transaction(async (trx) => {
      await stillWritable(trx, repository.id, this.ctx.db.dialect === 'postgres');
      const comment = await store.insertComment(trx, {
        issue_id: issue.id,
        repository_id: repository.id,
        author_id: author.id,
        body,
        created_at: now,
        updated_at: now,
      });
      await store.updateIssue(trx, issue.id, { updated_at: now });
      await store.insertEvents(trx, mentioned.userIds.map((id) => this.event(issue, author, 'mentioned', { user: id })));
      const facts = await store.loadCommentFacts(trx, comment.id);
      await this.recordComment(trx, facts, author, 'created', { mentioned_user_ids: mentioned.userIds, mentioned_team_ids: mentioned.teamIds });
      return facts;
    });
  }

  /** A comment's new body (`issue_comment.edited`, whose `changes` keep the old one); the same body changes nothing. */
  async editComment(repository: Pick<RepositoryRow, 'id'>, commentId: number, actor: UserRow, body: string): Promise<CommentFacts> {
    return this.transaction(async (trx) => {
      await stillWritable(trx, repository.id, this.ctx.db.dialect === 'postgres');
      const comment = await store.lockComment(trx, repository.id, commentId, this.ctx.db.dialect === 'postgres');
      if (!comment) throw notFound();
      if (comment.body === body) return store.loadCommentFacts(trx, comment.id);
      await store.updateComment(trx, comment.id, { body, updated_at: this.now() });
      const facts = await store.loadCommentFacts(trx, comment.id);
      await this.recordComment(trx, facts, actor, 'edited', { changes: { body: { from: comment.body } } });
      return facts;
    });
  }

  /** Deletes a comment; `issue_comment.deleted` keeps it as it was, since the row is gone at dispatch. */
  async deleteComment(repository: Pick<RepositoryRow, 'id'>, commentId: number, actor: UserRow): Promise<void> {
    await this.transaction(async (trx) => {
      await stillWritable(trx, repository.id, this.ctx.db.dialect === 'postgres');
      const comment = await store.lockComment(trx, repository.id, commentId, this.ctx.db.dialect === 'postgres');
      if (!comment) throw notFound();
      const facts = await store.loadCommentFacts(trx, comment.id);
      await store.deleteComment(trx, comment.id);
      await this.recordComment(trx, facts, actor, 'deleted', {});
    });
  }

  /** Records an `issue_comment` row with the issue and the comment as `facts` show them. */
  private async recordComment<A extends keyof CommentActions>(trx: Executor, facts: CommentFacts, actor: UserRow, action: A, payload: Omit<CommentActions[A], keyof IssueActivityFacts>): Promise<void> {
    const { issue } = facts;
    const snapshot = subjectSnapshot(this.ctx.urls, 'issue_comment', await store.loadIssueFacts(trx, issue.id), facts);
    const full = { number: issue.number, pull_request: Boolean(issue.is_pull_request), ...payload, snapshot };
    // As in `record`: the callers' `A` ties action and payload.
    await recordIssueActivity(this.ctx, trx, {
      name: `issue_comment.${action}`,
      repository_id: issue.repository_id,
      actor_id: actor.id,
      issue_id: issue.id,
      comment_id: facts.comment.id,
      payload: full as IssueActivities[`issue_comment.${A}`],
    });
  }

  /**
   * Changes state, assignees (the given list replaces the current one) and requested reviewers
   * (likewise, users and teams separately). A change that changes nothing records nothing.
   */
  async updateIssue(ownerLogin: string, repositoryName: string, number: number, input: UpdateIssueInput): Promise<IssueFacts> {
    const repository = await this.writableRepository(ownerLogin, repositoryName);
    const found = await this.issue(repository, number);
    return this.changeIssue(repository, found, await this.user(input.actor), input);
  }

  /**
   * Changes an issue of a repository found writable, by `actor`: title and body (`edited`, whose
   * `changes` keep what they were), state, assignees and requested reviewers, in the platform's order.
   */
  async changeIssue(repository: Repository, found: IssueRow, actor: UserRow, input: Omit<UpdateIssueInput, 'actor'>): Promise<IssueFacts> {
    const isPullRequest = Boolean(found.is_pull_request);
    const idsOf = async (logins: string[] | undefined) => (logins === undefined ? null : (await this.users(logins)).map((u) => u.id));
    const wantedAssigneeIds = await idsOf(input.assignees);
    const addedAssigneeIds = (await idsOf(input.assignees_added)) ?? [];
    const removedAssigneeIds = (await idsOf(input.assignees_removed)) ?? [];
    const author = await this.userById(found.author_id);
    const wanted = await this.reviewers(repository, isPullRequest, author, input.reviewers, input.team_reviewers);
    const addedReviewers = await this.reviewers(repository, isPullRequest, author, input.reviewers_added, input.team_reviewers_added);
    const removedReviewers = await namedRequests(this.db, { id: repository.owner_id, login: repository.owner.login }, input.reviewers_removed, input.team_reviewers_removed);

    // What changes is decided on the issue as it is once locked: concurrent changes of one issue
    // (two closes, two assignments of the same user) run one after the other, and the second finds
    // nothing left to do instead of recording the change twice or colliding on a key.
    return this.transaction(async (trx) => {
      await stillWritable(trx, repository.id, this.ctx.db.dialect === 'postgres');
      const issue = await store.lockIssue(trx, found.id, this.ctx.db.dialect === 'postgres');
      const transition = this.transition(issue, input.state, input.state_reason);
      const edits = {
        ...(input.title !== undefined && input.title !== issue.title ? { title: { from: issue.title } } : {}),
        ...(input.body !== undefined && input.body !== issue.body ? { body: { from: issue.body ?? '' } } : {}),
      };
      const edited = Object.keys(edits).length > 0;
      const labelChange = await this.labelChange(trx, repository, issue.id, actor, input);
      const currentAssignees = await store.assigneeIds(trx, issue.id);
      const wantedAssignees = unique([...(wantedAssigneeIds ?? currentAssignees), ...addedAssigneeIds]).filter((id) => !removedAssigneeIds.includes(id));
      if (wantedAssignees.length > MAX_ASSIGNEES) throw invalidField('Issue', 'assignees', `an issue has at most ${MAX_ASSIGNEES} assignees`);
      const assigned = without(wantedAssignees, currentAssignees);
      const unassigned = without(currentAssignees, wantedAssignees);
      const current = await store.reviewRequests(trx, issue.id);
      const { requested, removed } = requestChange(current, {
        wanted, users: input.reviewers !== undefined, teams: input.team_reviewers !== undefined, added: addedReviewers, removed: removedReviewers,
      });

      const changes = (edited ? 1 : 0) + (transition ? 1 : 0) + labelChange.added.length + labelChange.removed.length + assigned.length + unassigned.length + requested.userIds.length + requested.teamIds.length + removed.userIds.length + removed.teamIds.length;
      if (changes === 0) return store.loadIssueFacts(trx, issue.id);

      const now = this.now();
      await store.updateIssue(trx, issue.id, {
        ...(input.title !== undefined ? { title: input.title } : {}),
        ...(input.body !== undefined ? { body: input.body } : {}),
        ...transition?.values(now),
        updated_at: now,
      });
      if (transition) await store.insertEvents(trx, transition.events.map((name) => this.event(issue, actor, name, {})));
      await store.removeIssueLabels(trx, issue.id, labelChange.removed.map((l) => l.id));
      await store.addIssueLabels(trx, issue.id, labelChange.added.map((l) => l.id));
      await store.removeAssignees(trx, issue.id, unassigned);
      await store.addAssignees(trx, issue.id, assigned);
      await store.removeReviewRequests(trx, issue.id, removed);
      await store.addReviewRequests(trx, issue.id, requested);
      await store.insertEvents(trx, [
        ...assigned.map((id) => this.event(issue, actor, 'assigned', { user: id })),
        ...unassigned.map((id) => this.event(issue, actor, 'unassigned', { user: id })),
        ...requested.userIds.map((id) => this.event(issue, actor, 'review_requested', { user: id })),
        ...requested.teamIds.map((id) => this.event(issue, actor, 'review_requested', { team: id })),
        ...removed.userIds.map((id) => this.event(issue, actor, 'review_request_removed', { user: id })),
        ...removed.teamIds.map((id) => this.event(issue, actor, 'review_request_removed', { team: id })),
      ]);
      // Rows in the platform's order: the state change first, then assignments, then review requests.
      const facts = await store.loadIssueFacts(trx, issue.id);
      const record = <A extends keyof IssueActions>(action: A, payload: Omit<IssueActions[A], keyof IssueActivityFacts>) => this.record(trx, issue, actor, facts, action, payload);
      if (edited) await record('edited', { changes: edits });
      if (transition) await record(transition.action, { state: transition.state, ...(isPullRequest ? { merged: transition.merged } : {}) });
      const labelOf = (label: LabelRow) => labelRepresentation(this.ctx.urls, repository.owner, repository, label);
      for (const label of labelChange.added) await record('labeled', { label: labelOf(label) });
      for (const label of labelChange.removed) await record('unlabeled', { label: labelOf(label) });
      for (const id of assigned) await record('assigned', { assignee_id: id });
      for (const id of unassigned) await record('unassigned', { assignee_id: id });
      for (const id of requested.userIds) await record('review_requested', { requested_reviewer_id: id });
      for (const id of requested.teamIds) await record('review_requested', { requested_team_id: id });
      for (const id of removed.userIds) await record('review_request_removed', { requested_reviewer_id: id });
      for (const id of removed.teamIds) await record('review_request_removed', { requested_team_id: id });
      return facts;
    });
  }

  /**
   * The labels a change adds and removes, decided on the locked issue. A name the repository has no
   * label of is made (the platform's grey, `label` `created`); at most 100 labels stay on the issue.
   */
  private async labelChange(trx: Executor, repository: Repository, issueId: number, actor: UserRow, input: Pick<UpdateIssueInput, 'labels' | 'labels_added' | 'labels_removed'>) {
    // A change that names no labels reads none (every state or assignee change comes here).
    if (input.labels === undefined && input.labels_added === undefined && input.labels_removed === undefined) return { added: [], removed: [] };
    const current = await store.issueLabels(trx, issueId);
    const given = await this.labelsMade(trx, repository, actor, [...(input.labels ?? []), ...(input.labels_added ?? [])]);
    const removedNames = new Set((input.labels_removed ?? []).map((name) => name.toLowerCase()));
    const kept = input.labels !== undefined ? given.filter((l) => (input.labels ?? []).some((n) => n.toLowerCase() === l.name_lower)) : current;
    const wanted = [...new Map([...kept, ...given.filter((l) => (input.labels_added ?? []).some((n) => n.toLowerCase() === l.name_lower))].map((l) => [l.id, l])).values()]
      .filter((l) => !removedNames.has(l.name_lower));
    if (wanted.length > MAX_LABELS) throw invalidField('Issue', 'labels', `an issue has at most ${MAX_LABELS} labels`);
    const has = (list: readonly LabelRow[], label: LabelRow) => list.some((l) => l.id === label.id);
    return { added: wanted.filter((l) => !has(current, l)), removed: current.filter((l) => !has(wanted, l)) };
  }

  /** The repository's labels of these names, those it lacks made now (and their `label` `created`). */
  private async labelsMade(trx: Executor, repository: Repository, actor: UserRow, names: readonly string[]): Promise<LabelRow[]> {
    const wanted = [...new Map(names.map((name) => [name.toLowerCase(), name])).values()];
    const found = await labels.labelsNamed(trx, repository.id, wanted);
    const missing = wanted.filter((n) => !found.some((l) => l.name_lower === n.toLowerCase()));
    if (!missing.length) return found;
    const now = this.now();
    for (const name of missing) {
      const label = await labels.insertLabelIfAbsent(trx, { repository_id: repository.id, name, name_lower: name.toLowerCase(), color: 'ededed', description: null, is_default: 0, created_at: now, updated_at: now });
      if (label) await recordRepositoryActivity(this.ctx, trx, { name: 'label.created', repository_id: repository.id, actor_id: actor.id, payload: { label: labelRepresentation(this.ctx.urls, repository.owner, repository, label) } });
    }
    // Made here or by a concurrent write: the rows as they are.
    return labels.labelsNamed(trx, repository.id, wanted);
  }

  /** What a state change does, or null when the issue is already in that state. */
  private transition(issue: IssueRow, state: UpdateIssueInput['state'], reason?: UpdateIssueInput['state_reason']) {
    if (state === undefined) return null;
    const isPull = Boolean(issue.is_pull_request);
    if (reason != null && (isPull || (state === 'closed') !== (reason !== 'reopened'))) {
      throw invalidField('Issue', 'state_reason', isPull ? 'a pull request has no state reason' : `${reason} is no reason to make an issue ${state}`);
    }
    const isPullRequest = Boolean(issue.is_pull_request);
    const merged = issue.merged_at !== null;
    if (state === 'merged') {
      if (!isPullRequest) throw invalidField('Issue', 'state', 'only a pull request can be merged');
      if (merged) return null;
      if (issue.state === 'closed') throw invalidField('PullRequest', 'state', 'a closed pull request cannot be merged; reopen it first');
      return {
        action: 'closed' as const,
        state: 'closed' as const,
        merged: true,
        events: ['merged', 'closed'],
        values: (now: string) => ({ state: 'closed', state_reason: null, closed_at: now, merged_at: now }),
      };
    }
    if (state === issue.state) return null;
    if (state === 'closed') {
      return {
        action: 'closed' as const,
        state: 'closed' as const,
        merged: false,
        events: ['closed'],
        values: (now: string) => ({ state: 'closed', state_reason: isPullRequest ? null : reason ?? 'completed', closed_at: now }),
      };
    }
    if (merged) throw invalidField('PullRequest', 'state', 'a merged pull request cannot be reopened');
    return {
      action: 'reopened' as const,
      state: 'open' as const,
      merged: false,
      events: ['reopened'],
      values: () => ({ state: 'open', state_reason: isPullRequest ? null : 'reopened', closed_at: null }),
    };
  }

  /** Records an `issues` or `pull_request` row; `facts` are the subject once the write's changes are applied. */
  /**
   * Locks the issue's conversation (`reason` one of the platform's, or null) or unlocks it: the
   * `locked` / `unlocked` event and its timeline event; locking a locked issue (or unlocking an
   * unlocked one) changes nothing and records nothing.
   */
  async setLocked(repository: Repository, found: IssueRow, actor: UserRow, lock: { reason: string | null } | null): Promise<void> {
    await this.transaction(async (trx) => {
      await stillWritable(trx, repository.id, this.ctx.db.dialect === 'postgres');
      const issue = await store.lockIssue(trx, found.id, this.ctx.db.dialect === 'postgres');
      if ((issue.locked === 1) === (lock !== null)) return;
      const now = this.now();
      await store.updateIssue(trx, issue.id, { locked: lock ? 1 : 0, active_lock_reason: lock?.reason ?? null, updated_at: now });
      await store.insertEvents(trx, [this.event(issue, actor, lock ? 'locked' : 'unlocked', {})]);
      await this.record(trx, issue, actor, await store.loadIssueFacts(trx, issue.id), lock ? 'locked' : 'unlocked', {});
    });
  }

  private async record<A extends keyof IssueActions>(trx: Executor, issue: IssueRow, actor: UserRow, facts: IssueFacts, action: A, payload: Omit<IssueActions[A], keyof IssueActivityFacts>): Promise<void> {
    const event = issue.is_pull_request ? 'pull_request' : 'issues';
    const full = { number: issue.number, pull_request: Boolean(issue.is_pull_request), ...payload, snapshot: subjectSnapshot(this.ctx.urls, event, facts) };
    // TypeScript does not follow `A` through the name built from it; the callers' `A` ties action and payload.
    await recordIssueActivity(this.ctx, trx, { name: `${event}.${action}`, repository_id: issue.repository_id, actor_id: actor.id, issue_id: issue.id, payload: full as IssueActivities[`${typeof event}.${A}`] });
  }

  private event(issue: IssueRow, actor: UserRow, event: string, subject: { user?: number; team?: number }) {
    return {
      issue_id: issue.id,
      repository_id: issue.repository_id,
      actor_id: actor.id,
      event,
      subject_user_id: subject.user ?? null,
      subject_team_id: subject.team ?? null,
      created_at: this.now(),
    };
  }

  private async writableRepository(owner: string, name: string): Promise<Repository> {
    const repository = await findRepository(this.db, owner, name);
    if (!repository) throw notFound('Repository not found');
    assertRepositoryWritable(repository);
    return repository;
  }

  private async issue(repository: Repository, number: number): Promise<IssueRow> {
    // Numbers are int4 like ids: a larger one names no issue.
    const issue = isRowId(number) ? await store.findIssue(this.db, repository.id, number) : undefined;
    if (!issue) throw notFound('Issue not found');
    return issue;
  }

  private async user(login: string): Promise<UserRow> {
    const user = await findAccount(this.db, login);
    if (!user || user.type === 'Organization') throw notFound(`User not found: ${login}`);
    return user;
  }

  private async userById(id: number): Promise<UserRow> {
    const [user] = await accounts.usersById(this.db, [id]);
    if (!user) throw new Error(`user ${id} not found`);
    return user;
  }

  private async users(logins: readonly string[] = []): Promise<UserRow[]> {
    const users: UserRow[] = [];
    for (const login of unique(logins.map((l) => l.toLowerCase()))) users.push(await this.user(login));
    return users;
  }

  /** An issue's type: one of the organization's enabled issue types, by name. */
  private async issueType(repository: Repository, isPullRequest: boolean, name: string) {
    if (isPullRequest) throw invalidField('Issue', 'type', 'issue types apply to issues, not pull requests');
    if (repository.owner.type !== 'Organization') throw invalidField('Issue', 'type', 'issue types belong to organizations');
    const type = await store.usableIssueType(this.db, repository.owner_id, repository.id, name);
    if (!type) throw invalidField('Issue', 'type', `no enabled issue type named "${name}" in ${repository.owner.login} for this repository`);
    return type;
  }

  /** Requested reviewers: users (not the author) and teams of the repository's organization, pull requests only. */
  private async reviewers(repository: Repository, isPullRequest: boolean, author: UserRow, logins?: string[], slugs?: string[]) {
    if (!isPullRequest && (logins?.length || slugs?.length)) {
      throw invalidField('Issue', logins?.length ? 'reviewers' : 'team_reviewers', 'reviews can only be requested on a pull request');
    }
    const users = await this.users(logins);
    if (users.some((u) => u.id === author.id)) throw invalidField('PullRequest', 'reviewers', 'Review cannot be requested from pull request author.');
    const teams: TeamRow[] = [];
    for (const name of unique((slugs ?? []).map((s) => s.toLowerCase()))) {
      const [org, slug] = name.includes('/') ? name.split('/', 2) : [repository.owner.login.toLowerCase(), name];
      if (repository.owner.type !== 'Organization' || org !== repository.owner.login.toLowerCase()) {
        throw invalidField('PullRequest', 'team_reviewers', `team reviewers must be teams of the repository's organization: ${name}`);
      }
      const team = await findTeam(this.db, repository.owner_id, slug!);
      if (!team) throw notFound(`Team not found: ${name}`);
      teams.push(team);
    }
    return { userIds: users.map((u) => u.id), teamIds: teams.map((t) => t.id) };
  }

  private async mentions(body: string | undefined): Promise<Mentioned> {
    const { logins, teams } = parseMentions(body);
    const users = await accounts.usersByLogin(this.db, logins);
    const byLogin = new Map(users.map((u) => [u.login_lower, u.id]));
    const found = await accounts.teamsBySlug(this.db, teams);
    return { userIds: logins.flatMap((l) => (byLogin.has(l) ? [byLogin.get(l)!] : [])), teamIds: found.map((t) => t.id) };
  }
}
