// The pull request review as the platform shapes it (GET …/pulls/{pull_number}/reviews/{review_id}),
// and as the `pull_request_review` webhook event shows it.
import { Type, type Static } from 'typebox';
import { isoSeconds } from '../../platform/clock.ts';
import { nodeId, type Urls } from '../../platform/urls.ts';
import { SimpleUser, simpleUser } from '../accounts/representations.ts';
import type { UserRow } from '../accounts/store.ts';
import type { RepositoryRow } from '../repositories/representations.ts';
import { issueUrls, NO_COMMIT } from './representations.ts';
import type { AuthorAssociation, IssueRow } from './store.ts';
import type { ReviewRow } from './review-store.ts';

/** Everything a review shows. */
export interface ReviewFacts {
  review: ReviewRow;
  user: UserRow;
  authorAssociation: AuthorAssociation;
  issue: Pick<IssueRow, 'number' | 'is_pull_request'>;
  repository: Pick<RepositoryRow, 'name'>;
  owner: Pick<UserRow, 'login'>;
}

const Link = Type.Object({ href: Type.String() });

export const PullRequestReview = Type.Object({
  id: Type.Integer(),
  node_id: Type.String(),
  user: Type.Union([SimpleUser, Type.Null()]),
  body: Type.String(),
  state: Type.Union([Type.Literal('APPROVED'), Type.Literal('CHANGES_REQUESTED'), Type.Literal('COMMENTED'), Type.Literal('PENDING'), Type.Literal('DISMISSED')]),
  html_url: Type.String(),
  pull_request_url: Type.String(),
  author_association: Type.String({ description: 'OWNER, MEMBER, COLLABORATOR or NONE' }),
  _links: Type.Object({ html: Link, pull_request: Link }),
  submitted_at: Type.Optional(Type.String({ description: 'Absent while the review is PENDING' })),
  commit_id: Type.Union([Type.String(), Type.Null()], { description: 'The head commit reviewed; null for a repository without git data' }),
});
export type PullRequestReview = Static<typeof PullRequestReview>;

export function reviewRepresentation(urls: Urls, facts: ReviewFacts): PullRequestReview {
  const { review } = facts;
  const at = issueUrls(urls, facts.owner.login, facts.repository.name, facts.issue);
  const html = `${at.html}#pullrequestreview-${review.id}`;
  return {
    id: review.id,
    node_id: nodeId('PullRequestReview', review.id),
    user: simpleUser(urls, facts.user),
    body: review.body,
    state: review.state,
    html_url: html,
    pull_request_url: at.pull,
    author_association: facts.authorAssociation,
    _links: { html: { href: html }, pull_request: { href: at.pull } },
    ...(review.submitted_at ? { submitted_at: isoSeconds(review.submitted_at) } : {}),
    commit_id: review.commit_id,
  };
}

/**
 * The review as the `pull_request_review` event names it: the platform's lowercase `state`,
 * `submitted_at` and `updated_at`, and the head commit shown (the null object id without git data,
 * as the event's `pull_request.head.sha`).
 */
export function reviewEventRepresentation(urls: Urls, facts: ReviewFacts): Record<string, unknown> {
  const { submitted_at: _submitted, ...review } = reviewRepresentation(urls, facts);
  return {
    ...review,
    state: review.state.toLowerCase(),
    commit_id: review.commit_id ?? NO_COMMIT,
    submitted_at: facts.review.submitted_at ? isoSeconds(facts.review.submitted_at) : null,
    updated_at: isoSeconds(facts.review.updated_at),
  };
}
