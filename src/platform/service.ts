// What every service holds: the context, its database, and "now" in the stored timestamp form.
import type { Context } from './context.ts';

export abstract class Service {
  protected readonly ctx: Context;

  constructor(ctx: Context) {
    this.ctx = ctx;
  }

  protected get db() {
    return this.ctx.db.kysely;
  }

  /** The clock's now as timestamps are stored: ISO text with milliseconds. */
  protected now(): string {
    return this.ctx.clock.now().toISOString();
  }
}
