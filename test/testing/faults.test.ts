// Fault injection (docs/clients.md): /_admin/faults in test mode only; each effect with the
// platform's status, body and headers; every match field; counts and times; the list and its
// deletes; validation; webhook deliveries that time out or arrive twice; the CLI; and the octokit
// retry examples of docs/clients.md, run as written against this server.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, afterEach, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { appJwt, installationToken, type TestApp } from '../helpers/credentials.ts';
import { ADMIN_TOKEN, startServer, type TestServer } from '../helpers/server.ts';
import { MONA_TOKEN, runExample } from '../clients/docs.ts';
import { Receiver } from '../helpers/receiver.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
const run = promisify(execFile);

describe('fault injection without test mode', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ CODEHOST_TEST_CLOCK: '0' });
  });
  after(() => server.close());

  test('the routes are 404 and nothing is injected', async () => {
    assert.equal(server.server.ctx.config.testMode, false);
    for (const [method, path, body] of [['POST', '/faults', { effect: 'drop' }], ['GET', '/faults'], ['DELETE', '/faults'], ['DELETE', '/faults/1']] as const) {
      const response = await server.adminRaw(method, path, body);
      assert.equal(response.status, 404, `${method} ${path}`);
      assert.equal(response.body.message, 'Not Found');
    }
  });

  test('CODEHOST_TEST_MODE=1 turns them on without the test clock', async () => {
    const other = await startServer({ CODEHOST_TEST_CLOCK: '0', CODEHOST_TEST_MODE: '1' });
    try {
      assert.equal((await other.adminRaw('GET', '/faults')).status, 200);
    } finally {
      await other.close();
    }
  });
});

