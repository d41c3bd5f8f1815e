// The RateLimiter on a real database (SQLite, or PostgreSQL when DATABASE_URL is set), no server:
// counting, windows that reset an hour after their first request, leases shared by processes,
// refunds, peeks, the failed-login limit (a right credential after exactly `limit` failures is
// refused), the sweep, key checks and headers. The clock is held still (a Clock whose time the test
// sets), so the window boundaries are exact to the second.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../test/helpers/database.ts';
import { openDatabase, type Db } from '../db/index.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { Clock } from './clock.ts';
import { ApiError } from './errors.ts';
import { LOGIN_ATTEMPTS_EXCEEDED, RateLimiter, rateLimitHeaders, type RateLimitKey } from './rate-limit.ts';

/** A clock that shows the time the test sets. */
class StillClock extends Clock {
  ms = Date.UTC(2026, 5, 1, 12, 0, 0);
  override nowMs(): number {
    return this.ms;
  }
  seconds(): number {
    return Math.floor(this.ms / 1000);
  }
}

let testDatabase: TestDatabase;
let db: Db;

before(async () => {
  testDatabase = await createTestDatabase();
  db = openDatabase({ databaseUrl: testDatabase.databaseUrl, sqlitePath: `${testDatabase.dataDir}/codehost.db` });
  await migrateToLatest(db);
});

after(async () => {
  await db?.close();
  await testDatabase?.drop();
});

let next = 1;
/** A key no other test uses. */
const freshUser = (): RateLimitKey => `user:${next++}`;

test('hit: counts one a request, remaining never below 0, the window resets an hour after its first request', async () => {
  const clock = new StillClock();
  const limiter = new RateLimiter(db.kysely, clock);
  const key = freshUser();
  const start = clock.seconds();
  const states = [];
  for (let i = 0; i < 4; i++) states.push(await limiter.hit(key, 3));
  assert.deepEqual(states.map((s) => [s.used, s.remaining]), [[1, 2], [2, 1], [3, 0], [4, 0]]);
  for (const state of states) assert.deepEqual({ limit: state.limit, reset: state.reset, resource: state.resource }, { limit: 3, reset: start + 3600, resource: 'core' });
  clock.ms += 3599_000;
  assert.equal((await limiter.hit(key, 3, 'search')).used, 5);
  assert.equal((await limiter.hit(key, 3, 'search')).resource, 'search');
  clock.ms += 1000;
  const fresh = await limiter.hit(key, 3);
  assert.deepEqual(fresh, { limit: 3, used: 1, remaining: 2, reset: start + 7200, resource: 'core' });
});

test('hit: processes share the count through leases; no number is given twice', async () => {
  const clock = new StillClock();
  const one = new RateLimiter(db.kysely, clock, { block: 10, cacheMs: 0 });
  const two = new RateLimiter(db.kysely, clock, { block: 10, cacheMs: 0 });
  const key = freshUser();
  // A budget of 1000: leases of 10 (a fiftieth is 20, the block 10).
  assert.equal((await one.hit(key, 1000)).used, 1);
  assert.equal((await two.hit(key, 1000)).used, 11);
  for (let i = 2; i <= 10; i++) assert.equal((await one.hit(key, 1000)).used, i);
  assert.equal((await one.hit(key, 1000)).used, 21);
  assert.equal((await two.hit(key, 1000)).used, 12);
  // A small budget stays exact per request across processes.
  const small = freshUser();
  assert.equal((await one.hit(small, 60)).used, 1);
  assert.equal((await two.hit(small, 60)).used, 2);
  assert.equal((await one.hit(small, 60)).used, 3);
  // Concurrent requests of one process share one lease.
  const burst = freshUser();
  const used = (await Promise.all(Array.from({ length: 5 }, () => one.hit(burst, 1000)))).map((s) => s.used).sort((a, b) => a - b);
  assert.deepEqual(used, [1, 2, 3, 4, 5]);
});

