// A user suspended on the operator surface (spec/admin-api.md "Lifecycle"): every credential of
// theirs (classic, fine-grained, OAuth, app user tokens) stops on its next request with the
// platform's answer for a suspended account, and works again once unsuspended.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { classicToken, createApp, everyUserToken } from '../../helpers/credentials.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

let server: TestServer;
let tokens: Record<string, string>;

before(async () => {
  server = await startServer();
  await server.admin('POST', '/users', { login: 'alice' });
  await server.admin('POST', '/users', { login: 'bob' });
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['bob'] });
  const app = await createApp(server, 'helper', { metadata: 'read' });
  tokens = await everyUserToken(server, app, 'alice');
});
after(() => server.close());

describe('suspending a user', () => {
  test('every credential of theirs stops on its next request, and works again once unsuspended', async () => {
    for (const token of Object.values(tokens)) assert.equal((await server.api('GET', '/user', { token })).status, 200);
    const bob = await classicToken(server, 'bob', ['repo']);

    const suspended = await server.adminRaw('PUT', '/users/alice/suspended', { reason: 'left the company' });
    assert.equal(suspended.status, 204, suspended.text);
    for (const [kind, token] of Object.entries(tokens)) {
      const refused = await server.api('GET', '/user', { token });
      assert.equal(refused.status, 403, `${kind}: ${refused.text}`);
      assert.equal(refused.body.message, 'Sorry. Your account was suspended.');
      assert.equal(typeof refused.body.documentation_url, 'string');
    }
    // Someone else's credentials are not touched.
    assert.equal((await server.api('GET', '/user', { token: bob })).status, 200);
    // Suspending again changes nothing.
    assert.equal((await server.adminRaw('PUT', '/users/alice/suspended', {})).status, 204);

    assert.equal((await server.adminRaw('DELETE', '/users/alice/suspended')).status, 204);
    for (const token of Object.values(tokens)) assert.equal((await server.api('GET', '/user', { token })).status, 200);
  });

  test('the operator sees who is suspended, since when and why', async () => {
    const bob = async () => (await server.admin('GET', '/users?per_page=100')).find((user: { login: string }) => user.login === 'bob');
    await server.admin('PUT', '/users/bob/suspended', { reason: 'audit' });
    assert.equal((await bob()).suspended_reason, 'audit');
    assert.equal(typeof (await bob()).suspended_at, 'string');
    await server.admin('DELETE', '/users/bob/suspended');
    assert.equal((await bob()).suspended_at, null);
    assert.equal((await bob()).suspended_reason, null);
  });

  test('unknown users and organizations are 404; a bad reason is 422', async () => {
    assert.equal((await server.adminRaw('PUT', '/users/nobody/suspended', {})).status, 404);
    assert.equal((await server.adminRaw('DELETE', '/users/nobody/suspended')).status, 404);
    assert.equal((await server.adminRaw('PUT', '/users/acme/suspended', {})).status, 404);
    const bad = await server.adminRaw('PUT', '/users/alice/suspended', { reason: 42 });
    assert.equal(bad.status, 422, bad.text);
    const long = await server.adminRaw('PUT', '/users/alice/suspended', { reason: 'x'.repeat(1001) });
    assert.equal(long.status, 422, long.text);
  });
});
