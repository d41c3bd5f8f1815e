// The types of the activity path: a row of the outbox, what a write records, and what a consumer
// declares (a handler per activity name). The outbox (outbox.ts) and its SQL (store.ts) both build
// on them, so neither imports the other's types.
import type { Selectable } from 'kysely';
import type { Executor } from '../db/index.ts';
import type { Context } from '../platform/context.ts';
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

/** A row to insert: its facts, its name (null for a raw event), event, action and payload. */
export type NewActivity = ActivityFacts & { name: string | null; event: string; action: string | null; payload: object };

/**
 * A typed activity map: activity name → payload type. A name is the platform's webhook event and
 * action, `event.action` (`issues.opened`, `repository.renamed`). src/core/activities.ts holds a
 * section per core home (`IssueActivities`, `RepositoryActivities`...) and joins them into the map
 * every consumer reads; each home binds its recorder to its own section.
 */
export type ActivityInput<M, K extends keyof M & string = keyof M & string> = ActivityFacts & { name: K; payload: M[K] };

/** A raw event (POST /_admin/events): any webhook event, with the payload the operator gave it. */
export type RawActivityInput = ActivityFacts & { event: string; action: string | null; payload: Record<string, unknown> };

/** What a consumer receives of a row recorded with map `M`: its name narrows its payload. */
export type ActivityOf<M> = { [K in keyof M & string]: StoredActivity<M, K> }[keyof M & string];

/** A stored row of activity `K` of map `M`, its payload parsed. */
export type StoredActivity<M, K extends keyof M & string> = Omit<ActivityRow, 'name' | 'payload'> & { name: K; payload: M[K] };

/** What a consumer receives of a raw event's row: no name, the operator's payload. */
export type RawActivity = Omit<ActivityRow, 'name' | 'payload'> & { name: null; payload: Record<string, unknown> };

/**
 * An activity its consumers apply in the writer's transaction as it is recorded (`A`: the names of
 * such activities in map `M`): it has no outbox row, so what it carries (an app's webhook secret)
 * never travels through one.
 */
export type AppliedActivity<M, K extends keyof M & string> = ActivityInput<M, K>;

/** One consumer's handler of activity `K` of map `M` (applied in the writer's transaction when `K` is one of `A`). */
export type ActivityHandler<M, K extends keyof M & string, A extends keyof M & string = never> =
  (ctx: Context, trx: Executor, activity: K extends A ? AppliedActivity<M, K> : StoredActivity<M, K>) => Promise<void>;

/**
 * What a consumer does, one handler per activity name of map `M` (a notifier with defaults: a name
 * without a handler is nothing to it); `raw` receives the raw events' rows.
 */
export type ActivityHandlers<M, A extends keyof M & string = never> =
  & { readonly [K in keyof M & string]?: ActivityHandler<M, K, A> }
  & { readonly raw?: (ctx: Context, trx: Executor, activity: RawActivity) => Promise<void> };

/** A consumer of activity (an area), typed by the map it reads (`M`) and the names it applies in the writer's transaction (`A`). */
export interface ActivityConsumer<M = Record<string, object>, A extends keyof M & string = never> {
  name: string;
  /**
   * Its handlers. A stored row's run inside the dispatcher's `trx` (which also records the
   * consumption), so its effects and the marker commit together. What the row names may have been
   * deleted since it was recorded, or be deleted as it is consumed: a handler inserts rows that
   * refer to users, repositories or apps only for those `heldRows` (src/db/held.ts) says still
   * exist, and skips the rest, so one deleted recipient never fails the row for all the others.
   */
  handlers?: ActivityHandlers<M, A>;
}

/** Any consumer, as the outbox calls it: a handler by name, whatever its map (each handler's parameter is its own map's). */
export interface AnyActivityConsumer {
  name: string;
  handlers?: object;
}
