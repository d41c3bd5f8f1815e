// Tables of assistant metrics; the migration is src/db/migrations/0005_assistant_metrics.ts.
// Day records are set on the operator surface; the public API only reads them.

/** The organization's metrics access policy: `enabled` or `disabled` (an organization without a row is enabled). */
export interface AssistantMetricsPoliciesTable {
  org_id: number;
  metrics_policy: string;
  updated_at: string;
}

/** One day of an organization's metrics. `metrics` is the day record's JSON without its `date`. */
export interface AssistantMetricsDaysTable {
  org_id: number;
  /** `YYYY-MM-DD` (UTC) */
  date: string;
  /** Members holding an active assistant license at the end of the day; fewer than five hides the day. */
  licensed_members: number;
  metrics: string;
}

/** One day of a team's metrics, like an organization's. */
export interface AssistantMetricsTeamDaysTable {
  team_id: number;
  date: string;
  licensed_members: number;
  metrics: string;
}

export interface AssistantMetricsTables {
  assistant_metrics_policies: AssistantMetricsPoliciesTable;
  assistant_metrics_days: AssistantMetricsDaysTable;
  assistant_metrics_team_days: AssistantMetricsTeamDaysTable;
}
