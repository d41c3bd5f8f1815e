// The rate limit across processes (issue 13): three `codehost serve` processes on one database count
// in memory against blocks of quota leased from it. Together they never allow more than the limit
// in a window, and lose at most what each holds leased and unused (processes × (lease − 1)); a
// user's budget is shared by all their tokens on every process; failed logins stay exact.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { leaseSize } from '../../src/platform/rate-limit.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { freePort, spawnServe } from '../helpers/process.ts';

const ADMIN_TOKEN = 'processes-admin-token';
const LIMIT = 1000;
const BLOCK = 10;
const FAILED_LOGINS = 30;
const PROCESSES = 3;
const BAD_TOKEN = 'chp_000000000000000000000000000000000000';
const LOOKUP_CACHE_MS = 400;

let database: TestDatabase;
const children: ChildProcess[] = [];
const bases: string[] = [];

async function serve(port: number): Promise<ChildProcess> {
  const child = spawnServe({
    port,
    database,
    adminToken: ADMIN_TOKEN,
    env: {
      CODEHOST_RATE_LIMIT: String(LIMIT),
      CODEHOST_RATE_LIMIT_BLOCK: String(BLOCK),
      CODEHOST_RATE_LIMIT_FAILED_LOGINS: String(FAILED_LOGINS),
      CODEHOST_LOOKUP_CACHE_MS: String(LOOKUP_CACHE_MS),
      CODEHOST_WORKER: '0',
    },
  });
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}`);
    if (await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false)) return child;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the server did not become ready');
}

async function admin(method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${bases[0]}/_admin${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

/** `total` GETs of /user, spread round-robin over the processes and `tokens`, `concurrency` at a time. */
async function spread(total: number, tokens: string[], concurrency = 24) {
  const answers: Array<{ status: number; remaining: string | null; message?: string }> = [];
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < total) {
      const i = next++;
      const response = await fetch(`${bases[i % bases.length]}/api/v3/user`, { headers: { authorization: `token ${tokens[i % tokens.length]}` } });
      const body = (await response.json()) as { message?: string };
      answers.push({ status: response.status, remaining: response.headers.get('x-ratelimit-remaining'), message: body.message });
    }
  }));
  return answers;
}

before(async () => {
  database = await createTestDatabase();
  // One at a time: the first one migrates the database.
  for (let i = 0; i < PROCESSES; i++) {
    const port = await freePort();
    children.push(await serve(port));
    bases.push(`http://127.0.0.1:${port}`);
  }
});

after(async () => {
  await Promise.all(children.map((child) => new Promise((resolve) => {
    if (child.exitCode !== null) return resolve(null);
    child.once('exit', resolve);
    child.kill('SIGTERM');
  })));
  await database?.drop();
});

describe(`${PROCESSES} processes on one database`, () => {
  test(`a user's ${LIMIT} requests an hour hold within the bound, over all tokens and processes`, { timeout: 120_000 }, async () => {
    await admin('POST', '/users', { login: 'mona' });
    const tokens = [
      (await admin('POST', '/tokens', { login: 'mona', kind: 'classic', scopes: [] })).token,
      (await admin('POST', '/tokens', { login: 'mona', kind: 'classic', scopes: ['repo'] })).token,
    ];
    const answers = await spread(LIMIT + 500, tokens);
    const allowed = answers.filter((a) => a.status === 200).length;
    const lease = leaseSize(LIMIT, BLOCK);
    assert.equal(lease, BLOCK);
    assert.ok(allowed <= LIMIT, `${allowed} requests allowed, over the limit of ${LIMIT}`);
    assert.ok(allowed >= LIMIT - PROCESSES * (lease - 1), `only ${allowed} requests allowed of ${LIMIT}`);
    for (const refused of answers.filter((a) => a.status !== 200)) {
      assert.equal(refused.status, 403);
      assert.match(refused.message ?? '', /^API rate limit exceeded for user ID \d+\.$/);
      assert.equal(refused.remaining, '0');
    }
    // Every process refuses the user now, whichever token.
    for (const base of bases) {
      for (const token of tokens) {
        assert.equal((await fetch(`${base}/api/v3/user`, { headers: { authorization: `token ${token}` } })).status, 403);
      }
    }
  });

  test(`an app changed on one process: at once there, within ${LOOKUP_CACHE_MS} ms on the others`, { timeout: 60_000 }, async () => {
    await admin('POST', '/users', { login: 'hubot' });
    const app = await admin('POST', '/apps', { slug: 'cached', permissions: { issues: 'write', metadata: 'read' } });
    await admin('POST', '/apps/cached/installations', { account: 'hubot', permissions: { issues: 'write', metadata: 'read' } });
    const { token } = await admin('POST', '/apps/cached/authorizations', { login: 'hubot', kind: 'app_user' });
    const authorization = `Basic ${Buffer.from(`${app.client_id}:${app.client_secret}`).toString('base64')}`;
    // Asking for issues=write works while the app requests it: the app as each process read it.
    const scoped = async (base: string) =>
      (await fetch(`${base}/api/v3/applications/${app.client_id}/token/scoped`, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json' },
        body: JSON.stringify({ access_token: token, target: 'hubot', permissions: { issues: 'write' } }),
      })).status;
    for (const base of bases) assert.equal(await scoped(base), 200);
    await admin('PATCH', '/apps/cached', { permissions: { issues: 'read', metadata: 'read' } });
    assert.equal(await scoped(bases[0]!), 422, 'the process that changed the app');
    await new Promise((resolve) => setTimeout(resolve, LOOKUP_CACHE_MS + 200));
    for (const base of bases.slice(1)) assert.equal(await scoped(base), 422, base);
  });

  test(`concurrent bad tokens over all processes: exactly ${FAILED_LOGINS} are 401, the rest 403`, { timeout: 60_000 }, async () => {
    const statuses = await Promise.all(
      Array.from({ length: FAILED_LOGINS * 3 }, async (_, i) =>
        (await fetch(`${bases[i % bases.length]}/api/v3/user`, { headers: { authorization: `token ${BAD_TOKEN}` } })).status),
    );
    const unauthorized = statuses.filter((s) => s === 401).length;
    // Each failure is counted by the upsert that judges it: the first FAILED_LOGINS numbers go to
    // failures (401), whichever process they reach; no more, and no fewer.
    assert.equal(unauthorized, FAILED_LOGINS, `${unauthorized} answers were 401`);
    assert.equal(statuses.filter((s) => s === 401 || s === 403).length, statuses.length, JSON.stringify(statuses));
  });
});
