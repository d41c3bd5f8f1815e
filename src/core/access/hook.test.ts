// The request hooks on a real Fastify app (on a loopback socket) and a real database (SQLite, or
// PostgreSQL when DATABASE_URL is set), without the rest of the server: the callers' onRequest hook
// (core/access/hook.ts, added to each route by src/http/api.ts: version check, the failed-login guard, the rate-limit count and its key, the
// uncounted path, a counter that cannot be written, the scope header, the route's rule) and the
// conventions' onSend hook (src/http/conditional.ts: the ETag, the 304 and its refund). Small limits
// (3 an hour, 2 anonymous, 2 failed logins) make the boundaries cheap to reach.
import assert from 'node:assert/strict';
import { hash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/database.ts';
import { loadConfig } from '../../config.ts';
import { openDatabase, type Db } from '../../db/index.ts';
import { migrateToLatest } from '../../db/migrate.ts';
import { Clock } from '../../platform/clock.ts';
import type { Context } from '../../platform/context.ts';
import { installCallerSteps, decorateCaller } from '../../http/api.ts';
import { answerNotModified, unchanged } from '../../http/conditional.ts';
import { installConventions } from '../../http/conventions.ts';
import { RateLimiter } from '../../platform/rate-limit.ts';
import { hashSecret } from '../../platform/tokens.ts';
import type { AccessRule } from './rule.ts';
import { callerResolution } from './hook.ts';
import { ANONYMOUS } from './principal.ts';
import { issueToken } from './store.ts';
import { vendorNames } from '../../platform/vendor.ts';

const ADMIN = 'hook-test-admin-token';
const LIMIT = 3;
const ANONYMOUS_LIMIT = 2;
const FAILED_LOGINS = 2;
const CLIENT_SECRET = 'the client secret';
/** The secondary limit on content: 1 a minute, 2 an hour. */
const CONTENT_PER_MINUTE = 1;
const CONTENT_PER_HOUR = 2;

const TOKENS: AccessRule = { credentials: ['classic', 'oauth', 'fine_grained', 'installation', 'jwt'], scopes: ['repo'], permissions: [{ issues: 'read' }, { contents: 'write', metadata: 'read' }] };
const PUBLIC: AccessRule = { credentials: ['classic', 'oauth', 'fine_grained', 'installation', 'jwt'], anonymous: true };
const CLASSIC_ONLY: AccessRule = { credentials: ['classic'] };

let testDatabase: TestDatabase;
let db: Db;
/** The rate limiter's own connection (one), which a test can make read-only. */
let limiterDb: Db;
let app: FastifyInstance;
let base: string;
const logged: string[] = [];
const id: Record<string, number> = {};
let issuer: (input: Parameters<typeof issueToken>[2]) => Promise<string>;
let nextUser = 1;
let clock: Clock;

/** A token of `kind` for a user (or installation) of its own, so that no two tests share a budget; and its rate-limit key. */
async function fresh(kind: 'classic' | 'oauth' | 'fine_grained' | 'installation', scopes: string[] = []): Promise<{ authorization: string; key: string }> {
  const NOW = new Date().toISOString();
  const k = db.kysely;
  if (kind === 'installation') {
    const account = (await k.insertInto('users').values({ login: `org${nextUser}`, login_lower: `org${nextUser++}`, type: 'Organization', name: null, email: null, site_admin: 0, created_at: NOW, updated_at: NOW } as never).returning('id').executeTakeFirstOrThrow()).id;
    const installation = (await k.insertInto('installations').values({ app_id: id.app, account_id: account, repository_selection: 'all', permissions: JSON.stringify({ issues: 'write' }), created_at: NOW, updated_at: NOW } as never)
      .returning('id').executeTakeFirstOrThrow()).id;
    return { authorization: bearer(await issuer({ kind, app_id: id.app, installation_id: installation, permissions: { issues: 'write' } })), key: `installation:${installation}` };
  }
  const user = (await k.insertInto('users').values({ login: `user${nextUser}`, login_lower: `user${nextUser++}`, type: 'User', name: null, email: null, site_admin: 0, created_at: NOW, updated_at: NOW } as never).returning('id').executeTakeFirstOrThrow()).id;
  const input = kind === 'oauth'
    ? { kind, user_id: user, app_id: id.app, authorization_id: (await k.insertInto('app_authorizations').values({ app_id: id.app, user_id: user, scopes: '[]', note: null, note_url: null, created_at: NOW, updated_at: NOW } as never).returning('id').executeTakeFirstOrThrow()).id, scopes }
    : kind === 'fine_grained' ? { kind, user_id: user, resource_owner_id: user, permissions: { issues: 'read' as const } } : { kind, user_id: user, scopes };
  return { authorization: bearer(await issuer(input)), key: `user:${user}` };
}
/** A distinct client address for each test (X-Forwarded-For, the app trusting its loopback proxy). */
let nextAddress = 1;
const freshAddress = () => `192.0.2.${nextAddress++}`;

before(async () => {
  testDatabase = await createTestDatabase();
  const open = (poolSize?: number) => openDatabase({ databaseUrl: testDatabase.databaseUrl, sqlitePath: `${testDatabase.dataDir}/codehost.db`, poolSize });
  db = open();
  await migrateToLatest(db);
  limiterDb = open(1);
  clock = new Clock(true);
  const config = loadConfig({});
  config.adminToken = ADMIN;
  config.rateLimit = { ...config.rateLimit, authenticatedPerHour: LIMIT, anonymousPerHour: ANONYMOUS_LIMIT, failedLoginsPerHour: FAILED_LOGINS, contentPerMinute: CONTENT_PER_MINUTE, contentPerHour: CONTENT_PER_HOUR };
  app = Fastify({ trustProxy: '127.0.0.1', logger: { level: 'error', stream: { write: (line: string) => void logged.push(line) } } });
  const ctx = { config, db, clock, rateLimiter: new RateLimiter(limiterDb.kysely, clock), log: app.log, perServer: new Map(), urls: { api: 'http://127.0.0.1/api/v3', web: 'http://127.0.0.1' }, vendor: vendorNames('Vendor') } as unknown as Context;
  installConventions(app, ctx, { compileSchemas: 'on first use' });
  decorateCaller(app, ANONYMOUS);

  const who = (request: { principal: unknown; rateLimitKey: string | null }, rule?: AccessRule) => {
    const p = request.principal as { type: string; kind?: string; route?: AccessRule };
    return { type: p.type, kind: p.kind ?? null, key: request.rateLimitKey, route: rule ? p.route === rule : null };
  };
  // An operator route: outside the API scope, where the caller step is not.
  app.get('/admin', { config: { access: PUBLIC } }, async (request) => who(request));
  await app.register(async (api: FastifyInstance) => {
    installCallerSteps(api as never, callerResolution(ctx));
    api.get('/tokens', { config: { access: TOKENS } }, async (request) => who(request, TOKENS));
    api.get('/public', { config: { access: PUBLIC } }, async (request) => who(request, PUBLIC));
    api.get('/classic', { config: { access: CLASSIC_ONLY } }, async (request) => who(request, CLASSIC_ONLY));
    api.post('/content', { config: { access: CLASSIC_ONLY, createsContent: true } }, async (request) => who(request, CLASSIC_ONLY));
    api.get('/uncounted', { config: { access: PUBLIC, uncounted: true } }, async (request) => who(request));
    api.get('/basic', { config: { access: { credentials: ['basic'] }, basicApp: true } }, async (request) => who(request));
    api.get('/no-rule', async (request) => who(request));
    // The bodies the onSend hook tags, or leaves alone.
    api.post('/post', { config: { access: PUBLIC } }, async () => ({ posted: true }));
    api.get('/created', { config: { access: PUBLIC } }, async (_request, reply) => reply.code(201).send({ created: true }));
    api.get('/tagged', { config: { access: PUBLIC } }, async (_request, reply) => reply.header('etag', '"given"').send({ tagged: true }));
    api.get('/bytes', { config: { access: PUBLIC } }, async (_request, reply) => reply.type('application/octet-stream').send(Buffer.from('bytes')));
    api.get('/tagged-bytes', { config: { access: PUBLIC } }, async (_request, reply) => reply.header('etag', '"b"').type('application/octet-stream').send(Buffer.from('bytes')));
    api.get('/untagged-no-rule', async () => ({ plain: true }));
    // A route that decides from its validators before doing the work.
    api.get('/early', { config: { access: PUBLIC } }, async (request, reply) => {
      reply.header('etag', '"early"');
      if (unchanged(request, reply)) {
        reply.header('content-length', '16'); // as if it had begun on its body: a 304 drops it
        await answerNotModified(ctx, request, reply);
        return reply.send();
      }
      return { early: true };
    });
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

  const k = db.kysely;
  const NOW = new Date().toISOString();
  id.app = (await k.insertInto('apps').values({
    slug: 'the-app', name: 'The App', owner_id: null, client_id: 'Iv1.hookapp', client_secret_hash: hashSecret(CLIENT_SECRET),
    public_key_pem: 'no key: the tests sign no JWT', permissions: JSON.stringify({ issues: 'write' }), events: '[]', created_at: NOW, updated_at: NOW,
  } as never).returning('id').executeTakeFirstOrThrow()).id;
  issuer = async (input) => (await issueToken(k, clock, input)).token;
});

after(async () => {
  await app?.close();
  await limiterDb?.close();
  await db?.close();
  await testDatabase?.drop();
});

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

async function get(path: string, options: { address?: string; authorization?: string; headers?: Record<string, string>; method?: string } = {}): Promise<Answer> {
  const headers: Record<string, string> = { 'x-forwarded-for': options.address ?? freshAddress(), ...options.headers };
  if (options.authorization) headers.authorization = options.authorization;
  const response = await fetch(`${base}${path}`, { method: options.method ?? 'GET', headers });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: response.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text) : text };
}

const bearer = (value: string) => `Bearer ${value}`;
/** The rate-limit headers of an answer: limit, used, remaining. */
const budget = (answer: Answer) => ['limit', 'used', 'remaining'].map((name) => answer.headers.get(`x-ratelimit-${name}`));

/** The app's client id and secret (Basic), as app token management sends them. */
const basicApp = () => `Basic ${Buffer.from(`Iv1.hookapp:${CLIENT_SECRET}`).toString('base64')}`;

/** Makes the rate limiter's connection refuse writes (as a read-only or full disk does), or lets it write again. */
async function limiterWrites(allowed: boolean): Promise<void> {
  if (limiterDb.dialect === 'sqlite') await sql.raw(`PRAGMA query_only = ${allowed ? 'OFF' : 'ON'}`).execute(limiterDb.kysely);
  else await sql.raw(`SET default_transaction_read_only = ${allowed ? 'off' : 'on'}`).execute(limiterDb.kysely);
}

// First: no request has been counted yet when the first outage begins (it is logged too).
test('a rate-limit counter that cannot be written: requests served uncounted with the last state, logged once per outage, no refund on a 304', async () => {
  const { authorization, key } = await fresh('installation');
  const logsBefore = logged.length;
  await limiterWrites(false);
  try {
    const first = await get('/tokens', { authorization });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.key, null);
    assert.deepEqual(budget(first), [String(LIMIT), '0', String(LIMIT)]);
  } finally {
    await limiterWrites(true);
  }
  assert.equal(logged.length, logsBefore + 1);
  const entry = JSON.parse(logged.at(-1)!);
  assert.equal(entry.msg, 'rate-limit counters cannot be written; requests are served uncounted until they can');
  assert.match(entry.reason, /read-only|25006/);
  assert.ok(entry.err);

  const counted = await get('/tokens', { authorization });
  assert.equal(counted.body.key, key);
  assert.deepEqual(budget(counted), [String(LIMIT), '1', String(LIMIT - 1)]);
  await limiterWrites(false);
  try {
    const served = await get('/tokens', { authorization });
    assert.equal(served.status, 200, served.text);
    assert.deepEqual(budget(served), [String(LIMIT), '1', String(LIMIT - 1)]);
    const notModified = await get('/tokens', { authorization, headers: { 'if-none-match': served.headers.get('etag')! } });
    assert.equal(notModified.status, 304);
    assert.deepEqual(budget(notModified), [String(LIMIT), '1', String(LIMIT - 1)]);
  } finally {
    await limiterWrites(true);
  }
  // A second outage is logged again, once.
  assert.equal(logged.length, logsBefore + 2);
  assert.deepEqual(budget(await get('/tokens', { authorization })), [String(LIMIT), '2', String(LIMIT - 2)]);
});

