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
import { commentPage, eventPage, findComment, findEvent, findIssue, issueFactsOf } from './store.ts';
import type { Permissions, Principal } from '../access/index.ts';

export const ISSUE_READ: readonly Permissions[] = [{ issues: 'read' }, { pull_requests: 'read' }];
export const PULL_READ: readonly Permissions[] = [{ pull_requests: 'read' }];

/** A path number that can name a row; anything else names nothing (404, as the platform answers). */
export function rowId(value: string): number {
  const id = /^\d{1,10}$/.test(value) ? Number(value) : NaN;
  if (!isRowId(id)) throw notFound();
  return id;
}

export class IssueService extends Service {
  private readonly repositories = new RepositoryService(this.ctx);

  async issueWithRepository(principal: Principal, owner: string, repo: string, number: string) {
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
}
