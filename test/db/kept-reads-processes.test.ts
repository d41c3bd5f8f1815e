// Reads kept between requests (src/db/changes.ts: token lookups, poll validators) on two servers of one
// database, each with its own connections and change feed, as two processes behind a balancer. A
// change made through one is seen by that one at once, and by the other within
// CODEHOST_LOOKUP_CACHE_MS on PostgreSQL (heard by LISTEN/NOTIFY), at once on SQLite (another
// connection's commit moves `PRAGMA data_version`). What is measured: the latest start, after the
// change had answered, of a request that was still answered as before it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { notify } from '../helpers/conditional.ts';
import { classicToken, oauthToken, type TestApp } from '../helpers/credentials.ts';
import type { TestAppWithSecret } from '../helpers/app-credentials.ts';
import { basicAuthorization } from '../helpers/app-credentials.ts';
import { createTestDatabase, engine, type TestDatabase } from '../helpers/database.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const WINDOW_MS = 1_000;
let database: TestDatabase;
let one: TestServer;
let other: TestServer;

before(async () => {
  database = await createTestDatabase();
  one = await startServer({ CODEHOST_LOOKUP_CACHE_MS: String(WINDOW_MS) }, { database });
  other = await startServer({ CODEHOST_LOOKUP_CACHE_MS: String(WINDOW_MS) }, { database });
  await one.admin('POST', '/users', { login: 'mona' });
  await one.admin('POST', '/orgs', { login: 'acme', owners: ['mona'] });
  await one.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
});
after(async () => {
  await other?.close();
  await one?.close();
  await database?.drop();
});

/** Until both servers answer kept reads (on PostgreSQL, once each LISTEN connection heard its heartbeat). */
async function fresh(): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (const server of [one, other]) {
    while (!server.server.ctx.db.feed.fresh()) {
      assert.ok(Date.now() < deadline, 'a change feed never became fresh');
      await sleep(10);
    }
  }
}

/**
 * Sends `request` to `server` until `changed` says its answer shows the change (at most 5 s): how
 * many answers were as before it, and the latest start (ms after `since`) of one that was.
 */
async function until(server: TestServer, request: (s: TestServer) => Promise<{ status: number }>, changed: (status: number) => boolean, since: number) {
  let stale = 0;
  let latestStaleStart = -1;
  for (;;) {
    const start = Date.now();
    assert.ok(start - since < 5_000, 'the change was never seen');
    const { status } = await request(server);
    if (changed(status)) return { stale, latestStaleStart };
    stale++;
    latestStaleStart = start - since;
    await sleep(5);
  }
}

function bounded(what: string, seen: { stale: number; latestStaleStart: number }, t: { diagnostic(message: string): void }): void {
  t.diagnostic(`${what}: ${seen.stale} answers as before the change, the latest started ${seen.latestStaleStart} ms after it`);
  if (engine === 'sqlite') assert.equal(seen.stale, 0, `${what}: SQLite's kept reads are exact`);
  else assert.ok(seen.latestStaleStart <= WINDOW_MS, `${what}: answered as before ${seen.latestStaleStart} ms after the change`);
}

test('a token revoked through one server fails there at once, and on the other within the window', async (t) => {
  const app = (await one.admin('POST', '/apps', { slug: 'kept-app' })) as TestAppWithSecret & TestApp;
  const token = await oauthToken(one, app, 'mona', ['repo']);
  const user = (s: TestServer) => s.api('GET', '/user', { token });
  await fresh();
  for (const server of [one, other, one, other]) assert.equal((await user(server)).status, 200);

  const revoked = await one.api('DELETE', `/applications/${app.client_id}/token`, { authorization: basicAuthorization(app), body: { access_token: token } });
  assert.equal(revoked.status, 204);
  const since = Date.now();
  assert.equal((await user(one)).status, 401, 'the server that revoked it refuses it on the next request');
  bounded('the other server', await until(other, user, (status) => status === 401, since), t);
});

test('a poll of the other server sees a thread marked read through one within the window', async (t) => {
  const token = await classicToken(one, 'mona', ['notifications', 'repo']);
  await notify(one, 'mona', 'acme/widgets', 'v1.0.0');
  const first = await other.api('GET', '/notifications', { token });
  assert.equal(first.status, 200);
  const etag = first.headers.get('etag')!;
  const poll = (s: TestServer) => s.api('GET', '/notifications', { token, headers: { 'if-none-match': etag } });
  await fresh();
  for (const server of [one, other, one, other]) assert.equal((await poll(server)).status, 304);

  const marked = await one.api('PATCH', `/notifications/threads/${first.body[0].id}`, { token });
  assert.equal(marked.status, 205);
  const since = Date.now();
  assert.equal((await poll(one)).status, 200, 'the server that wrote answers the change on the next poll');
  bounded('the other server', await until(other, poll, (status) => status === 200, since), t);
});
