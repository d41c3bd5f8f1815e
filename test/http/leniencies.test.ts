// The platform's leniencies and headers that clients written elsewhere rely on: booleans in query
// strings in any case and as 1/0 (PyGithub sends `?all=True`); the rate-limit and version headers on
// every answer, 401, 404 and 400 included; the migration archive's 302 carrying the signed URL as its
// body (PyGithub's get_archive_url returns the body); and the statuses and error shapes the platform
// documents (enterprise configuration create: 400; organization issue types: `errors` strings; a
// public repository's issue types: 200 to anyone).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { classicToken } from '../helpers/credentials.ts';
import { startServer, type TestServer, type Response } from '../helpers/server.ts';

let server: TestServer;
let mona: string;

before(async () => {
  server = await startServer();
  for (const login of ['mona', 'eve']) await server.admin('POST', '/users', { login });
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'] });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
  await server.admin('POST', '/repos', { owner: 'mona', name: 'alpha', init_git: true });
  mona = await classicToken(server, 'mona', ['repo', 'notifications', 'admin:org', 'user']);
});
after(() => server.close());

describe('booleans in query strings', () => {
  test('true/false in any case and 1/0 are booleans; anything else is a 422', async () => {
    await server.admin('POST', '/repos/acme/widgets/issues', { author: 'eve', title: 'Ping', assignees: ['mona'] });
    await server.drain();
    const all = await server.api('GET', '/notifications?all=true', { token: mona });
    assert.equal(all.status, 200);
    assert.ok(all.body.length >= 1);
    for (const query of ['all=True', 'all=TRUE', 'all=1', 'all=True&participating=FALSE', 'participating=False', 'participating=0']) {
      const response = await server.api('GET', `/notifications?${query}`, { token: mona });
      assert.equal(response.status, 200, `${query}: ${response.text}`);
    }
    assert.deepEqual((await server.api('GET', '/notifications?all=True', { token: mona })).body, all.body);
    // Mark everything read: `all=1` still lists the thread, `all=0` no longer does.
    assert.equal((await server.api('PUT', '/notifications', { token: mona, body: {} })).status < 300, true);
    await server.drain();
    assert.equal((await server.api('GET', '/notifications?all=1', { token: mona })).body.length, all.body.length);
    assert.equal((await server.api('GET', '/notifications?all=0', { token: mona })).body.length, 0);
    for (const query of ['all=yes', 'all=2', 'participating=truthy']) {
      const response = await server.api('GET', `/notifications?${query}`, { token: mona });
      assert.equal(response.status, 422, query);
      assert.equal(response.body.errors[0].resource, 'querystring');
    }
  });
});

describe('rate-limit and version headers on every answer', () => {
  const anonymousRemaining = async () => Number((await server.api('GET', '/')).headers.get('x-ratelimit-remaining'));

  function assertHeaders(response: Response, where: string, limit = '60'): void {
    assert.equal(response.headers.get('x-ratelimit-limit'), limit, where);
    assert.match(response.headers.get('x-ratelimit-remaining') ?? '', /^\d+$/, where);
    assert.match(response.headers.get('x-ratelimit-used') ?? '', /^\d+$/, where);
    assert.match(response.headers.get('x-ratelimit-reset') ?? '', /^\d{10}$/, where);
    assert.equal(response.headers.get('x-ratelimit-resource'), 'core', where);
    assert.equal(response.headers.get('x-vendor-api-version-selected'), '2022-11-28', where);
    assert.ok(response.headers.get('x-vendor-request-id'), where);
  }

  test('401 (bad credentials): the IP\'s anonymous budget, not counted', async () => {
    const before = await anonymousRemaining();
    const response = await server.api('GET', '/notifications', { token: 'chp_NoSuchToken000000000000000000000000' });
    assert.equal(response.status, 401);
    assertHeaders(response, '401');
    assert.equal(Number(response.headers.get('x-ratelimit-remaining')), before, 'the state after the last counted request');
    assert.equal(await anonymousRemaining(), before - 1, 'the 401 itself was not counted');
  });

  test('404 for an unknown route, with and without the /api/v3 prefix', async () => {
    for (const [where, response] of [['/api/v3/no/such/route', await server.api('GET', '/no/such/route')], ['/nothing-here', await fetch(`${server.url}/nothing-here`)]] as const) {
      assert.equal(response.status, 404);
      assertHeaders(response as Response, `404 ${where}`);
    }
    // The operator surface is not the API.
    const admin = await fetch(`${server.url}/_admin/nothing-here`);
    assert.equal(admin.status, 404);
    assert.equal(admin.headers.get('x-ratelimit-limit'), null);
  });

  test('400 for an unknown API version', async () => {
    const response = await server.api('GET', '/notifications', { token: mona, headers: { 'x-vendor-api-version': '1999-01-01' } });
    assert.equal(response.status, 400);
    assertHeaders(response, '400');
    assert.match(response.body.message, /1999-01-01/);
  });

  test('a known version is echoed on a 404', async () => {
    const response = await server.api('GET', '/no/such/route', { headers: { 'x-vendor-api-version': '2026-03-10' } });
    assert.equal(response.headers.get('x-vendor-api-version-selected'), '2026-03-10');
  });
});

