// The pull request operations a client makes (issue 39): the repository's list, an update, requested
// reviewers and reviews. Reads by the repository's rule with `pull_requests: read`; writes through
// `requireWritableRepository` with `pull_requests: write` (404 unseen, 403 archived or no permission).
// codehost's pull requests are issues with `is_pull_request`; their head and base are both the
// repository's default branch (`pullRequestBranches`, ./representations.ts). The changes and their
// activity: ./writes.ts (`changeIssue`) and ./review-writes.ts.
import { Service } from '../../platform/service.ts';
import { invalidField, notFound, validationFailed } from '../../platform/errors.ts';
import type { PageParams } from '../../platform/pagination.ts';
import { simpleUser, team } from '../accounts/representations.ts';
import { usersById, type UserRow } from '../accounts/store.ts';
import { actingAccount } from '../apps/actor.ts';
import { requireWritableRepository, type Permissions, type Principal } from '../access/index.ts';
import { branchHead } from '../repositories/git.ts';
import { RepositoryService, type ReadableRepository } from '../repositories/service.ts';
import type { ReviewState } from '../../db/tables/issues.ts';
import { pullRequestBranches, pullRequestRepresentation, withBranches, type ShownPullRequest } from './representations.ts';
import { authorAssociations, issueFactsOf, issuePageFacts, type IssueFacts, type IssueRow } from './store.ts';
import { issueListPage } from './list-store.ts';
import { IssueService, rowId, usersWithRole } from './service.ts';
import { IssueWrites, type UpdateIssueInput } from './writes.ts';
import { findReview, hasPendingReview, reviewPage, type ReviewRow } from './review-store.ts';
import { reviewRepresentation, type PullRequestReview } from './review-representations.ts';
import { ReviewWrites } from './review-writes.ts';

export const PULL_WRITE: readonly Permissions[] = [{ pull_requests: 'write' }];

/** What a client asks of a repository's pull request list (GET /repos/{owner}/{repo}/pulls), as given. */
export interface PullListFilter {
  state?: 'open' | 'closed' | 'all';
  head?: string;
  base?: string;
  sort?: 'created' | 'updated' | 'popularity' | 'long-running';
  direction?: 'asc' | 'desc';
}

export type PullChange = Pick<UpdateIssueInput, 'title' | 'body'> & { state?: 'open' | 'closed'; base?: string };

export interface ReviewersChange {
  reviewers?: string[];
  team_reviewers?: string[];
}

export type ReviewEvent = 'APPROVE' | 'REQUEST_CHANGES' | 'COMMENT';

export interface NewReview {
  body?: string;
  event?: ReviewEvent;
  commit_id?: string;
  comments?: unknown[];
}

const STATE_OF: Record<ReviewEvent, ReviewState> = { APPROVE: 'APPROVED', REQUEST_CHANGES: 'CHANGES_REQUESTED', COMMENT: 'COMMENTED' };

export class PullRequestService extends Service {
  private readonly repositories = new RepositoryService(this.ctx);
  private readonly reads = new IssueService(this.ctx);
  private readonly writes = new IssueWrites(this.ctx);
  private readonly reviewWrites = new ReviewWrites(this.ctx);

  /**
   * Pull requests of one repository as the caller is shown them: with `head` and `base` (the default
   * branch at its commit, read once for them all) and the repository as the caller sees it.
   */
  private async shown(principal: Principal, repository: ReadableRepository, facts: readonly IssueFacts[]): Promise<ShownPullRequest[]> {
    if (!facts.length) return [];
    const branches = pullRequestBranches(this.ctx.urls, await this.repositories.represent(principal, repository), repository.owner,
      await branchHead(this.ctx.config.dataDir, repository, repository.default_branch));
    return facts.map((one) => withBranches(pullRequestRepresentation(this.ctx.urls, one), branches));
  }

  /** A pull request (GET /repos/{owner}/{repo}/pulls/{pull_number}); an issue's number is a 404. */
  async pull(principal: Principal, owner: string, repo: string, number: string): Promise<ShownPullRequest> {
    const { issue, repository } = await this.pullWithRepository(principal, owner, repo, number);
    const [shown] = await this.shown(principal, repository, [await issueFactsOf(this.db, issue, repository)]);
    return shown!;
  }

  /** A pull request of a repository the caller reads; an issue's number is a 404. */
  private async pullWithRepository(principal: Principal, owner: string, repo: string, number: string) {
    const found = await this.reads.issueWithRepository(principal, owner, repo, number);
    if (!found.issue.is_pull_request) throw notFound();
    return found;
  }

