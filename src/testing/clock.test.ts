// The test clock's bounds, no database (src/platform/clock.ts and the routes of ./clock.ts on a bare
// Fastify): moves add up (a second move goes on from the first), forward only, up to LATEST_CLOCK_MS
// exactly and not a millisecond past it; a malformed or negative move is refused with an exact
// status and error, and moves nothing; a clock that is not adjustable answers 404 and never moves;
// setOffset (a reset's 0, a restore's saved lead) replaces the lead.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import { ApiError } from '../platform/errors.ts';
import { Clock, LATEST_CLOCK_MS } from '../platform/clock.ts';
import type { Api, Context } from '../platform/context.ts';
import { clockRoutes } from './clock.ts';

const near = (actual: number, expected: number, what: string) => assert.ok(Math.abs(actual - expected) < 1_000, `${what}: ${actual - expected} ms off`);

test('moves add up; setOffset replaces; the lead is what was added', () => {
  const clock = new Clock(true);
  assert.equal(clock.offset, 0);
  clock.advance(60);
  clock.advance(90);
  assert.equal(clock.offset, 150_000);
  near(clock.nowMs(), Date.now() + 150_000, 'after two moves');
  near(clock.now().getTime(), Date.now() + 150_000, 'now() after two moves');
  const returned = clock.advance(0);
  assert.equal(clock.offset, 150_000);
  near(returned.getTime(), Date.now() + 150_000, 'advance answers the new time');
  clock.advance(0.5);
  assert.equal(clock.offset, 150_500);
  clock.setOffset(7_000);
  assert.equal(clock.offset, 7_000);
  clock.advance(3);
  assert.equal(clock.offset, 10_000);
  clock.setOffset(0);
  assert.equal(clock.offset, 0);
});

test('bounds: forward only, finite, up to the latest time exactly', () => {
  const clock = new Clock(true);
  const room = () => (LATEST_CLOCK_MS - clock.nowMs()) / 1000;
  for (const seconds of [-1, -0.001, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, room() + 10]) {
    assert.equal(clock.canAdvance(seconds), false, String(seconds));
    assert.throws(() => clock.advance(seconds), (error: unknown) => error instanceof RangeError && error.message === `the clock cannot move past ${new Date(LATEST_CLOCK_MS).toISOString()}`, String(seconds));
    assert.equal(clock.offset, 0, `${seconds} moved nothing`);
  }
  assert.equal(clock.canAdvance(0), true);
  // To the latest time: the lead is set so that now is exactly LATEST_CLOCK_MS at a fixed Date.now().
  const realNow = Date.now;
  const fixed = realNow();
  Date.now = () => fixed;
  try {
    const exact = (LATEST_CLOCK_MS - fixed) / 1000;
    assert.equal(clock.canAdvance(exact), true);
    assert.equal(clock.canAdvance(exact + 0.001), false);
    clock.advance(exact - 1);
    assert.equal(clock.canAdvance(1), true);
    assert.equal(clock.canAdvance(1.001), false);
    assert.equal(clock.advance(1).getTime(), LATEST_CLOCK_MS);
    assert.equal(clock.canAdvance(0), true);
    assert.equal(clock.canAdvance(0.001), false);
  } finally {
    Date.now = realNow;
  }
});

test('a clock that is not adjustable never moves: advance throws, setOffset keeps 0', () => {
  const clock = new Clock();
  assert.equal(clock.adjustable, false);
  assert.throws(() => clock.advance(1), /the clock is not adjustable/);
  clock.setOffset(5_000);
  assert.equal(clock.offset, 0);
  near(clock.nowMs(), Date.now(), 'the wall clock');
});

async function routes(clock: Clock) {
  const app = Fastify();
  const hidden: string[] = [];
  app.addHook('onRoute', (route) => {
    if ((route.schema as { hide?: boolean; tags?: string[] } | undefined)?.hide === true && (route.schema as { tags?: string[] }).tags?.includes('admin')) hidden.push(`${route.method} ${route.url}`);
  });
  app.setErrorHandler((error: Error & { statusCode?: number; validation?: unknown }, _request, reply) => {
    if (error instanceof ApiError) return reply.code(error.status).send({ message: error.message, errors: error.errors });
    return reply.code(error.statusCode ?? 500).send({ validation: Boolean(error.validation) });
  });
  clockRoutes(app as unknown as Api, { clock } as unknown as Context);
  await app.ready();
  // Both routes are the operator's, hidden from the API's reference.
  assert.deepEqual(hidden.filter((route) => !route.startsWith('HEAD')), ['GET /_admin/clock', 'POST /_admin/clock']);
  return app;
}

test('the routes: read, move twice (added), each bound an exact answer moving nothing', async () => {
  const clock = new Clock(true);
  const app = await routes(clock);
  const post = (body: unknown) => app.inject({ method: 'POST', url: '/_admin/clock', payload: body as object });
  const read = await app.inject({ method: 'GET', url: '/_admin/clock' });
  assert.equal(read.statusCode, 200);
  near(Date.parse(read.json().now), Date.now(), 'GET');
  const first = await post({ advance_seconds: 3600 });
  assert.equal(first.statusCode, 200);
  near(Date.parse(first.json().now), Date.now() + 3_600_000, 'first move');
  const second = await post({ advance_seconds: 1800 });
  near(Date.parse(second.json().now), Date.now() + 5_400_000, 'second move: added to the first');
  assert.equal(clock.offset, 5_400_000);
  near(Date.parse((await app.inject({ method: 'GET', url: '/_admin/clock' })).json().now), Date.now() + 5_400_000, 'GET after two moves');
  // Malformed and backwards: the body's schema refuses them (400), nothing moved.
  for (const body of [{ advance_seconds: -1 }, { advance_seconds: '10x' }, {}, { seconds: 10 }]) {
    const refused = await post(body);
    assert.equal(refused.statusCode, 400, JSON.stringify(body));
    assert.equal(clock.offset, 5_400_000, `${JSON.stringify(body)} moved nothing`);
  }
  // Past the latest time: 422 naming advance_seconds and the latest time; nothing moved.
  const past = await post({ advance_seconds: (LATEST_CLOCK_MS - clock.nowMs()) / 1000 + 60 });
  assert.equal(past.statusCode, 422);
  assert.deepEqual(past.json().errors, [{
    resource: 'Clock', field: 'advance_seconds', code: 'custom',
    message: `advance_seconds would move the clock past ${new Date(LATEST_CLOCK_MS).toISOString()}, the latest time every database codehost runs on can hold`,
  }]);
  assert.equal(clock.offset, 5_400_000);
  await app.close();
});

test('the routes on a clock that is not adjustable: 404 for both, nothing moved', async () => {
  const clock = new Clock();
  const app = await routes(clock);
  assert.equal((await app.inject({ method: 'GET', url: '/_admin/clock' })).statusCode, 404);
  assert.equal((await app.inject({ method: 'POST', url: '/_admin/clock', payload: { advance_seconds: 1 } })).statusCode, 404);
  assert.equal(clock.offset, 0);
  await app.close();
});
