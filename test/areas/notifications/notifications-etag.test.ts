// The notifications list is written from per-repository JSON kept between requests, and its ETag is
// derived from what the page is made of instead of a hash of the whole body. These tests hold it to
// what the body-hash ETag gave: the list shows the same representations as the single-thread and
// repository routes, the tag stays put while nothing changes (304) and moves whenever the body does:
// a repository's description or visibility, its watchers, a thread read, access lost.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { classicToken } from '../../helpers/credentials.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

let server: TestServer;
const tokens: Record<string, string> = {};

async function person(login: string): Promise<void> {
  await server.admin('POST', '/users', { login });
  tokens[login] = await classicToken(server, login, ['notifications', 'repo']);
}

const notify = (login: string, repository: string, title: string) =>
  server.admin('POST', '/notifications', {
    login,
    repository,
    subject: { type: 'Release', title, url: `https://example.com/releases/${title}` },
    reason: 'subscribed',
  });

const list = (login: string, query = '', headers: Record<string, string> = {}) => server.api('GET', `/notifications${query}`, { token: tokens[login], headers });

before(async () => {
  server = await startServer();
  await person('mona');
  await person('hubot');
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'] });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'gadgets' });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'secret', visibility: 'private' });
  await server.admin('PUT', '/repos/acme/secret/collaborators/hubot', { permission: 'pull' });
});
after(() => server?.close());

describe('the notifications list as JSON written per repository', () => {
  test('each thread of the list is the single-thread representation, its repository the repository route\'s', async () => {
    for (const [i, repository] of ['acme/widgets', 'acme/gadgets', 'acme/widgets', 'acme/secret'].entries()) await notify('hubot', repository, `r${i}`);
    const page = await list('hubot');
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type')!, /^application\/json; charset=utf-8/);
    assert.equal(page.body.length, 4);
    for (const thread of page.body) {
      const single = await server.api('GET', `/notifications/threads/${thread.id}`, { token: tokens.hubot });
      assert.deepEqual(thread, single.body);
      const repository = await server.api('GET', `/repos/${thread.repository.full_name}`, { token: tokens.hubot });
      for (const [key, value] of Object.entries(thread.repository)) {
        if (key !== 'permissions') assert.deepEqual(value, repository.body[key], key);
      }
    }
  });

  test('the ETag stays while nothing changes and moves whenever the body does', async () => {
    let current = await list('hubot', '?all=true');
    let etag = current.headers.get('etag')!;
    assert.match(etag, /^W\/"[0-9a-f]{40}"$/);
    assert.equal((await list('hubot', '?all=true', { 'if-none-match': etag })).status, 304);
    assert.equal((await list('hubot', '?all=true', { 'if-none-match': etag.slice(2) })).status, 304);

    const moves = async (what: string, change: () => Promise<unknown>) => {
      await change();
      const next = await list('hubot', '?all=true');
      assert.equal(next.status, 200);
      assert.notDeepEqual(next.body, current.body, `${what}: the body changed`);
      assert.notEqual(next.headers.get('etag'), etag, `${what}: the ETag moved`);
      assert.equal((await list('hubot', '?all=true', { 'if-none-match': etag })).status, 200, `${what}: the old tag is no match`);
      current = next;
      etag = next.headers.get('etag')!;
      assert.equal((await list('hubot', '?all=true', { 'if-none-match': etag })).status, 304, `${what}: the new tag matches`);
    };
    await moves('description', () => server.admin('PATCH', '/repos/acme/widgets', { description: 'Now described' }));
    await moves('visibility', () => server.admin('PATCH', '/repos/acme/gadgets', { visibility: 'private' }));
    await moves('a watcher', () => server.admin('PUT', '/repos/acme/widgets/subscription', { login: 'mona', subscribed: true }));
    const first = current.body[0];
    await moves('a thread read', () => server.api('PATCH', `/notifications/threads/${first.id}`, { token: tokens.hubot }));
    await moves('access lost', () => server.admin('DELETE', '/repos/acme/secret/collaborators/hubot'));
    assert.ok(current.body.every((thread: { repository: { name: string } }) => thread.repository.name !== 'secret'));
  });

  test('the same threads on other pages and queries get other tags', async () => {
    const whole = await list('hubot', '?all=true');
    const firstPage = await list('hubot', '?all=true&per_page=1');
    const secondPage = await list('hubot', '?all=true&per_page=1&page=2');
    const tags = new Set([whole, firstPage, secondPage].map((r) => r.headers.get('etag')));
    assert.equal(tags.size, 3);
    const empty = await list('mona');
    assert.deepEqual(empty.body, []);
    assert.match(empty.headers.get('etag')!, /^W\/"[0-9a-f]{40}"$/);
  });
});
