// The notifications list after the test double puts an earlier world back (POST /_admin/reset, a
// snapshot restored): the versions a page and a repository's JSON are kept by go back with the rows,
// and climb again through other changes. A page or a repository kept from before must never be
// answered for the world that came back.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { classicToken } from '../../helpers/credentials.ts';
import { notify } from '../../helpers/conditional.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

let server: TestServer;
let token: string;

const list = () => server.api('GET', '/notifications?all=true', { token });
const shown = async () => {
  const answer = await list();
  const threads = answer.body as { subject: { title: string }; repository: { description: string | null } }[];
  return { titles: threads.map((t) => t.subject.title), description: threads[0]?.repository.description, etag: answer.headers.get('etag')! };
};

before(async () => {
  server = await startServer();
  await server.admin('POST', '/users', { login: 'hubot' });
  await server.admin('POST', '/repos', { owner: 'hubot', name: 'widgets' });
  token = await classicToken(server, 'hubot', ['notifications']);
  await notify(server, 'hubot', 'hubot/widgets', 'first');
  await shown();
  assert.equal((await server.adminRaw('POST', '/snapshots', { name: 'start' })).status, 201);
});
after(() => server?.close());

for (const [how, replace] of [
  ['a snapshot restored', () => server.adminRaw('POST', '/snapshots/start/restore', {})],
  ['a reset to a seed of the same world', () => server.adminRaw('POST', '/reset', { to: 'seed', seed: JSON.stringify({ users: [{ login: 'hubot' }], repos: [{ owner: 'hubot', name: 'widgets' }] }) })],
] as const) {
  test(`${how}, climbing back to the same versions through other changes: its own threads and repository, never a page, a repository or a 304 of the world before`, async () => {
    await notify(server, 'hubot', 'hubot/widgets', 'before');
    await server.admin('PATCH', '/repos/hubot/widgets', { description: 'before' });
    const before = await shown();
    assert.equal(before.titles[0], 'before');
    assert.equal(before.description, 'before');
    assert.equal((await replace()).status, 200);
    if (how.startsWith('a reset')) {
      token = await classicToken(server, 'hubot', ['notifications']);
      await notify(server, 'hubot', 'hubot/widgets', 'first');
      await shown();
    }
    assert.deepEqual((await shown()).titles, ['first']);
    await notify(server, 'hubot', 'hubot/widgets', 'after');
    await server.admin('PATCH', '/repos/hubot/widgets', { description: 'after' });
    const after = await shown();
    assert.deepEqual(after.titles, ['after', 'first']);
    assert.equal(after.description, 'after');
    assert.notEqual(after.etag, before.etag);
    assert.equal((await server.api('GET', '/notifications?all=true', { token, headers: { 'if-none-match': before.etag } })).status, 200, 'the tag of the world before is not current');
  });
}
