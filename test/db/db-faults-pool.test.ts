// PostgreSQL's pool exhausted (every connection held, by slow queries or a burst): a request waits at
// most CODEHOST_DATABASE_CONNECT_TIMEOUT_MS for a connection, then answers 503 with Retry-After and
// the platform's body, instead of hanging; it is served again as soon as a connection is free.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.ts';

const skip = process.env.DATABASE_URL ? false : 'PostgreSQL only (SQLite has one connection and no pool): DATABASE_URL is not set';
let t: TestServer;

before(async () => {
  if (skip) return;
  t = await startServer({ CODEHOST_DATABASE_POOL_SIZE: '2', CODEHOST_DATABASE_CONNECT_TIMEOUT_MS: '300', CODEHOST_WORKER: '0' });
  await t.admin('POST', '/users', { login: 'alice' });
});

after(async () => {
  await t?.close();
});

test('an exhausted pool answers 503 with Retry-After within the connect timeout, then serves again', { skip }, async () => {
  assert.equal((await t.api('GET', '/users/alice')).status, 200);
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const { kysely } = t.server.ctx.db;
  // Both connections held.
  const held = [0, 1].map(() => kysely.connection().execute(() => released));
  await new Promise((resolve) => setTimeout(resolve, 100));
  try {
    const started = Date.now();
    const response = await t.api('GET', '/users/alice');
    assert.equal(response.status, 503, response.text);
    assert.ok(response.headers.get('retry-after'));
    assert.equal(response.body.status, '503');
    assert.ok(Date.now() - started < 3_000, `answered after ${Date.now() - started} ms`);
  } finally {
    release();
    await Promise.all(held);
  }
  assert.equal((await t.api('GET', '/users/alice')).status, 200);
});
