// CORS as the platform answers it: a browser app on any origin may call the API (no credentials
// mode), its preflights are answered 204 with the methods and headers it may send, and the
// platform's response headers are readable by its scripts. CODEHOST_CORS_ORIGINS narrows the
// origins. The operator surface takes no part.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { ADMIN_TOKEN, startServer, type TestServer } from '../helpers/server.ts';

const ORIGIN = 'http://app.example.test:8080';

async function preflight(url: string, origin: string, method = 'GET', headers = 'authorization, x-vendor-api-version, if-none-match'): Promise<Response> {
  return fetch(url, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
  });
}

describe('CORS with the default origins (*)', () => {
  let server: TestServer;
  let token: string;
  before(async () => {
    server = await startServer();
    await server.admin('POST', '/users', { login: 'corsy' });
    token = (await server.admin('POST', '/tokens', { login: 'corsy', kind: 'classic', scopes: ['notifications', 'read:user'] })).token;
  });
  after(() => server.close());

  test('a preflight answers 204 with the methods, headers and max age a browser needs', async () => {
    for (const path of ['/api/v3/notifications', '/notifications', '/api/v3/notifications/threads/1', '/api/v3/user/migrations']) {
      const response = await preflight(`${server.url}${path}`, ORIGIN, path.endsWith('threads/1') ? 'PATCH' : 'GET');
      assert.equal(response.status, 204, path);
      assert.equal(await response.text(), '');
      assert.equal(response.headers.get('access-control-allow-origin'), '*');
      assert.equal(response.headers.get('access-control-allow-credentials'), null, 'no credentials mode');
      const methods = response.headers.get('access-control-allow-methods') ?? '';
      for (const method of ['GET', 'POST', 'PATCH', 'PUT', 'DELETE']) assert.match(methods, new RegExp(`\\b${method}\\b`));
      const allowed = (response.headers.get('access-control-allow-headers') ?? '').toLowerCase();
      for (const header of ['authorization', 'content-type', 'if-none-match', 'if-modified-since', 'x-vendor-api-version']) {
        assert.ok(allowed.split(/,\s*/).includes(header), `${header} in ${allowed}`);
      }
      assert.ok(Number(response.headers.get('access-control-max-age')) > 0);
    }
  });

  test('every API answer allows any origin and exposes the platform headers: 200, 304, 401, 404', async () => {
    const ok = await server.api('GET', '/notifications', { token, headers: { origin: ORIGIN } });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get('access-control-allow-origin'), '*');
    const exposed = (ok.headers.get('access-control-expose-headers') ?? '').split(/,\s*/);
    for (const header of [
      'ETag', 'Link', 'Location', 'Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Used', 'X-RateLimit-Reset',
      'X-RateLimit-Resource', 'X-OAuth-Scopes', 'X-Accepted-OAuth-Scopes', 'X-Poll-Interval', 'X-Vendor-Request-Id', 'X-Vendor-Media-Type',
      'X-Vendor-Api-Version-Selected', 'X-Accepted-Vendor-Permissions',
    ]) assert.ok(exposed.includes(header), `${header} exposed`);
    const notModified = await server.api('GET', '/notifications', { token, headers: { origin: ORIGIN, 'if-none-match': ok.headers.get('etag')! } });
    assert.equal(notModified.status, 304);
    assert.equal(notModified.headers.get('access-control-allow-origin'), '*');
    for (const response of [
      await server.api('GET', '/notifications', { token: 'chp_not_a_token', headers: { origin: ORIGIN } }),
      await server.api('GET', '/no/such/route', { headers: { origin: ORIGIN } }),
      await fetch(`${server.url}/openapi.json`, { headers: { origin: ORIGIN } }),
    ]) {
      assert.equal(response.headers.get('access-control-allow-origin'), '*', String(response.status));
      assert.ok(response.headers.get('access-control-expose-headers'));
    }
  });

  test('the operator surface answers no CORS', async () => {
    const response = await preflight(`${server.url}/_admin/users`, ORIGIN, 'POST', 'authorization, content-type');
    assert.notEqual(response.status, 204);
    assert.equal(response.headers.get('access-control-allow-origin'), null);
    const direct = await server.adminRaw('GET', '/users');
    assert.equal(direct.status, 200);
    assert.equal(direct.headers.get('access-control-allow-origin'), null);
  });

  test('judged on the routed path: a percent-encoded or /api/v3-prefixed /_admin answers no CORS either', async () => {
    for (const path of ['/%5Fadmin/users', '/%5fadmin/users', '/api/v3/_admin/users', '/api/v3/%5Fadmin/users', '/%5Fadmin/no-such-route', '/%5F%61dmin']) {
      const response = await preflight(`${server.url}${path}`, ORIGIN, 'POST', 'authorization, content-type');
      assert.notEqual(response.status, 204, path);
      assert.equal(response.headers.get('access-control-allow-origin'), null, path);
      const direct = await fetch(`${server.url}${path}`, { headers: { origin: ORIGIN, authorization: `Bearer ${ADMIN_TOKEN}` } });
      assert.equal(direct.headers.get('access-control-allow-origin'), null, path);
      assert.equal(direct.headers.get('access-control-expose-headers'), null, path);
    }
  });
});

describe('CODEHOST_CORS_ORIGINS narrows the origins', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ CODEHOST_CORS_ORIGINS: `${ORIGIN}, https://other.example.test` });
  });
  after(() => server.close());

  test('a listed origin is echoed with Vary: Origin; another gets no Access-Control-Allow-Origin', async () => {
    const allowed = await preflight(`${server.url}/api/v3/notifications`, ORIGIN);
    assert.equal(allowed.status, 204);
    assert.equal(allowed.headers.get('access-control-allow-origin'), ORIGIN);
    assert.match(allowed.headers.get('vary') ?? '', /Origin/);
    const answer = await server.api('GET', '/', { headers: { origin: 'https://other.example.test' } });
    assert.equal(answer.headers.get('access-control-allow-origin'), 'https://other.example.test');
    assert.match(answer.headers.get('vary') ?? '', /Origin/);
    const refused = await server.api('GET', '/', { headers: { origin: 'https://evil.example.test' } });
    assert.equal(refused.status, 200);
    assert.equal(refused.headers.get('access-control-allow-origin'), null);
    assert.equal((await preflight(`${server.url}/api/v3/`, 'https://evil.example.test')).headers.get('access-control-allow-origin'), null);
  });

  test('the setting is checked at start', () => {
    assert.deepEqual(loadConfig({ CODEHOST_CORS_ORIGINS: 'https://A.example.com,http://127.0.0.1:8080' }).corsOrigins, ['https://a.example.com', 'http://127.0.0.1:8080']);
    assert.equal(loadConfig({}).corsOrigins, '*');
    for (const bad of ['app.example.com', 'https://app.example.com/path', 'ftp://x.example.com', ',']) {
      assert.throws(() => loadConfig({ CODEHOST_CORS_ORIGINS: bad }), /CODEHOST_CORS_ORIGINS/, bad);
    }
  });
});
