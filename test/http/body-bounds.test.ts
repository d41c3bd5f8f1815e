// Every body, admin or public, is bounded before any work: nesting deeper than MAX_BODY_DEPTH or an
// array longer than MAX_BODY_ARRAY_ITEMS is a 422 naming where, never a 500 (a stack overflow in
// JSON.stringify or a schema's deep clone) nor seconds of work before a refusal.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MAX_BODY_ARRAY_ITEMS, MAX_BODY_DEPTH } from '../../src/platform/bounds.ts';
import { classicToken } from '../helpers/credentials.ts';
import { ADMIN_TOKEN, startServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let token: string;

/** An object nested `levels` deep, as JSON text: {"a": {"a": ... {"a": 1}}} (JSON.stringify itself overflows the stack on it). */
const nested = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;

/** Sends a JSON text to /_admin. */
async function adminText(method: string, path: string, text: string) {
  const response = await fetch(`${server.url}/_admin${path}`, { method, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: text });
  const body = await response.text();
  return { status: response.status, text: body, body: JSON.parse(body) };
}

before(async () => {
  server = await startServer();
  await server.admin('POST', '/users', { login: 'mona' });
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'] });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
  token = await classicToken(server, 'mona', ['repo', 'user']);
});
after(() => server.close());

function assertRefused(response: { status: number; text: string; body: any }, field: RegExp) {
  assert.equal(response.status, 422, response.text.slice(0, 300));
  assert.equal(response.body.message, 'Validation Failed');
  assert.match(response.body.errors[0].field, field);
}

describe('admin bodies', () => {
  test('POST /_admin/events with a payload nested 5,000 levels: 422', async () => {
    assertRefused(await adminText('POST', '/events', `{"event":"ping","sender":"mona","payload":${nested(5000)}}`), /^payload(\.a)+$/);
  });

  test('PUT /_admin/orgs/{org}/assistant with a day record nested 3,000 levels: 422', async () => {
    assertRefused(await adminText('PUT', '/orgs/acme/assistant', `{"metrics_policy":"enabled","days":[{"date":"2026-01-01","extra":${nested(3000)}}]}`), /^days\.0\.extra/);
  });

  test('a team created with 100,000 members: 422 at once', async () => {
    const members = Array.from({ length: 100_000 }, (_, i) => `user-${i}`);
    const started = performance.now();
    const response = await server.adminRaw('POST', '/orgs/acme/teams', { slug: 'huge', name: 'Huge', members });
    assert.ok(performance.now() - started < 2000, `${Math.round(performance.now() - started)} ms`);
    assertRefused(response, /^members$/);
    assert.match(response.body.errors[0].message, new RegExp(`more than ${MAX_BODY_ARRAY_ITEMS} items`));
  });

  test('at the bounds a body still passes to its schema', async () => {
    // Nested exactly to the limit: the payload is accepted (a raw event has no schema for it).
    const event = (levels: number) => adminText('POST', '/events', `{"event":"ping","sender":"mona","payload":${nested(levels)}}`);
    const ok = await event(MAX_BODY_DEPTH - 1);
    assert.equal(ok.status, 201, ok.text);
    const over = await event(MAX_BODY_DEPTH);
    assert.equal(over.status, 422, over.text);
  });
});

describe('public bodies', () => {
  test('the same bounds: a deep or huge body is a 422', async () => {
    assertRefused(await server.api('POST', '/user/migrations', { token, rawBody: `{"repositories":["widgets"],"extra":${nested(10_000)}}`, headers: { 'content-type': 'application/json' } }), /^extra/);
    assertRefused(await server.api('POST', '/user/migrations', { token, body: { repositories: Array.from({ length: MAX_BODY_ARRAY_ITEMS + 1 }, () => 'widgets') } }), /^repositories$/);
    assert.equal((await server.api('GET', '/user', { token })).status, 200, 'the server is well');
  });
});
