// Deliveries are read and recorded in batches (src/areas/app-webhooks/engine.ts): many outcomes in
// one statement must each land on their own attempt, once, and an attempt already recorded keeps its
// first outcome.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { completeAttempts } from '../../../src/areas/app-webhooks/store.ts';
import { appJwt, type TestApp } from '../../helpers/credentials.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

/** What each path answers: status and body. */
const ANSWERS: Record<string, [number, string]> = {
  '/ok-a': [200, 'a'],
  '/ok-b': [201, 'bb'],
  '/gone': [410, 'gone away'],
  '/fail': [500, 'receiver broke'],
  '/nul': [200, 'x\0y'],
  '/quiet': [204, ''],
};

let server: TestServer;
let receiver: Server;
let port = 0;
const received: string[] = [];
const apps: Array<{ app: TestApp; path: string }> = [];

before(async () => {
  receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.push(req.url ?? '');
      const [status, body] = ANSWERS[req.url ?? ''] ?? [404, 'no such path'];
      res.writeHead(status, { 'x-path': req.url ?? '' }).end(body);
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  port = (receiver.address() as AddressInfo).port;
  server = await startServer();
  await server.admin('POST', '/users', { login: 'mona' });
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'] });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
  // Two apps per path, so one batch holds outcomes of every kind, some alike.
  for (const [i, path] of [...Object.keys(ANSWERS), ...Object.keys(ANSWERS)].entries()) {
    const app: TestApp = await server.admin('POST', '/apps', {
      slug: `batch-${i}`,
      permissions: { contents: 'read' },
      events: ['push'],
      webhook: { url: `http://127.0.0.1:${port}${path}` },
    });
    await server.admin('POST', `/apps/batch-${i}/installations`, { account: 'acme', repositories: ['widgets'] });
    apps.push({ app, path });
  }
  // Installing sends each app its `installation` `created` event: delivered before the burst.
  await server.drain();
  received.length = 0;
});

after(async () => {
  await server.close();
  receiver.closeAllConnections();
  await new Promise((resolve) => receiver.close(resolve));
});

test('a burst fanned out to many apps: each delivery recorded once, with its own outcome', async () => {
  const events = 5;
  for (let seq = 0; seq < events; seq++) {
    const answer = await server.admin('POST', '/events', { event: 'push', repository: 'acme/widgets', sender: 'mona', payload: { seq } });
    assert.equal(answer.deliveries, apps.length);
  }
  await server.drain();
  assert.equal(received.length, events * apps.length);
  const guids = new Set<string>();
  for (const { app, path } of apps) {
    const jwt = await appJwt(server, app);
    const list = await server.api('GET', '/app/hook/deliveries?per_page=100', { token: jwt });
    assert.equal(list.status, 200, list.text);
    list.body = list.body.filter((summary: { event: string }) => summary.event === 'push');
    assert.equal(list.body.length, events, `${path}: one record per event`);
    const [status, body] = ANSWERS[path]!;
    const seqs = new Set<number>();
    for (const summary of list.body) {
      guids.add(summary.guid);
      assert.equal(summary.status_code, status, path);
      const detail = await server.api('GET', `/app/hook/deliveries/${summary.id}`, { token: jwt });
      assert.equal(detail.status, 200, detail.text);
      assert.equal(detail.body.url, `http://127.0.0.1:${port}${path}`);
      assert.equal(detail.body.response.headers['x-path'], path);
      assert.equal(detail.body.response.payload, body.replaceAll('\0', '\uFFFD'));
      seqs.add(detail.body.request.payload.seq);
    }
    assert.deepEqual([...seqs].sort(), [0, 1, 2, 3, 4]);
  }
  assert.equal(guids.size, events * apps.length);
});

test('an outcome written again, alone or twice in one batch, leaves the first in place', async () => {
  const db = server.server.ctx.db;
  const postgres = db.dialect === 'postgres';
  const [first] = await db.kysely.selectFrom('webhook_deliveries').select(['id', 'status', 'status_code', 'delivered_at']).where('delivered_at', 'is not', null).orderBy('id').limit(1).execute();
  assert.ok(first);
  const outcome = (status: string) => ({
    delivered_at: new Date().toISOString(), throttled_at: null, status, status_code: 599, duration: 1,
    url: 'http://127.0.0.1:1/late', request_headers: '{}', response_headers: null, response_body: 'late',
  });
  await completeAttempts(db.kysely, [{ id: first.id, outcome: outcome('late') }], postgres);

  // A pending attempt given two outcomes in one batch is recorded once.
  const pending = await db.kysely.insertInto('webhook_deliveries').values({
    message_id: (await db.kysely.selectFrom('webhook_deliveries').select('message_id').where('id', '=', first.id).executeTakeFirstOrThrow()).message_id,
    app_id: (await db.kysely.selectFrom('webhook_deliveries').select('app_id').where('id', '=', first.id).executeTakeFirstOrThrow()).app_id,
    redelivery: 1, retry_count: 0, generation: 0, created_at: new Date().toISOString(),
  }).returning('id').executeTakeFirstOrThrow();
  await completeAttempts(db.kysely, [{ id: pending.id, outcome: outcome('one') }, { id: pending.id, outcome: outcome('two') }, { id: first.id, outcome: outcome('late') }], postgres);

  const rows = await db.kysely.selectFrom('webhook_deliveries').select(['id', 'status', 'status_code', 'delivered_at']).where('id', 'in', [first.id, pending.id]).orderBy('id').execute();
  assert.deepEqual(rows[0], first);
  assert.ok(rows[1]!.status === 'one' || rows[1]!.status === 'two');
  assert.equal(rows[1]!.status_code, 599);
});
