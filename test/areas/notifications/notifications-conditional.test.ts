// Conditional polls of the notifications lists (issue 22) are answered 304 from a validator read
// before any thread is loaded: the user's inbox version (every write of their threads) and the
// versions of the repositories of their threads (kept by database triggers), and whether they can
// read each. A 304 must never hide a change: for each cause below, a poll carrying the validators of
// the answer before the change (If-None-Match, and If-Modified-Since on its own) gets a 200 with the
// new page, on both lists (all threads, one repository's), and the new validators give a 304 again.
//
// Rename, delete and owner rename have no API yet (the lifecycle work adds them): they are written
// here as plain SQL updates, which is the point: the triggers see every write, whatever code does it.
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

const poll = (path: string, headers: Record<string, string> = {}) => server.api('GET', path, { token: hubot, headers });

/** Both lists, in the state before a change. */
const LISTS = ['/notifications?all=true', '/repos/acme/widgets/notifications?all=true'];

/**
 * Before `change`, both validators of both lists give 304; after it, neither hides it: 200 with the
 * new page (a changed body where `bodyChanges` says the page shows the change), then 304 for the new
 * validators. The clock moves a few seconds first, as between two polls.
 */
async function neverHidden(cause: string, change: () => Promise<unknown>, options: { lists?: string[]; bodyChanges?: boolean } = {}): Promise<void> {
  const seen = await Promise.all((options.lists ?? LISTS).map((path) => seenAndUnchanged(poll, path, cause)));
  await server.advance(5);
  await change();
  // the repository's own list may be gone (404)
  for (const s of seen) await changeNotHidden(poll, s, cause, { ...options, gone: 'maybe' });
}

const db = () => server.server.ctx.db.kysely;
const repositoryId = async (name: string) =>
  (await db().selectFrom('repositories').select('id').where('name', '=', name).executeTakeFirstOrThrow()).id;
const firstThread = async () => (await poll('/notifications?all=true&per_page=1')).body[0].id as string;

before(async () => {
  database = await createTestDatabase();
  server = await startServer({}, { database });
  for (const login of ['mona', 'hubot']) await server.admin('POST', '/users', { login });
  hubot = await classicToken(server, 'hubot', ['notifications', 'repo']);
  // hubot is not a member of acme (members read every repository of it): its access comes from
  // collaborators and teams.
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'] });
  await server.admin('POST', '/orgs/acme/teams', { slug: 'readers', members: ['hubot'] });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'secret', visibility: 'private' });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'guarded', visibility: 'private' });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'doomed' });
  await server.admin('PUT', '/repos/acme/secret/collaborators/hubot', { permission: 'pull' });
  await server.admin('PUT', '/orgs/acme/teams/readers/repos/acme/guarded', { permission: 'pull' });
  for (const repository of ['acme/widgets', 'acme/widgets', 'acme/secret', 'acme/guarded', 'acme/doomed']) await notify(repository, `${repository.split('/')[1]}-${Math.random().toString(36).slice(2, 8)}`);
});
after(async () => {
  await server?.close();
  await database?.drop();
});

