// The writes a client makes inside a repository (issue 39): comments, issues, their assignees. Who
// may: src/core/access `requireWritableRepository` (404 for what the caller does not see, 403 for
// what it sees and may not change); who they are by: the caller, or an installation's app as its bot
// account. The changes and their activity: ./writes.ts.
import { Service } from '../../platform/service.ts';
import { forbidden, invalidField, notFound } from '../../platform/errors.ts';
import { RepositoryService, type ReadableRepository } from '../repositories/service.ts';
import { commentRepresentation, issueRepresentation, reactionRepresentation, type Reaction } from './representations.ts';
import { findComment, findCommentById, findIssueById, issueLabels, type IssueRow } from './store.ts';
import { addReaction, deleteReaction, findReaction, reactionPage, type ReactionContent, type ReactionSubject } from './reaction-store.ts';
import { stillWritable } from '../repositories/lookup.ts';
import { findLabel, labelPage } from '../repositories/label-store.ts';
import { labelRepresentation, type Label } from '../repositories/representations.ts';
import { LabelWrites, type LabelInput } from './label-writes.ts';
import type { PageParams } from '../../platform/pagination.ts';
import {
  callerRepositoryPermissions, notAccessible, requireWritableRepository,
  type Permissions, type Principal, type RepositoryWrite,
} from '../access/index.ts';
import { usersById, usersByLogin, type UserRow } from '../accounts/store.ts';
import { actingAccount } from '../apps/actor.ts';
import { IssueService, rowId, usersWithRole } from './service.ts';
import { IssueWrites, type UpdateIssueInput } from './writes.ts';

/** What the routes of issue and comment writes accept; the issue's kind narrows it (`issueWrite`). */
export const ISSUE_WRITE: readonly Permissions[] = [{ issues: 'write' }, { pull_requests: 'write' }];

/**
 * A write on an issue or its comments asks `issues: write` on an issue and either permission on a
 * pull request (the platform's sets); of a user, `role` on the repository.
 */
function issueWrite(issue: Pick<IssueRow, 'is_pull_request'>, role: RepositoryWrite['role']): RepositoryWrite {
  return { role, permissions: issue.is_pull_request ? ISSUE_WRITE : [{ issues: 'write' }] };
}

/** Labels as the platform takes them: names, or objects with a `name`. */
export type LabelNames = (string | { name: string })[];
const namesOf = (labels: LabelNames) => labels.map((label) => (typeof label === 'string' ? label : label.name));

export interface OpenIssue {
  title: string;
  body?: string | null;
  assignees?: string[];
  labels?: LabelNames;
  milestone?: number | string | null;
  type?: string | null;
}

/** What reactions are on: an issue (or pull request) by its number, or an issue comment by its id. */
export type ReactionTarget = { issue: string } | { comment: string };

export type IssueChange = Pick<UpdateIssueInput, 'title' | 'body' | 'state' | 'state_reason' | 'assignees'> & { milestone?: number | string | null; labels?: LabelNames };

export class IssueWriteService extends Service {
  private readonly repositories = new RepositoryService(this.ctx);
  private readonly reads = new IssueService(this.ctx);
  private readonly writes = new IssueWrites(this.ctx);
  private readonly labelWrites = new LabelWrites(this.ctx);

  /**
   * Opens an issue: anyone who reads the repository; its assignees and type only from who may
   * triage it (write access, or an installation), others' are dropped as the platform drops them.
   */
  async openIssue(principal: Principal, owner: string, repo: string, input: OpenIssue) {
    const repository = await this.repositories.readable(principal, owner, repo);
    await requireWritableRepository(this.db, principal, repository, issueWrite({ is_pull_request: 0 }, 'pull'));
    noMilestone(input.milestone);
    const triages = await this.triages(principal, repository);
    const assignees = triages ? await this.assignable(repository, input.assignees ?? []) : [];
    const facts = await this.writes.openIssue(repository, await this.actor(principal), {
      title: input.title,
      ...(input.body != null ? { body: input.body } : {}),
      assignees,
      ...(triages && input.type != null ? { type: input.type } : {}),
      ...(triages && input.labels !== undefined ? { labels: namesOf(input.labels) } : {}),
    });
    return issueRepresentation(this.ctx.urls, facts);
  }

