// The platform's conventions that every route shares: versions, credentials, rate limits, common
// headers, the /api/v3 alias, errors, the API document, health and metrics, the admin token.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { notModified } from '../helpers/conditional.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let app: { client_id: string; client_secret: string };
let oauthToken: string;
let classicToken: string;

const basicOf = (a: { client_id: string; client_secret: string }) => `Basic ${Buffer.from(`${a.client_id}:${a.client_secret}`).toString('base64')}`;
const check = (options: { headers?: Record<string, string>; token?: string; authorization?: string } = {}) =>
  server.api('POST', `/applications/${app.client_id}/token`, { authorization: basicOf(app), body: { access_token: oauthToken }, ...options });

before(async () => {
  server = await startServer();
  await server.admin('POST', '/users', { login: 'mona' });
  app = await server.admin('POST', '/apps', { slug: 'conventions' });
  oauthToken = (await server.admin('POST', '/apps/conventions/authorizations', { login: 'mona', scopes: ['repo'] })).token;
  classicToken = (await server.admin('POST', '/tokens', { login: 'mona', kind: 'classic', scopes: ['repo', 'read:org', 'write:org'] })).token;
});
after(() => server.close());

describe('versions', () => {
  test('no version header selects 2022-11-28; the other supported version is accepted', async () => {
    const none = await check();
    assert.equal(none.status, 200);
    assert.equal(none.headers.get('x-vendor-api-version-selected'), '2022-11-28');
    const newer = await check({ headers: { 'x-vendor-api-version': '2026-03-10' } });
    assert.equal(newer.status, 200);
    assert.equal(newer.headers.get('x-vendor-api-version-selected'), '2026-03-10');
  });

  test('an unsupported version is a 400 naming the supported ones', async () => {
    const response = await check({ headers: { 'x-vendor-api-version': '2021-01-01' } });
    assert.equal(response.status, 400);
    assert.match(response.body.message, /2022-11-28, 2026-03-10/);
    assert.equal(response.body.status, '400');
    assert.ok(response.body.documentation_url);
  });
});

describe('common headers and the /api/v3 alias', () => {
  test('every response carries the request id, media type and rate-limit headers', async () => {
    const response = await check();
    assert.match(response.headers.get('x-vendor-request-id') ?? '', /^[0-9a-f-]{36}$/);
    assert.equal(response.headers.get('x-vendor-media-type'), 'vendor.v3; format=json');
    for (const name of ['limit', 'remaining', 'used', 'reset', 'resource']) assert.ok(response.headers.get(`x-ratelimit-${name}`), name);
    const missing = await server.api('GET', '/does-not-exist');
    assert.ok(missing.headers.get('x-vendor-request-id'));
  });

  test('the API answers the same at / and under /api/v3', async () => {
    const root = await fetch(`${server.url}/applications/${app.client_id}/token`, {
      method: 'POST',
      headers: { authorization: basicOf(app), 'content-type': 'application/json' },
      body: JSON.stringify({ access_token: oauthToken }),
    });
    const aliased = await check();
    assert.equal(root.status, 200);
    assert.deepEqual(await root.json(), aliased.body);
  });

  test('token requests carry X-OAuth-Scopes and the accepted scopes and permissions', async () => {
    const response = await server.api('POST', '/app/installations/1/access_tokens', { token: classicToken, body: {} });
    assert.equal(response.status, 403);
    assert.equal(response.headers.get('x-oauth-scopes'), 'repo, read:org, write:org');
    // A JWT endpoint takes no OAuth scope at all: no X-Accepted-OAuth-Scopes (not an empty one).
    assert.equal(response.headers.get('x-accepted-oauth-scopes'), null);
    assert.equal(response.headers.get('x-accepted-vendor-permissions'), '');
  });
});

