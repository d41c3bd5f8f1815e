// GET / and GET /api/v3/: the platform's root document, a map of URL templates for the routes this
// server answers (built from CODEHOST_API_URL), with pointers to the reference and the OpenAPI
// document. It is a public API route: the platform's headers, anonymous or with a token. Every URL
// it lists answers.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let token: string;

before(async () => {
  server = await startServer();
  await server.admin('POST', '/users', { login: 'rooty' });
  await server.admin('POST', '/orgs', { login: 'root-org', owners: ['rooty'] });
  await server.admin('POST', '/repos', { owner: 'root-org', name: 'tree' });
  token = (await server.admin('POST', '/tokens', { login: 'rooty', kind: 'classic', scopes: ['repo', 'notifications', 'read:org', 'read:user'] })).token;
});
after(() => server.close());

test('GET / and GET /api/v3/ answer the root document with the API headers', async () => {
  const root = await fetch(`${server.url}/`);
  assert.equal(root.status, 200);
  const body = (await root.json()) as Record<string, string>;
  for (const path of ['/api/v3', '/api/v3/']) {
    const response = await fetch(`${server.url}${path}`);
    assert.equal(response.status, 200, path);
    assert.deepEqual(await response.json(), body);
  }
  const api = server.server.ctx.config.apiUrl;
  assert.equal(body.notifications_url, `${api}/notifications`);
  assert.equal(body.documentation_url, `${api.replace(/\/api\/v3$/, '')}/docs`);
  assert.equal(body.openapi_url, `${api.replace(/\/api\/v3$/, '')}/openapi.json`);
  for (const [key, value] of Object.entries(body)) {
    assert.match(key, /_url$/);
    assert.ok(value.startsWith(api.replace(/\/api\/v3$/, '')), `${key}: ${value}`);
  }

  // A public API route: request id, media type, version and rate limit headers, ETag.
  assert.ok(root.headers.get('x-vendor-request-id'));
  assert.equal(root.headers.get('x-vendor-api-version-selected'), '2022-11-28');
  assert.equal(root.headers.get('x-ratelimit-limit'), '60');
  assert.ok(root.headers.get('etag'));
  const withToken = await server.api('GET', '/', { token });
  assert.equal(withToken.status, 200);
  assert.equal(withToken.headers.get('x-ratelimit-limit'), '5000');
  assert.match(withToken.headers.get('x-oauth-scopes') ?? '', /notifications/);
  const badVersion = await server.api('GET', '/', { headers: { 'x-vendor-api-version': '1999-01-01' } });
  assert.equal(badVersion.status, 400);
  const conditional = await fetch(`${server.url}/`, { headers: { 'if-none-match': root.headers.get('etag')! } });
  assert.equal(conditional.status, 304);
});

test('every URL in the root document answers (templates filled in)', async () => {
  const body = (await server.api('GET', '/')).body as Record<string, string>;
  const values: Record<string, string> = { owner: 'root-org', repo: 'tree', org: 'root-org', user: 'rooty', username: 'rooty' };
  assert.ok(Object.keys(body).length >= 3);
  for (const [key, template] of Object.entries(body)) {
    const url = template
      .replace(/\{\?[^}]*\}/g, '')
      .replace(/\{\/[^}]*\}/g, '')
      .replace(/\{(\w+)\}/g, (_, name: string) => {
        assert.ok(values[name], `${key}: no value for {${name}}`);
        return values[name]!;
      })
      .replace(/^https?:\/\/[^/]+/, server.url);
    const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    await response.arrayBuffer();
    assert.equal(response.status, 200, `${key}: ${url}`);
  }
});

test('the root document follows CODEHOST_API_URL', async () => {
  const other = await startServer({ CODEHOST_API_URL: 'https://code.example.com/api/v3', CODEHOST_WEB_URL: 'https://code.example.com' });
  try {
    const body = (await other.api('GET', '/')).body as Record<string, string>;
    assert.equal(body.notifications_url, 'https://code.example.com/api/v3/notifications');
    assert.equal(body.documentation_url, 'https://code.example.com/docs');
    assert.equal(body.openapi_url, 'https://code.example.com/openapi.json');
  } finally {
    await other.close();
  }
});
