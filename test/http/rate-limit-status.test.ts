// GET /rate_limit, as the platform answers it: the caller's budget under `resources.core` (the one
// resource codehost counts: every API request) and again under `rate`, with the rate-limit headers;
// `resources.search` too, which the platform's answer always has (codehost serves no search: unused).
// Reading it uses none of the budget, and it answers when the budget is spent. The root document
// names it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { classicToken } from '../helpers/credentials.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let token: string;

before(async () => {
  server = await startServer({ CODEHOST_RATE_LIMIT: '5' });
  await server.admin('POST', '/users', { login: 'mona' });
  token = await classicToken(server, 'mona', ['read:user']);
});
after(() => server.close());

const status = (options: { token?: string; authorization?: string } = {}) => server.api('GET', '/rate_limit', options);

function assertShape(body: any, expected: { limit: number; used: number }) {
  assert.deepEqual(Object.keys(body).sort(), ['rate', 'resources']);
  assert.deepEqual(Object.keys(body.resources), ['core', 'search']);
  assert.deepEqual({ ...body.resources.search, reset: 0 }, { limit: 30, used: 0, remaining: 30, reset: 0 });
  const core = body.resources.core;
  assert.deepEqual(Object.keys(core).sort(), ['limit', 'remaining', 'reset', 'used']);
  assert.equal(core.limit, expected.limit);
  assert.equal(core.used, expected.used);
  assert.equal(core.remaining, Math.max(0, expected.limit - expected.used));
  assert.ok(Number.isInteger(core.reset) && core.reset > Date.now() / 1000 - 3600, String(core.reset));
  assert.deepEqual(body.rate, core);
}

describe('GET /rate_limit', () => {
  test('a token: its core budget, which reading it does not use', async () => {
    const first = await status({ token });
    assert.equal(first.status, 200, first.text);
    assertShape(first.body, { limit: 5, used: 0 });
    assert.equal(first.headers.get('x-ratelimit-limit'), '5');
    assert.equal(first.headers.get('x-ratelimit-remaining'), '5');
    assert.equal(first.headers.get('x-ratelimit-resource'), 'core');
    for (let i = 0; i < 3; i++) assert.equal((await server.api('GET', '/user', { token })).status, 200);
    for (let i = 0; i < 4; i++) assertShape((await status({ token })).body, { limit: 5, used: 3 });
    const user = await server.api('GET', '/user', { token });
    assert.equal(user.headers.get('x-ratelimit-used'), '4', 'the reads of /rate_limit counted nothing');
  });

  test('it answers when the budget is spent', async () => {
    await server.api('GET', '/user', { token });
    assert.equal((await server.api('GET', '/user', { token })).status, 403);
    const spent = await status({ token });
    assert.equal(spent.status, 200, spent.text);
    assert.equal(spent.body.resources.core.remaining, 0);
    assert.equal(spent.body.resources.core.limit, 5);
    assert.equal(spent.headers.get('x-ratelimit-remaining'), '0');
  });

  test('anonymous: the address budget; bad credentials: 401', async () => {
    const anonymous = await status();
    assert.equal(anonymous.status, 200, anonymous.text);
    assert.equal(anonymous.body.resources.core.limit, 60);
    assert.equal(anonymous.body.resources.search.limit, 10);
    const used = anonymous.body.resources.core.used;
    assert.equal((await status()).body.resources.core.used, used);
    const bad = await status({ token: 'ghp_000000000000000000000000000000000000' });
    assert.equal(bad.status, 401, bad.text);
  });

  test('the root document names it', async () => {
    const root = await server.api('GET', '/');
    assert.equal(root.body.rate_limit_url, `${server.apiUrl}/rate_limit`);
  });
});
