import type { Generated } from 'kysely';

/**
 * The activity outbox: one row per platform activity, written in the same transaction as the
 * change itself. Consumers (notification fan-out, webhook deliveries) each process every row once;
 * `activity_consumptions` records which consumer has done which row.
 */
export interface ActivityOutboxTable {
  id: Generated<number>;
  /** The typed activity's name (`event.action`, see outbox.ts); null for a raw event, whose payload is the operator's. */
  name: string | null;
  /** Webhook event kind: `issues`, `issue_comment`, `pull_request`, or any raw event kind. */
  event: string;
  action: string | null;
  repository_id: number | null;
  /** The account an event without a repository concerns. */
  account_id: number | null;
  actor_id: number | null;
  issue_id: number | null;
  comment_id: number | null;
  /** JSON: event-specific facts (mentions, assignee, requested reviewer, a raw event's payload...). */
  payload: string;
  created_at: string;
}

export interface ActivityConsumptionsTable {
  outbox_id: number;
  consumer: string;
  created_at: string;
}

export interface ActivityTables {
  activity_outbox: ActivityOutboxTable;
  activity_consumptions: ActivityConsumptionsTable;
}
