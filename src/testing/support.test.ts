// The test double's snapshot and reset rules that need no database (support.ts): what a snapshot
// keeps of the process's memory and how a restore puts it back (the clock's lead replaced, not
// added; the fault rules replaced, their ids going on; the rate-limit counters forgotten), a second
// snapshot's memory over a first's and back; the snapshots a list shows (the saved demo world left
// out, newest first, then by name); and what a reset's body asks for, each refusal an exact 422.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse } from 'yaml';
import { Clock } from '../platform/clock.ts';
import { ChangeFeed, NO_CACHE } from '../db/changes.ts';
import type { Context } from '../platform/context.ts';
import { ApiError } from '../platform/errors.ts';
import { faultsOf, type FaultRule } from './fault-store.ts';
import { listedSnapshots, memoryOf, resetRequest, setMemory, type MemoryState } from './support.ts';

function firstLineOfYamlError(text: string): string {
  try {
    parse(text);
  } catch (error) {
    const [first, second] = (error as Error).message.split('\n');
    assert.ok(second !== undefined, 'the parser\'s message has more than one line');
    return first!;
  }
  throw new Error('parsed');
}

function fakeContext() {
  let forgotten = 0;
  const ctx = { clock: new Clock(true), perServer: new Map(), rateLimiter: { forget: () => void forgotten++ }, db: { feed: new ChangeFeed(NO_CACHE) } };
  return { ctx: ctx as unknown as Context, forgotten: () => forgotten, world: () => ctx.db.feed.world };
}

const rule = (path: string): Omit<FaultRule, 'id' | 'hits'> => ({
  effect: 'status', status: 500, retryAfter: null, resetSeconds: null, delayMs: null, match: { path } as FaultRule['match'], remaining: null, expiresAt: null,
} as Omit<FaultRule, 'id' | 'hits'>);

test('memory: A saved, B saved, A, B, A restored: each exactly as saved; the lead replaced, never added', () => {
  const { ctx, forgotten, world } = fakeContext();
  const faults = faultsOf(ctx);
  ctx.clock.advance(600);
  faults.add(rule('/in-a'));
  const a = memoryOf(ctx);
  assert.equal(a.clock_offset_ms, 600_000);
  assert.deepEqual(a.faults.map((saved) => [saved.id, saved.match.path]), [[1, '/in-a']]);
  ctx.clock.advance(3000);
  faults.add(rule('/in-b'));
  const b = memoryOf(ctx);
  assert.equal(b.clock_offset_ms, 3_600_000);
  // What was saved is a copy: later changes do not reach it.
  faults.add(rule('/after-b'));
  assert.equal(b.faults.length, 2);
  const paths = () => faults.save().map((saved) => saved.match.path);
  const STEPS: [string, MemoryState, number, string[]][] = [
    ['A after B', a, 600_000, ['/in-a']],
    ['B after A', b, 3_600_000, ['/in-a', '/in-b']],
    ['A again', a, 600_000, ['/in-a']],
    ['A twice in a row', a, 600_000, ['/in-a']],
    ['B again', b, 3_600_000, ['/in-a', '/in-b']],
    ['a reset (no lead, no faults)', { clock_offset_ms: 0, faults: [] }, 0, []],
    ['A after the reset', a, 600_000, ['/in-a']],
  ];
  for (const [i, [step, memory, lead, expected]] of STEPS.entries()) {
    ctx.clock.advance(7);
    setMemory(ctx, memory);
    assert.equal(ctx.clock.offset, lead, `${step}: the lead`);
    assert.deepEqual(paths(), expected, `${step}: the faults`);
    assert.equal(forgotten(), i + 1, `${step}: the rate-limit counters forgotten`);
    assert.equal(world(), i + 1, `${step}: another world (what is kept by version forgotten)`);
  }
  // A restored rule is a copy too: spending it leaves the snapshot's as saved.
  faults.replace([]);
  assert.equal(a.faults.length, 1);
  // New rules after a restore take ids after every id seen (none reused).
  setMemory(ctx, a);
  assert.equal(faults.add(rule('/new')).id, 4);
});

test('memory on a clock that is not adjustable: the lead stays 0 whatever the snapshot says', () => {
  const ctx = { clock: new Clock(false), perServer: new Map(), rateLimiter: { forget() {} }, db: { feed: new ChangeFeed(NO_CACHE) } } as unknown as Context;
  setMemory(ctx, { clock_offset_ms: 5_000, faults: [] });
  assert.equal(memoryOf(ctx).clock_offset_ms, 0);
});

test('the list: the saved demo world left out; newest first; the same time by name', () => {
  const meta = (name: string, createdAt: string) => ({ name, createdAt, state: '', bytes: 1 });
  const all = [
    meta('b', '2026-06-01T10:00:00.000Z'), meta('.demo', '2026-06-01T12:00:00.000Z'), meta('c', '2026-06-01T11:00:00.000Z'),
    meta('a', '2026-06-01T10:00:00.000Z'), meta('demo', '2026-06-01T09:00:00.000Z'),
  ];
  assert.deepEqual(listedSnapshots(all).map((snapshot) => snapshot.name), ['c', 'a', 'b', 'demo']);
  assert.deepEqual(all.map((snapshot) => snapshot.name), ['b', '.demo', 'c', 'a', 'demo'], 'the input left as it was');
  assert.deepEqual(listedSnapshots([]), []);
});

test('a reset\'s body: empty by default, demo, a seed parsed; each refusal a 422 naming seed', () => {
  assert.deepEqual(resetRequest({}), { to: 'empty', seed: undefined });
  assert.deepEqual(resetRequest({ to: 'demo' }), { to: 'demo', seed: undefined });
  assert.deepEqual(resetRequest({ to: 'empty' }), { to: 'empty', seed: undefined });
  assert.deepEqual(resetRequest({ to: 'seed', seed: 'users:\n  - login: a\n' }), { to: 'seed', seed: { users: [{ login: 'a' }] } });
  assert.deepEqual(resetRequest({ to: 'seed', seed: '{"users":[]}' }), { to: 'seed', seed: { users: [] } });
  const REFUSED: [string, Parameters<typeof resetRequest>[0], { code: string; message: string | RegExp }][] = [
    ['to: seed without one', { to: 'seed' }, { code: 'missing_field', message: 'to: seed needs the seed file\'s content in seed' }],
    ['a seed that is neither YAML nor JSON', { to: 'seed', seed: 'users: [unclosed' }, { code: 'custom', message: `the seed is neither YAML nor JSON: ${firstLineOfYamlError('users: [unclosed')}` }],
    ['a seed with to: empty', { to: 'empty', seed: 'users: []' }, { code: 'custom', message: 'seed goes with to: seed' }],
    ['a seed with no to', { seed: 'users: []' }, { code: 'custom', message: 'seed goes with to: seed' }],
    ['a seed with to: demo', { to: 'demo', seed: '' }, { code: 'custom', message: 'seed goes with to: seed' }],
  ];
  for (const [row, body, expected] of REFUSED) {
    assert.throws(() => resetRequest(body), (error: unknown) => {
      assert.ok(error instanceof ApiError, row);
      assert.equal(error.status, 422, row);
      assert.equal(error.errors!.length, 1, row);
      const [only] = error.errors!;
      assert.equal(only!.resource, 'Reset', row);
      assert.equal(only!.field, 'seed', row);
      assert.equal(only!.code, expected.code, row);
      if (typeof expected.message === 'string') assert.equal(only!.message, expected.message, row);
      else assert.match(only!.message!, expected.message, row);
      return true;
    }, row);
  }
});
