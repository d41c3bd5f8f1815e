// Limits nobody can dodge (issue 11): the client address is the socket's unless CODEHOST_TRUST_PROXY
// names the proxies in front; failed logins are counted and judged in one statement (concurrent guesses
// cannot all get through), wrong app client secrets and wrong admin tokens count too; the rate-limit
// table holds only well-formed keys and expired windows are swept; exports in progress per user are
// capped; slow clients are cut off by the header, request and keep-alive timeouts.
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { describe, test } from 'node:test';
import { classicToken } from '../helpers/credentials.ts';
import { ADMIN_TOKEN, startServer, type TestServer } from '../helpers/server.ts';

const BAD_TOKEN = 'chp_000000000000000000000000000000000000';
const LOGIN_EXCEEDED = /Maximum number of login attempts exceeded/;

async function withServer(env: Record<string, string>, run: (server: TestServer) => Promise<void>): Promise<void> {
  const server = await startServer(env);
  try {
    await run(server);
  } finally {
    await server.close();
  }
}

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

async function rateLimitKeys(server: TestServer): Promise<string[]> {
  const rows = await server.server.ctx.db.kysely.selectFrom('rate_limits').select('key').execute();
  return rows.map((row) => row.key).sort();
}

describe('X-Forwarded-For', () => {
  test('by default a client cannot pick its own address for the anonymous limit', async () => {
    await withServer({ CODEHOST_RATE_LIMIT_ANONYMOUS: '2' }, async (server) => {
      for (let i = 1; i <= 2; i++) {
        assert.equal((await server.api('GET', '/users/nobody', { headers: { 'x-forwarded-for': `203.0.113.${i}` } })).status, 404);
      }
      const refused = await server.api('GET', '/users/nobody', { headers: { 'x-forwarded-for': '203.0.113.9' } });
      assert.equal(refused.status, 403);
      assert.match(refused.body.message, /API rate limit exceeded for 127\.0\.0\.1\./);
      assert.deepEqual(await rateLimitKeys(server), ['ip:127.0.0.1']);
    });
  });

  test('by default a client cannot pick its own address for the failed-login limit', async () => {
    await withServer({ CODEHOST_RATE_LIMIT_FAILED_LOGINS: '2' }, async (server) => {
      const statuses = [];
      for (let i = 1; i <= 3; i++) {
        statuses.push((await server.api('GET', '/user', { token: BAD_TOKEN, headers: { 'x-forwarded-for': `203.0.113.${i}` } })).status);
      }
      assert.deepEqual(statuses, [401, 401, 403]);
    });
  });

  for (const trust of ['1', '127.0.0.1', '127.0.0.0/8, ::1']) {
    test(`with CODEHOST_TRUST_PROXY=${trust} the proxy's X-Forwarded-For is the client address`, async () => {
      await withServer({ CODEHOST_TRUST_PROXY: trust, CODEHOST_RATE_LIMIT_ANONYMOUS: '2', CODEHOST_RATE_LIMIT_FAILED_LOGINS: '2' }, async (server) => {
        for (let i = 1; i <= 3; i++) {
          const response = await server.api('GET', '/users/nobody', { headers: { 'x-forwarded-for': `203.0.113.${i}` } });
          assert.equal(response.status, 404, response.text);
          const failed = await server.api('GET', '/user', { token: BAD_TOKEN, headers: { 'x-forwarded-for': `198.51.100.${i}` } });
          assert.equal(failed.status, 401, failed.text);
        }
        for (let i = 0; i < 2; i++) await server.api('GET', '/users/nobody', { headers: { 'x-forwarded-for': '203.0.113.1' } });
        const refused = await server.api('GET', '/users/nobody', { headers: { 'x-forwarded-for': '203.0.113.1' } });
        assert.equal(refused.status, 403);
        assert.match(refused.body.message, /API rate limit exceeded for 203\.0\.113\.1\./);
      });
    });
  }

  test('CODEHOST_TRUST_PROXY takes a hop count or proxy addresses only', async () => {
    const { loadConfig, ConfigError } = await import('../../src/config.ts');
    assert.equal(loadConfig({}).trustProxy, false);
    assert.equal(loadConfig({ CODEHOST_TRUST_PROXY: '0' }).trustProxy, false);
    assert.equal(loadConfig({ CODEHOST_TRUST_PROXY: '2' }).trustProxy, 2);
    assert.deepEqual(loadConfig({ CODEHOST_TRUST_PROXY: '10.0.0.1, 10.1.0.0/16,::1' }).trustProxy, ['10.0.0.1', '10.1.0.0/16', '::1']);
    for (const bad of ['true', 'proxy.example', '10.0.0.0/33', '-1', '1.5', '10.0.0.1,,']) {
      assert.throws(() => loadConfig({ CODEHOST_TRUST_PROXY: bad }), ConfigError, bad);
    }
  });
});

