// The conditional-request rule of src/http/conditional.ts on its own (no server): If-None-Match, when
// sent, alone decides against the ETag (a list, weak comparison both ways, with spaces); otherwise
// If-Modified-Since against Last-Modified, to the second.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { unchanged } from './conditional.ts';

/** The two things `unchanged` reads: the request's headers and the reply's validators. */
function decide(requestHeaders: Record<string, string>, replyHeaders: Record<string, unknown>): boolean {
  const request = { headers: requestHeaders } as unknown as FastifyRequest;
  const reply = { getHeader: (name: string) => replyHeaders[name] } as unknown as FastifyReply;
  return unchanged(request, reply);
}

const TAG = 'W/"abc"';
const DATE = 'Tue, 03 Nov 2026 10:00:00 GMT';
const LATER = 'Tue, 03 Nov 2026 10:00:01 GMT';
const EARLIER = 'Tue, 03 Nov 2026 09:59:59 GMT';

test('If-None-Match: the tag, weak or strong, alone or in a list', () => {
  assert.equal(decide({ 'if-none-match': TAG }, { etag: TAG }), true);
  assert.equal(decide({ 'if-none-match': '"abc"' }, { etag: TAG }), true);
  assert.equal(decide({ 'if-none-match': '"x", W/"abc"' }, { etag: TAG }), true);
  assert.equal(decide({ 'if-none-match': '"x",  "abc"  ' }, { etag: TAG }), true);
  assert.equal(decide({ 'if-none-match': ' W/"abc" ,"y"' }, { etag: TAG }), true);
  // Weak comparison both ways: a strong tag on the reply matches the client's weak copy of it.
  assert.equal(decide({ 'if-none-match': 'W/"abc"' }, { etag: '"abc"' }), true);
  assert.equal(decide({ 'if-none-match': '"x", W/"abc"' }, { etag: '"abc"' }), true);
  assert.equal(decide({ 'if-none-match': '"abc"' }, { etag: '"abc"' }), true);
  assert.equal(decide({ 'if-none-match': 'W/"abd"' }, { etag: '"abc"' }), false);
  assert.equal(decide({ 'if-none-match': '"abc"W/' }, { etag: '"abc"' }), false);
  assert.equal(decide({ 'if-none-match': '"abc"' }, { etag: '"abc"W/' }), false);
  assert.equal(decide({ 'if-none-match': 'W/W/"abc"' }, { etag: TAG }), false);
  assert.equal(decide({ 'if-none-match': '"x", "y"' }, { etag: TAG }), false);
  assert.equal(decide({ 'if-none-match': 'W/"abd"' }, { etag: TAG }), false);
  assert.equal(decide({ 'if-none-match': 'abc' }, { etag: TAG }), false);
  assert.equal(decide({ 'if-none-match': '/"abc"' }, { etag: TAG }), false);
  assert.equal(decide({ 'if-none-match': '' }, { etag: TAG }), false);
  // No tag on the reply: nothing matches, even an empty header.
  assert.equal(decide({ 'if-none-match': TAG }, {}), false);
  assert.equal(decide({ 'if-none-match': '' }, { etag: 7 }), false);
});

test('If-None-Match decides when present: If-Modified-Since is not consulted', () => {
  assert.equal(decide({ 'if-none-match': '"stale"', 'if-modified-since': LATER }, { etag: TAG, 'last-modified': DATE }), false);
  assert.equal(decide({ 'if-none-match': TAG, 'if-modified-since': EARLIER }, { etag: TAG, 'last-modified': DATE }), true);
  assert.equal(decide({ 'if-none-match': '"stale"', 'if-modified-since': DATE }, { 'last-modified': DATE }), false);
});

test('If-Modified-Since: unchanged when Last-Modified is not after it', () => {
  assert.equal(decide({ 'if-modified-since': DATE }, { 'last-modified': DATE }), true);
  assert.equal(decide({ 'if-modified-since': LATER }, { 'last-modified': DATE }), true);
  assert.equal(decide({ 'if-modified-since': EARLIER }, { 'last-modified': DATE }), false);
  assert.equal(decide({ 'if-modified-since': DATE }, {}), false);
  assert.equal(decide({ 'if-modified-since': DATE }, { 'last-modified': Date.parse(DATE) }), false);
  // Only a Last-Modified header that is text is compared (a number would parse as a year).
  assert.equal(decide({ 'if-modified-since': DATE }, { 'last-modified': 2026 }), false);
  assert.equal(decide({ 'if-modified-since': 'not a date' }, { 'last-modified': DATE }), false);
  assert.equal(decide({}, { 'last-modified': DATE, etag: TAG }), false);
  assert.equal(decide({}, {}), false);
});