describe('credentials', () => {
  test('missing, malformed, unknown, revoked and expired credentials', async () => {
    const endpoint = '/app/installations/1/access_tokens';
    assert.equal((await server.api('POST', endpoint, { body: {} })).body.message, 'Requires authentication');
    const cases: [string, string][] = [
      ['malformed header', 'Bearer'],
      ['unknown scheme', 'Digest abc'],
      ['unknown token', 'Bearer chp_000000000000000000000000000000000000'],
      ['bad checksum', `Bearer ${classicToken.slice(0, -1)}${classicToken.endsWith('A') ? 'B' : 'A'}`],
      ['basic without colon', `Basic ${Buffer.from('nocolon').toString('base64')}`],
    ];
    for (const [label, authorization] of cases) {
      const response = await server.api('POST', endpoint, { authorization, body: {} });
      assert.equal(response.status, 401, label);
      assert.equal(response.body.message, 'Bad credentials', label);
    }
    const revoked = await server.admin('POST', '/apps/conventions/authorizations', { login: 'mona' });
    await server.api('DELETE', `/applications/${app.client_id}/token`, { authorization: basicOf(app), body: { access_token: revoked.token } });
    assert.equal((await server.api('POST', endpoint, { token: revoked.token, body: {} })).status, 401);
    const clock = await server.admin('GET', '/clock');
    const expiring = await server.admin('POST', '/tokens', { login: 'mona', kind: 'classic', expires_at: new Date(Date.parse(clock.now) + 60_000).toISOString() });
    assert.equal((await server.api('POST', endpoint, { token: expiring.token, body: {} })).status, 403);
    await server.advance(120);
    assert.equal((await server.api('POST', endpoint, { token: expiring.token, body: {} })).status, 401);
  });

  test('a token in the `token` scheme works like Bearer', async () => {
    const response = await server.api('POST', '/app/installations/1/access_tokens', { authorization: `token ${classicToken}`, body: {} });
    assert.equal(response.status, 403);
    assert.equal(response.body.message, 'Resource not accessible by personal access token');
  });
});

describe('rate limits', () => {
  test('the limit reaches 0, answers 403, and resets an hour later', async () => {
    const limited = await startServer({ CODEHOST_RATE_LIMIT: '3' });
    try {
      await limited.admin('POST', '/users', { login: 'rita' });
      const created = await limited.admin('POST', '/apps', { slug: 'limited' });
      const { token } = await limited.admin('POST', '/apps/limited/authorizations', { login: 'rita' });
      const call = () => limited.api('POST', `/applications/${created.client_id}/token`, { authorization: basicOf(created), body: { access_token: token } });
      const remaining: string[] = [];
      for (let i = 0; i < 3; i++) {
        const response = await call();
        assert.equal(response.status, 200);
        remaining.push(response.headers.get('x-ratelimit-remaining')!);
      }
      assert.deepEqual(remaining, ['2', '1', '0']);
      const over = await call();
      assert.equal(over.status, 403);
      assert.equal(over.headers.get('x-ratelimit-remaining'), '0');
      assert.match(over.body.message, /API rate limit exceeded/);
      const reset = Number(over.headers.get('x-ratelimit-reset'));
      const now = Date.parse((await limited.admin('GET', '/clock')).now) / 1000;
      assert.ok(reset > now && reset <= now + 3600);
      await limited.advance(3601);
      const after = await call();
      assert.equal(after.status, 200);
      assert.equal(after.headers.get('x-ratelimit-remaining'), '2');
    } finally {
      await limited.close();
    }
  });

  test('anonymous requests are limited per IP', async () => {
    const limited = await startServer({ CODEHOST_RATE_LIMIT_ANONYMOUS: '2' });
    try {
      const call = () => limited.api('POST', '/app/installations/1/access_tokens', { body: {} });
      assert.equal((await call()).status, 401);
      assert.equal((await call()).status, 401);
      const over = await call();
      assert.equal(over.status, 403);
      assert.match(over.body.message, /API rate limit exceeded for/);
    } finally {
      await limited.close();
    }
  });
});