test('a counter write that fails for another reason than an unavailable database is not hidden: an error answer, without an anonymous budget', async () => {
  const refuse = db.dialect === 'sqlite'
    ? ["CREATE TRIGGER refuse_counts BEFORE INSERT ON rate_limits BEGIN SELECT RAISE(ABORT, 'refused'); END"]
    : [
        "CREATE FUNCTION refuse_counts() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$",
        'CREATE TRIGGER refuse_counts BEFORE INSERT ON rate_limits FOR EACH ROW EXECUTE FUNCTION refuse_counts()',
      ];
  // SQLite's RAISE(ABORT) reads as a refused value (422); PostgreSQL's exception is the server's (500).
  const status = db.dialect === 'sqlite' ? 422 : 500;
  for (const statement of refuse) await sql.raw(statement).execute(db.kysely);
  try {
    const counted = await get('/public');
    assert.equal(counted.status, status, counted.text);
    // A wrong token's failed login cannot be counted either: that error, not a 401 with the address's budget.
    const wrong = await get('/public', { authorization: bearer('ghp_wrong') });
    assert.equal(wrong.status, status, wrong.text);
    assert.equal(wrong.headers.get('x-ratelimit-limit'), null);
  } finally {
    await sql.raw('DROP TRIGGER refuse_counts' + (db.dialect === 'sqlite' ? '' : ' ON rate_limits')).execute(db.kysely);
    if (db.dialect !== 'sqlite') await sql.raw('DROP FUNCTION refuse_counts()').execute(db.kysely);
  }
  assert.equal((await get('/public')).status, 200);
});

