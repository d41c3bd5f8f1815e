// The request journal (spec/admin-api.md "Test support"): every public and admin request with its
// operation, credential, status, headers and bodies; filters, count, clearing; warnings; the bound;
// and no token, secret or key the test created ever stored whole.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { appJwt } from '../helpers/credentials.ts';
import { ADMIN_TOKEN, startServer, type TestServer } from '../helpers/server.ts';

describe('the request journal', () => {
  let server: TestServer;
  const secrets: string[] = [ADMIN_TOKEN];
  let classic: string;
  let app: { slug: string; client_id: string; client_secret: string; private_key: string; id: number };

  before(async () => {
    server = await startServer({ CODEHOST_TEST_MODE: '1', CODEHOST_JOURNAL_ENTRIES: '200' });
    await server.admin('POST', '/users', { login: 'mona' });
    await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'] });
    await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets', visibility: 'private' });
    classic = (await server.admin('POST', '/tokens', { login: 'mona', kind: 'classic', scopes: ['repo', 'read:org'] })).token;
    app = await server.admin('POST', '/apps', { slug: 'journal-app', permissions: { issues: 'write' }, webhook: { url: 'http://127.0.0.1:9/hook', secret: 'whsec-journal-0123456789' } });
    secrets.push(classic, app.client_secret, app.private_key, 'whsec-journal-0123456789');
    await server.admin('POST', '/apps/journal-app/installations', { account: 'acme', repositories: 'all' });
  });
  after(() => server.close());

  test('each request: operation, credential, status, duration, headers and bodies; newest first; admin calls too', async () => {
    await server.admin('DELETE', '/requests');
    const response = await server.api('GET', '/repos/acme/widgets', { token: classic, headers: { 'x-vendor-api-version': '2022-11-28' } });
    assert.equal(response.status, 200);
    await server.api('GET', '/repos/acme/nothing', { token: classic });
    const entries = await server.admin('GET', '/requests');
    assert.equal(entries.length, 2);
    const [missing, found] = entries;
    assert.equal(found.method, 'GET');
    assert.equal(found.path, '/repos/acme/widgets');
    assert.equal(found.operation, 'repos/get-repository');
    assert.deepEqual(found.credential, { kind: 'classic', login: 'mona', app: null, installation: null, token_last_eight: classic.slice(-8) });
    assert.equal(found.status, 200);
    assert.equal(typeof found.duration_ms, 'number');
    assert.equal(found.response.body.full_name, 'acme/widgets');
    assert.equal(found.response.headers['x-vendor-request-id'], response.headers.get('x-vendor-request-id'));
    assert.equal(found.request.headers.authorization, `Bearer [masked]…${classic.slice(-4)}`);
    assert.deepEqual(found.warnings, []);
    assert.equal(missing.status, 404);
    assert.ok(missing.id > found.id);

    await server.admin('POST', '/users', { login: 'hubot' });
    const [adminEntry] = await server.admin('GET', '/requests?path=/_admin/*');
    assert.equal(adminEntry.path, '/_admin/users');
    assert.equal(adminEntry.credential.kind, 'admin');
    assert.equal(adminEntry.status, 201);
    assert.deepEqual(adminEntry.request.body, { login: 'hubot' });
    assert.equal(adminEntry.operation, 'admin/post-users');
  });

  test('filters and count: method, path glob, operation, login, app, status and status class, since', async () => {
    const jwt = await appJwt(server, app);
    await server.admin('DELETE', '/requests');
    await server.api('GET', '/repos/acme/widgets', { token: classic });
    await server.api('GET', '/repos/acme/widgets');
    await server.api('GET', '/users/mona');
    const installations = await server.api('GET', '/app/installations', { token: jwt });
    assert.equal(installations.status, 200, installations.text);
    const count = async (filter: object) => (await server.admin('POST', '/requests/count', filter)).count;
    assert.equal(await count({}), 4);
    assert.equal(await count({ path: '/repos/*' }), 2);
    assert.equal(await count({ path: '/api/v3/repos/acme/widgets' }), 2);
    assert.equal(await count({ operation: 'repos/get-repository' }), 2);
    assert.equal(await count({ login: 'mona' }), 1);
    assert.equal(await count({ app: 'journal-app' }), 1);
    assert.equal(await count({ status: '404' }), 1, 'the anonymous read of a private repository');
    assert.equal(await count({ status: '2xx' }), 3);
    assert.equal(await count({ method: 'get' }), 4);
    const [newest] = await server.admin('GET', '/requests');
    assert.equal(await count({ since: String(newest.id - 1) }), 1);
    assert.equal(await count({ since: '2000-01-01T00:00:00Z' }), 4);
    assert.equal((await server.admin('GET', '/requests?per_page=1&page=2')).length, 1);
    for (const [method, path, body] of [
      ['GET', '/requests?status=6xx'], ['GET', '/requests?since=yesterday'], ['GET', '/requests?per_page=0'],
      ['POST', '/requests/count', { nonsense: 1 }], ['POST', '/requests/count', { status: 'ok' }],
    ] as const) {
      const response = await server.adminRaw(method, path, body);
      assert.ok(response.status === 422 || response.status === 400, `${method} ${path}: ${response.status}`);
    }
    assert.equal((await server.adminRaw('DELETE', '/requests')).status, 204);
    assert.equal(await count({}), 0);
  });

  test('warnings: unknown query parameters and body fields, a missing X-Vendor-Api-Version, a per_page over the cap', async () => {
    await server.admin('DELETE', '/requests');
    const fetchRaw = (path: string, init: RequestInit = {}) =>
      fetch(`${server.apiUrl}${path}`, { ...init, headers: { authorization: `Bearer ${classic}`, ...(init.headers as Record<string, string>) } });
    await fetchRaw('/orgs/acme/repos?per_page=500&colour=blue');
    await fetchRaw('/user', { headers: { 'x-vendor-api-version': '2022-11-28' } });
    const [clean, noisy] = await server.admin('GET', '/requests');
    assert.deepEqual(clean.warnings, []);
    assert.deepEqual(noisy.warnings.map((w: { code: string }) => w.code).sort(), ['missing_api_version', 'per_page_clamped', 'unknown_query_parameter']);
    assert.match(noisy.warnings.find((w: { code: string }) => w.code === 'unknown_query_parameter').message, /colour/);
    // A public route ignores a body field it does not know, as the platform does: a warning says so.
    await fetchRaw('/repos/acme/widgets/notifications', { method: 'PUT', headers: { 'x-vendor-api-version': '2022-11-28', 'content-type': 'application/json' }, body: JSON.stringify({ read: true, colour: 'blue' }) });
    const [ignored] = await server.admin('GET', '/requests');
    assert.equal(ignored.status, 205, 'accepted');
    assert.deepEqual(ignored.warnings.map((w: { code: string }) => w.code), ['unknown_body_field']);
    assert.match(ignored.warnings[0].message, /colour/);
    // An operator route refuses it instead (issue 37: a 422 naming the field), so nothing was ignored to warn of.
    await server.adminRaw('POST', '/users', { login: 'octo', shoe_size: 9 });
    const [admin] = await server.admin('GET', '/requests');
    assert.equal(admin.status, 422, 'refused');
    assert.deepEqual(admin.warnings, []);
  });

  test('no token, secret or key is ever stored whole', async () => {
    const more = await server.admin('POST', '/tokens', { login: 'mona', kind: 'fine_grained', resource_owner: 'acme', repositories: 'all', permissions: { issues: 'read' } });
    secrets.push(more.token);
    const jwt = await appJwt(server, app);
    const installation = (await server.api('GET', '/app/installations', { token: jwt })).body[0];
    const minted = await server.api('POST', `/app/installations/${installation.id}/access_tokens`, { token: jwt });
    assert.equal(minted.status, 201, minted.text);
    secrets.push(minted.body.token, jwt);
    const basic = `Basic ${Buffer.from(`${app.client_id}:${app.client_secret}`).toString('base64')}`;
    await server.api('POST', `/applications/${app.client_id}/token`, { authorization: basic, body: { access_token: classic } });
    secrets.push(basic.slice(6));
    await server.api('GET', `/user?access_token=${classic}`);
    const journal = JSON.stringify(await server.admin('GET', '/requests?per_page=1000'));
    for (const secret of secrets) {
      for (const line of secret.split('\n').filter((part) => part.length > 8 && !part.startsWith('-----'))) {
        assert.ok(!journal.includes(line), `a secret is in the journal: ${line.slice(0, 12)}…`);
      }
    }
    assert.ok(!journal.includes('PRIVATE KEY-----\n'));
  });

  test('bounded: the newest CODEHOST_JOURNAL_ENTRIES entries, bodies cut at 16 KB', async () => {
    await server.admin('DELETE', '/requests');
    for (let i = 0; i < 210; i++) await server.api('GET', '/users/mona');
    assert.equal((await server.admin('POST', '/requests/count', {})).count, 200);
    const long = 'x'.repeat(40_000);
    await server.adminRaw('POST', '/users', { login: 'long', name: long });
    const [entry] = await server.admin('GET', '/requests');
    assert.ok(JSON.stringify(entry).length < 40_000);
    assert.match(entry.request.body, /more characters\)$/);
  });
});
