// An event's webhook body is stored once for all the apps it is delivered to (webhook_event_payloads),
// each message keeping its own `installation` member: every app still receives exactly the bytes of
// `{ ...body, installation }` (json and form, first attempt and redelivery, and the deliveries API
// shows them); a body with an `installation` member of its own has it replaced in place; the shared
// body goes with its last message (retention, an app's deletion), never before; and the messages
// stored before the migration keep their payloads, byte for byte.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Migrator, sql } from 'kysely';
import { appJwt, type TestApp } from '../../helpers/credentials.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { Receiver, type Received } from '../../helpers/receiver.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { openDatabase, type Db } from '../../../src/db/index.ts';
import { migrateToLatest } from '../../../src/db/migrate.ts';
import { migrations } from '../../../src/db/migrations/index.ts';
import * as store from '../../../src/areas/app-webhooks/store.ts';

/** Non-ASCII, quotes, backslashes, control characters and a line separator. */
const NOTE = 'ünïcode ✓ 𝄞 "quoted" \\back\\ \u0001\u001f\t\n\u2028 end';

const count = async (db: Db, query: string): Promise<number> => Number((await sql.raw<{ n: number | string }>(query).execute(db.kysely)).rows[0]!.n);
const orphans = (db: Db) => count(db, 'select count(*) as n from webhook_event_payloads p where not exists (select 1 from webhook_messages m where m.event_payload_id = p.id)');