describe('fault injection', () => {
  let server: TestServer;
  let hubot: string;
  let monaOther: string;
  let hooks: TestApp;
  let installation: string;
  let receiver: Receiver;

  const fault = async (rule: Record<string, unknown>) => {
    const response = await server.adminRaw('POST', '/faults', rule);
    assert.equal(response.status, 201, response.text);
    return response.body;
  };

  before(async () => {
    receiver = await new Receiver().start();
    server = await startServer({ CODEHOST_WEBHOOK_TIMEOUT_MS: '2000' });
    await server.admin('POST', '/users', { login: 'mona' });
    await server.admin('POST', '/users', { login: 'hubot' });
    await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'] });
    await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
    await server.admin('POST', '/tokens', { login: 'mona', kind: 'classic', scopes: ['repo', 'notifications', 'read:user'], value: MONA_TOKEN });
    monaOther = (await server.admin('POST', '/tokens', { login: 'mona', kind: 'classic', scopes: ['notifications'] })).token;
    hubot = (await server.admin('POST', '/tokens', { login: 'hubot', kind: 'classic', scopes: ['notifications'] })).token;
    hooks = await server.admin('POST', '/apps', {
      slug: 'hooks-app',
      permissions: { contents: 'read', metadata: 'read' },
      events: ['push'],
      webhook: { url: receiver.url('/hook') },
    });
    installation = await installationToken(server, hooks, 'acme');
  });
  afterEach(async () => {
    await server.admin('DELETE', '/faults');
  });
  after(async () => {
    await server.close();
    await receiver.stop();
  });

  test('status: the next N matching requests get the platform error, then the API answers again', async () => {
    const rule = await fault({ effect: 'status', status: 502, times: 2, match: { path: '/user' } });
    assert.deepEqual(rule, {
      id: rule.id,
      effect: 'status',
      status: 502,
      retry_after: null,
      reset_seconds: null,
      delay_ms: null,
      match: { token_last_eight: null, app: null, user: null, method: null, path: '/user' },
      times_remaining: 2,
      expires_at: null,
      hits: 0,
      created_at: rule.created_at,
    });
    // The API answers under /api/v3 and at /: the rule's path is under the API root either way.
    const first = await server.api('GET', '/user', { token: MONA_TOKEN });
    assert.equal(first.status, 502);
    assert.deepEqual(first.body, { message: 'Bad Gateway', documentation_url: first.body.documentation_url, status: '502' });
    assert.match(first.headers.get('content-type') ?? '', /application\/json/);
    assert.ok(first.headers.get('x-vendor-request-id'));
    assert.equal(first.headers.get('x-ratelimit-limit'), '5000');
    // Another path is untouched while the rule lasts.
    assert.equal((await server.api('GET', '/notifications', { token: MONA_TOKEN })).status, 200);
    const listed = await server.admin('GET', '/faults');
    assert.deepEqual(listed.map((r: any) => [r.id, r.times_remaining, r.hits]), [[rule.id, 1, 1]]);
    const second = await fetch(`${server.url}/user`, { headers: { authorization: `Bearer ${MONA_TOKEN}` } });
    assert.equal(second.status, 502);
    assert.equal((await server.api('GET', '/user', { token: MONA_TOKEN })).status, 200);
    assert.deepEqual(await server.admin('GET', '/faults'), [], 'a spent rule is gone');
  });

  test('status: 500 and 503 with Retry-After; a rule with no match takes any public request', async () => {
    await fault({ effect: 'status', status: 503, retry_after: 30 });
    const unavailable = await server.api('GET', '/notifications', { token: hubot });
    assert.equal(unavailable.status, 503);
    assert.equal(unavailable.body.message, 'Service Unavailable');
    assert.equal(unavailable.headers.get('retry-after'), '30');
    await fault({ effect: 'status', status: 500 });
    const broken = await server.api('GET', '/repos/acme/widgets');
    assert.deepEqual([broken.status, broken.body.message, broken.body.status], [500, 'Internal Server Error', '500']);
    assert.equal(broken.headers.get('retry-after'), null);
  });

  // needs the clients branch: CORS (Access-Control-Allow-Origin and the exposed headers on every API answer)
  test('a browser app reads an injected answer: CORS headers, Retry-After exposed', async () => {
    await fault({ effect: 'secondary_rate_limit', status: 429, retry_after: 2 });
    const limited = await server.api('GET', '/user', { token: MONA_TOKEN, headers: { origin: 'http://127.0.0.1:1' } });
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get('access-control-allow-origin'), '*');
    assert.match(limited.headers.get('access-control-expose-headers') ?? '', /\bRetry-After\b/);
  });

  test('primary rate limit: 403 with X-RateLimit-Remaining 0 and the reset; 429 when asked', async () => {
    await fault({ effect: 'primary_rate_limit', reset_seconds: 120, match: { user: 'mona' } });
    const now = Math.floor(Date.parse((await server.admin('GET', '/clock')).now) / 1000);
    const limited = await server.api('GET', '/notifications', { token: monaOther });
    assert.equal(limited.status, 403);
    assert.match(limited.body.message, /^API rate limit exceeded for user ID \d+\.$/);
    assert.equal(limited.headers.get('x-ratelimit-remaining'), '0');
    assert.equal(limited.headers.get('x-ratelimit-limit'), '5000');
    assert.equal(limited.headers.get('x-ratelimit-used'), '5000');
    assert.equal(limited.headers.get('x-ratelimit-resource'), 'core');
    const reset = Number(limited.headers.get('x-ratelimit-reset'));
    assert.ok(reset >= now + 119 && reset <= now + 122, `${reset} vs ${now}`);
    assert.equal(limited.headers.get('retry-after'), null);

    await fault({ effect: 'primary_rate_limit', status: 429 });
    const anonymous = await server.api('GET', '/repos/acme/widgets');
    assert.equal(anonymous.status, 429);
    assert.match(anonymous.body.message, /^API rate limit exceeded for 127\.0\.0\.1\. \(But here's the good news/);
  });

  test('secondary rate limit: Retry-After, the real X-RateLimit-Remaining; 403 unless 429 is asked', async () => {
    await fault({ effect: 'secondary_rate_limit', times: 2 });
    const limited = await server.api('GET', '/user', { token: MONA_TOKEN });
    assert.equal(limited.status, 403);
    assert.match(limited.body.message, /^You have exceeded a secondary rate limit\. .*request ID [0-9a-f-]{36}\.$/);
    assert.ok(limited.body.message.includes(limited.headers.get('x-vendor-request-id')!));
    assert.equal(limited.headers.get('retry-after'), '60');
    assert.ok(Number(limited.headers.get('x-ratelimit-remaining')) > 0);
    await fault({ effect: 'secondary_rate_limit', status: 429, retry_after: 5 });
    assert.equal((await server.api('GET', '/user', { token: MONA_TOKEN })).status, 403, 'the older rule first');
    const second = await server.api('GET', '/user', { token: MONA_TOKEN });
    assert.deepEqual([second.status, second.headers.get('retry-after')], [429, '5']);
  });

  test('delay: the answer comes after delay_ms, as usual', async () => {
    await fault({ effect: 'delay', delay_ms: 400, match: { method: 'get', path: '/user' } });
    const started = performance.now();
    const response = await server.api('GET', '/user', { token: MONA_TOKEN });
    assert.equal(response.status, 200);
    assert.equal(response.body.login, 'mona');
    assert.ok(performance.now() - started >= 390, `${performance.now() - started} ms`);
  });

  test('drop: the connection closes without an answer', async () => {
    await fault({ effect: 'drop', match: { path: '/notifications' } });
    await assert.rejects(fetch(`${server.apiUrl}/notifications`, { headers: { authorization: `Bearer ${hubot}` } }), TypeError);
    assert.equal((await server.api('GET', '/notifications', { token: hubot })).status, 200);
  });

  test('match: token, user, app, method and path pattern each narrow the rule', async () => {
    const gone = (response: { status: number }) => response.status === 502;
    await fault({ effect: 'status', status: 502, seconds: 60, match: { token: monaOther } });
    assert.ok(!gone(await server.api('GET', '/notifications', { token: MONA_TOKEN })), 'another token of the same user');
    assert.ok(gone(await server.api('GET', '/notifications', { token: monaOther })));
    assert.ok(gone(await server.api('GET', '/notifications', { authorization: `token ${monaOther}` })), 'either scheme');
    await server.admin('DELETE', '/faults');

    await fault({ effect: 'status', status: 502, seconds: 60, match: { user: 'mona' } });
    assert.ok(gone(await server.api('GET', '/notifications', { token: MONA_TOKEN })));
    assert.ok(gone(await server.api('GET', '/notifications', { token: monaOther })));
    assert.ok(!gone(await server.api('GET', '/notifications', { token: hubot })));
    assert.ok(!gone(await server.api('GET', '/repos/acme/widgets')), 'anonymous');
    await server.admin('DELETE', '/faults');

    await fault({ effect: 'status', status: 502, seconds: 60, match: { app: 'hooks-app' } });
    assert.ok(gone(await server.api('GET', '/installation/repositories', { token: installation })));
    assert.ok(gone(await server.api('GET', '/app', { token: await appJwt(server, hooks) })));
    assert.ok(!gone(await server.api('GET', '/user', { token: MONA_TOKEN })));
    await server.admin('DELETE', '/faults');

    await fault({ effect: 'status', status: 502, seconds: 60, match: { method: 'PUT', path: '/api/v3/notifications*' } });
    assert.ok(gone(await server.api('PUT', '/notifications', { token: hubot, body: {} })));
    assert.ok(!gone(await server.api('GET', '/notifications', { token: hubot })));
    await server.admin('DELETE', '/faults');

    await fault({ effect: 'status', status: 502, seconds: 60, match: { path: '/repos/*/widgets' } });
    assert.ok(gone(await server.api('GET', '/repos/acme/widgets')));
    assert.ok(gone(await server.api('GET', '/repos/acme/widgets?per_page=1')), 'the query is not part of the path');
    assert.ok(!gone(await server.api('GET', '/repos/acme/widgets/subscribers')));
    // The admin API is never faulted.
    assert.equal((await server.adminRaw('GET', '/faults')).status, 200);
  });

  test('bad credentials are answered 401 before any rule', async () => {
    await fault({ effect: 'status', status: 502 });
    assert.equal((await server.api('GET', '/user', { token: 'chp_nope' })).status, 401);
    assert.equal((await server.admin('GET', '/faults')).length, 1);
  });

  test('seconds: every matching request until the time is up, by the server clock', async () => {
    const rule = await fault({ effect: 'status', status: 503, seconds: 30, match: { path: '/user' } });
    assert.equal(rule.times_remaining, null);
    assert.ok(Date.parse(rule.expires_at) - Date.parse(rule.created_at) === 30_000);
    for (let i = 0; i < 3; i++) assert.equal((await server.api('GET', '/user', { token: MONA_TOKEN })).status, 503);
    await server.advance(31);
    assert.equal((await server.api('GET', '/user', { token: MONA_TOKEN })).status, 200);
    assert.deepEqual(await server.admin('GET', '/faults'), []);
    // Both: whichever ends first.
    await fault({ effect: 'status', status: 503, seconds: 30, times: 1, match: { path: '/user' } });
    assert.equal((await server.api('GET', '/user', { token: MONA_TOKEN })).status, 503);
    assert.equal((await server.api('GET', '/user', { token: MONA_TOKEN })).status, 200);
  });

  test('the list shows the rules oldest first, never the token; DELETE one or all', async () => {
    const first = await fault({ effect: 'delay', delay_ms: 5, times: 3, match: { token: MONA_TOKEN } });
    const second = await fault({ effect: 'webhook_duplicate', match: { app: 'hooks-app' } });
    const listed = await server.admin('GET', '/faults');
    assert.deepEqual(listed.map((r: any) => r.id), [first.id, second.id]);
    assert.deepEqual(listed[0].match, { token_last_eight: MONA_TOKEN.slice(-8), app: null, user: null, method: null, path: null });
    assert.deepEqual(listed[1].match.app, 'hooks-app');
    assert.ok(!JSON.stringify(listed).includes(MONA_TOKEN));
    assert.equal((await server.adminRaw('DELETE', `/faults/${first.id}`)).status, 204);
    assert.equal((await server.adminRaw('DELETE', `/faults/${first.id}`)).status, 404);
    assert.equal((await server.adminRaw('DELETE', '/faults/nope')).status, 422);
    assert.deepEqual((await server.admin('GET', '/faults')).map((r: any) => r.id), [second.id]);
    assert.equal((await server.adminRaw('DELETE', '/faults')).status, 204);
    assert.deepEqual(await server.admin('GET', '/faults'), []);
  });

  test('bad rules are 422 naming the field; unknown apps and users 404', async () => {
    const cases: [Record<string, unknown>, number, string][] = [
      [{}, 422, 'effect'],
      [{ effect: 'explode' }, 422, 'effect'],
      [{ effect: 'status' }, 422, 'status'],
      [{ effect: 'status', status: 302 }, 422, 'status'],
      [{ effect: 'status', status: 600 }, 422, 'status'],
      [{ effect: 'primary_rate_limit', status: 500 }, 422, 'status'],
      [{ effect: 'secondary_rate_limit', reset_seconds: 5 }, 422, 'reset_seconds'],
      [{ effect: 'delay' }, 422, 'delay_ms'],
      [{ effect: 'delay', delay_ms: 0 }, 422, 'delay_ms'],
      [{ effect: 'delay', delay_ms: 10, status: 502 }, 422, 'status'],
      [{ effect: 'drop', times: 0 }, 422, 'times'],
      [{ effect: 'drop', seconds: -1 }, 422, 'seconds'],
      [{ effect: 'drop', match: { path: 'user' } }, 422, 'match.path'],
      [{ effect: 'drop', match: { method: 'GET /x' } }, 422, 'match.method'],
      [{ effect: 'drop', match: { login: 'mona' } }, 422, 'match.login'],
      [{ effect: 'drop', forever: true }, 422, 'forever'],
      [{ effect: 'webhook_timeout' }, 422, 'match.app'],
      [{ effect: 'webhook_timeout', match: { app: 'hooks-app', path: '/x' } }, 422, 'match.path'],
      [{ effect: 'drop', match: { app: 'no-such-app' } }, 404, ''],
      [{ effect: 'drop', match: { user: 'nobody' } }, 404, ''],
      [{ effect: 'drop', match: { user: 'acme' } }, 404, ''],
    ];
    for (const [body, status, field] of cases) {
      const response = await server.adminRaw('POST', '/faults', body);
      assert.equal(response.status, status, `${JSON.stringify(body)}: ${response.text}`);
      if (status === 422) assert.ok(response.body.errors.some((e: any) => e.field === field), `${JSON.stringify(body)}: ${response.text}`);
    }
    assert.deepEqual(await server.admin('GET', '/faults'), []);
    const malformed = await fetch(`${server.url}/_admin/faults`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, body: '{' });
    assert.equal(malformed.status, 400);
  });

  describe('webhook deliveries', () => {
    async function push(): Promise<any> {
      assert.equal((await server.admin('POST', '/events', { event: 'push', repository: 'acme/widgets', sender: 'mona' })).deliveries, 1);
      await server.drain();
      const listed = await server.api('GET', '/app/hook/deliveries?per_page=100', { token: await appJwt(server, hooks) });
      assert.equal(listed.status, 200, listed.text);
      return listed.body[0];
    }

    test('webhook_timeout: the receiver gets the post; the delivery is recorded as timed out', async () => {
      await fault({ effect: 'webhook_timeout', times: 1, match: { app: 'hooks-app' } });
      const before = receiver.received.length;
      const delivery = await push();
      assert.deepEqual([delivery.status, delivery.status_code, delivery.duration], ['timed out', 0, 2]);
      assert.equal(receiver.received.length - before, 1);
      assert.equal(receiver.received.at(-1)!.headers['x-vendor-delivery'], delivery.guid);
      const next = await push();
      assert.deepEqual([next.status, next.status_code], ['OK', 200]);
      assert.equal(receiver.received.length - before, 2);
    });

    test('webhook_duplicate: the receiver gets the same delivery twice; it is recorded once', async () => {
      await fault({ effect: 'webhook_duplicate', times: 2, match: { app: 'hooks-app' } });
      const before = receiver.received.length;
      const one = await push();
      const two = await push();
      const got = receiver.received.slice(before).map((r) => r.headers['x-vendor-delivery']);
      assert.deepEqual(got, [one.guid, one.guid, two.guid, two.guid]);
      assert.equal(receiver.received.at(-1)!.body, receiver.received.at(-2)!.body);
      assert.deepEqual([one.status, two.status], ['OK', 'OK']);
      const listed = await server.api('GET', '/app/hook/deliveries?per_page=100', { token: await appJwt(server, hooks) });
      assert.equal(listed.body.filter((d: any) => d.guid === one.guid).length, 1);
      await push();
      assert.equal(receiver.received.length - before, 5, 'the rule is spent');
    });

    test('a request rule leaves deliveries alone, and a delivery rule requests', async () => {
      await fault({ effect: 'status', status: 502, seconds: 60, match: { app: 'hooks-app' } });
      const before = receiver.received.length;
      await server.admin('POST', '/events', { event: 'push', repository: 'acme/widgets', sender: 'mona' });
      await server.drain();
      assert.equal(receiver.received.length - before, 1);
      assert.equal((await server.admin('GET', '/faults'))[0].hits, 0);
      await server.admin('DELETE', '/faults');
      assert.equal((await push()).status, 'OK');
      await fault({ effect: 'webhook_timeout', match: { app: 'hooks-app' } });
      assert.equal((await server.api('GET', '/app', { token: await appJwt(server, hooks) })).status, 200);
    });
  });

  test('the CLI: codehost admin POST /faults, GET, DELETE', async () => {
    const env = { PATH: process.env.PATH, CODEHOST_URL: server.url, CODEHOST_ADMIN_TOKEN: ADMIN_TOKEN };
    const cli = (...args: string[]) => run(process.execPath, [`${ROOT}bin/codehost.js`, 'admin', ...args], { cwd: ROOT, env, timeout: 30_000 });
    const created = JSON.parse((await cli('POST', '/faults', '{"effect":"status","status":502,"times":2}')).stdout);
    assert.equal(created.status, 502);
    assert.equal((await server.api('GET', '/user', { token: MONA_TOKEN })).status, 502);
    assert.equal(JSON.parse((await cli('GET', '/faults')).stdout)[0].times_remaining, 1);
    await cli('DELETE', '/faults');
    assert.deepEqual(await server.admin('GET', '/faults'), []);
  });

  describe('docs/clients.md', () => {
    test('the octokit example', async () => {
      const output = await runExample('octokit', server);
      assert.match(output, /^mona \d+ \d+ (more pages|one page)\n$/);
    });

    test('the retrying octokit gets through two 502s and a 429', async () => {
      const before = (await server.admin('GET', '/faults')).length;
      assert.equal(before, 0);
      const output = await runExample('octokit-retry', server);
      assert.equal(output, '200 mona\n');
      assert.deepEqual(await server.admin('GET', '/faults'), [], 'every injected failure was met');
    });

    test('the Retry-After hook waits out a 403 secondary rate limit', async () => {
      const started = performance.now();
      const output = await runExample('octokit-retry-after', server);
      assert.equal(output, '200 mona\n');
      assert.ok(performance.now() - started >= 1000);
      assert.deepEqual(await server.admin('GET', '/faults'), []);
    });
  });
});

