// Issues, pull requests, their comments, assignees, review requests and events; the migration is
// src/db/migrations/0002_activity.ts.
import type { Generated } from 'kysely';
import type { Bool } from './columns.ts';

/** Issues and pull requests (a pull request is an issue with `is_pull_request`). */
export interface IssuesTable {
  id: Generated<number>;
  repository_id: number;
  number: number;
  author_id: number;
  title: string;
  body: string | null;
  /** `open` or `closed` */
  state: string;
  /** `completed`, `reopened`, `not_planned` or null */
  state_reason: string | null;
  is_pull_request: Bool;
  merged_at: string | null;
  closed_at: string | null;
  issue_type_id: number | null;
  /** The conversation is locked: only who has write access comments (migration 0026). */
  locked: Generated<Bool>;
  /** `off-topic`, `too heated`, `resolved`, `spam`, or null (unlocked, or locked without a reason). */
  active_lock_reason: Generated<string | null>;
  created_at: string;
  updated_at: string;
}

export interface IssueAssigneesTable {
  issue_id: number;
  user_id: number;
}

/** Requested reviewers of a pull request: a user or a team. */
export interface IssueReviewRequestsTable {
  id: Generated<number>;
  issue_id: number;
  user_id: number | null;
  team_id: number | null;
}

export interface IssueCommentsTable {
  id: Generated<number>;
  issue_id: number;
  repository_id: number;
  author_id: number;
  body: string;
  created_at: string;
  updated_at: string;
}

/** The timeline of an issue: `closed`, `reopened`, `merged`, `assigned`, `review_requested`, `mentioned`... */
export interface IssueEventsTable {
  id: Generated<number>;
  issue_id: number;
  repository_id: number;
  actor_id: number;
  event: string;
  /** The user the event concerns (assignee, requested reviewer, mentioned user), if any. */
  subject_user_id: number | null;
  subject_team_id: number | null;
  created_at: string;
}

/** The last number given to an issue or pull request of each repository (src/db/migrations/0012_issue_numbers.ts). */
export interface IssueNumbersTable {
  repository_id: number;
  last_number: number;
}

/** The labels of an issue (src/db/migrations/0023_labels.ts). */
export interface IssueLabelsTable {
  issue_id: number;
  label_id: number;
}

/** The contents of a reaction, as the platform names them. */
export const REACTION_CONTENTS = ['+1', '-1', 'laugh', 'confused', 'heart', 'hooray', 'rocket', 'eyes'] as const;
export type ReactionContent = (typeof REACTION_CONTENTS)[number];

/**
 * A user's reaction to an issue (or pull request) or to an issue comment (src/db/migrations/0024_reactions.ts):
 * exactly one of `issue_id` and `comment_id` is set; a user reacts to one subject once with each content.
 */
export interface ReactionsTable {
  id: Generated<number>;
  issue_id: number | null;
  comment_id: number | null;
  user_id: number;
  content: ReactionContent;
  created_at: string;
}

/** The states of a pull request review, as the platform names them. */
export const REVIEW_STATES = ['APPROVED', 'CHANGES_REQUESTED', 'COMMENTED', 'PENDING', 'DISMISSED'] as const;
export type ReviewState = (typeof REVIEW_STATES)[number];

/**
 * A review of a pull request (src/db/migrations/0027_pull_request_reviews.ts): `submitted_at` null
 * while PENDING; `commit_id` the head commit it reviewed, null for a repository without git data.
 */
export interface PullRequestReviewsTable {
  id: Generated<number>;
  issue_id: number;
  repository_id: number;
  user_id: number;
  body: string;
  state: ReviewState;
  commit_id: string | null;
  submitted_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface IssueTables {
  issues: IssuesTable;
  issue_labels: IssueLabelsTable;
  reactions: ReactionsTable;
  pull_request_reviews: PullRequestReviewsTable;
  issue_assignees: IssueAssigneesTable;
  issue_review_requests: IssueReviewRequestsTable;
  issue_comments: IssueCommentsTable;
  issue_events: IssueEventsTable;
  issue_numbers: IssueNumbersTable;
}
