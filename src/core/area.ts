// What an area (or the operator surface, or a core resource) plugs into the server: its routes, its
// operator routes, workers, seed keys, and what it does when an app is created or when platform
// activity happens (every change of the world is an activity: src/core/activities.ts).
import type { ActivityConsumer } from '../activity/outbox.ts';
import type { Executor } from '../db/index.ts';
import type { Activities, Activity } from './activities.ts';
import type { Api, Context } from '../platform/context.ts';
import { Service } from '../platform/service.ts';
import type { Selectable } from 'kysely';
import type { AppsTable } from '../db/tables/apps.ts';

type AppRow = Selectable<AppsTable>;

/**
 * One area of the API (or the activity core): its public routes, its operator routes under /_admin,
 * its background workers, the seed-file keys it loads, and what it does with each activity (`onActivity`).
 */
export interface Area extends ActivityConsumer<Activity> {
  name: string;
  routes?(app: Api, ctx: Context): void;
  admin?(app: Api, ctx: Context): void;
  workers?(ctx: Context): void;
  /** The server is closing, its queue stopped (no job running): ends what the area keeps running (an idle thread). */
  close?(ctx: Context): Promise<void>;
  /** Seed-file keys this area loads, in order, after the core keys (users, orgs, repos, apps...). */
  seed?: Record<string, (ctx: Context, entries: unknown[]) => Promise<void>>;
  /**
   * An app was created on the operator surface, inside `trx` (a failure undoes the app); `input` is
   * the whole create body (e.g. its `webhook`, whose secret must not travel in an activity).
   */
  onAppCreated?(ctx: Context, trx: Executor, app: AppRow, input: Record<string, unknown>): Promise<void>;
  /**
   * `codehost secret-key rotate`: every secret this area keeps sealed with the server key, sealed
   * again (`reseal` opens it with the old key and seals it with the new), inside `trx`; answers how many.
   */
  resealSecrets?(trx: Executor, reseal: (sealed: string) => string): Promise<number>;
  /** Repository access changed (memberships, collaborators, team repositories, visibility), inside `trx`. */
  onAccessChanged?(ctx: Context, trx: Executor, change: AccessChange): Promise<void>;
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

/**
 * A repository about to move (a transfer to another owner, a rename, or both), told to each area
 * inside the write's transaction before the row moves: the area may refuse the move (throw an
 * ApiError: nothing changes) or let go of what its former owner gave the repository.
 */
export interface RepositoryMove {
  repositoryId: number;
  /** The account (user or organization) that owns it, and the one it moves to (the same on a rename alone). */
  fromOwnerId: number;
  toOwnerId: number;
  /** Its name after the move. */
  name: string;
  transferred: boolean;
  renamed: boolean;
}

/** The lifecycle activities whose write calls the areas inside its transaction (`inWrite`). */
export type InWriteHooks = {
  'repository.transferred': (ctx: Context, trx: Executor, move: RepositoryMove) => Promise<void>;
  'repository.renamed': (ctx: Context, trx: Executor, move: RepositoryMove) => Promise<void>;
};

/**
 * An area's answer to one lifecycle activity, each with a one-line why: `unaffected` (nothing it
 * keeps depends on it), or `handled` (how: its `onActivity` consumer, its reads, the database's
 * cascades), with `inWrite` when the write itself must call it (refuse, let go) in its transaction.
 */
export type LifecycleAnswer<K extends LifecycleActivityName> =
  | { unaffected: string }
  | { handled: string }
  | (K extends keyof InWriteHooks ? { handled: string; inWrite: InWriteHooks[K] } : never);

/** Every lifecycle activity, answered: an area that leaves one out does not typecheck. */
export type AreaLifecycle = { readonly [K in LifecycleActivityName]: LifecycleAnswer<K> };

/** An area of AREAS (src/app.ts): it answers every lifecycle activity. */
export type LifecycleArea = Area & { lifecycle: AreaLifecycle };

/** Whose repository access changed: some users' (on some repositories), or anyone's on some repositories. */
export type AccessChange = { userIds: readonly number[] } | { repositoryIds: readonly number[] };

/**
 * A core writer whose writes the areas hook into (`onAccessChanged`, `onAppCreated`): it is given
 * them, and runs their hooks inside its transaction.
 */
export abstract class HookedWrites extends Service {
  protected readonly areas: readonly Area[];

  constructor(ctx: Context, areas: readonly Area[]) {
    super(ctx);
    this.areas = areas;
  }

  /** Tells every area that repository access changed, inside the write's transaction `trx`. */
  protected async accessChanged(trx: Executor, change: AccessChange): Promise<void> {
    for (const area of this.areas) await area.onAccessChanged?.(this.ctx, trx, change);
  }
}
