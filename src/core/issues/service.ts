// The public reads of issues, pull requests and comments. Each is read inside its repository by
// the repository's rule (core/repositories/service.ts) with the permissions of the resource.
import { Service } from '../../platform/service.ts';
import { notFound } from '../../platform/errors.ts';
import { isRowId } from '../../platform/schemas.ts';
import type { Permissions } from '../apps/permissions.ts';
import type { Principal } from '../callers/principal.ts';
import { RepositoryService } from '../repositories/service.ts';
import { commentRepresentation, issueRepresentation, loadCommentFacts, loadIssueFacts, pullRequestRepresentation } from './representations.ts';
import { findComment, findIssue } from './store.ts';

export const ISSUE_READ: readonly Permissions[] = [{ issues: 'read' }, { pull_requests: 'read' }];
export const PULL_READ: readonly Permissions[] = [{ pull_requests: 'read' }];

/** A path number that can name a row; anything else names nothing (404, as the platform answers). */
function rowId(value: string): number {
  const id = /^\d{1,10}$/.test(value) ? Number(value) : NaN;
  if (!isRowId(id)) throw notFound();
  return id;
}

export class IssueService extends Service {
  private readonly repositories = new RepositoryService(this.ctx);

  private async issueIn(principal: Principal, owner: string, repo: string, number: string, permissions: readonly Permissions[]) {
    const repository = await this.repositories.readable(principal, owner, repo);
    const issue = await findIssue(this.db, repository.id, rowId(number));
    if (!issue) throw notFound();
    return issue;
  }

  /** An issue, or a pull request in its Issue form (with `pull_request`). */
  async issue(principal: Principal, owner: string, repo: string, number: string) {
    const issue = await this.issueIn(principal, owner, repo, number, ISSUE_READ);
    return issueRepresentation(this.ctx.urls, await loadIssueFacts(this.db, issue.id));
  }

  /** A pull request; an issue's number is a 404. */
  async pull(principal: Principal, owner: string, repo: string, number: string) {
    const issue = await this.issueIn(principal, owner, repo, number, PULL_READ);
    if (!issue.is_pull_request) throw notFound();
    return pullRequestRepresentation(this.ctx.urls, await loadIssueFacts(this.db, issue.id));
  }

  async comment(principal: Principal, owner: string, repo: string, commentId: string) {
    const repository = await this.repositories.readable(principal, owner, repo);
    const comment = await findComment(this.db, repository.id, rowId(commentId));
    if (!comment) throw notFound();
    return commentRepresentation(this.ctx.urls, await loadCommentFacts(this.db, comment.id));
  }
}
