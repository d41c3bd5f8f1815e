// POST /_admin/jobs/drain and deferred jobs (a webhook retry waiting out its delay): the drain waits
// for them, answers at once with 504 when none can come due before its timeout, and reports them
// when asked not to wait. Due times are wall time: moving the test clock makes no job due sooner.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { appJwt } from '../helpers/credentials.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

/** A webhook receiver that fails every event but the webhook's `ping` with a 500, counting what it failed. */
async function failingReceiver(): Promise<{ url: string; hits: () => number; close: () => Promise<void> }> {
  let hits = 0;
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      if (request.headers['x-vendor-event'] === 'ping') return response.writeHead(204).end();
      hits++;
      response.writeHead(500).end('no');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hook`, hits: () => hits, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

async function withFailingApp(retryBaseSeconds: number): Promise<{ server: TestServer; receiver: Awaited<ReturnType<typeof failingReceiver>> }> {
  const receiver = await failingReceiver();
  const server = await startServer({ CODEHOST_WEBHOOK_RETRIES: '1', CODEHOST_WEBHOOK_RETRY_BASE_SECONDS: String(retryBaseSeconds) });
  await server.admin('POST', '/users', { login: 'mona' });
  await server.admin('POST', '/repos', { owner: 'mona', name: 'busy' });
  // Installed before its webhook is set, so its `installation created` event is not delivered.
  const app = await server.admin('POST', '/apps', { slug: 'flaky-hooks', permissions: { contents: 'read' }, events: ['push'] });
  await server.admin('POST', '/apps/flaky-hooks/installations', { account: 'mona' });
  await server.drain();
  const configured = await server.api('PATCH', '/app/hook/config', { token: await appJwt(server, app), body: { url: receiver.url } });
  assert.equal(configured.status, 200, configured.text);
  // Setting the URL pings it; that delivery succeeds and is out of the way.
  await server.drain();
  return { server, receiver };
}

describe('drain with a retry due soon', () => {
  let server: TestServer;
  let receiver: Awaited<ReturnType<typeof failingReceiver>>;
  before(async () => ({ server, receiver } = await withFailingApp(1)));
  after(async () => {
    await server.close();
    await receiver.close();
  });

  test('wait_for_deferred false reports the retry; the default waits for it', async () => {
    assert.deepEqual(await server.admin('POST', '/jobs/drain', { timeout_seconds: 5 }), { pending: 0, deferred: 0, next_run_at: null });
    await server.admin('POST', '/events', { event: 'push', repository: 'mona/busy', sender: 'mona' });
    const reported = await server.admin('POST', '/jobs/drain', { timeout_seconds: 30, wait_for_deferred: false });
    assert.equal(receiver.hits(), 1, 'the first delivery ran');
    assert.deepEqual([reported.pending, reported.deferred], [0, 1]);
    assert.match(reported.next_run_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const drained = await server.admin('POST', '/jobs/drain', { timeout_seconds: 30 });
    assert.deepEqual(drained, { pending: 0, deferred: 0, next_run_at: null });
    assert.equal(receiver.hits(), 2, 'the retry ran before the drain answered');
  });
});

describe('drain with a retry due after its timeout', () => {
  let server: TestServer;
  let receiver: Awaited<ReturnType<typeof failingReceiver>>;
  before(async () => ({ server, receiver } = await withFailingApp(60)));
  after(async () => {
    await server.close();
    await receiver.close();
  });

  test('504 at once, naming the deferred job; the test clock does not make it due', async () => {
    await server.admin('POST', '/events', { event: 'push', repository: 'mona/busy', sender: 'mona' });
    const started = Date.now();
    const response = await server.adminRaw('POST', '/jobs/drain', { timeout_seconds: 20 });
    assert.ok(Date.now() - started < 10_000, `answered after ${Date.now() - started} ms`);
    assert.equal(response.status, 504);
    assert.deepEqual([response.body.pending, response.body.deferred], [0, 1]);
    const due = Date.parse(response.body.next_run_at);
    assert.ok(due > Date.now() + 30_000, 'due about a minute after the failure');
    assert.equal(receiver.hits(), 1);

    await server.advance(3600);
    const moved = await server.adminRaw('POST', '/jobs/drain', { timeout_seconds: 1 });
    assert.equal(moved.status, 504);
    assert.equal(moved.body.deferred, 1);
    assert.equal(receiver.hits(), 1);
    // A bad body is a 422.
    assert.equal((await server.adminRaw('POST', '/jobs/drain', { wait_for_deferred: 'yes' })).status, 422);
  });
});
