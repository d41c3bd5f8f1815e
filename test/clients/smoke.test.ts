import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(() => server.close());

test('health, readiness and an unknown route', async () => {
  assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
  assert.equal((await fetch(`${server.url}/readyz`)).status, 200);
  const missing = await server.api('GET', '/nope');
  assert.equal(missing.status, 404);
  assert.deepEqual(Object.keys(missing.body).sort(), ['documentation_url', 'message', 'status']);
});

test('admin creates a user', async () => {
  const user = await server.admin('POST', '/users', { login: 'alice' });
  assert.equal(user.login, 'alice');
  const again = await server.adminRaw('POST', '/users', { login: 'ALICE' });
  assert.equal(again.status, 422);
  assert.equal(again.body.errors[0].code, 'already_exists');
});
