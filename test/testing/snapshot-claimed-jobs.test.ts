// A PostgreSQL snapshot taken while a worker has claimed a job (pg-boss `active`: claimed, its
// handler waiting at the test double's gate behind the snapshot) restores it claimable, not `active`:
// no worker holds it in the restored world, so an `active` job would sit until pg-boss expired it
// (drains answering 504 meanwhile) and then run again. A job claimed at the time of the restore
// itself is its worker's still: that worker completes it, once.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { stateTables } from '../../src/db/snapshots.ts';
import { gateOf } from '../../src/testing/gate.ts';
import { engine } from '../helpers/database.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const skip = engine !== 'postgres' ? 'PostgreSQL only: pg-boss' : false;
let server: TestServer;
before(async () => {
  server = await startServer({ CODEHOST_TEST_MODE: '1' });
});
after(() => server?.close());

const jobStates = async (outboxId: number) =>
  (await sql<{ state: string }>`select state::text as state from pgboss.job where name = 'activity.dispatch' and data->>'outboxId' = ${String(outboxId)}`.execute(server.server.ctx.db.kysely)).rows.map((row) => row.state);

/** Sends a job while the gate is held alone, and runs `then` (still alone) once a worker has claimed it. */
async function claimedDuring(outboxId: number, then: () => Promise<void>): Promise<void> {
  const ctx = server.server.ctx;
  await gateOf(ctx).exclusive(async () => {
    await ctx.queue.send('activity.dispatch', { outboxId });
    const deadline = Date.now() + 20_000;
    while ((await jobStates(outboxId))[0] !== 'active') {
      assert.ok(Date.now() < deadline, `the job was never claimed: ${JSON.stringify(await jobStates(outboxId))}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await then();
  });
}

// The snapshot and the restore run inside the section held alone here, as the admin routes run them
// (a request to them would wait behind this section).
const tables = () => stateTables(server.server.ctx.db, join(server.server.ctx.config.dataDir, 'snapshots'));

test('a job claimed when the snapshot was saved is claimable after its restore: the drain answers 200 at once and it runs', { skip }, async () => {
  await claimedDuring(987654, () => tables().save('claimed', new Date().toISOString(), '{"clock_offset_ms":0,"faults":[],"journal":[]}').then(() => {}));
  await server.drain();
  assert.deepEqual(await jobStates(987654), ['completed'], 'its handler ran once the gate opened');
  const restored = await server.adminRaw('POST', '/snapshots/claimed/restore', {});
  assert.equal(restored.status, 200, restored.text);
  assert.deepEqual(await jobStates(987654), ['created'], 'claimable again, as if never claimed');
  const drained = await server.adminRaw('POST', '/jobs/drain', { timeout_seconds: 15 });
  assert.equal(drained.status, 200, drained.text);
  assert.deepEqual(await jobStates(987654), ['completed']);
});

test('a job claimed while the restore runs stays its worker\'s: completed once by it', { skip }, async () => {
  await claimedDuring(987655, async () => {
    await tables().save('held', new Date().toISOString(), '{}');
    await tables().restore('held');
    assert.deepEqual(await jobStates(987655), ['active'], 'still claimed by the worker waiting at the gate');
  });
  const drained = await server.adminRaw('POST', '/jobs/drain', { timeout_seconds: 15 });
  assert.equal(drained.status, 200, drained.text);
  assert.deepEqual(await jobStates(987655), ['completed']);
});
