// Durability of an app's creation: the app and what the areas keep of it (app-webhooks' configuration,
// made by its `app.created` handler) are one transaction. `codehost serve` is killed with SIGKILL while apps are
// being created; the database then holds each app with its webhook configuration, or no app.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { test } from 'node:test';
import { killAmid, killedServers } from '../../helpers/killed.ts';

const ADMIN_TOKEN = 'killed-admin-token-0123456789';
const APPS = 40;
const ROUNDS = 3;
// One fixed key for every app: no key generation, so the creates are many and quick.
const PRIVATE_KEY = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs1', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } }).privateKey;

const servers = killedServers(ADMIN_TOKEN);

test('an app creation killed at any moment leaves the app with its webhook configuration, or no app', async (t) => {
  for (let round = 0; round < ROUNDS; round++) {
    const current = await servers.start();
    const slugs = Array.from({ length: APPS }, (_, i) => `app-${round}-${i}`);
    // Once the first has answered, at a random moment (up to 20 ms) among the others.
    const statuses = await killAmid(current, slugs.map((slug) => () => current.call('POST', '/apps', { slug, private_key: PRIVATE_KEY, permissions: { metadata: 'read' } })), 20);

    await servers.inspect(async (q) => {
      const apps = await q.selectFrom('apps').leftJoin('app_webhooks', 'app_webhooks.app_id', 'apps.id')
        .select(['apps.slug', 'app_webhooks.id as hook_id']).where('apps.slug', 'like', `app-${round}-%`).execute();
      assert.deepEqual(apps.filter((app) => app.hook_id === null).map((app) => app.slug), [], 'no app without its webhook configuration');
      // Every app answered 201 is there (the others may be, if the kill came after the commit).
      const created = slugs.filter((_, i) => statuses[i] === 201);
      assert.deepEqual(created.filter((slug) => !apps.some((app) => app.slug === slug)), []);
      t.diagnostic(`round ${round}: ${apps.length} of ${APPS} created before the kill (${created.length} answered)`);
    });
  }
});
