// The input rules of src/http/ (version.ts, input.ts) on their own (no server): the version check
// (`selectApiVersion`), boolean query values as the platform reads them (`queryBoolean`,
// `booleanQueryKeys`), the JSON body (`parseJsonBody`), and no NUL in a stored name or text (`nulField`, `refuseNul`: a path value
// with one is 404, a query or body value 422 naming the field).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { bodyBoundsError, MAX_BODY_DEPTH } from '../platform/bounds.ts';
import { ApiError } from '../platform/errors.ts';
import { booleanQueryKeys, nulField, parseJsonBody, queryBoolean, refuseNul } from './input.ts';
import { API_VERSIONS, DEFAULT_API_VERSION, selectApiVersion } from './version.ts';
import { vendorNames } from '../platform/vendor.ts';

/** The version header a request sends, and what the reply was told to say. */
function selectVersion(requested: unknown): { selected: unknown; error: unknown } {
  const headers: Record<string, unknown> = {};
  const request = { headers: requested === undefined ? {} : { 'x-vendor-api-version': requested } } as unknown as FastifyRequest;
  const reply = { header: (name: string, value: unknown) => { headers[name] = value; } } as unknown as FastifyReply;
  try {
    selectApiVersion(vendorNames('Vendor'), request, reply);
    return { selected: headers['x-vendor-api-version-selected'], error: null };
  } catch (error) {
    return { selected: headers['x-vendor-api-version-selected'], error };
  }
}

test('selectApiVersion: none is the default; each known version is selected; another is 400 naming it and the supported ones, the reply saying the default', () => {
  assert.deepEqual(DEFAULT_API_VERSION, '2022-11-28');
  assert.deepEqual(selectVersion(undefined), { selected: DEFAULT_API_VERSION, error: null });
  for (const version of API_VERSIONS) assert.deepEqual(selectVersion(version), { selected: version, error: null });
  for (const version of ['2021-01-01', '', ' 2022-11-28']) {
    const { selected, error } = selectVersion(version);
    assert.equal(selected, DEFAULT_API_VERSION);
    assert.ok(error instanceof ApiError);
    assert.equal(error.status, 400);
    assert.equal(error.message, `No handler found for API version '${version}'. Supported versions: 2022-11-28, 2026-03-10.`);
  }
  // A header sent twice (an array) is not a version: the default.
  assert.deepEqual(selectVersion(['2026-03-10', '2026-03-10']), { selected: DEFAULT_API_VERSION, error: null });
});

test('selectApiVersion under another vendor word: its header, or the spec\'s, names the version; the answer says it in the word\'s header', () => {
  const names = vendorNames('GitHub');
  const select = (headers: Record<string, string>) => {
    const said: Record<string, unknown> = {};
    const reply = { header: (name: string, value: unknown) => { said[name] = value; } } as unknown as FastifyReply;
    selectApiVersion(names, { headers } as unknown as FastifyRequest, reply);
    return said;
  };
  assert.deepEqual(select({ 'x-github-api-version': '2026-03-10' }), { 'x-github-api-version-selected': '2026-03-10' });
  assert.deepEqual(select({ 'x-vendor-api-version': '2026-03-10' }), { 'x-github-api-version-selected': '2026-03-10' });
  assert.deepEqual(select({ 'x-github-api-version': '2026-03-10', 'x-vendor-api-version': '2022-11-28' }), { 'x-github-api-version-selected': '2026-03-10' });
  assert.deepEqual(select({}), { 'x-github-api-version-selected': DEFAULT_API_VERSION });
  assert.throws(() => select({ 'x-github-api-version': '2021-01-01', 'x-vendor-api-version': '2026-03-10' }), ApiError);
});

test('queryBoolean: true/false in any case and 1/0; anything else is left for the schema to refuse', () => {
  for (const value of ['true', 'True', 'TRUE', '1']) assert.equal(queryBoolean(value), true);
  for (const value of ['false', 'False', 'FALSE', '0']) assert.equal(queryBoolean(value), false);
  for (const value of ['yes', '', '2', 'truee', ' true']) assert.equal(queryBoolean(value), value);
  const list = ['true'];
  assert.equal(queryBoolean(list), list);
  assert.equal(queryBoolean(undefined), undefined);
});

