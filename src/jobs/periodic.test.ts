// The periodic runner (no database: the same on both engines): its sweeps run through the consume
// middleware it was built with, in the order they were registered.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import { Periodic } from './periodic.ts';

const log = { error: () => assert.fail('a sweep failed') } as unknown as FastifyBaseLogger;

test('every sweep runs inside the consume middleware the runner was built with, in registration order', async () => {
  const seen: string[] = [];
  const periodic = new Periodic(log, {
    consume: [async (consumed, run) => {
      seen.push(`enter ${consumed.name}`);
      const result = await run();
      seen.push(`leave ${consumed.name}`);
      return result;
    }],
  });
  periodic.every('first', 3600, async () => void seen.push('first ran'));
  periodic.every('second', 3600, async () => void seen.push('second ran'));
  await periodic.runAll();
  assert.deepEqual(seen, ['enter first', 'first ran', 'leave first', 'enter second', 'second ran', 'leave second']);
});

test('built without middleware, a sweep runs as it is', async () => {
  let ran = 0;
  const periodic = new Periodic(log);
  periodic.every('alone', 3600, async () => void ran++);
  await periodic.runAll();
  assert.equal(ran, 1);
});
