// Durability: `codehost serve` is killed with SIGKILL while deliveries are in flight (the receiver
// holds them) and queued behind them; after a restart every delivery is attempted and recorded
// exactly once: the in-flight ones are posted again with the same guid, none is lost, none doubled.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { createPrivateKey, createHmac } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import { after, before, test } from 'node:test';
import { SignJWT, importPKCS8 } from 'jose';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { freePort, spawnServe } from '../../helpers/process.ts';

const ADMIN_TOKEN = 'restart-admin-token';
const SECRET = 'restart-secret';
const EVENTS = 6;

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A receiver that holds every request open until told to answer, then answers 200 at once. */
const receiver = {
  holding: true,
  held: [] as ServerResponse[],
  guids: [] as string[],
  signed: true,
  server: createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      receiver.guids.push(String(req.headers['x-vendor-delivery']));
      const expected = `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
      if (req.headers['x-hub-signature-256'] !== expected) receiver.signed = false;
      if (receiver.holding) receiver.held.push(res);
      else res.writeHead(200).end('ok');
    });
  }),
};

let database: TestDatabase;
let child: ChildProcess | null = null;
let receiverPort: number;

function serve(port: number): ChildProcess {
  return spawnServe({
    port,
    database,
    adminToken: ADMIN_TOKEN,
    env: {
      CODEHOST_DATABASE_POOL_SIZE: '4',
      // Two deliveries in flight, the rest queued behind them; a long timeout keeps them in flight.
      CODEHOST_WEBHOOK_CONCURRENCY: '2',
      CODEHOST_WEBHOOK_TIMEOUT_MS: '60000',
    },
  });
}

async function started(port: number): Promise<string> {
  const url = `http://127.0.0.1:${port}`;
  await until('the server to answer', async () => ((await fetch(`${url}/readyz`)).ok ? true : undefined));
  return url;
}

async function admin(url: string, method: string, path: string, body: unknown = {}): Promise<any> {
  const response = await fetch(`${url}/_admin${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`admin ${method} ${path}: ${response.status} ${text}`);
  return JSON.parse(text);
}

/** The app's deliveries of `event` (installing it sends an `installation` event too). */
async function listDeliveries(url: string, app: { id: number; private_key: string }, event = 'push'): Promise<any[]> {
  const now = Math.floor(Date.now() / 1000);
  const key = await importPKCS8(createPrivateKey(app.private_key).export({ type: 'pkcs8', format: 'pem' }).toString(), 'RS256');
  const jwt = await new SignJWT({}).setProtectedHeader({ alg: 'RS256' }).setIssuer(String(app.id)).setIssuedAt(now - 30).setExpirationTime(now + 300).sign(key);
  const response = await fetch(`${url}/api/v3/app/hook/deliveries?per_page=100`, { headers: { authorization: `Bearer ${jwt}` } });
  assert.equal(response.status, 200);
  return ((await response.json()) as any[]).filter((delivery) => delivery.event === event);
}

function kill(process_: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (process_.exitCode !== null || process_.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => process_.once('exit', () => resolve()));
  process_.kill(signal);
  return exited;
}

before(async () => {
  database = await createTestDatabase();
  await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
  receiverPort = (receiver.server.address() as AddressInfo).port;
});
after(async () => {
  if (child) await kill(child, 'SIGKILL');
  for (const res of receiver.held) res.destroy();
  receiver.server.closeAllConnections();
  await new Promise((resolve) => receiver.server.close(resolve));
  await database.drop();
});

test('deliveries in flight and queued when the server is killed are each done once after a restart', async () => {
  const port = await freePort();
  child = serve(port);
  let url = await started(port);
  await admin(url, 'POST', '/users', { login: 'mona' });
  await admin(url, 'POST', '/repos', { owner: 'mona', name: 'durable' });
  const app = await admin(url, 'POST', '/apps', { slug: 'durable-app', permissions: { contents: 'read' }, events: ['push'], webhook: { url: `http://127.0.0.1:${receiverPort}/hook`, secret: SECRET } });
  // Installing sends the app its `installation` `created` event: answered before the pushes go.
  receiver.holding = false;
  await admin(url, 'POST', '/apps/durable-app/installations', { account: 'mona' });
  await until('the installation event delivered', async () => ((await listDeliveries(url, app, 'installation')).length === 1 ? true : undefined));
  receiver.holding = true;
  receiver.guids.length = 0;
  for (let i = 0; i < EVENTS; i++) {
    assert.deepEqual(await admin(url, 'POST', '/events', { event: 'push', repository: 'mona/durable', sender: 'mona', payload: { seq: i } }), { deliveries: 1 });
  }

  // Two in flight (held by the receiver), four queued behind them; nothing recorded yet.
  await until('two deliveries in flight', async () => (receiver.held.length === 2 ? true : undefined));
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(receiver.held.length, 2, 'concurrency bounds the deliveries in flight');
  const inFlight = [...receiver.guids];
  assert.deepEqual(await listDeliveries(url, app), []);

  await kill(child, 'SIGKILL');
  for (const res of receiver.held) res.destroy();
  receiver.holding = false;

  const again = await freePort();
  child = serve(again);
  url = await started(again);
  const done = await until('every delivery recorded', async () => {
    const listed = await listDeliveries(url, app);
    return listed.length >= EVENTS ? listed : undefined;
  }, 90_000);
  // Let any duplicate job run out before counting.
  await admin(url, 'POST', '/jobs/drain', { timeout_seconds: 60 });
  const final = await listDeliveries(url, app);
  assert.equal(final.length, EVENTS, `recorded ${final.length} deliveries`);
  assert.deepEqual(final.map((d) => d.id).sort(), done.map((d) => d.id).sort());
  assert.equal(new Set(final.map((d) => d.guid)).size, EVENTS, 'one record per delivery');
  assert.ok(final.every((d) => d.status === 'OK' && d.status_code === 200 && d.redelivery === false));
  // Posts counted exactly, recognised by their guid: the two cut off in flight were posted twice
  // (before the kill and again after the restart), every other delivery once.
  const posts = new Map<string, number>();
  for (const guid of receiver.guids) posts.set(guid, (posts.get(guid) ?? 0) + 1);
  const expected = new Map(final.map((d) => [d.guid, inFlight.includes(d.guid) ? 2 : 1]));
  for (const guid of inFlight) assert.ok(final.some((d) => d.guid === guid), `${guid} was in flight and is recorded`);
  assert.deepEqual(Object.fromEntries([...posts].sort()), Object.fromEntries([...expected].sort()));
  assert.equal(receiver.guids.length, EVENTS + inFlight.length);
  assert.ok(receiver.signed, 'every post was signed');
  await kill(child, 'SIGTERM');
  child = null;
});