test('hit: beyond the limit a process counts on in memory', async () => {
  const clock = new StillClock();
  const limiter = new RateLimiter(db.kysely, clock, { block: 2, cacheMs: 0 });
  const other = new RateLimiter(db.kysely, clock, { block: 2, cacheMs: 0 });
  const key = freshUser();
  // limit 100: leases of 2. The lease that starts at 101 is beyond the limit: so is every later number.
  for (let i = 1; i <= 100; i++) await other.hit(key, 100);
  assert.deepEqual([(await limiter.hit(key, 100)).used, (await limiter.hit(key, 100)).used, (await limiter.hit(key, 100)).used], [101, 102, 103]);
  assert.equal((await other.hit(key, 100)).remaining, 0);
});

test('peek: the count without counting, from memory or the database; 0 in a new window', async () => {
  const clock = new StillClock();
  const limiter = new RateLimiter(db.kysely, clock);
  const reader = new RateLimiter(db.kysely, clock);
  const key = freshUser();
  const start = clock.seconds();
  assert.deepEqual(await reader.peek(key, 10), { limit: 10, used: 0, remaining: 10, reset: start + 3600, resource: 'core' });
  await limiter.hit(key, 10);
  await limiter.hit(key, 10);
  assert.deepEqual(await limiter.peek(key, 10, 'graphql'), { limit: 10, used: 2, remaining: 8, reset: start + 3600, resource: 'graphql' });
  assert.deepEqual(await reader.peek(key, 10), { limit: 10, used: 2, remaining: 8, reset: start + 3600, resource: 'core' });
  clock.ms += 3599_000;
  assert.equal((await reader.peek(key, 10)).used, 2);
  assert.equal((await limiter.peek(key, 10)).used, 2);
  clock.ms += 1000;
  assert.deepEqual(await reader.peek(key, 10), { limit: 10, used: 0, remaining: 10, reset: start + 7200, resource: 'core' });
  assert.deepEqual(await limiter.peek(key, 10), { limit: 10, used: 0, remaining: 10, reset: start + 7200, resource: 'core' });
});

test('refund: a request given back is counted again by the next one; never below none', async () => {
  const clock = new StillClock();
  const limiter = new RateLimiter(db.kysely, clock);
  const key = freshUser();
  await limiter.refund(key);
  assert.equal((await limiter.hit(key, 10)).used, 1);
  await limiter.refund(key);
  assert.equal((await limiter.peek(key, 10)).used, 0);
  await limiter.refund(key);
  assert.equal((await limiter.peek(key, 10)).used, 0);
  assert.equal((await limiter.hit(key, 10)).used, 1);
  assert.equal((await limiter.hit(key, 10)).used, 2);
  await limiter.refund(key);
  await limiter.refund(key);
  assert.equal((await limiter.peek(key, 10)).used, 0);
  assert.equal((await limiter.hit(key, 10)).used, 1);
  assert.equal((await limiter.hit(key, 10)).used, 2);
  assert.equal((await limiter.hit(key, 10)).used, 3);
  // A refund in an expired window gives nothing back to the next one.
  clock.ms += 3600_000;
  await limiter.refund(key);
  assert.equal((await limiter.hit(key, 10)).used, 1);
});

const wrong = () => Promise.reject(new ApiError(401, 'Bad credentials'));
const right = () => Promise.resolve('ok');
const is401 = (error: unknown) => error instanceof ApiError && error.status === 401;
const refused = (error: unknown) => error instanceof ApiError && error.status === 403 && error.message === LOGIN_ATTEMPTS_EXCEEDED;

