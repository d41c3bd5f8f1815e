// The test double as one plugin, outside production mode only: the gate (gate.ts) that a reset or a
// snapshot restore takes alone, reset and snapshots (support.ts), fault injection (faults.ts), the
// request journal (journal.ts) and the test clock's routes (clock.ts). Production builds the queue
// and the periodic runner with no middleware and registers none of these routes; the one exception
// is the journal, which CODEHOST_JOURNAL=1 turns on in production too (docs/testing.md). The request
// hooks are installed with the pipeline's (installGate, installFaults, installJournal).
import type { Config } from '../config.ts';
import type { Area } from '../core/area.ts';
import type { ConsumeMiddleware } from '../jobs/middleware.ts';
import type { Api, Context } from '../platform/context.ts';
import { clockRoutes } from './clock.ts';
import { faultRoutes } from './faults.ts';
import { gateOf } from './gate.ts';
import { journalRoutes } from './journal.ts';
import { testSupportRoutes } from './support.ts';

/**
 * What the queue and the periodic runner are built with: outside production, every job and sweep
 * holds the gate shared while it runs. `server` is the context the queue becomes part of (read when
 * a job runs, once the server is built).
 */
export function testDoubleConsume(config: Config, server: () => Context): ConsumeMiddleware[] {
  if (config.mode === 'production') return [];
  return [(_consumed, run) => gateOf(server()).shared(run)];
}

/** The test double's operator routes, registered after the admin area's (their bodies closed likewise). */
export function testDoubleRoutes(app: Api, ctx: Context, areas: readonly Area[]): void {
  if (ctx.config.journal.enabled) journalRoutes(app, ctx);
  if (ctx.config.mode === 'production') return;
  faultRoutes(app, ctx);
  testSupportRoutes(app, ctx, areas);
  clockRoutes(app, ctx);
}