describe('failed logins', () => {
  test('300 concurrent bad tokens with the limit at 50: exactly 50 answers are 401, the rest 403', async () => {
    await withServer({ CODEHOST_RATE_LIMIT_FAILED_LOGINS: '50' }, async (server) => {
      await server.admin('POST', '/users', { login: 'mona' });
      const token = await classicToken(server, 'mona', []);
      const responses = await Promise.all(Array.from({ length: 300 }, () => server.api('GET', '/user', { token: BAD_TOKEN })));
      const unauthorized = responses.filter((r) => r.status === 401).length;
      const refused = responses.filter((r) => r.status === 403);
      assert.equal(unauthorized, 50, `${unauthorized} answers were 401`);
      assert.equal(unauthorized + refused.length, 300, JSON.stringify(responses.map((r) => r.status)));
      for (const response of refused) assert.match(response.body.message, LOGIN_EXCEEDED);
      // The limit holds for a good token too while it lasts (no oracle for a guess that happens to be right).
      assert.equal((await server.api('GET', '/user', { token })).status, 403);
    });
  });

  test('the limit is exact: after limit-1 failures the right token works; after exactly limit failures it is refused', async () => {
    await withServer({ CODEHOST_RATE_LIMIT_FAILED_LOGINS: '3' }, async (server) => {
      await server.admin('POST', '/users', { login: 'mona' });
      const token = await classicToken(server, 'mona', []);
      const statuses = [];
      for (let i = 0; i < 2; i++) statuses.push((await server.api('GET', '/user', { token: BAD_TOKEN })).status);
      statuses.push((await server.api('GET', '/user', { token })).status);
      statuses.push((await server.api('GET', '/user', { token: BAD_TOKEN })).status);
      const right = await server.api('GET', '/user', { token });
      statuses.push(right.status);
      statuses.push((await server.api('GET', '/user', { token: BAD_TOKEN })).status);
      // Two failures, the right token (200, not counted), the third failure (401: the limit-th is
      // still judged), then the right token and a fourth guess are refused.
      assert.deepEqual(statuses, [401, 401, 200, 401, 403, 403]);
      assert.match(right.body.message, LOGIN_EXCEEDED);
    });
  });

  test('a wrong app client secret counts as a failed login, on every /applications route', async () => {
    await withServer({ CODEHOST_RATE_LIMIT_FAILED_LOGINS: '2' }, async (server) => {
      const app = await server.admin('POST', '/apps', { slug: 'limited' });
      const wrong = basic(app.client_id, 'wrong-secret');
      const check = () => server.api('POST', `/applications/${app.client_id}/token`, { authorization: wrong, body: { access_token: 'cho_x' } });
      const reset = () => server.api('PATCH', `/applications/${app.client_id}/token`, { authorization: wrong, body: { access_token: 'cho_x' } });
      assert.equal((await check()).status, 404);
      assert.equal((await reset()).status, 404);
      const blocked = await check();
      assert.equal(blocked.status, 403);
      assert.match(blocked.body.message, LOGIN_EXCEEDED);
      assert.equal((await reset()).status, 403);
    });
  });

  test('the token check with the right client secret does not count, however many tokens it finds invalid', async () => {
    await withServer({ CODEHOST_RATE_LIMIT_FAILED_LOGINS: '2' }, async (server) => {
      const app = await server.admin('POST', '/apps', { slug: 'checker' });
      for (let i = 0; i < 5; i++) {
        const response = await server.api('POST', `/applications/${app.client_id}/token`, { authorization: basic(app.client_id, app.client_secret), body: { access_token: `cho_${i}` } });
        assert.equal(response.status, 404);
      }
      assert.equal((await server.api('GET', '/user', { token: BAD_TOKEN })).status, 401);
    });
  });

  test('a wrong admin token counts as a failed login', async () => {
    await withServer({ CODEHOST_RATE_LIMIT_FAILED_LOGINS: '2' }, async (server) => {
      const wrongAdmin = () => fetch(`${server.url}/_admin/users`, { headers: { authorization: 'Bearer not-the-admin-token' } });
      assert.equal((await wrongAdmin()).status, 401);
      assert.equal((await wrongAdmin()).status, 401);
      const blocked = await wrongAdmin();
      assert.equal(blocked.status, 403);
      assert.match(((await blocked.json()) as { message: string }).message, LOGIN_EXCEEDED);
      // Public bad tokens from that address are refused as well: one limit per address.
      assert.equal((await server.api('GET', '/user', { token: BAD_TOKEN })).status, 403);
      const right = await fetch(`${server.url}/_admin/users`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      assert.equal(right.status, 403);
    });
  });

  test('concurrent wrong admin tokens: exactly the limit are 401', async () => {
    await withServer({ CODEHOST_RATE_LIMIT_FAILED_LOGINS: '20' }, async (server) => {
      const statuses = await Promise.all(
        Array.from({ length: 100 }, async () => (await fetch(`${server.url}/_admin/users`, { headers: { authorization: 'Bearer wrong' } })).status),
      );
      assert.equal(statuses.filter((s) => s === 401).length, 20, JSON.stringify(statuses));
      assert.equal(statuses.filter((s) => s === 401 || s === 403).length, 100);
    });
  });
});

describe('the rate-limit table', () => {
  test('keys are only user, app, installation ids or client addresses', async () => {
    await withServer({ CODEHOST_TRUST_PROXY: '1' }, async (server) => {
      await server.admin('POST', '/users', { login: 'mona' });
      const token = await classicToken(server, 'mona', []);
      assert.equal((await server.api('GET', '/user', { token })).status, 200);
      // A proxy that forwards garbage: the client address falls back to the proxy's own.
      for (const forwarded of ['<script>', 'x'.repeat(5000), '999.1.1.1', 'user:1']) {
        assert.equal((await server.api('GET', '/users/nobody', { headers: { 'x-forwarded-for': forwarded } })).status, 404);
        assert.equal((await server.api('GET', '/user', { token: BAD_TOKEN, headers: { 'x-forwarded-for': forwarded } })).status, 401);
      }
      assert.equal((await server.api('GET', '/users/nobody', { headers: { 'x-forwarded-for': '::FFFF:203.0.113.7' } })).status, 404);
      const keys = await rateLimitKeys(server);
      const userId = (await server.api('GET', '/user', { token })).body.id;
      assert.deepEqual(keys, ['failed-login:127.0.0.1', 'ip:127.0.0.1', 'ip:203.0.113.7', `user:${userId}`]);
      await assert.rejects(server.server.ctx.rateLimiter.hit('ip:not-an-address' as never, 10));
      await assert.rejects(server.server.ctx.rateLimiter.hit('user:mona' as never, 10));
    });
  });

  test('expired windows are removed by a periodic sweep', async () => {
    await withServer({}, async (server) => {
      await server.api('GET', '/users/nobody');
      await server.api('GET', '/user', { token: BAD_TOKEN });
      assert.equal((await rateLimitKeys(server)).length, 2);
      await server.drain();
      assert.equal((await rateLimitKeys(server)).length, 2, 'a window still open is kept');
      await server.advance(3601);
      await server.drain();
      assert.deepEqual(await rateLimitKeys(server), []);
    });
  });
});

describe('exports in progress per user', () => {
  test('beyond the limit a start is a 422 that says how many are allowed; other users are not affected', async () => {
    await withServer({ CODEHOST_WORKER: '0', CODEHOST_MIGRATION_EXPORTS_PER_USER: '2' }, async (server) => {
      await server.admin('POST', '/users', { login: 'alice' });
      await server.admin('POST', '/users', { login: 'bob' });
      await server.admin('POST', '/repos', { owner: 'alice', name: 'alpha' });
      await server.admin('POST', '/repos', { owner: 'bob', name: 'beta' });
      const alice = await classicToken(server, 'alice', ['repo']);
      const bob = await classicToken(server, 'bob', ['repo']);
      const start = (token: string, repo: string) => server.api('POST', '/user/migrations', { token, body: { repositories: [repo] } });
      assert.equal((await start(alice, 'alpha')).status, 201);
      assert.equal((await start(alice, 'alpha')).status, 201);
      const third = await start(alice, 'alpha');
      assert.equal(third.status, 422, third.text);
      assert.match(third.text, /at most 2 exports in progress/);
      assert.equal((await start(bob, 'beta')).status, 201);
    });
  });

  test('concurrent starts by one user: no more than the limit get through', async () => {
    await withServer({ CODEHOST_WORKER: '0', CODEHOST_MIGRATION_EXPORTS_PER_USER: '2' }, async (server) => {
      await server.admin('POST', '/users', { login: 'alice' });
      await server.admin('POST', '/repos', { owner: 'alice', name: 'alpha' });
      const alice = await classicToken(server, 'alice', ['repo']);
      const statuses = await Promise.all(
        Array.from({ length: 12 }, async () => (await server.api('POST', '/user/migrations', { token: alice, body: { repositories: ['alpha'] } })).status),
      );
      assert.deepEqual(statuses.sort(), [...Array(2).fill(201), ...Array(10).fill(422)]);
    });
  });

  test('finished exports do not count', async () => {
    await withServer({ CODEHOST_MIGRATION_EXPORTS_PER_USER: '1' }, async (server) => {
      await server.admin('POST', '/users', { login: 'alice' });
      await server.admin('POST', '/repos', { owner: 'alice', name: 'alpha' });
      const alice = await classicToken(server, 'alice', ['repo']);
      const start = () => server.api('POST', '/user/migrations', { token: alice, body: { repositories: ['alpha'] } });
      assert.equal((await start()).status, 201);
      await server.drain();
      assert.equal((await start()).status, 201);
    });
  });
});

/** Opens a raw connection, writes `first`, then `dribble` one byte at a time; resolves with what came back and when the server closed. */
function slowClient(url: string, first: string, dribble = '', everyMs = 100, giveUpMs = 10_000): Promise<{ received: string; closedAfterMs: number | null }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const started = Date.now();
    let received = '';
    let timer: NodeJS.Timeout | undefined;
    const socket: Socket = connect({ host: hostname, port: Number(port) }, () => {
      if (first) socket.write(first);
      let i = 0;
      timer = setInterval(() => {
        if (i < dribble.length && !socket.destroyed) socket.write(dribble[i++]!);
      }, everyMs);
    });
    const giveUp = setTimeout(() => {
      clearInterval(timer);
      socket.destroy();
      resolve({ received, closedAfterMs: null });
    }, giveUpMs);
    socket.on('data', (chunk) => (received += chunk.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(giveUp);
      clearInterval(timer);
      resolve({ received, closedAfterMs: Date.now() - started });
    });
  });
}

