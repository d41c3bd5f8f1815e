// Rate limits counted against leased blocks (issue 13), in one process: the headers stay exact, one
// write per lease instead of per request, none once the limit is reached, and the window still resets
// an hour later; a 304 gives its request back.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { classicToken } from '../helpers/credentials.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const LIMIT = 100;
const BLOCK = 10; // a lease of min(10, 100 / 50) = 2 requests

let server: TestServer;
let token: string;

before(async () => {
  server = await startServer({ CODEHOST_RATE_LIMIT: String(LIMIT), CODEHOST_RATE_LIMIT_BLOCK: String(BLOCK) });
  await server.admin('POST', '/users', { login: 'mona' });
  token = await classicToken(server, 'mona', []);
});

after(async () => server?.close());

async function counted(): Promise<number> {
  const row = await server.server.ctx.db.kysely.selectFrom('rate_limits').select('used').where('key', 'like', 'user:%').executeTakeFirst();
  return row?.used ?? 0;
}

test('exact headers, a write per lease, none past the limit, and the reset an hour later', async () => {
  for (let i = 1; i <= LIMIT; i++) {
    const response = await server.api('GET', '/user', { token });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('x-ratelimit-used'), String(i));
    assert.equal(response.headers.get('x-ratelimit-remaining'), String(LIMIT - i));
    // The database holds what was leased: the requests so far, rounded up to a whole lease of 2.
    assert.equal(await counted(), Math.ceil(i / 2) * 2);
  }
  const over = await server.api('GET', '/user', { token });
  assert.equal(over.status, 403);
  assert.equal(over.headers.get('x-ratelimit-remaining'), '0');
  // Refusals are answered from memory: nothing more is leased past the limit.
  for (let i = 0; i < 10; i++) assert.equal((await server.api('GET', '/user', { token })).status, 403);
  assert.equal(await counted(), LIMIT);

  await server.advance(3601);
  const after = await server.api('GET', '/user', { token });
  assert.equal(after.status, 200);
  assert.equal(after.headers.get('x-ratelimit-used'), '1');
  assert.equal(after.headers.get('x-ratelimit-remaining'), String(LIMIT - 1));
});

test('a 304 gives its request back to the lease', async () => {
  const first = await server.api('GET', '/user', { token });
  const used = Number(first.headers.get('x-ratelimit-used'));
  const etag = first.headers.get('etag')!;
  const unchanged = await server.api('GET', '/user', { token, headers: { 'if-none-match': etag } });
  assert.equal(unchanged.status, 304);
  assert.equal(unchanged.headers.get('x-ratelimit-used'), String(used));
  const next = await server.api('GET', '/user', { token });
  assert.equal(next.headers.get('x-ratelimit-used'), String(used + 1));
});
