// The activity outbox. A write records its change and an outbox row in one transaction, and in the
// same transaction enqueues the job that dispatches the row; so nothing is lost when the process
// dies between the two. The dispatcher hands the row to every area's `onActivity` (notification
// fan-out, webhook deliveries), each in its own transaction with a consumption marker, so each
// consumer applies each row exactly once even when the job runs again.
import type { Selectable } from 'kysely';
import type { Executor } from '../db/index.ts';
import type { Context } from '../platform/context.ts';
import * as store from './store.ts';
import type { ActivityOutboxTable } from './tables.ts';

export type ActivityRow = Selectable<ActivityOutboxTable>;

export interface ActivityInput {
  event: string;
  action?: string | null;
  repository_id?: number | null;
  account_id?: number | null;
  actor_id?: number | null;
  issue_id?: number | null;
  comment_id?: number | null;
  payload?: Record<string, unknown>;
}

export const DISPATCH_QUEUE = 'activity.dispatch';

/** Records one activity inside the caller's transaction `trx`. */
export async function recordActivity(ctx: Context, trx: Executor, input: ActivityInput): Promise<ActivityRow> {
  const row = await store.insertActivity(trx, input, ctx.clock.now().toISOString());
  await ctx.queue.send(DISPATCH_QUEUE, { outboxId: row.id }, { transaction: trx, singletonKey: `outbox-${row.id}`, retryLimit: 5, retryDelaySeconds: 2, retryBackoff: true });
  return row;
}

/** A consumer of the outbox (an area): it applies one row inside `trx`, which also records the consumption. */
export interface ActivityConsumer {
  name: string;
  /**
   * Consumes one row of the activity outbox inside `trx` (which also records the consumption), so
   * its effects and the marker commit together.
   */
  onActivity?(ctx: Context, trx: Executor, activity: ActivityRow): Promise<void>;
}

/** Registers the dispatcher worker: each outbox row goes to every area that consumes activity. */
export function registerDispatcher(ctx: Context, areas: readonly ActivityConsumer[]): void {
  const consumers = areas.filter((area) => area.onActivity);
  ctx.queue.work<{ outboxId: number }>(DISPATCH_QUEUE, async ({ outboxId }) => {
    const row = await store.findActivity(ctx.db.kysely, outboxId);
    if (!row) return;
    for (const area of consumers) {
      await ctx.db.kysely.transaction().execute(async (trx) => {
        const marked = await store.markConsumed(trx, row.id, area.name, ctx.clock.now().toISOString());
        if (marked) await area.onActivity!(ctx, trx, row);
      });
    }
  }, { concurrency: 4 });
}
