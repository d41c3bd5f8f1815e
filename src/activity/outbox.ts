// The activity outbox. A write records its change and an outbox row in one transaction, and in the
// same transaction enqueues the job that dispatches the row; so nothing is lost when the process
// dies between the two. Every activity is typed: its name (`event.action`) gives its payload's type
// (the maps of src/core/*/activities.ts, joined in src/core/activities.ts); only raw events
// (POST /_admin/events) carry a payload of the operator's. The dispatcher hands the row to every
// area's handler of its name (notification fan-out, webhook deliveries; `raw` for raw events) with a
// consumption marker in the same transaction, so each consumer applies each row exactly once even
// when the job runs again. An activity its consumers must apply in the writer's transaction (access
// changed, an app created) is recorded the same way, its handlers run at once, and has no row.
//
// The rows whose jobs run at once are dispatched together, to every consumer, in one transaction:
// one commit for the lot instead of one per row and consumer (on PostgreSQL each commit waits for a
// WAL flush; on SQLite each holds the one connection the API's writes wait for). When that
// transaction fails, each row goes again to each consumer in a transaction of its own, so one
// consumer's failure (or one row's) does not hold back the others': what succeeds commits with its
// marker, only the jobs of what failed fail and run again.
import { defineJob } from '../jobs/job.ts';
import type { Executor } from '../db/index.ts';
import { WriteBatcher } from '../jobs/batch.ts';
import type { Context } from '../platform/context.ts';
import * as store from './store.ts';
import type { AnyActivityConsumer, ActivityFacts, ActivityInput, ActivityRow, RawActivityInput } from './types.ts';

export type {
  AnyActivityConsumer, ActivityConsumer, ActivityFacts, ActivityHandler, ActivityHandlers, ActivityInput, ActivityOf, ActivityRow, AppliedActivity, RawActivity, RawActivityInput, StoredActivity,
} from './types.ts';

/** Records one activity of map `M` inside the caller's transaction, into the outbox: each home binds it to its map. */
export type ActivityRecorder<M> = <K extends keyof M & string>(ctx: Context, trx: Executor, input: ActivityInput<M, K>) => Promise<ActivityRow>;

/**
 * Records one activity of map `M` that its consumers apply in the writer's transaction: each
 * consumer's handler of its name runs in `trx` as it is recorded (a failure undoes the write).
 */
export type AppliedActivityRecorder<M> = <K extends keyof M & string>(ctx: Context, trx: Executor, input: ActivityInput<M, K>, consumers: readonly AnyActivityConsumer[]) => Promise<null>;

/** A consumer as the path calls it: a handler by name, whatever its map. */
type AnyHandler = (ctx: Context, trx: Executor, activity: unknown) => Promise<void>;
const handlerOf = (consumer: AnyActivityConsumer, name: string | null): AnyHandler | undefined =>
  (consumer.handlers as Record<string, AnyHandler | undefined> | undefined)?.[name ?? 'raw'];

/**
 * Records one typed activity inside the caller's transaction `trx`: into the outbox (its consumers'
 * handlers run once each when it is dispatched), or, given the consumers that apply it in the
 * writer's transaction (`appliedBy`), by running their handlers of its name in `trx`, with no outbox
 * row. Bind it to a map with `ActivityRecorder<M>` or `AppliedActivityRecorder<M>`.
 */
export function recordActivity(ctx: Context, trx: Executor, input: ActivityFacts & { name: string; payload: object }): Promise<ActivityRow>;
export function recordActivity(ctx: Context, trx: Executor, input: ActivityFacts & { name: string; payload: object }, appliedBy: readonly AnyActivityConsumer[]): Promise<null>;
export async function recordActivity(
  ctx: Context, trx: Executor, input: ActivityFacts & { name: string; payload: object }, appliedBy?: readonly AnyActivityConsumer[],
): Promise<ActivityRow | null> {
  if (appliedBy) {
    for (const consumer of appliedBy) await handlerOf(consumer, input.name)?.(ctx, trx, input);
    return null;
  }
  const dot = input.name.indexOf('.');
  const { name, ...rest } = input;
  return insert(ctx, trx, { ...rest, name, event: dot < 0 ? name : name.slice(0, dot), action: dot < 0 ? null : name.slice(dot + 1) });
}

