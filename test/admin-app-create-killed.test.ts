// Durability of an app's creation: the app and what the areas keep of it (app-webhooks' configuration,
// made by `onAppCreated`) are one transaction. `codehost serve` is killed with SIGKILL while apps are
// being created; the database then holds each app with its webhook configuration, or no app.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, test } from 'node:test';
import { openDatabase } from '../src/db/index.ts';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';
import { startServe, type ServeChild } from './helpers/process.ts';

const ADMIN_TOKEN = 'killed-admin-token-0123456789';
const APPS = 40;
const ROUNDS = 3;
// One fixed key for every app: no key generation, so the creates are many and quick.
const PRIVATE_KEY = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs1', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } }).privateKey;

let database: TestDatabase;
let server: ServeChild | null = null;

before(async () => {
  database = await createTestDatabase();
});
after(async () => {
  await server?.kill();
  await database.drop();
});

test('an app creation killed at any moment leaves the app with its webhook configuration, or no app', async (t) => {
  for (let round = 0; round < ROUNDS; round++) {
    server = await startServe(database, ADMIN_TOKEN);
    const current = server;
    let answered!: () => void;
    const firstAnswer = new Promise<void>((resolve) => (answered = resolve));
    const slugs = Array.from({ length: APPS }, (_, i) => `app-${round}-${i}`);
    const requests = slugs.map((slug) =>
      current.call('POST', '/apps', { slug, private_key: PRIVATE_KEY, permissions: { metadata: 'read' } }).then((r) => (answered(), r.status)).catch(() => 'cut'));
    // Once the first has answered, at a random moment among the others.
    await firstAnswer;
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 20));
    await current.kill();
    const statuses = await Promise.all(requests);

    const db = openDatabase({ databaseUrl: database.databaseUrl, sqlitePath: `${database.dataDir}/codehost.db`, poolSize: 1 });
    try {
      const apps = await db.kysely.selectFrom('apps').leftJoin('app_webhooks', 'app_webhooks.app_id', 'apps.id')
        .select(['apps.slug', 'app_webhooks.id as hook_id']).where('apps.slug', 'like', `app-${round}-%`).execute();
      assert.deepEqual(apps.filter((app) => app.hook_id === null).map((app) => app.slug), [], 'no app without its webhook configuration');
      // Every app answered 201 is there (the others may be, if the kill came after the commit).
      const created = slugs.filter((_, i) => statuses[i] === 201);
      assert.deepEqual(created.filter((slug) => !apps.some((app) => app.slug === slug)), []);
      t.diagnostic(`round ${round}: ${apps.length} of ${APPS} created before the kill (${created.length} answered)`);
    } finally {
      await db.close();
    }
  }
});
