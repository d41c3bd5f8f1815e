// Services and caches that live once per server. Each is declared once, at module level, with how
// to make it from the server's context; it is made on first use and kept in that context
// (`ctx.perServer`, created with the context in src/app.ts). Two servers in one process (a test
// suite) never share one, and a server's go with it — no module-level map keyed by the context.
// A copy of the context (a seed's, scoped to its transaction) shares them: what one keeps must not
// hold the copy's transaction, so services that query are reached from the workers' context.
import type { Context } from './context.ts';

/** One per-server service or cache; `of(ctx)` is the server's. */
export interface PerServer<T> {
  of(ctx: Context): T;
}

/** What a server holds of its per-server services, by their declaration. */
export type PerServerState = Map<PerServer<unknown>, unknown>;

/** Declares a per-server service or cache made by `make` from the server's context on first use. */
export function perServer<T>(make: (ctx: Context) => T): PerServer<T> {
  const declared: PerServer<T> = {
    of(ctx) {
      if (ctx.perServer.has(declared)) return ctx.perServer.get(declared) as T;
      const made = make(ctx);
      ctx.perServer.set(declared, made);
      return made;
    },
  };
  return declared;
}