describe('a 304 never hides a change of the notifications lists', () => {
  test('nothing changed: 304 for either validator, and the rate limit is refunded', async () => {
    for (const path of LISTS) {
      const seen = await seenAndUnchanged(poll, path, 'nothing changed');
      const polled = await poll(path, { 'if-none-match': seen.etag });
      assert.equal(polled.status, 304);
      assert.equal(polled.text, '');
      assert.equal(polled.headers.get('etag'), seen.etag);
      assert.ok(polled.headers.get('x-poll-interval'));
      const again = await poll(path, { 'if-none-match': seen.etag });
      assert.equal(again.headers.get('x-ratelimit-used'), polled.headers.get('x-ratelimit-used'), 'a 304 costs no request');
      assert.equal((await poll(path, { 'if-modified-since': seen.lastModified! })).status, 304);
    }
  });

  test('parallel polls after a repository change agree on one tag (the change is recorded once)', async () => {
    await server.admin('PATCH', '/repos/acme/widgets', { description: 'Seen by parallel polls' });
    const answers = await Promise.all(Array.from({ length: 6 }, () => poll('/notifications?all=true')));
    const tags = new Set(answers.map((a) => a.headers.get('etag')));
    assert.equal(tags.size, 1);
    assert.equal((await poll('/notifications?all=true', { 'if-none-match': [...tags][0]! })).status, 304);
  });
  test('a thread updated by new activity', () => neverHidden('thread updated', () => notify('acme/widgets', 'widgets-new')));
  test('a thread read', async () => {
    const id = await firstThread();
    await neverHidden('thread read', () => server.api('PATCH', `/notifications/threads/${id}`, { token: hubot }));
  });
  test('threads marked unread', () =>
    neverHidden('marked unread', () => server.api('PUT', '/notifications', { token: hubot, body: { read: false } })));
  test('threads marked read', () => neverHidden('marked read', () => server.api('PUT', '/notifications', { token: hubot, body: {} })));
  test('a thread done', async () => {
    const id = await firstThread();
    await neverHidden('thread done', () => server.api('DELETE', `/notifications/threads/${id}`, { token: hubot }));
  });
  test('a thread ignored: the validator moves (the list shows no subscription)', async () => {
    const id = await firstThread();
    await neverHidden('thread ignored', () => server.api('PUT', `/notifications/threads/${id}/subscription`, { token: hubot, body: { ignored: true } }), { bodyChanges: false });
  });
  test('the repository described', () => neverHidden('described', () => server.admin('PATCH', '/repos/acme/widgets', { description: 'Described' })));
  test('an issue opened (open_issues_count)', () =>
    neverHidden('issue opened', () => server.admin('POST', '/repos/acme/widgets/issues', { author: 'mona', title: 'Counted' })));
  test('a watcher (subscribers_count)', () =>
    neverHidden('watcher', () => server.admin('PUT', '/repos/acme/widgets/subscription', { login: 'mona', subscribed: true })));
  test('the repository renamed (any write of its row)', async () => {
    const id = await repositoryId('widgets');
    await neverHidden('renamed', () => db().updateTable('repositories').set({ name: 'gizmos', name_lower: 'gizmos' }).where('id', '=', id).execute(), {
      lists: ['/notifications?all=true'],
    });
    await db().updateTable('repositories').set({ name: 'widgets', name_lower: 'widgets' }).where('id', '=', id).execute();
  });
  test('the owner renamed', async () => {
    await neverHidden('owner renamed', () => sql`update users set login = 'acme-corp', login_lower = 'acme-corp' where login = 'acme'`.execute(db()), {
      lists: ['/notifications?all=true'],
    });
    await sql`update users set login = 'acme', login_lower = 'acme' where login = 'acme-corp'`.execute(db());
  });
  test('the repository made private (access lost)', () =>
    neverHidden('made private', () => server.admin('PATCH', '/repos/acme/widgets', { visibility: 'private' })));
  test('access gained back (a collaborator)', () =>
    neverHidden('collaborator added', () => server.admin('PUT', '/repos/acme/widgets/collaborators/hubot', { permission: 'pull' }), { lists: ['/notifications?all=true'] }));
  test('access lost: collaborator removed', () =>
    neverHidden('collaborator removed', () => server.admin('DELETE', '/repos/acme/secret/collaborators/hubot'), {
      lists: ['/notifications?all=true', '/repos/acme/secret/notifications?all=true'],
    }));
  test('access lost: team membership removed', () =>
    neverHidden('team membership removed', () => server.admin('DELETE', '/orgs/acme/teams/readers/members/hubot'), {
      lists: ['/notifications?all=true', '/repos/acme/guarded/notifications?all=true'],
    }));
  test('access gained: team membership added', () =>
    neverHidden('team membership added', () => server.admin('PUT', '/orgs/acme/teams/readers/members/hubot', {}), { lists: ['/notifications?all=true'] }));
  test('access lost: the team loses the repository', () =>
    neverHidden('team repository removed', () => server.admin('DELETE', '/orgs/acme/teams/readers/repos/acme/guarded'), {
      lists: ['/notifications?all=true', '/repos/acme/guarded/notifications?all=true'],
    }));
  test('a repository of no thread changes: still 304 (the validator covers only the threads\' repositories)', async () => {
    await server.admin('POST', '/repos', { owner: 'mona', name: 'elsewhere' });
    const seen = await seenAndUnchanged(poll, '/notifications?all=true', 'unrelated');
    await server.admin('PATCH', '/repos/mona/elsewhere', { description: 'Unrelated' });
    assert.equal((await poll(seen.path, { 'if-none-match': seen.etag })).status, 304);
    assert.equal((await poll(seen.path, { 'if-modified-since': seen.lastModified! })).status, 304);
  });
  test('the repository deleted', async () => {
    const id = await repositoryId('doomed');
    await neverHidden('deleted', () => db().deleteFrom('repositories').where('id', '=', id).execute(), { lists: ['/notifications?all=true'] });
  });
});

