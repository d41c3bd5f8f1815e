// The test clock's routes (CODEHOST_TEST_CLOCK): GET /_admin/clock reads it, POST moves it forward.
// The clock itself is production's (src/platform/clock.ts), with an offset only the test clock moves.
import { Type } from 'typebox';
import { LATEST_CLOCK_MS } from '../platform/clock.ts';
import type { Api, Context } from '../platform/context.ts';
import { invalidField, notFound } from '../platform/errors.ts';

const hidden = { hide: true, tags: ['admin'] } as const;

export function clockRoutes(app: Api, ctx: Context): void {
  app.get('/_admin/clock', { schema: hidden }, async () => {
    if (!ctx.clock.adjustable) throw notFound();
    return { now: ctx.clock.now().toISOString() };
  });

  app.post('/_admin/clock', {
    schema: { ...hidden, body: Type.Object({ advance_seconds: Type.Number({ minimum: 0 }) }) },
  }, async (request) => {
    if (!ctx.clock.adjustable) throw notFound();
    const seconds = request.body.advance_seconds;
    if (!ctx.clock.canAdvance(seconds)) {
      throw invalidField('Clock', 'advance_seconds', `advance_seconds would move the clock past ${new Date(LATEST_CLOCK_MS).toISOString()}, the latest time every database codehost runs on can hold`);
    }
    return { now: ctx.clock.advance(seconds).toISOString() };
  });
}
