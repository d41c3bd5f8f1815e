// What an area (or the operator surface, or a core resource) plugs into the server: its routes, its
// operator routes, seed keys, and its handler of each activity it consumes (every change of
// the world is an activity, an app's creation and access changes included: src/core/activities.ts).
import { recordActivity, type ActivityConsumer, type ActivityInput, type AppliedActivityRecorder } from '../activity/outbox.ts';
import type { Executor } from '../db/index.ts';
import type { Activities, AppliedActivities, AppliedActivityName } from './activities.ts';
import type { Api, Context } from '../platform/context.ts';
import { Service } from '../platform/service.ts';

/**
 * One area of the API (or the activity core): its public routes, its operator routes under /_admin,
 * the seed-file keys it loads, and its handler of each activity it consumes
 * (`handlers`: those of stored activities run when the row is dispatched, those of applied ones —
 * `access.changed`, `repository.moving`, `app.created` — in the writer's transaction).
 */
export interface Area extends ActivityConsumer<Activities, AppliedActivityName> {
  name: string;
  routes?(app: Api, ctx: Context): void;
  admin?(app: Api, ctx: Context): void;
  /** The server is closing, its queue stopped (no job running): ends what the area keeps running (an idle thread). */
  close?(ctx: Context): Promise<void>;
  /** Seed-file keys this area loads, in order, after the core keys (users, orgs, repos, apps...), in the seed's transaction `trx` (their writes join it). */
  seed?: Record<string, (ctx: Context, entries: unknown[], trx: Executor) => Promise<void>>;
  /**
   * `codehost secret-key rotate`: every secret this area keeps sealed with the server key, sealed
   * again (`reseal` opens it with the old key and seals it with the new), inside `trx`; answers how many.
   */
  resealSecrets?(trx: Executor, reseal: (sealed: string) => string): Promise<number>;
  /** What the area does on each lifecycle activity: required of every area of AREAS (`LifecycleArea`). */
  lifecycle?: AreaLifecycle;
}

/**
 * The lifecycle activities: what ends or moves what an area keeps of a repository, a user or an
 * installation. `user.suspended` records no outbox activity (a suspended user's tokens are refused
 * where every token is read); the others are the outbox activities of those names.
 */
export const LIFECYCLE_ACTIVITIES = [
  'repository.transferred', 'repository.renamed', 'repository.deleted', 'repository.archived',
  'user.suspended', 'user.deleted',
  'installation.suspend', 'installation.deleted',
] as const;

export type LifecycleActivityName = (typeof LIFECYCLE_ACTIVITIES)[number];

// Each name is an activity of a core home's map (or the suspension, which records none): a name
// that is not is a type error here.
LIFECYCLE_ACTIVITIES satisfies readonly (keyof Activities | 'user.suspended')[];

/** The lifecycle activities of a move, which its write also applies in its transaction (`repository.moving`). */
export type MoveActivityName = 'repository.transferred' | 'repository.renamed';

/**
 * An area's answer to one lifecycle activity, each with a one-line why: `unaffected` (nothing it
 * keeps depends on it), `handler` (its handler of the activity does it: the area declares one for
 * that name), `handled` (how: its reads, the database's cascades), or, for a move, `applied` (its
 * handler of the applied `repository.moving` does it in the move's transaction: refuse, let go).
 */
export type LifecycleAnswer<K extends LifecycleActivityName> =
  | { unaffected: string }
  | { handled: string }
  | (K extends 'user.suspended' ? never : { handler: string })
  | (K extends MoveActivityName ? { applied: string } : never);

/** Every lifecycle activity, answered: an area that leaves one out does not typecheck. */
export type AreaLifecycle = { readonly [K in LifecycleActivityName]: LifecycleAnswer<K> };

/** An area of AREAS (src/app.ts): it answers every lifecycle activity. */
export type LifecycleArea = Area & { lifecycle: AreaLifecycle };

/** Records the activities applied in the writer's transaction (their map's names and payloads checked). */
const recordApplied: AppliedActivityRecorder<AppliedActivities> = recordActivity;

/**
 * A core writer whose writes the areas consume in their transaction: it is given them, and records
 * the activities they apply there (`access.changed`, `repository.moving`, `app.created`) through the
 * one activity path.
 */
export abstract class AreaWrites extends Service {
  protected readonly areas: readonly Area[];

  constructor(ctx: Context, areas: readonly Area[], within?: Executor) {
    super(ctx, within);
    this.areas = areas;
  }

  /** Records an applied activity inside the write's transaction `trx`: every area's handler of its name runs in it. */
  protected async record<K extends AppliedActivityName>(trx: Executor, input: ActivityInput<AppliedActivities, K>): Promise<void> {
    await recordApplied(this.ctx, trx, input, this.areas);
  }
}