  /**
   * A page of the repository's pull requests, in their full form (as GET …/pulls/{pull_number}).
   * `head` (`user:ref` or `ref`) and `base` match the default branch only (the one branch of every
   * pull request codehost keeps): any other names none. `popularity` sorts by comments,
   * `long-running` by age (codehost does not narrow it to the last month's activity, as the platform does).
   */
  async pulls(principal: Principal, owner: string, repo: string, query: PullListFilter, page: PageParams): Promise<{ total: number; items: ShownPullRequest[] }> {
    const repository = await this.repositories.readable(principal, owner, repo);
    if (!branchMatches(repository, query.head, true) || !branchMatches(repository, query.base, false)) return { total: 0, items: [] };
    const sort = query.sort ?? 'created';
    const { total, issues } = await issueListPage(this.db, repository.id, {
      state: query.state ?? 'open',
      isPullRequest: true,
      labels: [],
      sort: sort === 'popularity' ? 'comments' : sort === 'updated' ? 'updated' : 'created',
      direction: query.direction ?? (sort === 'created' ? 'desc' : 'asc'),
      since: null,
    }, { offset: page.offset, limit: page.perPage });
    return { total, items: await this.shown(principal, repository, await issuePageFacts(this.db, issues, repository)) };
  }

  /**
   * Changes a pull request's title, body or state: its author, or who has write access (an
   * installation: `pull_requests: write`). A `base` other than the default branch is a 422.
   */
  async changePull(principal: Principal, owner: string, repo: string, number: string, input: PullChange): Promise<ShownPullRequest> {
    const { issue, repository } = await this.pullWithRepository(principal, owner, repo, number);
    const caller = await actingAccount(this.db, principal, this.now(), false);
    await requireWritableRepository(this.db, principal, repository, { role: caller?.id === issue.author_id ? 'pull' : 'push', permissions: PULL_WRITE });
    const { base, ...change } = input;
    if (base !== undefined && base !== repository.default_branch) {
      throw invalidField('PullRequest', 'base', `codehost keeps one branch per pull request: its base is the default branch ${repository.default_branch}`);
    }
    const facts = await this.writes.changeIssue(repository, issue, caller ?? (await actingAccount(this.db, principal, this.now())), change);
    return (await this.shown(principal, repository, [facts]))[0]!;
  }

  /** The users and teams asked to review the pull request. */
  async requestedReviewers(principal: Principal, owner: string, repo: string, number: string) {
    const { issue, repository } = await this.pullWithRepository(principal, owner, repo, number);
    const [facts] = await issuePageFacts(this.db, [issue], repository);
    return {
      users: facts!.requestedReviewers.map((u) => simpleUser(this.ctx.urls, u)),
      teams: facts!.requestedTeams.map((row) => team(this.ctx.urls, repository.owner, row)),
    };
  }

  /**
   * Adds reviewers to the requested ones (`add`), or removes the given ones: who has write access
   * (an installation: `pull_requests: write`). A user asked must read the repository (422
   * otherwise), and may not be the pull request's author (the platform's 422).
   */
  async changeReviewers(principal: Principal, owner: string, repo: string, number: string, change: 'add' | 'remove', input: ReviewersChange): Promise<ShownPullRequest> {
    const { issue, repository } = await this.pullWithRepository(principal, owner, repo, number);
    await requireWritableRepository(this.db, principal, repository, { role: 'push', permissions: PULL_WRITE });
    if (change === 'add') await this.requireReviewers(repository, issue, input.reviewers ?? []);
    // Added to, or removed from, the requested reviewers as they are once the pull request is locked:
    // concurrent requests each keep their change.
    const wanted = change === 'add'
      ? { reviewers_added: input.reviewers, team_reviewers_added: input.team_reviewers }
      : { reviewers_removed: input.reviewers, team_reviewers_removed: input.team_reviewers };
    const facts = await this.writes.changeIssue(repository, issue, await actingAccount(this.db, principal, this.now()), wanted);
    return (await this.shown(principal, repository, [facts]))[0]!;
  }

  /** The platform's 422 unless every login names a user who may read the repository (the author's own 422 is the write's). */
  private async requireReviewers(repository: ReadableRepository, issue: IssueRow, logins: readonly string[]): Promise<void> {
    const { named, permitted } = await usersWithRole(this.db, repository, logins, 'pull');
    for (const { user } of named) {
      if (user?.id === issue.author_id) continue;
      if (!user || !permitted.has(user.id)) {
        throw validationFailed([{
          resource: 'PullRequest', field: 'reviewers', code: 'custom',
          message: `Reviews may only be requested from collaborators. One or more of the users or teams you specified is not a collaborator of the ${repository.owner.login}/${repository.name} repository.`,
        }]);
      }
    }
  }