describe('the migration archive download', () => {
  test('the 302 carries the signed URL as its body (text/plain) as well as in Location', async () => {
    const started = await server.api('POST', '/user/migrations', { token: mona, body: { repositories: ['alpha'] } });
    assert.equal(started.status, 201, started.text);
    await server.drain();
    const response = await server.api('GET', `/user/migrations/${started.body.id}/archive`, { token: mona });
    assert.equal(response.status, 302);
    const location = response.headers.get('location')!;
    assert.match(location, /\/_storage\/user-migrations\/\d+\/archive\.tar\.gz\?expires=\d+&signature=/);
    assert.equal(response.text, location);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain/);
    // What PyGithub does with the body: not JSON, so it is the URL; and it downloads.
    assert.throws(() => JSON.parse(response.text));
    assert.equal((await fetch(response.text)).status, 200);
  });
});

describe('statuses and error shapes as the platform documents them', () => {
  test('enterprise configuration create: a bad request is a 400 (its status table lists no 422)', async () => {
    await server.admin('POST', '/enterprises', { slug: 'ent', owners: ['eve'] });
    const eve = await classicToken(server, 'eve', ['admin:enterprise']);
    for (const body of [{}, { name: 7 }, { name: 'X', advanced_security: 'maybe' }, { name: 'X', updater_delegated_alert_dismissal: 'enabled' }]) {
      const response = await server.api('POST', '/enterprises/ent/code-security/configurations', { token: eve, body });
      assert.equal(response.status, 400, `${JSON.stringify(body)}: ${response.text}`);
      assert.equal(typeof response.body.message, 'string');
      assert.ok(response.body.errors.length >= 1);
    }
    assert.equal((await server.api('POST', '/enterprises/ent/code-security/configurations', { token: eve, body: { name: 'Fine' } })).status, 201);
  });

  test('organization issue types: 422 errors are strings', async () => {
    const created = await server.api('POST', '/orgs/acme/issue-types', { token: mona, body: { name: 'Bug', is_enabled: true } });
    assert.equal(created.status, 200, created.text);
    const duplicate = await server.api('POST', '/orgs/acme/issue-types', { token: mona, body: { name: 'bug', is_enabled: true } });
    assert.equal(duplicate.status, 422);
    assert.deepEqual(duplicate.body.errors, ['Name has already been taken']);
    for (const [method, path, body] of [
      ['POST', '/orgs/acme/issue-types', { is_enabled: true }],
      ['POST', '/orgs/acme/issue-types', { name: 'Task', is_enabled: true, color: 'mauve' }],
      ['PUT', `/orgs/acme/issue-types/${created.body.id}`, { name: ' ', is_enabled: true }],
      ['DELETE', '/orgs/acme/issue-types/abc', undefined],
    ] as const) {
      const response = await server.api(method, path, { token: mona, body });
      assert.equal(response.status, 422, `${method} ${path} ${JSON.stringify(body)}: ${response.text}`);
      assert.ok(response.body.errors.length >= 1);
      for (const error of response.body.errors) assert.equal(typeof error, 'string', response.text);
    }
  });

  test('a public repository\'s issue types answer 200 anonymously and to a token without the scope', async () => {
    const scopeless = await classicToken(server, 'eve', []);
    for (const token of [undefined, scopeless]) {
      const response = await server.api('GET', '/repos/acme/widgets/issue-types', { token });
      assert.equal(response.status, 200, `${token ? 'scopeless token' : 'anonymous'}: ${response.text}`);
      assert.ok(Array.isArray(response.body));
    }
  });
});