describe('repository JSON kept per process by version', () => {
  test('a write through another process (or plain SQL) never leaves a stale repository in a page', async () => {
    const other = await startServer({}, { database });
    try {
      const page = async () => (await poll('/notifications?all=true')).body as { repository: { full_name: string; description: string | null; open_issues_count: number } }[];
      const widgets = async () => (await page()).find((t) => t.repository.full_name === 'acme/widgets')!.repository;
      // Rendered and kept by this process.
      const before = await widgets();
      await other.admin('PATCH', '/repos/acme/widgets', { description: 'Written elsewhere' });
      assert.equal((await widgets()).description, 'Written elsewhere');
      await other.admin('POST', '/repos/acme/widgets/issues', { author: 'mona', title: 'Counted elsewhere' });
      assert.equal((await widgets()).open_issues_count, before.open_issues_count + 1);
      await sql`update issues set state = 'closed' where title = 'Counted elsewhere'`.execute(db());
      assert.equal((await widgets()).open_issues_count, before.open_issues_count);
      await sql`update users set login = 'acme-co', login_lower = 'acme-co' where login = 'acme'`.execute(db());
      assert.ok((await page()).some((t) => t.repository.full_name === 'acme-co/widgets'));
      assert.ok(!(await page()).some((t) => t.repository.full_name.startsWith('acme/')));
      await sql`update users set login = 'acme', login_lower = 'acme' where login = 'acme-co'`.execute(db());
    } finally {
      await other.close();
    }
  });
});

describe('a subject retitled by activity that does not reach the user', () => {
  test('the thread of a muted user shows the new title: no 304 hides it', async () => {
    const issue = await server.admin('POST', '/repos/acme/widgets/issues', { author: 'mona', title: 'Old title', assignees: ['hubot'] });
    await server.drain();
    const thread = ((await poll('/notifications?all=true')).body as { id: string; subject: { title: string } }[]).find((t) => t.subject.title === 'Old title')!;
    // Muted: only watching reaches hubot now, and hubot watches nothing.
    assert.equal((await server.api('DELETE', `/notifications/threads/${thread.id}/subscription`, { token: hubot })).status, 204);
    await neverHidden('subject retitled', async () => {
      await sql`update issues set title = 'New title' where id = ${issue.id}`.execute(db());
      await server.admin('POST', `/repos/acme/widgets/issues/${issue.number}/comments`, { author: 'mona', body: 'A comment that reaches hubot not' });
      await server.drain();
    });
    const titles = ((await poll('/notifications?all=true')).body as { subject: { title: string } }[]).map((t) => t.subject.title);
    assert.ok(titles.includes('New title') && !titles.includes('Old title'));
  });
});
