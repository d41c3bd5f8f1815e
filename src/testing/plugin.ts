// The test double as one plugin, outside production mode only: the gate (gate.ts) that a reset or a
// snapshot restore takes alone, reset and snapshots (support.ts), fault injection (faults.ts), the
// request journal (journal.ts) and the test clock's routes (clock.ts). Production builds the queue
// and the periodic runner with no middleware, gets none of these steps in its request pipeline and
// registers none of these routes; the exceptions are the journal and the test clock, settings of
// their own that production mode may turn on too (CODEHOST_JOURNAL, CODEHOST_TEST_CLOCK: docs/testing.md).
import type { Config } from '../config.ts';
import type { Area } from '../core/area.ts';
import type { TestDoubleSteps } from '../http/pipeline.ts';
import type { ConsumeMiddleware } from '../jobs/middleware.ts';
import type { Api, Context } from '../platform/context.ts';
import { clockRoutes } from './clock.ts';
import { faultInjection, faultRoutes } from './faults.ts';
import { gateOf } from './gate.ts';
import { journalHooks, journalRoutes } from './journal.ts';
import { gateEntry, testSupportRoutes } from './support.ts';

/**
 * What the queue and the periodic runner are built with: outside production, every job and sweep
 * holds the gate shared while it runs. `server` is the context the queue becomes part of (read when
 * a job runs, once the server is built).
 */
export function testDoubleConsume(config: Config, server: () => Context): ConsumeMiddleware[] {
  if (config.mode === 'production') return [];
  return [(_consumed, run) => gateOf(server()).shared(run)];
}

/** The test double's steps in the request pipeline (src/http/pipeline.ts): each absent where it does not apply. */
export function testDoubleSteps(ctx: Context): TestDoubleSteps {
  return {
    journal: ctx.config.journal.enabled ? journalHooks(ctx) : null,
    gate: ctx.config.mode === 'production' ? null : gateEntry(ctx),
    faults: ctx.config.testMode ? faultInjection(ctx) : null,
  };
}

/**
 * The test double's operator routes held by the gate (`gated`), registered after the admin area's.
 * The journal (CODEHOST_JOURNAL) and the test clock (CODEHOST_TEST_CLOCK) are settings of their own,
 * which production mode may also turn on; the rest exists outside production only.
 */
export function testDoubleRoutes(gated: Api, ctx: Context): void {
  if (ctx.config.journal.enabled) journalRoutes(gated, ctx);
  if (ctx.clock.adjustable) clockRoutes(gated, ctx);
  if (ctx.config.mode === 'production') return;
  faultRoutes(gated, ctx);
}

/** Reset and the snapshots' writes, which take the gate alone (`ungated`; the list of snapshots is read in `gated`). */
export function testDoubleAloneRoutes(ungated: Api, gated: Api, ctx: Context, areas: readonly Area[]): void {
  if (ctx.config.mode === 'production') return;
  testSupportRoutes(ungated, ctx, areas, gated);
}
