// The group commit behind the queues' batched settles (no database: the same on both engines).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BatchLoader, WriteBatcher } from './batch.ts';

test('items added in one turn are written together; items added during a write go in the next batch', async () => {
  const batches: number[][] = [];
  let release!: () => void;
  let hold: Promise<void> | null = new Promise((resolve) => (release = resolve));
  const batcher = new WriteBatcher<number>(async (items) => {
    batches.push(items);
    if (hold) await hold;
  });
  const first = [1, 2, 3].map((n) => batcher.add(n));
  await new Promise((resolve) => setImmediate(resolve));
  // The first batch is being written: these wait for it.
  const second = [4, 5].map((n) => batcher.add(n));
  hold = null;
  release();
  await Promise.all([...first, ...second]);
  assert.deepEqual(batches, [[1, 2, 3], [4, 5]]);

  // Idle again: the next item is written on its own.
  await batcher.add(6);
  assert.deepEqual(batches.at(-1), [6]);
});

test('a failed write rejects its own batch only, and an item added as a batch settles is not stranded', async () => {
  const written: number[] = [];
  const batcher = new WriteBatcher<number>(async (items) => {
    if (items.includes(13)) throw new Error('cannot write 13');
    written.push(...items);
  }, 2);
  const results = await Promise.allSettled([10, 13, 14].map((n) => batcher.add(n)));
  // At most two per batch: [10, 13] fails together, [14] is written.
  assert.deepEqual(results.map((r) => r.status), ['rejected', 'rejected', 'fulfilled']);
  assert.deepEqual(written, [14]);

  // Added from the continuation of a settled item, while the drain is finishing.
  await batcher.add(20).then(() => batcher.add(21));
  assert.deepEqual(written, [14, 20, 21]);
});

test('keys asked for in one turn are read together; a key read in flight waits for the next read; a failed read rejects its own keys', async () => {
  const reads: number[][] = [];
  const loader = new BatchLoader<number, string>(async (keys) => {
    reads.push(keys);
    if (keys.includes(13)) throw new Error('cannot read 13');
    return new Map(keys.filter((key) => key !== 404).map((key) => [key, `row ${key}`]));
  });
  const first = await Promise.all([1, 2, 2, 404].map((key) => loader.load(key)));
  assert.deepEqual(first, ['row 1', 'row 2', 'row 2', undefined]);
  assert.deepEqual(reads, [[1, 2, 404]]);
  const results = await Promise.allSettled([loader.load(13), loader.load(5).then(() => loader.load(6))]);
  assert.deepEqual(results.map((r) => r.status), ['rejected', 'rejected']);
  assert.deepEqual(reads.slice(1), [[13, 5]]);
  assert.equal(await loader.load(7), 'row 7');
});
