// GET /metrics: behind `Authorization: Bearer $CODEHOST_METRICS_TOKEN` when that is set (401 with the
// platform's error body otherwise, the token never echoed); open to anyone when it is not.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig, ConfigError } from '../../src/config.ts';
import { LOGIN_ATTEMPTS_EXCEEDED } from '../../src/platform/rate-limit.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const TOKEN = 'metrics-token-0123456789';

describe('CODEHOST_METRICS_TOKEN set', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ CODEHOST_METRICS_TOKEN: TOKEN });
  });
  after(async () => server.close());

  const get = (headers: Record<string, string> = {}) => fetch(`${server.url}/metrics`, { headers });

  test('without the token, or with another: 401 and no metrics', async () => {
    for (const authorization of [undefined, `Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(1)}`, 'Bearer', `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}`, `token ${TOKEN}x`, server.server.ctx.config.adminToken!]) {
      const response = await get(authorization === undefined ? {} : { authorization });
      const text = await response.text();
      assert.equal(response.status, 401, `${authorization}: ${text}`);
      assert.equal(response.headers.get('www-authenticate'), 'Bearer realm="metrics"');
      const body = JSON.parse(text) as { message: string; status: string };
      assert.equal(body.status, '401');
      assert.doesNotMatch(text, /codehost_http_requests_total/);
      assert.equal(text.includes(TOKEN), false);
    }
  });

  test('with the token: the metrics', async () => {
    const response = await get({ authorization: `Bearer ${TOKEN}` });
    assert.equal(response.status, 200);
    assert.match(await response.text(), /codehost_http_requests_total/);
  });

  test('a token with a space cannot be configured', () => {
    assert.throws(() => loadConfig({ CODEHOST_METRICS_TOKEN: 'two words' }), (error: Error) => error instanceof ConfigError && /CODEHOST_METRICS_TOKEN/.test(error.message));
  });
});

describe('CODEHOST_METRICS_TOKEN unset', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(async () => server.close());

  test('the metrics are open, as documented', async () => {
    const response = await fetch(`${server.url}/metrics`);
    assert.equal(response.status, 200);
    assert.match(await response.text(), /codehost_jobs_pending/);
  });

  test('an answer a route hands to the not-found handler is counted as unmatched, like any 404 of no route', async () => {
    // /docs serves its files through a route that hands a missing one over (reply.callNotFound()):
    // the request's route, read once per request, is the not-found handler's from then on.
    const missing = await fetch(`${server.url}/docs/static/missing-${Date.now()}.js`);
    assert.equal(missing.status, 404);
    assert.equal((await missing.json() as { message: string }).message, 'Not Found');
    const text = await (await fetch(`${server.url}/metrics`)).text();
    assert.doesNotMatch(text, /codehost_http_requests_total\{method="GET",route="\/docs\/static\/\*",status_code="404"\}/);
    assert.match(text, /codehost_http_requests_total\{method="GET",route="unmatched",status_code="404"\} [1-9]/);
  });
});

describe('guesses of CODEHOST_METRICS_TOKEN', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ CODEHOST_METRICS_TOKEN: TOKEN, CODEHOST_RATE_LIMIT_FAILED_LOGINS: '3' });
  });
  after(async () => server.close());

  test('count as failed logins of the address: after the limit every try is 403, the right token too', async () => {
    const get = (token: string) => fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    for (let i = 0; i < 3; i++) assert.equal((await get(`guess-${i}`)).status, 401, `guess ${i}`);
    const refused = await get('guess-3');
    assert.equal(refused.status, 403);
    assert.equal(((await refused.json()) as { message: string }).message, LOGIN_ATTEMPTS_EXCEEDED);
    assert.equal((await get(TOKEN)).status, 403, 'no oracle while over the limit');
    // The same address's count as the API's: a public API call with a token is refused too.
    assert.equal((await server.api('GET', '/user', { token: 'ghp_000000000000000000000000000000000000' })).status, 403);
  });
});