  /**
   * Changes an issue: its author may change the title, the body and the state; anyone else needs
   * write access (an installation: its permission). Assignees change only for who may triage.
   */
  async changeIssue(principal: Principal, owner: string, repo: string, number: string, input: IssueChange) {
    const { issue, repository } = await this.reads.issueWithRepository(principal, owner, repo, number);
    const caller = await this.actor(principal, false);
    await requireWritableRepository(this.db, principal, repository, issueWrite(issue, caller?.id === issue.author_id ? 'pull' : 'push'));
    noMilestone(input.milestone);
    const triages = await this.triages(principal, repository);
    const { milestone: _milestone, assignees, labels, ...rest } = input;
    const facts = await this.writes.changeIssue(repository, issue, caller ?? (await this.actor(principal)), {
      ...rest,
      ...(triages && assignees !== undefined ? { assignees: await this.assignable(repository, assignees) } : {}),
      ...(triages && labels !== undefined ? { labels: namesOf(labels) } : {}),
    });
    return issueRepresentation(this.ctx.urls, facts);
  }

  /**
   * Adds or removes assignees (POST / DELETE …/issues/{issue_number}/assignees): who may triage;
   * anyone else who reads the repository is answered the issue unchanged, as the platform answers.
   * Those who may not be assigned (no write access) are left out.
   */
  async assign(principal: Principal, owner: string, repo: string, number: string, change: 'add' | 'remove', logins: string[]) {
    const { issue, repository } = await this.reads.issueWithRepository(principal, owner, repo, number);
    await requireWritableRepository(this.db, principal, repository, issueWrite(issue, 'pull'));
    if (!(await this.triages(principal, repository))) return this.reads.issue(principal, owner, repo, number);
    const users = change === 'add'
      ? await this.assignable(repository, logins, false)
      : (await usersByLogin(this.db, logins)).map((u) => u.login);
    const facts = await this.writes.changeIssue(repository, issue, await this.actor(principal), change === 'add' ? { assignees_added: users } : { assignees_removed: users });
    return issueRepresentation(this.ctx.urls, facts);
  }

  /**
   * Locks (`lock`: its reason) or unlocks an issue's conversation: who has write access, or an
   * installation with the permission; any other reader 403.
   */
  async setLocked(principal: Principal, owner: string, repo: string, number: string, lock: { reason: string | null } | null): Promise<void> {
    const { issue, repository } = await this.reads.issueWithRepository(principal, owner, repo, number);
    await requireWritableRepository(this.db, principal, repository, issueWrite(issue, 'push'));
    await this.writes.setLocked(repository, issue, await this.actor(principal), lock);
  }

  /** The 404 unless a user may be assigned issues of the repository: write access there (GET /repos/{owner}/{repo}/assignees/{assignee}). */
  async requireAssignable(principal: Principal, owner: string, repo: string, login: string): Promise<void> {
    const repository = await this.repositories.readable(principal, owner, repo);
    if (!(await this.assignable(repository, [login], false)).length) throw notFound();
  }

  /**
   * A comment by the caller (a user, or an installation's app as its bot account), anyone who reads
   * the repository may make; on a locked issue, only who may triage it.
   */
  async createComment(principal: Principal, owner: string, repo: string, number: string, body: string) {
    const { issue, repository } = await this.reads.issueWithRepository(principal, owner, repo, number);
    await requireWritableRepository(this.db, principal, repository, issueWrite(issue, 'pull'));
    // A locked conversation takes comments from who may triage only (write access, or an installation).
    if (issue.locked === 1 && !(await this.triages(principal, repository))) throw forbidden('Unable to create comment because issue is locked.');
    return commentRepresentation(this.ctx.urls, await this.writes.commentOn(repository, issue, await this.actor(principal), body));
  }

  /** A comment's new body: its author may change it, and whoever has write access to the repository (an installation: its permission). */
  async editComment(principal: Principal, owner: string, repo: string, commentId: string, body: string) {
    const { repository, actor } = await this.commentWriter(principal, owner, repo, commentId);
    return commentRepresentation(this.ctx.urls, await this.writes.editComment(repository, rowId(commentId), actor, body));
  }

  /** Deletes a comment, on the same terms as an edit. */
  async deleteComment(principal: Principal, owner: string, repo: string, commentId: string): Promise<void> {
    const { repository, actor } = await this.commentWriter(principal, owner, repo, commentId);
    await this.writes.deleteComment(repository, rowId(commentId), actor);
  }