test('routes without a rule, and operator routes, skip the API conventions: no version, budget, accepted headers or caller', async () => {
  const plain = await get('/no-rule');
  assert.equal(plain.status, 200);
  assert.deepEqual(plain.body, { type: 'anonymous', kind: null, key: null, route: null });
  for (const name of ['x-vendor-api-version-selected', 'x-ratelimit-limit', 'x-accepted-oauth-scopes']) assert.equal(plain.headers.get(name), null, name);
  // Not even a wrong version is refused there.
  assert.equal((await get('/no-rule', { headers: { 'x-vendor-api-version': '1999-01-01' } })).status, 200);

  const admin = await get('/admin', { authorization: bearer(ADMIN) });
  assert.equal(admin.status, 200, admin.text);
  assert.deepEqual(admin.body, { type: 'anonymous', kind: null, key: null, route: null });
  for (const name of ['x-vendor-api-version-selected', 'x-ratelimit-limit', 'x-accepted-oauth-scopes']) assert.equal(admin.headers.get(name), null, name);
});

test('the version check: the selected version on every answer, a wrong one refused with the address\'s anonymous budget, uncounted', async () => {
  const address = freshAddress();
  const ok = await get('/public', { address, headers: { 'x-vendor-api-version': '2026-03-10' } });
  assert.equal(ok.status, 200);
  assert.equal(ok.headers.get('x-vendor-api-version-selected'), '2026-03-10');
  assert.deepEqual(budget(ok), [String(ANONYMOUS_LIMIT), '1', '1']);
  const wrong = await get('/public', { address, authorization: (await fresh('classic')).authorization, headers: { 'x-vendor-api-version': '1999-01-01' } });
  assert.equal(wrong.status, 400);
  assert.match(wrong.body.message, /No handler found for API version '1999-01-01'/);
  // The address's anonymous budget as it stands (read, not counted), though a token was sent.
  assert.deepEqual(budget(wrong), [String(ANONYMOUS_LIMIT), '1', '1']);
  assert.equal(wrong.headers.get('x-accepted-oauth-scopes'), null);
  assert.deepEqual(budget(await get('/public', { address })), [String(ANONYMOUS_LIMIT), '2', '0']);
});