  /**
   * A review by the caller (a user, or an installation's app as its bot account): anyone who reads
   * the repository (a fine-grained credential `pull_requests: write`). No `event`: a PENDING review
   * (one per user). REQUEST_CHANGES and COMMENT need a body; the author may not approve or request
   * changes on their own pull request; line comments are refused (codehost keeps none).
   */
  async createReview(principal: Principal, owner: string, repo: string, number: string, input: NewReview): Promise<PullRequestReview> {
    const { issue, repository } = await this.pullWithRepository(principal, owner, repo, number);
    await requireWritableRepository(this.db, principal, repository, { role: 'pull', permissions: PULL_WRITE });
    if (input.comments?.length) throw invalidField('PullRequestReview', 'comments', 'codehost keeps no review comments on lines');
    const body = input.body ?? '';
    if ((input.event === 'REQUEST_CHANGES' || input.event === 'COMMENT') && !body.trim()) {
      throw invalidField('PullRequestReview', 'body', `a ${input.event} review needs a body`, 'missing_field');
    }
    const commitId = await branchHead(this.ctx.config.dataDir, repository, repository.default_branch);
    if (input.commit_id !== undefined && input.commit_id !== commitId) throw invalidField('PullRequestReview', 'commit_id', 'codehost keeps one commit per pull request: its head');
    const author = await actingAccount(this.db, principal, this.now());
    if (author.id === issue.author_id && input.event === 'APPROVE') throw invalidField('PullRequestReview', 'event', 'Can not approve your own pull request');
    if (author.id === issue.author_id && input.event === 'REQUEST_CHANGES') throw invalidField('PullRequestReview', 'event', 'Can not request changes on your own pull request');
    if (!input.event && (await hasPendingReview(this.db, issue.id, author.id))) throw invalidField('PullRequestReview', 'user_id', 'User can only have one pending review per pull request');
    const facts = await this.reviewWrites.createReview(repository, issue, author, { body, state: input.event ? STATE_OF[input.event] : 'PENDING', commitId });
    return reviewRepresentation(this.ctx.urls, facts);
  }

  /** A page of the pull request's reviews, oldest first; a PENDING one only to its author. */
  async reviews(principal: Principal, owner: string, repo: string, number: string, page: PageParams): Promise<{ total: number; items: PullRequestReview[] }> {
    const { issue, repository } = await this.pullWithRepository(principal, owner, repo, number);
    const { total, reviews } = await reviewPage(this.db, issue.id, await this.viewer(principal), { offset: page.offset, limit: page.perPage });
    return { total, items: await this.represent(repository, issue, reviews) };
  }

  async review(principal: Principal, owner: string, repo: string, number: string, reviewId: string): Promise<PullRequestReview> {
    const { issue, repository } = await this.pullWithRepository(principal, owner, repo, number);
    const review = await findReview(this.db, issue.id, rowId(reviewId), await this.viewer(principal));
    if (!review) throw notFound();
    return (await this.represent(repository, issue, [review]))[0]!;
  }

  /** Reviews with their authors and authors' associations (one query each). */
  private async represent(repository: ReadableRepository, issue: IssueRow, reviews: readonly ReviewRow[]): Promise<PullRequestReview[]> {
    const ids = [...new Set(reviews.map((r) => r.user_id))];
    const users = new Map((await usersById(this.db, ids)).map((u) => [u.id, u]));
    const associations = await authorAssociations(this.db, repository, ids);
    return reviews.map((review) => reviewRepresentation(this.ctx.urls, {
      review, user: users.get(review.user_id)!, authorAssociation: associations.get(review.user_id)!, issue, repository, owner: repository.owner,
    }));
  }

  /** Whose PENDING reviews the caller sees: its own (an installation: its bot's, once made). */
  private async viewer(principal: Principal): Promise<number | null> {
    if (principal.type !== 'user' && principal.type !== 'installation') return null;
    const account: UserRow | undefined = await actingAccount(this.db, principal, this.now(), false);
    return account?.id ?? null;
  }
}

/** Whether a `head` (`user:ref`, or a ref) or `base` filter names the repository's default branch, or there is none. */
function branchMatches(repository: ReadableRepository, filter: string | undefined, qualified: boolean): boolean {
  if (filter === undefined) return true;
  const colon = qualified ? filter.indexOf(':') : -1;
  const user = colon < 0 ? null : filter.slice(0, colon);
  const ref = colon < 0 ? filter : filter.slice(colon + 1);
  return ref === repository.default_branch && (user === null || user.toLowerCase() === repository.owner.login.toLowerCase());
}
