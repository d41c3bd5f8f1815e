// What an area (or the operator surface, or a core resource) plugs into the server: its routes, its
// operator routes, workers, seed keys, and what it does when an app is created or when platform
// activity happens (every change of the world is an activity: src/core/activities.ts).
import type { ActivityConsumer } from '../activity/outbox.ts';
import type { Executor } from '../db/index.ts';
import type { Activity } from './activities.ts';
import type { Api, Context } from '../platform/context.ts';
import { Service } from '../platform/service.ts';
import type { AppRow } from './apps/store.ts';

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
}

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