test('the route\'s accepted scopes and permissions are announced, to any caller, refused or not', async () => {
  for (const answer of [await get('/tokens'), await get('/tokens', { authorization: (await fresh('classic', ['repo'])).authorization })]) {
    assert.equal(answer.headers.get('x-accepted-oauth-scopes'), 'repo');
    assert.equal(answer.headers.get('x-accepted-vendor-permissions'), 'issues=read; contents=write,metadata=read');
  }
  assert.equal((await get('/public')).headers.get('x-accepted-oauth-scopes'), '');
});

test('each caller is counted under its own key and limit; the one over the limit is refused, the one at it is not', async () => {
  const address = freshAddress();
  const anonymous = await get('/public', { address });
  assert.deepEqual(anonymous.body, { type: 'anonymous', kind: null, key: `ip:${address}`, route: false });
  assert.deepEqual(budget(anonymous), [String(ANONYMOUS_LIMIT), '1', '1']);
  assert.equal(anonymous.headers.get('x-ratelimit-resource'), 'core');
  assert.equal((await get('/public', { address })).status, 200);
  const over = await get('/public', { address });
  assert.equal(over.status, 403);
  assert.match(over.body.message, new RegExp(`^API rate limit exceeded for ${address.replaceAll('.', '\\.')}\\.`));
  assert.deepEqual(budget(over), [String(ANONYMOUS_LIMIT), '3', '0']);

  // A user's budget is the user's, whatever the address; the limit is the authenticated one.
  const classic = await fresh('classic', ['repo']);
  const statuses = [];
  for (let i = 0; i < LIMIT + 1; i++) {
    const answer = await get('/tokens', { authorization: classic.authorization });
    statuses.push(answer.status);
    if (i === 0) {
      assert.deepEqual(answer.body, { type: 'user', kind: 'classic', key: classic.key, route: true });
      assert.deepEqual(budget(answer), [String(LIMIT), '1', '2']);
    }
    if (i === LIMIT) assert.equal(answer.body.message, `API rate limit exceeded for user ID ${classic.key.slice('user:'.length)}.`);
  }
  assert.deepEqual(statuses, [200, 200, 200, 403]);

  const installationToken = await fresh('installation');
  const installation = await get('/tokens', { authorization: installationToken.authorization });
  assert.deepEqual(installation.body, { type: 'installation', kind: 'installation', key: installationToken.key, route: true });
  assert.deepEqual(budget(installation), [String(LIMIT), '1', '2']);

  const app = await get('/basic', { authorization: basicApp() });
  assert.deepEqual(app.body, { type: 'app', kind: 'basic', key: `app:${id.app}`, route: null });
  assert.deepEqual(budget(app), [String(LIMIT), '1', '2']);
});

