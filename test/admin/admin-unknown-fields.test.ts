// An operator body with a field the operation does not know is a 422 naming it, in the platform's
// validation-error shape, for every admin operation (issue 37: `"private": true` was ignored and the
// repository created public). Seed files go through the same schemas: an unknown key in an entry
// fails the load, before anything is created.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;

before(async () => {
  server = await startServer();
  await server.admin('POST', '/users', { login: 'uma' });
});
after(() => server.close());

function assertUnknownField(response: { status: number; body: any; text: string }, field: string): void {
  assert.equal(response.status, 422, response.text);
  assert.equal(response.body.message, 'Validation Failed');
  assert.deepEqual(response.body.errors, [{ resource: 'body', field, code: 'invalid', message: `${field} is not a permitted key` }]);
  assert.equal(typeof response.body.documentation_url, 'string');
}

test('POST /_admin/repos with "private": true is refused, naming the field; nothing is created', async () => {
  assertUnknownField(await server.adminRaw('POST', '/repos', { owner: 'uma', name: 'secret', private: true }), 'private');
  assert.equal((await server.api('GET', '/repos/uma/secret')).status, 404);
  const made = await server.adminRaw('POST', '/repos', { owner: 'uma', name: 'secret', visibility: 'private' });
  assert.equal(made.status, 201, made.text);
  assert.equal(made.body.private, true);
});

test('every operator route: a create, a nested object, a change, another area\'s route', async () => {
  assertUnknownField(await server.adminRaw('POST', '/users', { login: 'ulla', admin: true }), 'admin');
  assertUnknownField(await server.adminRaw('POST', '/apps', { slug: 'hooky', webhook: { url: 'http://127.0.0.1:9/x', sekret: 'x' } }), 'webhook.sekret');
  assertUnknownField(await server.adminRaw('PATCH', '/repos/uma/secret', { visibility: 'public', private: false }), 'private');
  assertUnknownField(await server.adminRaw('POST', '/repos/uma/secret/issues', { author: 'uma', title: 'T', labels: ['bug'] }), 'labels');
  assertUnknownField(await server.adminRaw('PUT', '/orgs/none/members/uma', { role: 'owner', admin: true }), 'admin');
  assertUnknownField(await server.adminRaw('POST', '/jobs/drain', { timeout: 1 }), 'timeout');
  // A map stays a map: a raw event's payload takes any field.
  const event = await server.adminRaw('POST', '/events', { event: 'ping', sender: 'uma', payload: { anything: 1, zen: 'yes' } });
  assert.equal(event.status, 201, event.text);
});

test('a seed file with a key its entry does not know fails the load, before anything is created', async () => {
  const seed = ['users:', '  - login: sid', 'repos:', '  - owner: sid', '    name: hidden', '    private: true', ''].join('\n');
  const refused = await server.adminRaw('POST', '/reset', { to: 'seed', seed });
  assert.equal(refused.status, 422, refused.text);
  assert.equal(refused.body.errors[0].field, 'repos[0]/private');
  assert.match(refused.body.errors[0].message, /private/);
  assert.equal((await server.api('GET', '/users/sid')).status, 404);
  // An unknown key in an entry of a key with a prefix (teams carry their org), and an area's key.
  const team = ['users:', '  - login: sid', 'orgs:', '  - login: sid-org', '    owners: [sid]', 'teams:', '  - org: sid-org', '    slug: t', '    maintainers: [sid]', ''].join('\n');
  const teamRefused = await server.adminRaw('POST', '/reset', { to: 'seed', seed: team });
  assert.equal(teamRefused.status, 422, teamRefused.text);
  assert.match(teamRefused.body.errors[0].message, /maintainers/);
  const fine = await server.adminRaw('POST', '/reset', { to: 'seed', seed: team.replace('    maintainers: [sid]\n', '') });
  assert.equal(fine.status, 200, fine.text);
  assert.equal((await server.api('GET', '/users/sid')).status, 200);
});