describe('one stored body per event', () => {
  let server: TestServer;
  let receiver: Receiver;
  let db: Db;
  const apps: Record<string, TestApp> = {};
  const installationIds: Record<string, number> = {};

  before(async () => {
    receiver = await new Receiver().start();
    server = await startServer();
    db = server.server.ctx.db;
    await server.admin('POST', '/users', { login: 'mona' });
    await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'] });
    await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
    for (const [slug, contentType] of [['one', 'json'], ['two', 'form'], ['three', 'json']] as const) {
      apps[slug] = await server.admin('POST', '/apps', {
        slug,
        permissions: { contents: 'read', metadata: 'read' },
        events: ['push'],
        webhook: { url: receiver.url(`/${slug}`), content_type: contentType, secret: `secret of ${slug}` },
      });
      installationIds[slug] = (await server.admin('POST', `/apps/${slug}/installations`, { account: 'acme' })).id;
    }
    await server.drain();
  });
  after(async () => {
    await server.close();
    await receiver.stop();
  });

  const pushes = (slug: string) => receiver.on(`/${slug}`).filter((r) => r.headers['x-vendor-event'] === 'push');
  const text = (r: Received) => (r.headers['content-type'] === 'application/x-www-form-urlencoded' ? new URLSearchParams(r.body).get('payload')! : r.body);

  test('installation events (a body with its own installation member) are delivered whole, to their app alone', async () => {
    for (const slug of ['one', 'two', 'three']) {
      const [created] = receiver.on(`/${slug}`).filter((r) => r.headers['x-vendor-event'] === 'installation');
      const json = JSON.parse(text(created!));
      assert.equal(json.action, 'created');
      assert.equal(json.installation.id, installationIds[slug]);
      assert.equal(json.installation.account.login, 'acme', 'the whole installation');
    }
    assert.equal(await orphans(db), 0);
  });

  test('a push to three apps stores its body once; each app gets the bytes of { ...body, installation }, and again on redelivery', async () => {
    const before = await count(db, 'select count(*) as n from webhook_event_payloads');
    assert.equal((await server.admin('POST', '/events', { event: 'push', repository: 'acme/widgets', sender: 'mona', payload: { ref: 'refs/heads/main', note: NOTE } })).deliveries, 3);
    await server.drain();
    assert.equal(await count(db, 'select count(*) as n from webhook_event_payloads'), before + 1);
    assert.equal(await count(db, "select count(distinct event_payload_id) as n from webhook_messages where event = 'push'"), 1);
    const [stored] = (await sql<{ body: string }>`select p.body from webhook_event_payloads p join webhook_messages m on m.event_payload_id = p.id where m.event = 'push'`.execute(db.kysely)).rows;
    assert.ok(!stored!.body.includes('"installation"'), 'the body has no installation member');

    const bodies = new Set<string>();
    for (const slug of ['one', 'two', 'three']) {
      const [received] = pushes(slug);
      const json = JSON.parse(text(received!));
      assert.equal(json.note, NOTE);
      assert.equal(json.installation.id, installationIds[slug]);
      assert.deepEqual(Object.keys(json).at(-1), 'installation', 'put last, as the spread puts a new member');
      const { installation, ...body } = json;
      bodies.add(JSON.stringify(body));
      // Exactly the bytes the body and this app's installation member make.
      assert.equal(text(received!), JSON.stringify({ ...JSON.parse(stored!.body), installation }));

      // The deliveries API shows what was sent; a redelivery sends the same bytes with the same signature.
      const jwt = await appJwt(server, apps[slug]!);
      const [delivery] = (await server.api('GET', '/app/hook/deliveries?per_page=1', { token: jwt })).body;
      const detail = await server.api('GET', `/app/hook/deliveries/${delivery.id}`, { token: jwt });
      assert.deepEqual(detail.body.request.payload, json);
      assert.equal((await server.api('POST', `/app/hook/deliveries/${delivery.id}/attempts`, { token: jwt })).status, 202);
      await server.drain();
      const [first, again] = pushes(slug);
      assert.equal(again!.headers['x-vendor-delivery'], first!.headers['x-vendor-delivery']);
      assert.ok(again!.bytes.equals(first!.bytes), 'the same bytes');
      assert.equal(again!.headers['x-hub-signature-256'], first!.headers['x-hub-signature-256']);
    }
    assert.equal(bodies.size, 1, 'the same body for every app');
  });

  test('a raw event with an installation member of its own: each app gets it replaced in place by its own', async () => {
    const payload = { installation: { id: 0, note: 'the sender\'s own' }, note: NOTE };
    assert.equal((await server.admin('POST', '/events', { event: 'push', repository: 'acme/widgets', sender: 'mona', payload })).deliveries, 3);
    await server.drain();
    for (const slug of ['one', 'two', 'three']) {
      const received = pushes(slug).at(-1)!;
      const json = JSON.parse(text(received));
      assert.equal(json.note, NOTE);
      assert.deepEqual(Object.keys(json.installation), ['id', 'node_id']);
      assert.equal(json.installation.id, installationIds[slug]);
      assert.equal(Object.keys(json)[0], 'installation', 'in place of the body\'s member');
      const jwt = await appJwt(server, apps[slug]!);
      const [delivery] = (await server.api('GET', '/app/hook/deliveries?per_page=1', { token: jwt })).body;
      assert.deepEqual((await server.api('GET', `/app/hook/deliveries/${delivery.id}`, { token: jwt })).body.request.payload, json);
    }
    assert.equal(await orphans(db), 0);
  });

  test('the shared body stays while any app\'s message holds it and goes with the last one (an app deleted: its messages by cascade)', async () => {
    assert.equal((await server.admin('POST', '/events', { event: 'push', repository: 'acme/widgets', sender: 'mona', payload: { last: true } })).deliveries, 3);
    await server.drain();
    const [shared] = (await sql<{ id: number }>`select max(event_payload_id) as id from webhook_messages where event = 'push'`.execute(db.kysely)).rows;
    const exists = async () => count(db, `select count(*) as n from webhook_event_payloads where id = ${Number(shared!.id)}`);
    await db.kysely.deleteFrom('apps').where('id', '=', apps.one!.id).execute();
    assert.equal(await exists(), 1);
    // The other apps' deliveries still show their payloads.
    const jwt = await appJwt(server, apps.two!);
    const [delivery] = (await server.api('GET', '/app/hook/deliveries?per_page=1', { token: jwt })).body;
    const detail = await server.api('GET', `/app/hook/deliveries/${delivery.id}`, { token: jwt });
    assert.equal(detail.status, 200);
    assert.equal(detail.body.request.payload.last, true);
    await db.kysely.deleteFrom('apps').where('id', 'in', [apps.two!.id, apps.three!.id]).execute();
    assert.equal(await exists(), 0);
    assert.equal(await count(db, 'select count(*) as n from webhook_messages'), 0);
    assert.equal(await count(db, 'select count(*) as n from webhook_event_payloads'), 0, 'no payload left without its messages');
  });
});