test('content: counted a minute and an hour after the rule, each caller its own; over either window the secondary limit with Retry-After to its end', async () => {
  const post = (authorization?: string) => get('/content', { method: 'POST', ...(authorization ? { authorization } : {}) });
  const retryAfter = (answer: Answer) => Number(answer.headers.get('retry-after'));
  const a = await fresh('classic');
  assert.equal((await get('/classic', { authorization: a.authorization })).status, 200, 'a route that makes no content counts none');
  assert.equal((await post()).status, 401, 'refused by the rule: not counted');
  assert.equal((await post(a.authorization)).status, 200);
  const minute = await post(a.authorization);
  assert.equal(minute.status, 403);
  assert.match(minute.body.message, /^You have exceeded a secondary rate limit\. Please wait a few minutes before you try again\. If you reach out to support for help, please include the request ID /);
  assert.ok(retryAfter(minute) >= 1 && retryAfter(minute) <= 60, `Retry-After ${retryAfter(minute)}`);
  assert.deepEqual(budget(minute), [String(LIMIT), '3', '0'], 'the primary budget\'s headers');
  const b = await fresh('classic');
  assert.equal((await post(b.authorization)).status, 200, 'another caller: its own budget');
  clock.advance(61);
  assert.equal((await post(b.authorization)).status, 200, 'a new minute');
  clock.advance(61);
  const hour = await post(b.authorization);
  assert.equal(hour.status, 403, 'two an hour');
  assert.ok(retryAfter(hour) > 60 && retryAfter(hour) <= 3600 - 122, `Retry-After ${retryAfter(hour)}`);
});