test('booleanQueryKeys: the names of the boolean properties only', () => {
  assert.deepEqual(booleanQueryKeys({ properties: { all: { type: 'boolean' }, page: { type: 'integer' }, state: {}, x: null, y: { type: ['boolean'] }, participating: { type: 'boolean' } } }), ['all', 'participating']);
  assert.deepEqual(booleanQueryKeys({}), []);
  assert.deepEqual(booleanQueryKeys(undefined), []);
});

test('nulField: the dotted path of the first string, key or value, holding a NUL', () => {
  assert.equal(nulField('a\u0000b'), '');
  assert.equal(nulField('ab'), null);
  assert.equal(nulField(null), null);
  assert.equal(nulField(5), null);
  assert.equal(nulField({ title: 'ok', body: 'x\u0000' }), 'body');
  assert.equal(nulField({ a: { b: ['ok', 'n\u0000'] } }), 'a.b.1');
  assert.equal(nulField({ a: { ['k\u0000']: 1 } }), 'a.k\u0000');
  assert.equal(nulField({ a: 'x\u0000', b: 'y\u0000' }), 'a');
  assert.equal(nulField({ a: 'ok', b: { c: 'ok' } }), null);
  // Bounded in depth: beyond 64 levels the walk stops (the body bounds refuse such a body first).
  let deep: unknown = 'n\u0000';
  for (let i = 0; i < 65; i++) deep = { d: deep };
  assert.equal(nulField(deep), `${Array(65).fill('d').join('.')}`);
  deep = { d: deep };
  assert.equal(nulField(deep), null);
});

function refusal(request: { params?: unknown; query?: unknown; body?: unknown }): unknown {
  try {
    refuseNul(request as unknown as FastifyRequest);
    return null;
  } catch (error) {
    assert.ok(error instanceof ApiError);
    return { status: error.status, message: error.message, errors: error.errors };
  }
}

test('refuseNul: a path value with a NUL is 404; a query or body value 422 naming the part and field', () => {
  assert.equal(refusal({}), null);
  assert.equal(refusal({ params: { owner: 'a', id: 5 }, query: { q: 'x' }, body: { title: 't' } }), null);
  assert.deepEqual(refusal({ params: { owner: 'a\u0000' }, query: { q: 'x\u0000' } }), { status: 404, message: 'Not Found', errors: undefined });
  assert.deepEqual(refusal({ params: { owner: 'a' }, query: { q: 'x\u0000' }, body: { t: 'y\u0000' } }), {
    status: 422, message: 'Validation Failed', errors: [{ resource: 'query', field: 'q', code: 'invalid', message: 'q must not contain a NUL character' }],
  });
  assert.deepEqual(refusal({ body: { a: { b: 'y\u0000' } } }), {
    status: 422, message: 'Validation Failed', errors: [{ resource: 'body', field: 'a.b', code: 'invalid', message: 'a.b must not contain a NUL character' }],
  });
  assert.deepEqual(refusal({ body: 'raw\u0000' }), {
    status: 422, message: 'Validation Failed', errors: [{ resource: 'body', field: '', code: 'invalid', message: 'body must not contain a NUL character' }],
  });
});

test('parseJsonBody: blank is no body; JSON of any kind is read; anything else is 400 Problems parsing JSON; a body past the bounds is refused', () => {
  for (const text of ['', '  ', '\n\t']) assert.equal(parseJsonBody(text), undefined);
  assert.deepEqual(parseJsonBody(' {"title":"t","n":[1,2]} '), { title: 't', n: [1, 2] });
  assert.equal(parseJsonBody('"text"'), 'text');
  assert.equal(parseJsonBody('null'), null);
  for (const text of ['{', 'title=t', "{'a':1}"]) {
    assert.throws(() => parseJsonBody(text), (error) => error instanceof ApiError && error.status === 400 && error.message === 'Problems parsing JSON');
  }
  const deep = `${'['.repeat(MAX_BODY_DEPTH + 1)}${']'.repeat(MAX_BODY_DEPTH + 1)}`;
  const expected = bodyBoundsError(JSON.parse(deep));
  assert.ok(expected);
  assert.throws(() => parseJsonBody(deep), (error) => error instanceof ApiError && error.status === expected.status && error.message === expected.message);
  assert.deepEqual(parseJsonBody('[[1]]'), [[1]]);
});