describe('slow clients', () => {
  const env = { CODEHOST_HEADERS_TIMEOUT_MS: '1000', CODEHOST_REQUEST_TIMEOUT_MS: '2000', CODEHOST_KEEP_ALIVE_TIMEOUT_MS: '1000' };

  test('headers dribbled a byte at a time: 408 or closed within the headers timeout', async () => {
    await withServer(env, async (server) => {
      const { received, closedAfterMs } = await slowClient(server.url, 'GET /api/v3/users/nobody HTTP/1.1\r\nHost: x\r\n', 'X-Slow: ' + 'a'.repeat(200));
      assert.ok(closedAfterMs !== null, 'the server kept the connection open');
      assert.ok(closedAfterMs < 1000 + 1500, `closed after ${closedAfterMs} ms`);
      assert.ok(received === '' || received.startsWith('HTTP/1.1 408'), received);
    });
  });

  test('a connection that sends nothing is closed', async () => {
    await withServer(env, async (server) => {
      const { closedAfterMs } = await slowClient(server.url, '');
      assert.ok(closedAfterMs !== null && closedAfterMs < 1000 + 1500, `closed after ${closedAfterMs} ms`);
    });
  });

  test('a body dribbled a byte at a time: 408 or closed within the request timeout', async () => {
    await withServer(env, async (server) => {
      // An operator route with the right token: the body is read before anything answers.
      const head = `POST /_admin/users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n`;
      const { received, closedAfterMs } = await slowClient(server.url, head, '{"login":' + ' '.repeat(480));
      assert.ok(closedAfterMs !== null, 'the server kept the connection open');
      assert.ok(closedAfterMs < 2000 + 1500, `closed after ${closedAfterMs} ms`);
      assert.ok(received === '' || received.startsWith('HTTP/1.1 408'), received);
    });
  });

  test('an idle keep-alive connection is closed after the keep-alive timeout', async () => {
    await withServer(env, async (server) => {
      const { received, closedAfterMs } = await slowClient(server.url, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      assert.match(received, /^HTTP\/1\.1 200/);
      assert.ok(closedAfterMs !== null && closedAfterMs < 1000 + 1500, `closed after ${closedAfterMs} ms`);
    });
  });

  test('the timeouts are settings', async () => {
    const { loadConfig, ConfigError } = await import('../../src/config.ts');
    const config = loadConfig({ CODEHOST_HEADERS_TIMEOUT_MS: '5000', CODEHOST_REQUEST_TIMEOUT_MS: '6000', CODEHOST_KEEP_ALIVE_TIMEOUT_MS: '7000' });
    assert.deepEqual(config.timeouts, { headersMs: 5000, requestMs: 6000, keepAliveMs: 7000 });
    assert.throws(() => loadConfig({ CODEHOST_HEADERS_TIMEOUT_MS: '0' }), ConfigError);
    assert.throws(() => loadConfig({ CODEHOST_HEADERS_TIMEOUT_MS: '9000', CODEHOST_REQUEST_TIMEOUT_MS: '6000' }), ConfigError);
  });
});