test('Basic client credentials count on routes that take them (a wrong secret 404), and are a failed login elsewhere', async () => {
  const answer = await get('/basic', { authorization: basicApp() });
  assert.equal(answer.status, 200, answer.text);
  assert.equal(answer.body.type, 'app');
  assert.equal(answer.body.key, `app:${id.app}`);
  assert.equal(answer.headers.get('x-oauth-scopes'), null);
  // A wrong secret is Not Found there (the app is not disclosed), with no budget: only a 401 or 403 names the address's.
  const wrongSecret = await get('/basic', { authorization: `Basic ${Buffer.from('Iv1.hookapp:wrong').toString('base64')}` });
  assert.equal(wrongSecret.status, 404, wrongSecret.text);
  assert.equal(wrongSecret.headers.get('x-ratelimit-limit'), null);
  const elsewhere = await get('/public', { authorization: basicApp() });
  assert.equal(elsewhere.status, 401, elsewhere.text);
});

test('the scope header: a classic or OAuth token\'s scopes, no header for other callers', async () => {
  assert.equal((await get('/public', { authorization: (await fresh('classic', ['repo', 'user'])).authorization })).headers.get('x-oauth-scopes'), 'repo, user');
  assert.equal((await get('/public', { authorization: (await fresh('oauth', ['gist'])).authorization })).headers.get('x-oauth-scopes'), 'gist');
  assert.equal((await get('/public', { authorization: (await fresh('classic')).authorization })).headers.get('x-oauth-scopes'), '');
  for (const authorization of [(await fresh('fine_grained')).authorization, (await fresh('installation')).authorization, undefined]) {
    const answer = await get('/public', { authorization });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.headers.get('x-oauth-scopes'), null, authorization);
  }
});

test('the route\'s rule is checked after counting: no credentials 401, a credential of another kind 403, both counted', async () => {
  const address = freshAddress();
  const anonymous = await get('/classic', { address });
  assert.equal(anonymous.status, 401);
  assert.deepEqual(budget(anonymous), [String(ANONYMOUS_LIMIT), '1', '1']);
  const installation = await get('/classic', { authorization: (await fresh('installation')).authorization });
  assert.equal(installation.status, 403, installation.text);
  assert.equal(installation.headers.get('x-ratelimit-limit'), String(LIMIT));
  const fineGrained = await get('/classic', { authorization: (await fresh('fine_grained')).authorization });
  assert.equal(fineGrained.status, 403);
  assert.equal(fineGrained.headers.get('x-oauth-scopes'), null);
});

test('bad credentials: 401 with the address\'s anonymous budget, uncounted; the failed-login limit then refuses even the right token', async () => {
  const address = freshAddress();
  await get('/public', { address });
  for (let i = 0; i < FAILED_LOGINS; i++) {
    const wrong = await get('/public', { address, authorization: bearer('ghp_wrong') });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body.message, 'Bad credentials');
    assert.deepEqual(budget(wrong), [String(ANONYMOUS_LIMIT), '1', '1']);
  }
  // After exactly the limit of failures, the right token is refused too: 403 with the anonymous budget.
  const { authorization } = await fresh('fine_grained');
  const right = await get('/public', { address, authorization });
  assert.equal(right.status, 403, right.text);
  assert.match(right.body.message, /login attempts|rate limit/i);
  assert.deepEqual(budget(right), [String(ANONYMOUS_LIMIT), '1', '1']);
  // Without credentials the address is only under its anonymous budget.
  assert.equal((await get('/public', { address })).status, 200);
  // Another address is not held back.
  assert.equal((await get('/public', { authorization })).status, 200);
});

test('the uncounted route reads the budget without using it, answers over the limit, and a 304 there refunds nothing', async () => {
  const address = freshAddress();
  const first = await get('/uncounted', { address });
  assert.equal(first.status, 200);
  assert.deepEqual(first.body, { type: 'anonymous', kind: null, key: null, route: null });
  assert.deepEqual(budget(first), [String(ANONYMOUS_LIMIT), '0', String(ANONYMOUS_LIMIT)]);
  for (let i = 0; i < ANONYMOUS_LIMIT + 1; i++) await get('/public', { address });
  const spent = await get('/uncounted', { address });
  assert.equal(spent.status, 200);
  assert.deepEqual(budget(spent), [String(ANONYMOUS_LIMIT), '3', '0']);
  const again = await get('/uncounted', { address, headers: { 'if-none-match': spent.headers.get('etag')! } });
  assert.equal(again.status, 304);
  assert.deepEqual(budget(again), [String(ANONYMOUS_LIMIT), '3', '0']);
  assert.deepEqual(budget(await get('/uncounted', { address })), [String(ANONYMOUS_LIMIT), '3', '0']);
});