test('guardLogin: limit failures get their own error, then everything is refused, a right credential too, until the window resets', async () => {
  const clock = new StillClock();
  const limiter = new RateLimiter(db.kysely, clock);
  const address = '192.0.2.10';
  for (let i = 0; i < 2; i++) await assert.rejects(limiter.guardLogin(address, 3, wrong, is401), is401);
  assert.equal(await limiter.guardLogin(address, 3, right, is401), 'ok');
  await assert.rejects(limiter.guardLogin(address, 3, wrong, is401), is401);
  // Exactly `limit` failures: the right credential is refused.
  await assert.rejects(limiter.guardLogin(address, 3, right, is401), refused);
  await assert.rejects(limiter.guardLogin(address, 3, wrong, is401), refused);
  // Another process reads the count from the database.
  const other = new RateLimiter(db.kysely, clock);
  await assert.rejects(other.guardLogin(address, 3, right, is401), refused);
  assert.equal(await other.guardLogin('192.0.2.11', 3, right, is401), 'ok');
  clock.ms += 3599_000;
  await assert.rejects(limiter.guardLogin(address, 3, right, is401), refused);
  clock.ms += 1000;
  assert.equal(await limiter.guardLogin(address, 3, right, is401), 'ok');
  assert.equal(await other.guardLogin(address, 3, right, is401), 'ok');
});

test('guardLogin: the failure that goes over the limit is refused; errors that are no failed login are not counted', async () => {
  const clock = new StillClock();
  const limiter = new RateLimiter(db.kysely, clock);
  const other = new RateLimiter(db.kysely, clock, { block: 1, cacheMs: 60_000 });
  const address = '2001:db8::7';
  const broken = new Error('database down');
  for (let i = 0; i < 5; i++) await assert.rejects(limiter.guardLogin(address, 1, () => Promise.reject(broken), is401), (error) => error === broken);
  assert.equal(await other.guardLogin(address, 1, right, is401), 'ok');
  // `other` trusts its read for a minute: the failure of `limiter` counts in the database, and the
  // next failure judged by `other` is refused by the upsert that counts it.
  await assert.rejects(limiter.guardLogin(address, 1, wrong, is401), is401);
  await assert.rejects(limiter.guardLogin(address, 1, right, is401), refused);
  await assert.rejects(other.guardLogin(address, 1, wrong, is401), refused);
  await assert.rejects(other.guardLogin(address, 1, right, is401), refused);
});

test('hit: a lease that comes back beyond the limit is never re-leased; one that ends at the limit is', async () => {
  const clock = new StillClock();
  const one = new RateLimiter(db.kysely, clock, { block: 2, cacheMs: 0 });
  const two = new RateLimiter(db.kysely, clock, { block: 2, cacheMs: 0 });
  const reader = new RateLimiter(db.kysely, clock);
  const key = freshUser();
  // limit 101: leases of 2. `two` uses 1..98; `one` leases 99..100; `two` then leases 101..102.
  for (let i = 1; i <= 98; i++) await two.hit(key, 101);
  assert.deepEqual([(await one.hit(key, 101)).used, (await one.hit(key, 101)).used], [99, 100]);
  assert.equal((await two.hit(key, 101)).used, 101);
  // `one`'s lease ended at the limit (its next number, 101, is not beyond it): it leases again, and
  // gets 103, not the 101 that `two` holds. That lease is beyond the limit: `one` counts on in memory.
  assert.deepEqual([(await one.hit(key, 101)).used, (await one.hit(key, 101)).used, (await one.hit(key, 101)).used], [103, 104, 105]);
  for (let i = 0; i < 5; i++) await one.hit(key, 101);
  assert.equal((await one.hit(key, 101)).used, 111);
  // The database saw no lease after 103..104.
  assert.equal((await reader.peek(key, 101)).used, 104);
});

test('refund: a request given back while the next lease is taken counts again in it; never into a new window', async () => {
  const clock = new StillClock();
  const limiter = new RateLimiter(db.kysely, clock);
  const key = freshUser();
  assert.equal((await limiter.hit(key, 10)).used, 1);
  // The second request waits for its lease (limit 10: one number a lease) while the first is given back.
  const second = limiter.hit(key, 10);
  await limiter.refund(key);
  assert.equal((await second).used, 1);
  assert.equal((await limiter.hit(key, 10)).used, 2);
  // A refund not yet counted again is not carried into the next window.
  await limiter.refund(key);
  assert.equal((await limiter.peek(key, 10)).used, 1);
  clock.ms += 3600_000;
  assert.deepEqual([(await limiter.hit(key, 10)).used, (await limiter.hit(key, 10)).used], [1, 2]);
});