describe('conditional requests and pagination', () => {
  test('a repeated GET with If-None-Match is a 304 with no body that does not count against the rate limit', async () => {
    await server.admin('POST', '/orgs', { login: 'etag-org', owners: ['mona'] });
    await server.admin('POST', '/repos', { owner: 'etag-org', name: 'public-repo' });
    const first = await server.api('GET', '/repos/etag-org/public-repo/issue-types', { token: classicToken });
    assert.equal(first.status, 200);
    const etag = first.headers.get('etag')!;
    assert.match(etag, /^W\/"[0-9a-f]{40}"$/);
    const remaining = Number(first.headers.get('x-ratelimit-remaining'));
    const second = await server.api('GET', '/repos/etag-org/public-repo/issue-types', { token: classicToken, headers: { 'if-none-match': etag } });
    notModified(second, 'If-None-Match');
    assert.equal(Number(second.headers.get('x-ratelimit-remaining')), remaining - 1 + 1);
    const third = await server.api('GET', '/repos/etag-org/public-repo/issue-types', { token: classicToken });
    assert.equal(Number(third.headers.get('x-ratelimit-remaining')), remaining - 1, 'the 304 was not counted');
    const changed = await server.api('GET', '/repos/etag-org/public-repo/issue-types', { token: classicToken, headers: { 'if-none-match': 'W/"other"' } });
    assert.equal(changed.status, 200);
  });

  test('paginated lists carry Link with absolute URLs that keep the other query parameters; bad per_page is a 422', async () => {
    for (const name of ['r1', 'r2', 'r3']) await server.admin('POST', '/repos', { owner: 'etag-org', name });
    const org = await server.api('GET', '/orgs/etag-org/updater/repository-access', { token: classicToken });
    assert.equal(org.status, 200, org.text);
    const ids = (await Promise.all(['r1', 'r2', 'r3'].map((name) => server.admin('GET', `/repos/etag-org/${name}`)))).map((r: { id: number }) => r.id);
    assert.equal((await server.api('PATCH', '/orgs/etag-org/updater/repository-access', { token: classicToken, body: { repository_ids_to_add: ids } })).status, 204);
    const page = await server.api('GET', '/orgs/etag-org/updater/repository-access?per_page=1&page=2', { token: classicToken });
    assert.equal(page.status, 200);
    const link = page.headers.get('link')!;
    const base = `${server.server.ctx.config.apiUrl}/orgs/etag-org/updater/repository-access`;
    assert.ok(link.includes(`<${base}?per_page=1&page=3>; rel="next"`), link);
    assert.ok(link.includes(`<${base}?per_page=1&page=1>; rel="prev"`), link);
    assert.ok(link.includes(`<${base}?per_page=1&page=3>; rel="last"`), link);
    assert.ok(link.includes(`<${base}?per_page=1&page=1>; rel="first"`), link);
    for (const bad of ['0', 'abc', '-1']) {
      const response = await server.api('GET', `/orgs/etag-org/updater/repository-access?per_page=${bad}`, { token: classicToken });
      assert.equal(response.status, 422, bad);
      assert.equal(response.body.errors[0].field, 'per_page');
    }
    const capped = await server.api('GET', '/orgs/etag-org/updater/repository-access?per_page=1000', { token: classicToken });
    assert.equal(capped.status, 200);
  });
});

describe('the API document, health, metrics and the admin token', () => {
  test('/openapi.json documents the public operations and hides the admin API; /docs answers', async () => {
    const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as any;
    assert.ok(document.openapi);
    assert.ok(document.paths['/applications/{client_id}/token'].post.responses['200']);
    assert.ok(document.paths['/app/installations/{installation_id}/access_tokens'].post);
    assert.ok(!Object.keys(document.paths).some((path) => path.startsWith('/_admin')));
    assert.equal((await fetch(`${server.url}/docs`, { redirect: 'follow' })).status, 200);
  });

  test('/metrics exposes request counts by route and status, and the queue depth', async () => {
    await check();
    const text = await (await fetch(`${server.url}/metrics`)).text();
    assert.match(text, /codehost_http_requests_total\{method="POST",route="\/applications\/:client_id\/token",status_code="200"\} \d+/);
    assert.match(text, /codehost_jobs_pending \d+/);
  });

  test('the admin API needs the admin token', async () => {
    assert.equal((await fetch(`${server.url}/_admin/users`, { method: 'POST', body: '{}' })).status, 401);
    const wrong = await fetch(`${server.url}/_admin/users`, { method: 'POST', headers: { authorization: 'Bearer nope' }, body: '{"login":"x"}' });
    assert.equal(wrong.status, 401);
    assert.equal(((await wrong.json()) as { message: string }).message, 'Bad credentials');
    const user = await server.adminRaw('POST', '/users', { login: 'not a login' });
    assert.equal(user.status, 422);
    const unknownRef = await server.adminRaw('POST', '/orgs', { login: 'org1', owners: ['ghost'] });
    assert.equal(unknownRef.status, 404);
  });
});
