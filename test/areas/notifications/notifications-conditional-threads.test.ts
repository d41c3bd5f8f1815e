// Conditional GETs of one thread and of its subscription (issue 22): decided, like the lists, from the
// validator read before the thread is loaded or rendered. A 304 must never hide a change: for each
// cause below, a GET carrying the validators of the answer before the change (If-None-Match, and
// If-Modified-Since on its own) gets the new answer (a 200 with the change, or the 404 of a thread
// the user can no longer see), on both routes, and the new validators give a 304 again.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { changeNotHidden, notify as notifyAs, seenAndUnchanged } from '../../helpers/conditional.ts';
import { classicToken } from '../../helpers/credentials.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

let database: TestDatabase;
let server: TestServer;
let hubot: string;

const notify = (repository: string, title: string) => notifyAs(server, 'hubot', repository, title);

const get = (path: string, headers: Record<string, string> = {}) => server.api('GET', path, { token: hubot, headers });
const db = () => server.server.ctx.db.kysely;

/** The thread of hubot's notification about `title`. */
async function threadOf(title: string): Promise<string> {
  const threads = (await get('/notifications?all=true')).body as { id: string; subject: { title: string } }[];
  return threads.find((t) => t.subject.title === title)!.id;
}

const routes = (id: string) => [`/notifications/threads/${id}`, `/notifications/threads/${id}/subscription`];

/**
 * Before `change`, both validators of both routes give 304; after it neither hides it: the new
 * answer (a 200 with a changed body where `bodyChanges` says so, or `gone`: 404), then 304 again
 * for the new validators.
 */
async function neverHidden(
  cause: string,
  id: string,
  change: () => Promise<unknown>,
  options: { paths?: string[]; bodyChanges?: boolean; gone?: boolean } = {},
): Promise<void> {
  const seen = [];
  for (const path of options.paths ?? routes(id)) seen.push(await seenAndUnchanged(get, path, cause));
  await server.advance(5);
  await change();
  for (const s of seen) await changeNotHidden(get, s, cause, options);
}

before(async () => {
  database = await createTestDatabase();
  server = await startServer({}, { database });
  for (const login of ['mona', 'hubot']) await server.admin('POST', '/users', { login });
  hubot = await classicToken(server, 'hubot', ['notifications', 'repo']);
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'] });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'secret', visibility: 'private' });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'doomed' });
  await server.admin('PUT', '/repos/acme/secret/collaborators/hubot', { permission: 'pull' });
  for (const title of ['w1', 'w2']) await notify('acme/widgets', title);
  await notify('acme/secret', 's1');
  await notify('acme/doomed', 'd1');
});
after(async () => {
  await server?.close();
  await database?.drop();
});