  /**
   * The repository of a comment the caller may change, and who the change is by: 404 for what the
   * caller does not see; the comment's author needs what a reader has, anyone else write access.
   */
  private async commentWriter(principal: Principal, owner: string, repo: string, commentId: string): Promise<{ repository: ReadableRepository; actor: UserRow }> {
    const repository = await this.repositories.readable(principal, owner, repo);
    const comment = await findComment(this.db, repository.id, rowId(commentId));
    const issue = comment && (await findIssueById(this.db, comment.issue_id));
    if (!comment || !issue) throw notFound();
    const caller = await this.actor(principal, false);
    await requireWritableRepository(this.db, principal, repository, issueWrite(issue, caller?.id === comment.author_id ? 'pull' : 'push'));
    return { repository, actor: caller ?? (await this.actor(principal)) };
  }

  // --- Reactions ---------------------------------------------------------------------------------

  /** A page of the reactions to an issue or a comment, oldest first; of one content when given. */
  async reactions(principal: Principal, owner: string, repo: string, target: ReactionTarget, content: ReactionContent | undefined, page: PageParams): Promise<{ total: number; items: Reaction[] }> {
    const { subject } = await this.reactionSubject(principal, owner, repo, target);
    const { total, reactions } = await reactionPage(this.db, subject, content, { offset: page.offset, limit: page.perPage });
    const users = new Map((await usersById(this.db, [...new Set(reactions.map((r) => r.user_id))])).map((u) => [u.id, u]));
    return { total, items: reactions.map((r) => reactionRepresentation(this.ctx.urls, r, users.get(r.user_id)!)) };
  }

  /**
   * The caller's reaction (a user, or an installation's app as its bot account): anyone who reads
   * the repository reacts, as they comment. `created` false: they had reacted so already, and that
   * reaction is the answer.
   */
  async react(principal: Principal, owner: string, repo: string, target: ReactionTarget, content: ReactionContent): Promise<{ created: boolean; reaction: Reaction }> {
    const { subject, issue, repository } = await this.reactionSubject(principal, owner, repo, target);
    await requireWritableRepository(this.db, principal, repository, issueWrite(issue, 'pull'));
    const user = await this.actor(principal);
    const { reaction, created } = await this.transaction(async (trx) => {
      await stillWritable(trx, repository.id, this.ctx.db.dialect === 'postgres');
      const there = 'issueId' in subject ? await findIssueById(trx, subject.issueId) : await findCommentById(trx, subject.commentId);
      if (!there) throw notFound();
      return addReaction(trx, subject, user.id, content, this.now());
    });
    return { created, reaction: reactionRepresentation(this.ctx.urls, reaction, user) };
  }

  /**
   * Deletes a reaction of the issue or comment: on the terms of making one, and only the caller's
   * own (an installation: its bot's); another's is a 403, one the subject lacks a 404.
   */
  async unreact(principal: Principal, owner: string, repo: string, target: ReactionTarget, reactionId: string): Promise<void> {
    const { subject, issue, repository } = await this.reactionSubject(principal, owner, repo, target);
    await requireWritableRepository(this.db, principal, repository, issueWrite(issue, 'pull'));
    const reaction = await findReaction(this.db, subject, rowId(reactionId));
    if (!reaction) throw notFound();
    if ((await this.actor(principal, false))?.id !== reaction.user_id) throw notAccessible(principal);
    await this.transaction(async (trx) => {
      await stillWritable(trx, repository.id, this.ctx.db.dialect === 'postgres');
      await deleteReaction(trx, reaction.id);
    });
  }

  /** What the reactions are on, as the caller may read it (404 otherwise), with its issue and repository. */
  private async reactionSubject(principal: Principal, owner: string, repo: string, target: ReactionTarget) {
    if ('issue' in target) {
      const { issue, repository } = await this.reads.issueWithRepository(principal, owner, repo, target.issue);
      return { subject: { issueId: issue.id } as ReactionSubject, issue, repository };
    }
    const repository = await this.repositories.readable(principal, owner, repo);
    const comment = await findComment(this.db, repository.id, rowId(target.comment));
    const issue = comment && (await findIssueById(this.db, comment.issue_id));
    if (!comment || !issue) throw notFound();
    return { subject: { commentId: comment.id } as ReactionSubject, issue, repository };
  }

  // --- Labels ------------------------------------------------------------------------------------

  /** A page of the repository's labels. */
  async labels(principal: Principal, owner: string, repo: string, page: PageParams): Promise<{ total: number; items: Label[] }> {
    const repository = await this.repositories.readable(principal, owner, repo);
    const { total, labels } = await labelPage(this.db, repository.id, { offset: page.offset, limit: page.perPage });
    return { total, items: labels.map((label) => labelRepresentation(this.ctx.urls, repository.owner, repository, label)) };
  }

