// Commit statuses, check suites and check runs on the commits of a repository's git data; the
// migration is src/db/migrations/0025_commit_checks.ts.
import type { Generated } from 'kysely';

export interface CommitStatusesTable {
  id: Generated<number>;
  repository_id: number;
  /** The full sha of the commit. */
  sha: string;
  /** `error`, `failure`, `pending` or `success` */
  state: string;
  /** `default` unless the creator names one. */
  context: string;
  target_url: string | null;
  description: string | null;
  creator_id: number;
  created_at: string;
  updated_at: string;
}

/** An app's suite of check runs for one head commit. */
export interface CheckSuitesTable {
  id: Generated<number>;
  repository_id: number;
  app_id: number;
  head_sha: string;
  /** The branch whose head the commit was when the suite was made, if any. */
  head_branch: string | null;
  created_at: string;
  updated_at: string;
}

export interface CheckRunsTable {
  id: Generated<number>;
  check_suite_id: number;
  repository_id: number;
  head_sha: string;
  name: string;
  /** `queued`, `in_progress`, `completed`, `waiting`, `requested` or `pending` */
  status: string;
  /** Set once completed: `action_required`, `cancelled`, `failure`, `neutral`, `success`, `skipped`, `stale`, `timed_out` */
  conclusion: string | null;
  external_id: string | null;
  details_url: string | null;
  started_at: string | null;
  completed_at: string | null;
  output_title: string | null;
  output_summary: string | null;
  output_text: string | null;
  created_at: string;
  updated_at: string;
}

export interface CommitTables {
  commit_statuses: CommitStatusesTable;
  check_suites: CheckSuitesTable;
  check_runs: CheckRunsTable;
}
