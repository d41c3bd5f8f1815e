// The rate limiter's rules that need no database, on their own (no server): the over-limit message,
// the client's address as the limits count it, and the size of a lease.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FastifyRequest } from 'fastify';
import { bound, clientAddress, LOGIN_ATTEMPTS_EXCEEDED, leaseSize, MAX_ENTRIES, rateLimitExceededMessage } from './rate-limit.ts';

test('rateLimitExceededMessage: an id for accounts, the address and the hint for anonymous callers', () => {
  assert.equal(rateLimitExceededMessage('user:12'), 'API rate limit exceeded for user ID 12.');
  assert.equal(rateLimitExceededMessage('app:3'), 'API rate limit exceeded for app ID 3.');
  assert.equal(rateLimitExceededMessage('installation:7'), 'API rate limit exceeded for installation ID 7.');
  const hint = " (But here's the good news: Authenticated requests get a higher rate limit.)";
  assert.equal(rateLimitExceededMessage('ip:10.0.0.1'), `API rate limit exceeded for 10.0.0.1.${hint}`);
  assert.equal(rateLimitExceededMessage('ip:::1'), `API rate limit exceeded for ::1.${hint}`);
  assert.equal(rateLimitExceededMessage('failed-login:2001:db8::1'), `API rate limit exceeded for 2001:db8::1.${hint}`);
  assert.equal(LOGIN_ATTEMPTS_EXCEEDED, 'Maximum number of login attempts exceeded. Please try again later.');
});

test('clientAddress: the request\'s address in its normal form, else the socket\'s, else 0.0.0.0', () => {
  const address = (ip: string | undefined, socket?: string) =>
    clientAddress({ ip, socket: { remoteAddress: socket } } as unknown as FastifyRequest);
  assert.equal(address('192.0.2.7'), '192.0.2.7');
  assert.equal(address('192.0.2.7', '127.0.0.1'), '192.0.2.7');
  assert.equal(address('2001:0db8:0000:0000:0000:0000:0000:0001'), '2001:db8::1');
  assert.equal(address('2001:DB8::1'), '2001:db8::1');
  assert.equal(address('::1'), '::1');
  assert.equal(address('::ffff:192.0.2.7'), '192.0.2.7');
  assert.equal(address('::ffff:c000:207'), '192.0.2.7');
  assert.equal(address('::FFFF:10.255.0.1'), '10.255.0.1');
  assert.equal(address('::ffff:ff01:80'), '255.1.0.128');
  assert.equal(address('::fffe:c000:207'), '::fffe:c000:207');
  assert.equal(address('fe80::1%eth0', '127.0.0.1'), '127.0.0.1');
  assert.equal(address('not-an-address', '::ffff:127.0.0.1'), '127.0.0.1');
  assert.equal(address('', '10.0.0.2'), '10.0.0.2');
  assert.equal(address(undefined, '10.0.0.2'), '10.0.0.2');
  assert.equal(address('1'.repeat(46), '10.0.0.2'), '10.0.0.2');
  // 45 characters is the longest address text (an IPv4-mapped address in full).
  const longest = 'ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255';
  assert.equal(longest.length, 45);
  assert.equal(address(longest, '10.0.0.2'), 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff');
  assert.equal(address('0000:0000:0000:0000:0000:ffff:c000:0207'), '192.0.2.7');
  // Only a whole ::ffff:a:b is IPv4-mapped: not one with a group before it, nor one with a group after.
  assert.equal(address('1::ffff:c000:207'), '1::ffff:c000:207');
  assert.equal(address('0:0:0:0:ffff:1:2:3'), '::ffff:1:2:3');
  assert.equal(address(undefined, undefined), '0.0.0.0');
  assert.equal(address('junk', 'junk'), '0.0.0.0');
});

test('leaseSize: a fiftieth of the budget, at most the block, at least one', () => {
  assert.equal(leaseSize(5000, 50), 50);
  assert.equal(leaseSize(5000, 100), 100);
  assert.equal(leaseSize(5000, 200), 100);
  assert.equal(leaseSize(60, 50), 1);
  assert.equal(leaseSize(99, 50), 1);
  assert.equal(leaseSize(100, 50), 2);
  assert.equal(leaseSize(149, 50), 2);
  assert.equal(leaseSize(150, 50), 3);
  assert.equal(leaseSize(10, 50), 1);
  assert.equal(leaseSize(0, 50), 1);
  assert.equal(leaseSize(5000, 1), 1);
  assert.equal(leaseSize(5000, 0), 1);
});

test('bound: a map of MAX_ENTRIES keeps all; beyond it the oldest entries go first, down to MAX_ENTRIES', () => {
  const map = new Map<string, number>();
  for (let i = 0; i < MAX_ENTRIES; i++) map.set(`key-${i}`, i);
  bound(map);
  assert.equal(map.size, MAX_ENTRIES);
  assert.ok(map.has('key-0'));
  for (let i = MAX_ENTRIES; i < MAX_ENTRIES + 3; i++) map.set(`key-${i}`, i);
  bound(map);
  assert.equal(map.size, MAX_ENTRIES);
  assert.deepEqual([map.has('key-0'), map.has('key-1'), map.has('key-2'), map.has('key-3')], [false, false, false, true]);
  assert.ok(map.has(`key-${MAX_ENTRIES + 2}`));
});