describe('messages stored before the migration', () => {
  let testDatabase: TestDatabase;
  let db: Db;

  before(async () => {
    testDatabase = await createTestDatabase();
    db = openDatabase({ databaseUrl: testDatabase.databaseUrl, sqlitePath: `${testDatabase.dataDir}/codehost.db` });
  });
  after(async () => {
    await db.close();
    await testDatabase.drop();
  });

  test('keep their payloads byte for byte, are sent and shown as they were, and their payloads go with them', async () => {
    const earlier = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < '0020'));
    const { error } = await new Migrator({ db: db.kysely, provider: { getMigrations: async () => earlier } }).migrateToLatest();
    assert.ifError(error);
    const k = db.kysely as any;
    const now = '2026-11-27T12:00:00.000Z';
    const user = await k.insertInto('users').values({ login: 'mona', login_lower: 'mona', type: 'User', created_at: now, updated_at: now }).returning('id').executeTakeFirstOrThrow();
    const app = await k.insertInto('apps').values({ slug: 'old', name: 'Old', owner_id: user.id, client_id: 'Iv1.old', client_secret_hash: 'x', public_key_pem: 'x', created_at: now, updated_at: now }).returning('id').executeTakeFirstOrThrow();
    await k.insertInto('app_webhooks').values({ app_id: app.id, url: 'http://127.0.0.1:9/hook', content_type: 'json', insecure_ssl: '0', active: 1, throttle_next_at: 0, created_at: now, updated_at: now }).execute();
    // As the old fan-out stored them: the whole payload per message, installation member and all.
    const payloads = [
      JSON.stringify({ ref: 'refs/heads/main', note: NOTE, installation: { id: 5, node_id: 'MDIz5' } }),
      JSON.stringify({ installation: { id: 6, node_id: 'MDIz6' }, note: NOTE }),
      JSON.stringify({ zen: 'ping' }),
    ];
    const deliveryIds: number[] = [];
    for (const [i, payload] of payloads.entries()) {
      const message = await k.insertInto('webhook_messages').values({ app_id: app.id, guid: `guid-${i}`, event: 'push', action: null, installation_id: null, repository_id: null, payload, created_at: now }).returning('id').executeTakeFirstOrThrow();
      const delivery = await k.insertInto('webhook_deliveries').values({ message_id: message.id, app_id: app.id, redelivery: 0, retry_count: 0, generation: 0, delivered_at: now, status: 'OK', status_code: 200, duration: 0.1, url: 'http://127.0.0.1:9/hook', request_headers: '{}', created_at: now }).returning('id').executeTakeFirstOrThrow();
      deliveryIds.push(delivery.id);
    }

    // 0020 first; later migrations follow it.
    assert.equal((await migrateToLatest(db))[0], '0020_webhook_event_payloads');
    for (const [i, id] of deliveryIds.entries()) {
      const found = await store.findDelivery(db.kysely, app.id, id, '2000-01-01T00:00:00.000Z');
      assert.equal(found!.payload, payloads[i]);
    }
    const toSend = await store.attemptsToSend(db.kysely, deliveryIds);
    assert.deepEqual(toSend.map((row) => row.payload).sort(), [...payloads].sort());

    // A body stored after them is numbered after them.
    const next = await db.kysely.transaction().execute((trx) => store.insertEventPayload(trx, '{}', now));
    const highest = await count(db, 'select max(id) as n from webhook_messages');
    assert.ok(next > highest, `${next} > ${highest}`);

    // The retention sweep takes the messages, their moved payloads and the one no message holds
    // (in batches of one: each table's batches go on until one comes back short).
    assert.equal(await store.deleteExpired(db.kysely, '2030-01-01T00:00:00.000Z', 1), 3);
    assert.equal(await count(db, 'select count(*) as n from webhook_messages'), 0);
    assert.equal(await count(db, 'select count(*) as n from webhook_event_payloads'), 0);
  });
});