test('ETag: a GET 200\'s text body is tagged with its hash; a route\'s own tag is kept; other answers are not tagged', async () => {
  const answer = await get('/public');
  assert.equal(answer.headers.get('etag'), `W/"${hash('sha1', answer.text, 'hex')}"`);
  assert.equal((await get('/tagged')).headers.get('etag'), '"given"');
  assert.equal((await get('/tagged-bytes')).headers.get('etag'), '"b"');
  assert.equal((await get('/bytes')).headers.get('etag'), null);
  assert.equal((await get('/created')).headers.get('etag'), null);
  const posted = await get('/post', { method: 'POST' });
  assert.equal(posted.status, 200);
  assert.equal(posted.headers.get('etag'), null);
  // A POST that sends a matching If-None-Match is not answered 304.
  const tag = `W/"${hash('sha1', posted.text, 'hex')}"`;
  assert.equal((await get('/post', { method: 'POST', headers: { 'if-none-match': tag } })).status, 200);
  assert.equal((await get('/created', { headers: { 'if-none-match': '*' } })).status, 201);
});

test('304: no body, no content type; the request\'s count refunded (headers and store), If-None-Match deciding over If-Modified-Since', async () => {
  const { authorization } = await fresh('fine_grained');
  const first = await get('/tagged', { authorization });
  const [, used] = budget(first);
  const notModified = await get('/tagged', { authorization, headers: { 'if-none-match': '"given"' } });
  assert.equal(notModified.status, 304);
  assert.equal(notModified.text, '');
  assert.equal(notModified.headers.get('content-type'), null);
  assert.equal(notModified.headers.get('content-length'), null);
  assert.equal(notModified.headers.get('etag'), '"given"');
  // Counted, then given back: the headers show the budget as before the request, and so does the next.
  assert.deepEqual(budget(notModified), budget(first));
  assert.deepEqual(budget(await get('/tagged', { authorization })), [String(LIMIT), String(Number(used) + 1), String(LIMIT - Number(used) - 1)]);
  // A stale tag with a later date: the tag decides, a 200, counted.
  const stale = await get('/tagged', { authorization, headers: { 'if-none-match': '"old"', 'if-modified-since': new Date(Date.now() + 86_400_000).toUTCString() } });
  assert.equal(stale.status, 200);
  assert.deepEqual(budget(stale), [String(LIMIT), String(Number(used) + 2), String(LIMIT - Number(used) - 2)]);
  assert.equal((await get('/bytes', { headers: { 'if-none-match': '"old"' } })).status, 200);
  assert.equal((await get('/tagged-bytes', { headers: { 'if-none-match': 'W/"b"' } })).status, 304);
});

test('a 304 refund with two uses counted leaves one; a route that answers 304 itself refunds as well', async () => {
  const address = freshAddress();
  const first = await get('/early', { address });
  assert.equal(first.status, 200);
  assert.equal(first.headers.get('etag'), '"early"');
  const second = await get('/early', { address, headers: { 'if-none-match': '"early"' } });
  assert.equal(second.status, 304);
  assert.equal(second.text, '');
  assert.equal(second.headers.get('content-length'), null);
  assert.deepEqual(budget(second), [String(ANONYMOUS_LIMIT), '1', '1']);
  await get('/public', { address });
  const third = await get('/early', { address, headers: { 'if-none-match': '"early"' } });
  assert.equal(third.status, 403); // 3 of 2: refused before the route
  const address2 = freshAddress();
  await get('/public', { address: address2 });
  const refunded = await get('/early', { address: address2, headers: { 'if-none-match': '"early"' } });
  assert.deepEqual(budget(refunded), [String(ANONYMOUS_LIMIT), '1', '1']);
});

test('a 304 without a counted request (no rule) has no rate-limit headers to adjust', async () => {
  const first = await get('/untagged-no-rule');
  const again = await get('/untagged-no-rule', { headers: { 'if-none-match': first.headers.get('etag')! } });
  assert.equal(again.status, 304);
  assert.equal(again.headers.get('x-ratelimit-remaining'), null);
  assert.equal(again.headers.get('x-ratelimit-used'), null);
});
