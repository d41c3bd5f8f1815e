// GET /_admin/apps/{app_slug}/deliveries… is an operator read, not test support: served in laptop
// and in production mode alike (README "Admin API", docs/testing.md "Webhook deliveries"), where
// reset, snapshots and the journal answer 404 in production.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startServer } from '../../helpers/server.ts';

for (const mode of ['laptop', 'production'] as const) {
  test(`${mode} mode: an app's deliveries are listed for the operator`, async () => {
    const server = await startServer(mode === 'production' ? { CODEHOST_MODE: 'production' } : {});
    try {
      await server.admin('POST', '/users', { login: 'dora' });
      await server.admin('POST', '/apps', { slug: 'listed', owner: 'dora', permissions: { metadata: 'read' } });
      const listed = await server.adminRaw('GET', '/apps/listed/deliveries');
      assert.equal(listed.status, 200, listed.text);
      assert.deepEqual(listed.body, []);
      assert.equal((await server.adminRaw('GET', '/apps/nothing-here/deliveries')).status, 404);
      assert.equal((await server.adminRaw('GET', '/apps/listed/deliveries/1')).status, 404);
      // Without the admin token, nothing.
      assert.equal((await fetch(`${server.url}/_admin/apps/listed/deliveries`)).status, 401);
      // Test support, by contrast, is there in laptop mode only.
      assert.equal((await server.adminRaw('GET', '/requests')).status, mode === 'production' ? 404 : 200);
    } finally {
      await server.close();
    }
  });
}
