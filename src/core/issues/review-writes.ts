// Pull request reviews made (the public API: ./pull-service.ts says who may). The review and its
// activity in one transaction: a submitted review (any state but PENDING) records the platform's
// `pull_request_review` `submitted`, the review and the pull request as the write left them.
import type { Executor } from '../../db/index.ts';
import { Service } from '../../platform/service.ts';
import { recordActivity, type ActivityRecorder } from '../../activity/outbox.ts';
import type { IssueActivities } from '../activities.ts';
import type { ReviewState } from '../../db/tables/issues.ts';
import type { RepositoryRow } from '../repositories/representations.ts';
import { stillWritable } from '../repositories/lookup.ts';
import type { UserRow } from '../accounts/store.ts';
import { subjectSnapshot } from './snapshot.ts';
import * as store from './store.ts';
import type { IssueRow } from './store.ts';
import { insertReview, type ReviewRow } from './review-store.ts';
import { reviewEventRepresentation, type ReviewFacts } from './review-representations.ts';

const recordReviewActivity: ActivityRecorder<IssueActivities> = recordActivity;

export interface ReviewInput {
  body: string;
  state: ReviewState;
  /** The head commit the review is of (null: the repository has no git data). */
  commitId: string | null;
}

export class ReviewWrites extends Service {
  /**
   * A review of the pull request by `author`. Submitted (not PENDING), it is the pull request's
   * activity (its `updated_at`), and answers the author's review request, which leaves the pull
   * request's requested reviewers as on the platform (no `review_request_removed` for it).
   */
  async createReview(repository: RepositoryRow & { owner: UserRow }, issue: IssueRow, author: UserRow, input: ReviewInput): Promise<ReviewFacts> {
    const now = this.now();
    const submitted = input.state !== 'PENDING';
    return this.transaction(async (trx) => {
      await stillWritable(trx, repository.id, this.ctx.db.dialect === 'postgres');
      const locked = await store.lockIssue(trx, issue.id, this.ctx.db.dialect === 'postgres');
      const review = await insertReview(trx, {
        issue_id: locked.id,
        repository_id: repository.id,
        user_id: author.id,
        body: input.body,
        state: input.state,
        commit_id: input.commitId,
        submitted_at: submitted ? now : null,
        created_at: now,
        updated_at: now,
      });
      const facts = await this.facts(trx, repository, locked, review, author);
      if (!submitted) return facts;
      await store.removeReviewRequests(trx, locked.id, { userIds: [author.id], teamIds: [] });
      await store.updateIssue(trx, locked.id, { updated_at: now });
      const pull = await store.loadIssueFacts(trx, locked.id);
      await recordReviewActivity(this.ctx, trx, {
        name: 'pull_request_review.submitted',
        repository_id: repository.id,
        actor_id: author.id,
        issue_id: locked.id,
        payload: {
          number: locked.number,
          pull_request: true,
          review: reviewEventRepresentation(this.ctx.urls, facts),
          snapshot: subjectSnapshot(this.ctx.urls, 'pull_request_review', pull),
        },
      });
      return facts;
    });
  }

  private async facts(db: Executor, repository: RepositoryRow & { owner: UserRow }, issue: IssueRow, review: ReviewRow, user: UserRow): Promise<ReviewFacts> {
    const associations = await store.authorAssociations(db, repository, [user.id]);
    return { review, user, authorAssociation: associations.get(user.id)!, issue, repository, owner: repository.owner };
  }
}