test('sweep: keeps the leases of windows still running', async () => {
  const clock = new StillClock();
  const limiter = new RateLimiter(db.kysely, clock, { block: 10, cacheMs: 0 });
  const key = freshUser();
  assert.equal((await limiter.hit(key, 1000)).used, 1);
  clock.ms += 3599_000;
  await limiter.sweep();
  assert.equal((await limiter.hit(key, 1000)).used, 2);
});

test('forget: what the process holds in memory goes; the next reads come from the database', async () => {
  const clock = new StillClock();
  const limiter = new RateLimiter(db.kysely, clock, { block: 10, cacheMs: 60_000 });
  const other = new RateLimiter(db.kysely, clock);
  const key = freshUser();
  await limiter.hit(key, 1000);
  assert.equal((await limiter.peek(key, 1000)).used, 1);
  limiter.forget();
  assert.equal((await limiter.peek(key, 1000)).used, 10);
  const address = '192.0.2.30';
  assert.equal(await limiter.guardLogin(address, 1, right, is401), 'ok');
  await assert.rejects(other.guardLogin(address, 1, wrong, is401), is401);
  assert.equal(await limiter.guardLogin(address, 1, right, is401), 'ok');
  limiter.forget();
  await assert.rejects(limiter.guardLogin(address, 1, right, is401), refused);
});

/** Waits until the process has run `ms` (performance.now() counts from its start). */
async function processAge(ms: number): Promise<number> {
  const age = performance.now();
  if (age < ms) await new Promise((resolve) => setTimeout(resolve, ms - age));
  return Math.floor(performance.now());
}

test('guardLogin: another process\'s failures are read at most once per cacheMs; with 0, every time', async () => {
  const clock = new StillClock();
  // A cache time of the process's age (at least a second): the time since a read decides, not a sum
  // of the two readings (which is past it).
  const cached = new RateLimiter(db.kysely, clock, { block: 1, cacheMs: await processAge(1000) });
  const uncached = new RateLimiter(db.kysely, clock);
  const other = new RateLimiter(db.kysely, clock);
  const address = '192.0.2.31';
  assert.equal(await cached.guardLogin(address, 2, right, is401), 'ok');
  assert.equal(await uncached.guardLogin(address, 2, right, is401), 'ok');
  for (let i = 0; i < 2; i++) await assert.rejects(other.guardLogin(address, 2, wrong, is401), is401);
  await assert.rejects(uncached.guardLogin(address, 2, right, is401), refused);
  // `cached` read 0 a moment ago and trusts it.
  assert.equal(await cached.guardLogin(address, 2, right, is401), 'ok');
});

test('guardLogin: a remembered count is of its window; a failure in the next window starts it again', async () => {
  const clock = new StillClock();
  const limiter = new RateLimiter(db.kysely, clock, { block: 1, cacheMs: 60_000 });
  const address = '192.0.2.32';
  for (let i = 0; i < 2; i++) await assert.rejects(limiter.guardLogin(address, 2, wrong, is401), is401);
  await assert.rejects(limiter.guardLogin(address, 2, right, is401), refused);
  // Exactly an hour after the window's first failure it has run out.
  clock.ms += 3600_000;
  assert.equal(await limiter.guardLogin(address, 2, right, is401), 'ok');
  await assert.rejects(limiter.guardLogin(address, 2, wrong, is401), is401);
  assert.equal(await limiter.guardLogin(address, 2, right, is401), 'ok');
  await assert.rejects(limiter.guardLogin(address, 2, wrong, is401), is401);
  await assert.rejects(limiter.guardLogin(address, 2, right, is401), refused);
});

