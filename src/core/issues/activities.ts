// The activities of issues, pull requests and comments (src/core/issues/writes.ts records them):
// one per webhook event the platform would send, in the order it sends them. The name's event is
// `issues` for an issue and `pull_request` for a pull request, except comments (`issue_comment` for
// both). Every row has `repository_id`, `issue_id` and `actor_id` (who acted); a comment's also
// `comment_id`. Mentions are those of the opened body or the comment body; ids are of existing users
// and teams, whether or not they can read the repository (consumers decide who may see what).
import type { SubjectSnapshot } from './snapshot.ts';

type Kind = 'issues' | 'pull_request';

/** What every issue activity has. */
export type IssueActivityFacts = {
  number: number;
  pull_request: boolean;
  /**
   * The subject as the write left it, rendered in the same transaction once all of the write's
   * changes are applied (the rows of one write show the same subject). Absent on rows recorded
   * before rows kept one.
   */
  snapshot?: SubjectSnapshot;
};

export type Mentions = { mentioned_user_ids: number[]; mentioned_team_ids: number[] };

export type IssueOpened = IssueActivityFacts & Mentions & {
  assignee_ids: number[];
  requested_reviewer_ids: number[];
  requested_team_ids: number[];
};

/** `closed` / `reopened`; pull requests also say `merged` (a merge is `closed` with merged true). */
export type IssueStateChanged = IssueActivityFacts & { state: 'open' | 'closed'; merged?: boolean };

export type IssueAssignment = IssueActivityFacts & { assignee_id: number };

/** One row per requested user or team. */
export type ReviewRequest = IssueActivityFacts & ({ requested_reviewer_id: number } | { requested_team_id: number });

/** An issue's or pull request's actions, each with what its payload adds to `IssueActivityFacts`. */
export type IssueActions = {
  opened: IssueOpened;
  closed: IssueStateChanged;
  reopened: IssueStateChanged;
  assigned: IssueAssignment;
  unassigned: IssueAssignment;
  /** Only pull requests have reviewers. */
  review_requested: ReviewRequest;
  review_request_removed: ReviewRequest;
};

export type IssueActivities =
  & { [K in `${Kind}.${keyof IssueActions & string}`]: K extends `${Kind}.${infer A extends keyof IssueActions}` ? IssueActions[A] : never }
  & { 'issue_comment.created': IssueActivityFacts & Mentions };
