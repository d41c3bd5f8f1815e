// The activity outbox. A write records its change and an outbox row in one transaction, and in the
// same transaction enqueues the job that dispatches the row; so nothing is lost when the process
// dies between the two. The dispatcher hands the row to every area's `onActivity` (notification
// fan-out, webhook deliveries) with a consumption marker in the same transaction, so each consumer
// applies each row exactly once even when the job runs again.
//
// The rows whose jobs run at once are dispatched together, to every consumer, in one transaction:
// one commit for the lot instead of one per row and consumer (on PostgreSQL each commit waits for a
// WAL flush; on SQLite each holds the one connection the API's writes wait for). When that
// transaction fails, each row goes again to each consumer in a transaction of its own, so one
// consumer's failure (or one row's) does not hold back the others': what succeeds commits with its
// marker, only the jobs of what failed fail and run again.
import type { Selectable } from 'kysely';
import type { Executor } from '../db/index.ts';
import { WriteBatcher } from '../jobs/batch.ts';
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

/** Dispatch jobs run at once per process; the rows of those running together share a transaction. */
const DISPATCH_CONCURRENCY = 16;

interface Dispatch {
  outboxId: number;
  /** Set when this row failed on its own (see `dispatchTogether`). */
  error?: unknown;
}

/** Registers the dispatcher worker: each outbox row goes to every area that consumes activity. */
export function registerDispatcher(ctx: Context, areas: readonly ActivityConsumer[]): void {
  const consumers = areas.filter((area) => area.onActivity);
  const dispatches = new WriteBatcher<Dispatch>((batch) => dispatchTogether(ctx, consumers, batch), DISPATCH_CONCURRENCY);
  ctx.queue.work<{ outboxId: number }>(DISPATCH_QUEUE, async ({ outboxId }) => {
    const dispatch: Dispatch = { outboxId };
    await dispatches.add(dispatch);
    if (dispatch.error !== undefined) throw dispatch.error;
  }, { concurrency: DISPATCH_CONCURRENCY });
}

/** Every row of the batch to every consumer in one transaction; on failure, one by one. */
async function dispatchTogether(ctx: Context, consumers: readonly ActivityConsumer[], batch: Dispatch[]): Promise<void> {
  try {
    await ctx.db.kysely.transaction().execute(async (trx) => {
      const rows = await store.findActivities(trx, batch.map((dispatch) => dispatch.outboxId));
      const now = ctx.clock.now().toISOString();
      for (const area of consumers) {
        const marked = await store.markConsumed(trx, rows.map((row) => row.id), area.name, now);
        for (const row of rows) if (marked.has(row.id)) await area.onActivity!(ctx, trx, row);
      }
    });
  } catch {
    for (const dispatch of batch) await dispatchAlone(ctx, consumers, dispatch.outboxId).catch((error: unknown) => (dispatch.error = error));
  }
}

/** One row to each consumer in a transaction of its own: a consumer that fails leaves the others' work committed. */
async function dispatchAlone(ctx: Context, consumers: readonly ActivityConsumer[], outboxId: number): Promise<void> {
  const [row] = await store.findActivities(ctx.db.kysely, [outboxId]);
  if (!row) return;
  let failure: { error: unknown } | undefined;
  for (const area of consumers) {
    try {
      await ctx.db.kysely.transaction().execute(async (trx) => {
        const marked = await store.markConsumed(trx, [row.id], area.name, ctx.clock.now().toISOString());
        if (marked.has(row.id)) await area.onActivity!(ctx, trx, row);
      });
    } catch (error) {
      failure ??= { error };
    }
  }
  if (failure) throw failure.error;
}
