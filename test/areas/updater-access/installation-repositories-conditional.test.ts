// GET /installation/repositories, the list an app polls, is answered 304 from a tag read in one
// statement (the installation token's scope, the total, the page's repositories and their
// representation versions) before a repository is loaded or rendered. A 304 must never hide a
// change: for each cause below, a poll carrying the tag of the answer before the change gets the new
// page, and the new tag gives a 304 again.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { install, mintInstallationToken } from '../../helpers/app-credentials.ts';
import { changeNotHidden, seenAndUnchanged } from '../../helpers/conditional.ts';
import { createApp } from '../../helpers/credentials.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

let server: TestServer;
let everything: string; // an installation token of an installation on all of acme's repositories
let picked: string; // one of an installation on selected repositories
let pickedId: number;
let everythingId: number;

const poller = (token: string) => (path: string, headers: Record<string, string> = {}) => server.api('GET', path, { token, headers });
const LIST = '/installation/repositories';

/** Before `change` the token's list gives 304; after it, a 304 never hides the change. */
async function neverHidden(cause: string, change: () => Promise<unknown>, options: { token?: string; path?: string } = {}): Promise<void> {
  const get = poller(options.token ?? everything);
  const seen = await seenAndUnchanged(get, options.path ?? LIST, cause, true);
  await change();
  await changeNotHidden(get, seen, cause);
}

before(async () => {
  server = await startServer();
  for (const login of ['mona', 'hubot']) await server.admin('POST', '/users', { login });
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'] });
  for (const name of ['widgets', 'gadgets', 'doomed']) await server.admin('POST', '/repos', { owner: 'acme', name });
  await server.admin('POST', '/repos', { owner: 'mona', name: 'elsewhere' });
  const app = await createApp(server, 'poller', { metadata: 'read' });
  everythingId = await install(server, app, 'acme');
  everything = await mintInstallationToken(server, app, everythingId);
  const picker = await createApp(server, 'picker', { metadata: 'read' });
  pickedId = await install(server, picker, 'acme', { repositories: ['widgets'] });
  picked = await mintInstallationToken(server, picker, pickedId);
});
after(async () => {
  await server?.close();
});

describe('a 304 never hides a change of an installation\'s repositories', () => {
  test('nothing changed: 304 without a body, and the rate limit is refunded', async () => {
    const get = poller(everything);
    const seen = await get(LIST);
    assert.equal(seen.status, 200);
    assert.equal(seen.body.total_count, 3);
    const polled = await get(LIST, { 'if-none-match': seen.headers.get('etag')! });
    assert.equal(polled.status, 304);
    assert.equal(polled.text, '');
    const again = await get(LIST, { 'if-none-match': seen.headers.get('etag')! });
    assert.equal(again.headers.get('x-ratelimit-used'), polled.headers.get('x-ratelimit-used'), 'a 304 costs no request');
    assert.notEqual((await get(`${LIST}?per_page=1`)).headers.get('etag'), seen.headers.get('etag'), 'each page has its own tag');
  });
  test('a repository of another account changes: still 304', async () => {
    const get = poller(everything);
    const seen = await seenAndUnchanged(get, LIST, 'unrelated', true);
    await server.admin('PATCH', '/repos/mona/elsewhere', { description: 'Unrelated' });
    assert.equal((await get(LIST, { 'if-none-match': seen.etag })).status, 304);
  });
  test('description changed', () => neverHidden('description', () => server.admin('PATCH', '/repos/acme/widgets', { description: 'Polled' })));
  test('made private', () => neverHidden('private', () => server.admin('PATCH', '/repos/acme/gadgets', { visibility: 'private' })));
  test('archived', () => neverHidden('archived', () => server.admin('PATCH', '/repos/acme/gadgets', { archived: true })));
  test('renamed', () => neverHidden('renamed', () => server.admin('PATCH', '/repos/acme/gadgets', { name: 'gizmos' })));
  test('an issue opened (open_issues_count)', () =>
    neverHidden('issue opened', () => server.admin('POST', '/repos/acme/widgets/issues', { title: 'Counted', author: 'mona' })));
  test('watched (watchers_count)', () => neverHidden('watched', () => server.admin('PUT', '/repos/acme/widgets/subscription', { login: 'hubot', subscribed: true })));
  test('a repository created in the account', () => neverHidden('created', () => server.admin('POST', '/repos', { owner: 'acme', name: 'fresh' })));
  test('a page past the end sees the total move', () =>
    neverHidden('created, past the end', () => server.admin('POST', '/repos', { owner: 'acme', name: 'fresher' }), { path: `${LIST}?page=9` }));
  test('a repository deleted', () => neverHidden('deleted', () => server.admin('DELETE', '/repos/acme/doomed')));
  test('the installation narrowed to selected repositories (access lost)', () =>
    neverHidden('lost', () => server.admin('PATCH', `/apps/poller/installations/${everythingId}`, { repositories: ['widgets'] })));
  test('the installation widened to all repositories again (access gained)', () =>
    neverHidden('gained', () => server.admin('PATCH', `/apps/poller/installations/${everythingId}`, { repositories: 'all' })));
  test('a repository of a token\'s own list removed from its installation', () =>
    neverHidden('removed', () => server.admin('PATCH', `/apps/picker/installations/${pickedId}`, { repositories: ['fresh'] }), { token: picked }));
  // No route renames an account yet: written as plain SQL, which the versions' triggers see too.
  test('the owner renamed', () => neverHidden('owner renamed', () => server.server.ctx.db.kysely.updateTable('users').set({ login: 'acme-corp' }).where('login', '=', 'acme').execute()));
  test('the last page a client can ask for (an offset past 2^31): empty, tagged, and polled to 304', async () => {
    const get = poller(everything);
    const path = `${LIST}?page=${2 ** 31 - 1}&per_page=100`;
    const seen = await get(path);
    assert.equal(seen.status, 200, seen.text);
    assert.deepEqual(seen.body.repositories, []);
    assert.equal((await get(path, { 'if-none-match': seen.headers.get('etag')! })).status, 304);
  });
});

describe('the test double putting an earlier world back', () => {
  test('a snapshot restored, then other changes up to the same versions: a tag of the world before is not current', async () => {
    assert.equal((await server.adminRaw('POST', '/snapshots', { name: 'before-changes' })).status, 201);
    await server.admin('PATCH', '/repos/acme/widgets', { description: 'before the restore' });
    const get = poller(everything);
    const seen = await get(LIST);
    assert.ok(seen.text.includes('before the restore'));
    assert.equal((await server.adminRaw('POST', '/snapshots/before-changes/restore', {})).status, 200);
    await server.admin('PATCH', '/repos/acme/widgets', { description: 'after the restore' });
    const polled = await get(LIST, { 'if-none-match': seen.headers.get('etag')! });
    assert.equal(polled.status, 200, 'no 304 for the world before');
    assert.ok(polled.text.includes('after the restore'));
  });
});
