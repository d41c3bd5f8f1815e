// The conditional-request rule of src/http/conditional.ts on its own (no server): If-None-Match, when
// sent, alone decides against the ETag (a list, weak comparison both ways, with spaces); otherwise
// If-Modified-Since against Last-Modified, to the second.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Context } from '../platform/context.ts';
import { conditionalAnswer, unchanged } from './conditional.ts';

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

/** What conditionalAnswer makes of a 200 of `{"a":1}` to the method: its ETag, its status and the payload it passes on. */
function answerOf(method: string, requestHeaders: Record<string, string> = {}): { etag: unknown; status: number; payload: unknown } {
  const headers: Record<string, unknown> = {};
  const request = { method, headers: requestHeaders } as unknown as FastifyRequest;
  const reply = {
    statusCode: 200, request,
    getHeader: (name: string) => headers[name],
    header: (name: string, value: unknown) => { headers[name] = value; },
    removeHeader: (name: string) => { delete headers[name]; },
    code(status: number) { this.statusCode = status; },
  };
  let payload: unknown = 'not passed';
  conditionalAnswer({} as Context).call(null as never, request, reply as unknown as FastifyReply, '{"a":1}', ((_error: unknown, passed: unknown) => { payload = passed; }) as never);
  return { etag: headers.etag ?? null, status: reply.statusCode, payload };
}

test('the ETag of a 200: a GET and a HEAD get the same one (a HEAD answers as its GET), a write none', () => {
  const get = answerOf('GET');
  assert.match(String(get.etag), /^W\/"[0-9a-f]{40}"$/);
  assert.deepEqual(get, { etag: get.etag, status: 200, payload: '{"a":1}' });
  assert.deepEqual(answerOf('HEAD'), get);
  assert.deepEqual(answerOf('POST'), { etag: null, status: 200, payload: '{"a":1}' });
});

test('a current copy: the 304 on GET and on HEAD; the GET passes no content on, the HEAD its payload to Fastify\'s HEAD step (which sends none)', () => {
  const tag = String(answerOf('GET').etag);
  assert.deepEqual(answerOf('GET', { 'if-none-match': tag }), { etag: tag, status: 304, payload: null });
  assert.deepEqual(answerOf('HEAD', { 'if-none-match': tag }), { etag: tag, status: 304, payload: '{"a":1}' });
});
