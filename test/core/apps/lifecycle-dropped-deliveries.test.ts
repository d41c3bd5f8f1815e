// Deliveries already queued for an installation when it is suspended or deleted are dropped when
// their job runs, never posted: each is recorded (GET /_admin/apps/{app}/deliveries) with the status
// `dropped: installation suspended` or `dropped: installation deleted` and status code 0. The
// `installation` events themselves are delivered. One delivery at a time (CODEHOST_WEBHOOK_CONCURRENCY=1)
// and a receiver that holds its first answer keep the later deliveries queued while the installation changes.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { appJwt, type TestApp } from '../../helpers/credentials.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

interface Received { event: string; action: string; title: string | null }

/** A loopback receiver that can hold its answers until released. */
class HoldingReceiver {
  received: Received[] = [];
  private held: (() => void)[] = [];
  holding = false;
  private server: Server = createServer(async (request: IncomingMessage, response) => {
    let text = '';
    for await (const chunk of request) text += chunk;
    const body = JSON.parse(text);
    this.received.push({ event: String(request.headers['x-vendor-event']), action: body.action ?? '', title: body.issue?.title ?? null });
    if (this.holding) await new Promise<void>((resolve) => this.held.push(resolve));
    response.writeHead(200).end('ok');
  });

  async start(): Promise<string> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  release(): void {
    this.holding = false;
    for (const resolve of this.held.splice(0)) resolve();
  }

  async stop(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    this.server.close();
  }
}

const until = async (what: string, check: () => Promise<boolean> | boolean) => {
  for (let i = 0; i < 500; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.fail(`timed out waiting for ${what}`);
};

describe('deliveries queued for a suspended or deleted installation', () => {
  let server: TestServer;
  let receiver: HoldingReceiver;
  let installationId: number;
  let app: TestApp;

  before(async () => {
    receiver = new HoldingReceiver();
    const url = await receiver.start();
    server = await startServer({ CODEHOST_WEBHOOK_CONCURRENCY: '1' });
    await server.admin('POST', '/users', { login: 'mona' });
    await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'] });
    await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
    app = await server.admin('POST', '/apps', { slug: 'bot', permissions: { metadata: 'read', issues: 'write' }, events: ['issues'], webhook: { url } });
    installationId = (await server.admin('POST', '/apps/bot/installations', { account: 'acme' })).id;
    await server.drain();
    // Creating the app with a URL pinged it, installing sent it its `installation` `created`: delivered before the tests count.
    assert.deepEqual(receiver.received.map((r) => `${r.event} ${r.action}`).sort(), ['installation created', 'ping ']);
    receiver.received = [];
  });
  after(async () => {
    receiver.release();
    await server.close();
    await receiver.stop();
  });

  const deliveries = async () => (await server.admin('GET', '/apps/bot/deliveries?per_page=100')) as { id: number; event: string; action: string | null; status: string; status_code: number }[];

  /** A dropped delivery as the app and the operator read it: never made, it carries no payload (the issue's title and body stay out). */
  async function assertNoPayload(id: number, title: string): Promise<void> {
    const read = await server.api('GET', `/app/hook/deliveries/${id}`, { authorization: `Bearer ${await appJwt(server, app)}` });
    assert.equal(read.status, 200, read.text);
    assert.deepEqual(read.body.request.payload, {});
    assert.doesNotMatch(read.text, new RegExp(title));
    const operator = await server.admin('GET', `/apps/bot/deliveries/${id}`);
    assert.deepEqual(operator.request.payload, {});
  }
  const db = () => server.server.ctx.db.kysely;
  const pending = async () => Number((await db().selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll().as('n')).where('delivered_at', 'is', null).executeTakeFirstOrThrow()).n);

  /** Opens issue `first` (its post held by the receiver), then `queued` issues whose deliveries wait behind it; then `change`; then releases. */
  async function queueThen(first: string, queued: string[], change: () => Promise<void>): Promise<void> {
    receiver.holding = true;
    const seen = receiver.received.length;
    await server.admin('POST', '/repos/acme/widgets/issues', { author: 'mona', title: first });
    await until('the first post', () => receiver.received.length > seen);
    for (const title of queued) await server.admin('POST', '/repos/acme/widgets/issues', { author: 'mona', title });
    await until('the queued deliveries', async () => (await pending()) >= queued.length + 1);
    await change();
    receiver.release();
    await server.drain();
  }

  test('suspended: the queued deliveries are dropped and recorded, the suspend event is delivered', async () => {
    await queueThen('held', ['queued 1', 'queued 2'], async () => {
      assert.equal((await server.adminRaw('PUT', `/apps/bot/installations/${installationId}/suspended`)).status, 204);
    });
    assert.deepEqual(receiver.received.map((r) => `${r.event} ${r.action} ${r.title ?? ''}`.trim()), ['issues opened held', 'installation suspend']);
    const dropped = (await deliveries()).filter((d) => d.status === 'dropped: installation suspended');
    assert.equal(dropped.length, 2, JSON.stringify(await deliveries()));
    for (const delivery of dropped) {
      assert.equal(delivery.event, 'issues');
      assert.equal(delivery.status_code, 0);
      await assertNoPayload(delivery.id, 'queued [12]');
    }
    // A delivery that was made keeps its payload.
    const made = (await deliveries()).find((d) => d.status !== 'dropped: installation suspended' && d.event === 'issues')!;
    assert.match(JSON.stringify((await server.admin('GET', `/apps/bot/deliveries/${made.id}`)).request.payload), /held/);
    assert.equal(await pending(), 0);
  });

  test('deleted: the queued deliveries are dropped and recorded, the deleted event is delivered', async () => {
    assert.equal((await server.adminRaw('DELETE', `/apps/bot/installations/${installationId}/suspended`)).status, 204);
    await server.drain();
    receiver.received = [];
    await queueThen('held again', ['queued 3'], async () => {
      assert.equal((await server.adminRaw('DELETE', `/apps/bot/installations/${installationId}`)).status, 204);
    });
    assert.deepEqual(receiver.received.map((r) => `${r.event} ${r.action} ${r.title ?? ''}`.trim()), ['issues opened held again', 'installation deleted']);
    const dropped = (await deliveries()).filter((d) => d.status === 'dropped: installation deleted');
    assert.equal(dropped.length, 1, JSON.stringify(await deliveries()));
    await assertNoPayload(dropped[0]!.id, 'queued 3');
    assert.equal(await pending(), 0);
  });
});