/** Records a raw event (POST /_admin/events) inside the caller's transaction `trx`. */
export function recordRawEvent(ctx: Context, trx: Executor, input: RawActivityInput): Promise<ActivityRow> {
  return insert(ctx, trx, { ...input, name: null });
}

async function insert(ctx: Context, trx: Executor, row: store.NewActivity): Promise<ActivityRow> {
  const inserted = await store.insertActivity(trx, row, ctx.clock.now().toISOString());
  await DISPATCH.send(ctx.queue, { outboxId: inserted.id }, { transaction: trx, singletonKey: `outbox-${inserted.id}` });
  return inserted;
}

/** A stored row as its consumers read it: the payload parsed; its type is the one its name was recorded with. */
function parsed(row: ActivityRow): Omit<ActivityRow, 'payload'> & { payload: unknown } {
  return { ...row, payload: JSON.parse(row.payload) as unknown };
}

/** Dispatch jobs run at once per process; the rows of those running together share a transaction. */
const DISPATCH_CONCURRENCY = 16;

interface Dispatch {
  outboxId: number;
  /** Set when this row failed on its own (see `dispatchTogether`). */
  error?: unknown;
}

/** The dispatch jobs running at once in this process: their rows go to the consumers together. */
class Dispatcher {
  readonly #dispatches: WriteBatcher<Dispatch>;

  constructor(dispatchTogether: (batch: Dispatch[]) => Promise<void>) {
    this.#dispatches = new WriteBatcher<Dispatch>(dispatchTogether, DISPATCH_CONCURRENCY);
  }

  async dispatch(outboxId: number): Promise<void> {
    const dispatch: Dispatch = { outboxId };
    await this.#dispatches.add(dispatch);
    if (dispatch.error !== undefined) throw dispatch.error;
  }
}

/** One outbox row to every consumer; sent in the writer's transaction, once per row. */
export const DISPATCH = defineJob<{ outboxId: number }, Dispatcher>({
  name: 'activity.dispatch',
  handle: (dispatcher, { outboxId }) => dispatcher.dispatch(outboxId),
  options: () => ({ concurrency: DISPATCH_CONCURRENCY }),
});

/** The dispatcher worker (src/workers.ts): each outbox row goes to every area that consumes activity. */
export function dispatcher(ctx: Context, areas: readonly AnyActivityConsumer[]): Dispatcher {
  const consumers = areas.filter((area) => area.handlers);
  return new Dispatcher((batch) => dispatchTogether(ctx, consumers, batch));
}

/** Every row of the batch to every consumer in one transaction; on failure, one by one. */
async function dispatchTogether(ctx: Context, consumers: readonly AnyActivityConsumer[], batch: Dispatch[]): Promise<void> {
  try {
    await ctx.db.kysely.transaction().execute(async (trx) => {
      const rows = await store.findActivities(trx, batch.map((dispatch) => dispatch.outboxId));
      const activities = rows.map((row) => ({ id: row.id, activity: parsed(row) }));
      const now = ctx.clock.now().toISOString();
      for (const area of consumers) {
        const marked = await store.markConsumed(trx, rows.map((row) => row.id), area.name, now);
        for (const { id, activity } of activities) if (marked.has(id)) await handlerOf(area, activity.name)?.(ctx, trx, activity);
      }
    });
  } catch {
    for (const dispatch of batch) await dispatchAlone(ctx, consumers, dispatch.outboxId).catch((error: unknown) => (dispatch.error = error));
  }
}

/** One row to each consumer in a transaction of its own: a consumer that fails leaves the others' work committed. */
async function dispatchAlone(ctx: Context, consumers: readonly AnyActivityConsumer[], outboxId: number): Promise<void> {
  const [row] = await store.findActivities(ctx.db.kysely, [outboxId]);
  if (!row) return;
  const activity = parsed(row);
  let failure: { error: unknown } | undefined;
  for (const area of consumers) {
    try {
      await ctx.db.kysely.transaction().execute(async (trx) => {
        const marked = await store.markConsumed(trx, [row.id], area.name, ctx.clock.now().toISOString());
        if (marked.has(row.id)) await handlerOf(area, activity.name)?.(ctx, trx, activity);
      });
    } catch (error) {
      failure ??= { error };
    }
  }
  if (failure) throw failure.error;
}
