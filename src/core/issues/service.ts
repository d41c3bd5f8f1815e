// The public reads of issues, pull requests and comments. Each is read inside its repository by
// the repository's rule (core/repositories/service.ts) with the permissions of the resource.
import { Service } from '../../platform/service.ts';
import { notFound } from '../../platform/errors.ts';
import { isRowId } from '../../platform/schemas.ts';
import { RepositoryService } from '../repositories/service.ts';
import type { PageParams } from '../../platform/pagination.ts';
import {
  commentRepresentation, eventRepresentation, issueRepresentation, loadCommentFacts, loadCommentPageFacts, loadEventPageFacts,
  pullRequestRepresentation, type IssueComment, type IssueEvent,
} from './representations.ts';
import { commentPage, eventPage, findComment, findEvent, findIssue, findIssueById, issueFactsOf, type IssueRow } from './store.ts';
import { findAppBy, requireWritableRepository, type Permissions, type Principal, type RepositoryWrite } from '../access/index.ts';
import { botAccount, findAccount, type UserRow } from '../accounts/store.ts';
import type { RepositoryRow } from '../repositories/representations.ts';
import { IssueWrites } from './writes.ts';

export const ISSUE_READ: readonly Permissions[] = [{ issues: 'read' }, { pull_requests: 'read' }];
export const PULL_READ: readonly Permissions[] = [{ pull_requests: 'read' }];
/** What the route of a comment write accepts; the issue's kind narrows it (`commentWrite`). */
export const COMMENT_WRITE: readonly Permissions[] = [{ issues: 'write' }, { pull_requests: 'write' }];

/**
 * A comment write asks `issues: write` on an issue and either permission on a pull request (the
 * platform's sets); of a user, `role` on the repository.
 */
function commentWrite(issue: IssueRow, role: RepositoryWrite['role']): RepositoryWrite {
  return { role, permissions: issue.is_pull_request ? COMMENT_WRITE : [{ issues: 'write' }] };
}

/** A path number that can name a row; anything else names nothing (404, as the platform answers). */
function rowId(value: string): number {
  const id = /^\d{1,10}$/.test(value) ? Number(value) : NaN;
  if (!isRowId(id)) throw notFound();
  return id;
}

export class IssueService extends Service {
  private readonly repositories = new RepositoryService(this.ctx);
  private readonly writes = new IssueWrites(this.ctx);

  private async issueWithRepository(principal: Principal, owner: string, repo: string, number: string) {
    const repository = await this.repositories.readable(principal, owner, repo);
    const issue = await findIssue(this.db, repository.id, rowId(number));
    if (!issue) throw notFound();
    return { issue, repository };
  }

  /** An issue, or a pull request in its Issue form (with `pull_request`). */
  async issue(principal: Principal, owner: string, repo: string, number: string) {
    const { issue, repository } = await this.issueWithRepository(principal, owner, repo, number);
    return issueRepresentation(this.ctx.urls, await issueFactsOf(this.db, issue, repository));
  }

  /** A pull request; an issue's number is a 404. */
  async pull(principal: Principal, owner: string, repo: string, number: string) {
    const { issue, repository } = await this.issueWithRepository(principal, owner, repo, number);
    if (!issue.is_pull_request) throw notFound();
    return pullRequestRepresentation(this.ctx.urls, await issueFactsOf(this.db, issue, repository));
  }

  async comment(principal: Principal, owner: string, repo: string, commentId: string) {
    const repository = await this.repositories.readable(principal, owner, repo);
    const comment = await findComment(this.db, repository.id, rowId(commentId));
    if (!comment) throw notFound();
    return commentRepresentation(this.ctx.urls, await loadCommentFacts(this.db, comment.id));
  }

  /** An issue's (or pull request's) comments, oldest first; `since`: those updated at or after it. */
  async comments(principal: Principal, owner: string, repo: string, number: string, since: string | undefined, page: PageParams): Promise<{ total: number; items: IssueComment[] }> {
    const { issue, repository } = await this.issueWithRepository(principal, owner, repo, number);
    const after = since === undefined ? null : new Date(since).toISOString();
    const { total, comments } = await commentPage(this.db, issue.id, after, { offset: page.offset, limit: page.perPage });
    const facts = await loadCommentPageFacts(this.db, comments, { issue, repository, owner: repository.owner });
    return { total, items: facts.map((f) => commentRepresentation(this.ctx.urls, f)) };
  }

