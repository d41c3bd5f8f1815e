// What every service holds: the context, its database, and "now" in the stored timestamp form.
import type { Executor } from '../db/index.ts';
import type { Context } from './context.ts';

export abstract class Service {
  protected readonly ctx: Context;
  /** The transaction the service's writes join, when it was given one (a seed's); else each opens its own. */
  readonly #within: Executor | undefined;

  constructor(ctx: Context, within?: Executor) {
    this.ctx = ctx;
    this.#within = within;
  }

  protected get db() {
    return this.#within ?? this.ctx.db.kysely;
  }

  /** Runs `fn` in a transaction: its own, or the one the service was given (then it commits with it). */
  protected transaction<T>(fn: (trx: Executor) => Promise<T>): Promise<T> {
    return this.#within ? fn(this.#within) : this.ctx.db.kysely.transaction().execute(fn);
  }

  /** The clock's now as timestamps are stored: ISO text with milliseconds. */
  protected now(): string {
    return this.ctx.clock.now().toISOString();
  }
}