test('sweep: removes the windows that have run out', async () => {
  const clock = new StillClock();
  clock.ms += 86_400_000;
  const limiter = new RateLimiter(db.kysely, clock);
  // The counters of the tests before (a day earlier) go first.
  await limiter.sweep();
  assert.equal(await limiter.sweep(), 0);
  const old = freshUser();
  await limiter.hit(old, 10);
  await assert.rejects(limiter.guardLogin('198.51.100.1', 5, wrong, is401), is401);
  clock.ms += 1800_000;
  const recent = freshUser();
  await limiter.hit(recent, 10);
  clock.ms += 1799_000;
  assert.equal(await limiter.sweep(), 0);
  clock.ms += 1000;
  assert.equal(await limiter.sweep(), 2);
  assert.equal(await limiter.sweep(), 0);
  assert.equal((await limiter.peek(recent, 10)).used, 1);
  assert.equal((await limiter.hit(old, 10)).used, 1);
  clock.ms += 1800_000;
  assert.equal(await limiter.sweep(), 1);
  assert.equal((await limiter.peek(old, 10)).used, 1);
  assert.equal((await limiter.peek(recent, 10)).used, 0);
});

test('keys: only ids and addresses', async () => {
  const limiter = new RateLimiter(db.kysely, new StillClock());
  // The longest address text (45 characters) followed by one more: the whole rest of the key must be an address.
  const longest = 'ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255';
  const crafted = ['xip:10.0.0.1', 'user:1ip:10.0.0.1', `ip:${longest}x`, `failed-login:${longest}0`];
  for (const key of ['user:0', 'user:01', 'user:x', 'user:', 'user:12345678901234567', 'team:1', 'ip:', 'ip:x', 'ip:1', 'ip:example.com', 'failed-login:999.1.1.1', `ip:${'1'.repeat(46)}`, ' user:1', 'user:1 ', ...crafted]) {
    await assert.rejects(limiter.hit(key as RateLimitKey, 10), /not a rate-limit key/, key);
    await assert.rejects(limiter.peek(key as RateLimitKey, 10), /not a rate-limit key/, key);
    assert.throws(() => limiter.refund(key), /not a rate-limit key/, key);
  }
  for (const key of ['user:1234567890123456', 'app:9', 'installation:1', 'ip:10.0.0.1', 'ip:::1', 'failed-login:2001:db8::1']) {
    assert.equal((await limiter.peek(key as RateLimitKey, 10)).used, 0, key);
  }
  await assert.rejects(limiter.guardLogin('not an address', 3, right, is401), /not a rate-limit key/);
  await limiter.refund('user:1');
  // The message quotes at most 80 characters of a refused key.
  await assert.rejects(limiter.hit(`user:${'9'.repeat(100)}` as RateLimitKey, 10), { message: `not a rate-limit key: "user:${'9'.repeat(75)}"` });
});

test('rateLimitHeaders: the five headers', () => {
  assert.deepEqual(rateLimitHeaders({ limit: 60, used: 61, remaining: 0, reset: 1_780_000_000, resource: 'core' }), {
    'x-ratelimit-limit': '60',
    'x-ratelimit-remaining': '0',
    'x-ratelimit-used': '61',
    'x-ratelimit-reset': '1780000000',
    'x-ratelimit-resource': 'core',
  });
});

test('guardLogin: two counts of one window remembered out of order keep the higher (concurrent failures answer in any order)', async () => {
  // On one connection the answers come in order, and a pool's order cannot be forced: the rule is
  // called directly, as two concurrent failures' answers would call it (the 5th, then the 3rd).
  const clock = new StillClock();
  const limiter = new RateLimiter(db.kysely, clock, { block: 1, cacheMs: 60_000 });
  const address = '192.0.2.33';
  const remember = (limiter as unknown as { remember(key: string, used: number, windowStart: number): void }).remember.bind(limiter);
  const windowStart = Math.floor(clock.ms / 1000);
  remember(`failed-login:${address}`, 5, windowStart);
  remember(`failed-login:${address}`, 3, windowStart);
  // The remembered 5 is over a limit of 4: a right credential is refused (with 3 it would pass).
  await assert.rejects(limiter.guardLogin(address, 4, right, is401), refused);
  // A lower count of a later window replaces it.
  remember(`failed-login:${address}`, 1, windowStart + 3600);
  clock.ms += 3600_000;
  assert.equal(await limiter.guardLogin(address, 4, right, is401), 'ok');
});