  /** An issue's (or pull request's) timeline events, oldest first. */
  async events(principal: Principal, owner: string, repo: string, number: string, page: PageParams): Promise<{ total: number; items: IssueEvent[] }> {
    const { issue, repository } = await this.issueWithRepository(principal, owner, repo, number);
    const { total, events } = await eventPage(this.db, issue.id, { offset: page.offset, limit: page.perPage });
    const facts = await loadEventPageFacts(this.db, events, { repository, owner: repository.owner });
    return { total, items: facts.map((f) => eventRepresentation(this.ctx.urls, f)) };
  }

  /** One issue event of the repository (the `url` of each event). */
  async event(principal: Principal, owner: string, repo: string, eventId: string): Promise<IssueEvent> {
    const repository = await this.repositories.readable(principal, owner, repo);
    const event = await findEvent(this.db, repository.id, rowId(eventId));
    if (!event) throw notFound();
    const [facts] = await loadEventPageFacts(this.db, [event], { repository, owner: repository.owner });
    return eventRepresentation(this.ctx.urls, facts!);
  }

  /** A comment by the caller (a user, or an installation's app as its bot account), anyone who reads the repository may make. */
  async createComment(principal: Principal, owner: string, repo: string, number: string, body: string) {
    const { issue, repository } = await this.issueWithRepository(principal, owner, repo, number);
    await requireWritableRepository(this.db, principal, repository, commentWrite(issue, 'pull'));
    return commentRepresentation(this.ctx.urls, await this.writes.commentOn(repository, issue, await this.actor(principal), body));
  }

  /** A comment's new body: its author may change it, and whoever has write access to the repository (an installation: its permission). */
  async editComment(principal: Principal, owner: string, repo: string, commentId: string, body: string) {
    const { repository, issue, byCaller } = await this.commentWithRepository(principal, owner, repo, commentId);
    await requireWritableRepository(this.db, principal, repository, commentWrite(issue, byCaller ? 'pull' : 'push'));
    return commentRepresentation(this.ctx.urls, await this.writes.editComment(repository, rowId(commentId), await this.actor(principal), body));
  }

  /** Deletes a comment, on the same terms as an edit. */
  async deleteComment(principal: Principal, owner: string, repo: string, commentId: string): Promise<void> {
    const { repository, issue, byCaller } = await this.commentWithRepository(principal, owner, repo, commentId);
    await requireWritableRepository(this.db, principal, repository, commentWrite(issue, byCaller ? 'pull' : 'push'));
    await this.writes.deleteComment(repository, rowId(commentId), await this.actor(principal));
  }

  /** A comment of a readable repository, its issue, and whether the caller wrote it (404 for what the caller does not see). */
  private async commentWithRepository(principal: Principal, owner: string, repo: string, commentId: string): Promise<{ repository: RepositoryRow; issue: IssueRow; byCaller: boolean }> {
    const repository = await this.repositories.readable(principal, owner, repo);
    const comment = await findComment(this.db, repository.id, rowId(commentId));
    const issue = comment && (await findIssueById(this.db, comment.issue_id));
    if (!comment || !issue) throw notFound();
    const caller = await this.actor(principal, false);
    return { repository, issue, byCaller: caller?.id === comment.author_id };
  }

  /**
   * Who the caller's writes are by: the token's user, or an installation's app as its bot account
   * (`<slug>[bot]`), made on its first write (`make`; otherwise undefined until then).
   */
  private async actor(principal: Principal): Promise<UserRow>;
  private async actor(principal: Principal, make: false): Promise<UserRow | undefined>;
  private async actor(principal: Principal, make = true): Promise<UserRow | undefined> {
    if (principal.type === 'user') return principal.user;
    if (principal.type !== 'installation') throw new Error(`a ${principal.type} caller writes nothing: its route's rule admits no such caller`);
    const app = await findAppBy(this.db, { id: principal.appId });
    if (!app) throw notFound();
    return make ? botAccount(this.db, app.slug, this.now()) : findAccount(this.db, `${app.slug}[bot]`);
  }
}
