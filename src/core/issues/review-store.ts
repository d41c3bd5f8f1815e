// SQL of pull request reviews (src/db/migrations/0027_pull_request_reviews.ts). Writes take the
// caller's transaction.
import type { Selectable } from 'kysely';
import type { Executor } from '../../db/index.ts';
import type { PullRequestReviewsTable } from '../../db/tables/issues.ts';

export type ReviewRow = Selectable<PullRequestReviewsTable>;

export async function insertReview(trx: Executor, values: Omit<ReviewRow, 'id'>): Promise<ReviewRow> {
  return trx.insertInto('pull_request_reviews').values(values).returningAll().executeTakeFirstOrThrow();
}

/** A review of the pull request; a PENDING one only to its author (`viewerId`), as the platform shows them. */
export async function findReview(db: Executor, issueId: number, reviewId: number, viewerId: number | null): Promise<ReviewRow | undefined> {
  const review = await db.selectFrom('pull_request_reviews').selectAll().where('issue_id', '=', issueId).where('id', '=', reviewId).executeTakeFirst();
  return review && (review.state !== 'PENDING' || review.user_id === viewerId) ? review : undefined;
}

/** Whether the user has a PENDING review of the pull request (the platform allows one). */
export async function hasPendingReview(db: Executor, issueId: number, userId: number): Promise<boolean> {
  const row = await db.selectFrom('pull_request_reviews').select('id').where('issue_id', '=', issueId).where('user_id', '=', userId).where('state', '=', 'PENDING').executeTakeFirst();
  return row !== undefined;
}

/**
 * One page of a pull request's reviews, oldest first (a PENDING one only its author's, `viewerId`),
 * and how many there are (two queries).
 */
export async function reviewPage(
  db: Executor,
  issueId: number,
  viewerId: number | null,
  page: { offset: number; limit: number },
): Promise<{ total: number; reviews: ReviewRow[] }> {
  const base = db.selectFrom('pull_request_reviews').where('issue_id', '=', issueId)
    .where((eb) => (viewerId === null ? eb('state', '<>', 'PENDING') : eb.or([eb('state', '<>', 'PENDING'), eb('user_id', '=', viewerId)])));
  const [count, reviews] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    base.selectAll().orderBy('id').limit(page.limit).offset(page.offset).execute(),
  ]);
  return { total: Number(count.n), reviews };
}
