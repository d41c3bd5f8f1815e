// The activity outbox. A write records its change and an outbox row in one transaction, and in the
// same transaction enqueues the job that dispatches the row; so nothing is lost when the process
// dies between the two. Every activity is typed: its name (`event.action`) gives its payload's type
// (the maps of src/core/*/activities.ts, joined in src/core/activities.ts); only raw events
// (POST /_admin/events) carry a payload of the operator's. The dispatcher hands the row to every area's `onActivity` (notification
// fan-out, webhook deliveries) with a consumption marker in the same transaction, so each consumer
// applies each row exactly once even when the job runs again.
//
// The rows whose jobs run at once are dispatched together, to every consumer, in one transaction:
// one commit for the lot instead of one per row and consumer (on PostgreSQL each commit waits for a
// WAL flush; on SQLite each holds the one connection the API's writes wait for). When that
// transaction fails, each row goes again to each consumer in a transaction of its own, so one
// consumer's failure (or one row's) does not hold back the others': what succeeds commits with its
// marker, only the jobs of what failed fail and run again.
import { defineJob } from '../jobs/job.ts';
import type { Selectable } from 'kysely';
import type { Executor } from '../db/index.ts';
import { WriteBatcher } from '../jobs/batch.ts';
import type { Context } from '../platform/context.ts';
import * as store from './store.ts';
import type { ActivityOutboxTable } from '../db/tables/activity.ts';

export type ActivityRow = Selectable<ActivityOutboxTable>;

/** Where and who an activity concerns, besides its payload. */
export interface ActivityFacts {
  repository_id?: number | null;
  account_id?: number | null;
  actor_id?: number | null;
  issue_id?: number | null;
  comment_id?: number | null;
}

/**
 * A typed activity map: activity name → payload type. A name is the platform's webhook event and
 * action, `event.action` (`issues.opened`, `repository.renamed`). Each core home exports its own
 * (`IssueActivities` in core/issues, `RepositoryActivities` in core/repositories...); src/core/activities.ts
 * joins them into the map every consumer reads.
 */
export type ActivityInput<M, K extends keyof M & string = keyof M & string> = ActivityFacts & { name: K; payload: M[K] };

/** A raw event (POST /_admin/events): any webhook event, with the payload the operator gave it. */
export type RawActivityInput = ActivityFacts & { event: string; action: string | null; payload: Record<string, unknown> };

/** What a consumer receives of a row recorded with map `M`: its name narrows its payload. */
export type ActivityOf<M> = { [K in keyof M & string]: Omit<ActivityRow, 'name' | 'payload'> & { name: K; payload: M[K] } }[keyof M & string];

/** What a consumer receives of a raw event's row: no name, the operator's payload. */
export type RawActivity = Omit<ActivityRow, 'name' | 'payload'> & { name: null; payload: Record<string, unknown> };

/** Records one activity of map `M` inside the caller's transaction: each home binds it to its map. */
export type ActivityRecorder<M> = <K extends keyof M & string>(ctx: Context, trx: Executor, input: ActivityInput<M, K>) => Promise<ActivityRow>;

/** Records one typed activity inside the caller's transaction `trx`; bind it to a map with `ActivityRecorder<M>`. */
export const recordActivity = (ctx: Context, trx: Executor, input: ActivityFacts & { name: string; payload: object }): Promise<ActivityRow> => {
  const dot = input.name.indexOf('.');
  const { name, ...rest } = input;
  return insert(ctx, trx, { ...rest, name, event: dot < 0 ? name : name.slice(0, dot), action: dot < 0 ? null : name.slice(dot + 1) });
};

/** Records a raw event (POST /_admin/events) inside the caller's transaction `trx`. */
export function recordRawEvent(ctx: Context, trx: Executor, input: RawActivityInput): Promise<ActivityRow> {
  return insert(ctx, trx, { ...input, name: null });
}

async function insert(ctx: Context, trx: Executor, row: store.NewActivity): Promise<ActivityRow> {
  const inserted = await store.insertActivity(trx, row, ctx.clock.now().toISOString());
  await DISPATCH.send(ctx.queue, { outboxId: inserted.id }, { transaction: trx, singletonKey: `outbox-${inserted.id}` });
  return inserted;
}

/** A consumer of the outbox (an area), typed by what it reads (`A`: the activities of a map, raw events). */
export interface ActivityConsumer<A = ActivityOf<Record<string, object>> | RawActivity> {
  name: string;
  /**
   * Consumes one row of the activity outbox inside `trx` (which also records the consumption), so
   * its effects and the marker commit together. What the row names may have been deleted since it
   * was recorded, or be deleted as it is consumed: a consumer inserts rows that refer to users,
   * repositories or apps only for those `heldRows` (src/db/held.ts) says still exist, and skips the
   * rest, so one deleted recipient never fails the row for all the others.
   */
  onActivity?(ctx: Context, trx: Executor, activity: A): Promise<void>;
}

/** A stored row as its consumers read it: the payload parsed; its type is the one its name was recorded with. */
function parsed<A>(row: ActivityRow): A {
  return { ...row, payload: JSON.parse(row.payload) as unknown } as A;
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
const DISPATCH = defineJob<{ outboxId: number }, Dispatcher>({
  name: 'activity.dispatch',
  handle: (dispatcher, { outboxId }) => dispatcher.dispatch(outboxId),
  options: () => ({ concurrency: DISPATCH_CONCURRENCY }),
});

/** Registers the dispatcher worker: each outbox row goes to every area that consumes activity. */
export function registerDispatcher<A>(ctx: Context, areas: readonly ActivityConsumer<A>[]): void {
  const consumers = areas.filter((area) => area.onActivity);
  DISPATCH.work(ctx.queue, new Dispatcher((batch) => dispatchTogether(ctx, consumers, batch)));
}

/** Every row of the batch to every consumer in one transaction; on failure, one by one. */
async function dispatchTogether<A>(ctx: Context, consumers: readonly ActivityConsumer<A>[], batch: Dispatch[]): Promise<void> {
  try {
    await ctx.db.kysely.transaction().execute(async (trx) => {
      const rows = await store.findActivities(trx, batch.map((dispatch) => dispatch.outboxId));
      const activities = rows.map((row) => ({ id: row.id, activity: parsed<A>(row) }));
      const now = ctx.clock.now().toISOString();
      for (const area of consumers) {
        const marked = await store.markConsumed(trx, rows.map((row) => row.id), area.name, now);
        for (const { id, activity } of activities) if (marked.has(id)) await area.onActivity!(ctx, trx, activity);
      }
    });
  } catch {
    for (const dispatch of batch) await dispatchAlone(ctx, consumers, dispatch.outboxId).catch((error: unknown) => (dispatch.error = error));
  }
}

/** One row to each consumer in a transaction of its own: a consumer that fails leaves the others' work committed. */
async function dispatchAlone<A>(ctx: Context, consumers: readonly ActivityConsumer<A>[], outboxId: number): Promise<void> {
  const [row] = await store.findActivities(ctx.db.kysely, [outboxId]);
  if (!row) return;
  const activity = parsed<A>(row);
  let failure: { error: unknown } | undefined;
  for (const area of consumers) {
    try {
      await ctx.db.kysely.transaction().execute(async (trx) => {
        const marked = await store.markConsumed(trx, [row.id], area.name, ctx.clock.now().toISOString());
        if (marked.has(row.id)) await area.onActivity!(ctx, trx, activity);
      });
    } catch (error) {
      failure ??= { error };
    }
  }
  if (failure) throw failure.error;
}
