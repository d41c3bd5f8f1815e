// Hostile input of issue 11, one test per class of 500 the fuzzer (test/fuzz.test.ts) found: each
// request must get the platform's 4xx, never a 5xx, on both databases.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { appJwt, classicToken, createApp, fineGrainedToken, type TestApp } from './helpers/credentials.ts';
import { startServer, type TestServer } from './helpers/server.ts';

let server: TestServer;

before(async () => {
  server = await startServer();
  for (const login of ['mona', 'hubot']) await server.admin('POST', '/users', { login });
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'], members: ['hubot'] });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
});
after(() => server.close());

/** Asserts a 4xx (and, when given, exactly that status). */
function assert4xx(response: { status: number; text: string }, status?: number, label = ''): void {
  assert.ok(response.status >= 400 && response.status < 500, `${label} answered ${response.status}: ${response.text}`);
  if (status !== undefined) assert.equal(response.status, status, `${label}: ${response.text}`);
}

describe('scope and permission names that are Object.prototype members', () => {
  const names = ['__proto__', 'toString', 'constructor', 'hasOwnProperty'];

  test('a classic token with such a scope is read like any unknown scope', async () => {
    for (const name of names) {
      const token = await classicToken(server, 'mona', ['read:user', name]);
      const user = await server.api('GET', '/user', { token });
      assert.equal(user.status, 200, `${name}: ${user.text}`);
      // An endpoint that needs a scope the token lacks refuses it with a 403, not a 500.
      const configurations = await server.api('GET', '/orgs/acme/code-security/configurations', { token });
      assert4xx(configurations, 403, name);
    }
  });

  test('a fine-grained token or an app with such a permission name', async () => {
    for (const name of names) {
      const token = await fineGrainedToken(server, 'mona', 'acme', JSON.parse(`{"metadata":"read","${name}":"write"}`));
      assert.equal((await server.api('GET', '/repos/acme/widgets', { token })).status, 200, name);
      assert4xx(await server.api('GET', '/orgs/acme/code-security/configurations', { token }), 403, name);
    }
    const app: TestApp = await createApp(server, 'proto-app', JSON.parse('{"metadata":"read","toString":"read","__proto__":"write"}'));
    const installation = await server.admin('POST', `/apps/${app.slug}/installations`, { account: 'acme', repositories: 'all' });
    const jwt = await appJwt(server, app);
    for (const permissions of [{}, JSON.parse('{"toString":"read"}'), JSON.parse('{"constructor":"read"}'), JSON.parse('{"__proto__":"read"}')]) {
      const minted = await server.api('POST', `/app/installations/${installation.id}/access_tokens`, { authorization: `Bearer ${jwt}`, body: { permissions } });
      assert.ok(minted.status === 201 || minted.status === 422, `${JSON.stringify(permissions)}: ${minted.status} ${minted.text}`);
      if (minted.status === 201) {
        assert.equal(Object.hasOwn(minted.body.permissions, 'constructor'), false);
        const read = await server.api('GET', '/repos/acme/widgets', { token: minted.body.token });
        assert.equal(read.status, 200, read.text);
      }
    }
  });
});