  async label(principal: Principal, owner: string, repo: string, name: string): Promise<Label> {
    const repository = await this.repositories.readable(principal, owner, repo);
    const label = await findLabel(this.db, repository.id, name);
    if (!label) throw notFound();
    return labelRepresentation(this.ctx.urls, repository.owner, repository, label);
  }

  /** Makes a repository's label: who may triage (write access), or an installation with its permission. */
  async createLabel(principal: Principal, owner: string, repo: string, input: LabelInput): Promise<Label> {
    const { repository, actor } = await this.labelWriter(principal, owner, repo);
    return labelRepresentation(this.ctx.urls, repository.owner, repository, await this.labelWrites.createLabel(repository, actor, input));
  }

  /** Changes a label, on the same terms. */
  async updateLabel(principal: Principal, owner: string, repo: string, name: string, input: Partial<LabelInput> & { new_name?: string }): Promise<Label> {
    const { repository, actor } = await this.labelWriter(principal, owner, repo);
    return labelRepresentation(this.ctx.urls, repository.owner, repository, await this.labelWrites.updateLabel(repository, actor, name, input));
  }

  /** Deletes a label, on the same terms: it leaves every issue it was on. */
  async deleteLabel(principal: Principal, owner: string, repo: string, name: string): Promise<void> {
    const { repository, actor } = await this.labelWriter(principal, owner, repo);
    await this.labelWrites.deleteLabel(repository, actor, name);
  }

  private async labelWriter(principal: Principal, owner: string, repo: string) {
    const repository = await this.repositories.readable(principal, owner, repo);
    await requireWritableRepository(this.db, principal, repository, { role: 'push', permissions: ISSUE_WRITE });
    return { repository, actor: await this.actor(principal) };
  }

  /** An issue's labels. */
  async issueLabels(principal: Principal, owner: string, repo: string, number: string): Promise<Label[]> {
    const { issue, repository } = await this.reads.issueWithRepository(principal, owner, repo, number);
    return (await issueLabels(this.db, issue.id)).map((label) => labelRepresentation(this.ctx.urls, repository.owner, repository, label));
  }

  /**
   * Adds, sets or removes an issue's labels (who may triage; a name the repository lacks is made),
   * answering the labels it has then. Removing one it does not have is a 404 `Label does not exist`.
   */
  async labelIssue(principal: Principal, owner: string, repo: string, number: string, change: Pick<UpdateIssueInput, 'labels' | 'labels_added' | 'labels_removed'>): Promise<Label[]> {
    const { issue, repository } = await this.reads.issueWithRepository(principal, owner, repo, number);
    await requireWritableRepository(this.db, principal, repository, issueWrite(issue, 'push'));
    const [removed] = change.labels_removed ?? [];
    if (removed !== undefined && !(await issueLabels(this.db, issue.id)).some((l) => l.name_lower === removed.toLowerCase())) throw notFound('Label does not exist');
    const facts = await this.writes.changeIssue(repository, issue, await this.actor(principal), change);
    return facts.labels.map((label) => labelRepresentation(this.ctx.urls, repository.owner, repository, label));
  }

  /**
   * Who the caller's writes are by: the token's user, or an installation's app as its bot account
   * (`<slug>[bot]`), made on its first write (`make`; otherwise undefined until then).
   */
  private async actor(principal: Principal): Promise<UserRow>;
  private async actor(principal: Principal, make: false): Promise<UserRow | undefined>;
  private async actor(principal: Principal, make = true): Promise<UserRow | undefined> {
    return make ? actingAccount(this.db, principal, this.now()) : actingAccount(this.db, principal, this.now(), false);
  }

  /** Whether the caller may triage the repository's issues: a user with write access, or an installation (its permission was checked). */
  private async triages(principal: Principal, repository: ReadableRepository): Promise<boolean> {
    if (principal.type === 'installation') return true;
    return (await callerRepositoryPermissions(this.db, principal, repository)).push;
  }

  /**
   * The logins of `logins` who may be assigned (write access to the repository): any other is the
   * platform's 422, or (`strict` false: adding assignees) left out.
   */
  private async assignable(repository: ReadableRepository, logins: readonly string[], strict = true): Promise<string[]> {
    const { named, permitted } = await usersWithRole(this.db, repository, logins, 'push');
    const found: string[] = [];
    for (const { user } of named) {
      if (user && permitted.has(user.id)) found.push(user.login);
      else if (strict) throw invalidField('Issue', 'assignees');
    }
    return found;
  }
}

/** codehost keeps no milestones: any milestone names none (the platform's 422 for an unknown one). */
function noMilestone(milestone: number | string | null | undefined): void {
  if (milestone != null) throw invalidField('Issue', 'milestone');
}