describe('a 304 never hides a change of a thread or its subscription', () => {
  test('nothing changed: 304 for either validator, without a body, and the rate limit is refunded', async () => {
    for (const path of routes(await threadOf('w1'))) {
      const seen = await get(path);
      const polled = await get(path, { 'if-none-match': seen.headers.get('etag')! });
      assert.equal(polled.status, 304);
      assert.equal(polled.text, '');
      assert.equal(polled.headers.get('etag'), seen.headers.get('etag'));
      const again = await get(path, { 'if-none-match': seen.headers.get('etag')! });
      assert.equal(again.headers.get('x-ratelimit-used'), polled.headers.get('x-ratelimit-used'), 'a 304 costs no request');
      assert.equal((await get(path, { 'if-modified-since': seen.headers.get('last-modified')! })).status, 304);
    }
  });
  test('the two routes and two threads never share a tag', async () => {
    const tags = new Set<string>();
    for (const title of ['w1', 'w2']) for (const path of routes(await threadOf(title))) tags.add((await get(path)).headers.get('etag')!);
    assert.equal(tags.size, 4);
  });
  test('the thread updated by new activity', async () => {
    const id = await threadOf('w1');
    await neverHidden('updated', id, () => notify('acme/widgets', 'w1'), { paths: [`/notifications/threads/${id}`] });
  });
  test('the thread read', async () => {
    const id = await threadOf('w1');
    await neverHidden('read', id, () => server.api('PATCH', `/notifications/threads/${id}`, { token: hubot }), { paths: [`/notifications/threads/${id}`] });
  });
  test('the thread marked unread (PUT /notifications read: false)', async () => {
    const id = await threadOf('w1');
    await neverHidden('unread', id, () => server.api('PUT', '/notifications', { token: hubot, body: { read: false } }), { paths: [`/notifications/threads/${id}`] });
  });
  test('the thread ignored', async () => {
    const id = await threadOf('w2');
    await neverHidden('ignored', id, () => server.api('PUT', `/notifications/threads/${id}/subscription`, { token: hubot, body: { ignored: true } }), {
      paths: [`/notifications/threads/${id}/subscription`],
    });
  });
  test('the thread subscription deleted (muted)', async () => {
    const id = await threadOf('w2');
    await neverHidden('muted', id, () => server.api('DELETE', `/notifications/threads/${id}/subscription`, { token: hubot }), {
      paths: [`/notifications/threads/${id}/subscription`],
    });
  });
  test('the repository watched (what a muted thread\'s subscription shows)', async () => {
    const id = await threadOf('w2');
    await neverHidden('watched', id, () => server.admin('PUT', '/repos/acme/widgets/subscription', { login: 'hubot', subscribed: true }));
  });
  test('the thread done', async () => {
    const id = await threadOf('w2');
    await neverHidden('done', id, () => server.api('DELETE', `/notifications/threads/${id}`, { token: hubot }), { paths: [`/notifications/threads/${id}`] });
  });
  test('the repository described', async () => {
    const id = await threadOf('w1');
    await neverHidden('described', id, () => server.admin('PATCH', '/repos/acme/widgets', { description: 'Described' }), { paths: [`/notifications/threads/${id}`] });
  });
  test('the repository renamed (plain SQL: the triggers see every write)', async () => {
    const id = await threadOf('w1');
    try {
      await neverHidden('renamed', id, () => sql`update repositories set name = 'gizmos', name_lower = 'gizmos' where name = 'widgets'`.execute(db()), {
        paths: [`/notifications/threads/${id}`],
      });
    } finally {
      await sql`update repositories set name = 'widgets', name_lower = 'widgets' where name = 'gizmos'`.execute(db());
    }
  });
  test('the owner renamed', async () => {
    const id = await threadOf('w1');
    try {
      await neverHidden('owner renamed', id, () => sql`update users set login = 'acme-corp', login_lower = 'acme-corp' where login = 'acme'`.execute(db()), {
        paths: [`/notifications/threads/${id}`],
      });
    } finally {
      await sql`update users set login = 'acme', login_lower = 'acme' where login = 'acme-corp'`.execute(db());
    }
  });
  test('access lost: collaborator removed (404 on both routes)', async () => {
    const id = await threadOf('s1');
    await neverHidden('collaborator removed', id, () => server.admin('DELETE', '/repos/acme/secret/collaborators/hubot'), { gone: true });
  });
  test('the repository made private (access lost)', async () => {
    const id = await threadOf('w1');
    try {
      await neverHidden('made private', id, () => server.admin('PATCH', '/repos/acme/widgets', { visibility: 'private' }), { gone: true });
    } finally {
      await server.admin('PATCH', '/repos/acme/widgets', { visibility: 'public' });
    }
  });
  test('the repository deleted', async () => {
    const id = await threadOf('d1');
    await neverHidden('deleted', id, () => sql`delete from repositories where name = 'doomed'`.execute(db()), { gone: true });
  });
  test('a thread of another user: 404, whatever validators are sent', async () => {
    const id = await threadOf('w1');
    const seen = await get(`/notifications/threads/${id}`);
    const mona = await classicToken(server, 'mona', ['notifications']);
    for (const path of routes(id)) {
      for (const headers of [{ 'if-none-match': seen.headers.get('etag')! }, { 'if-modified-since': seen.headers.get('last-modified')! }, {}] as Record<string, string>[]) {
        assert.equal((await server.api('GET', path, { token: mona, headers })).status, 404);
      }
    }
  });
});

describe('a subscription changed by the user\'s own activity', () => {
  test('commenting lifts a muted subscription: no 304 hides it', async () => {
    const issue = await server.admin('POST', '/repos/acme/widgets/issues', { author: 'mona', title: 'Assigned', assignees: ['hubot'] });
    await server.drain();
    const id = await threadOf('Assigned');
    assert.equal((await server.api('DELETE', `/notifications/threads/${id}/subscription`, { token: hubot })).status, 204);
    await neverHidden('own comment', id, async () => {
      await server.admin('POST', `/repos/acme/widgets/issues/${issue.number}/comments`, { author: 'hubot', body: 'Back in' });
      await server.drain();
    }, { paths: [`/notifications/threads/${id}/subscription`] });
    assert.equal((await get(`/notifications/threads/${id}/subscription`)).body.subscribed, true);
  });
});
