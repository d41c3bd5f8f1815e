// Notification threads follow repository access (issue 10, hole 5). A user who loses read access to a
// private repository — removed as a collaborator, from the team, the team losing the repository,
// removed from the organization, or the repository turned private — no longer sees its threads: not
// in the lists (nor their counts and pages), not in `Last-Modified`, not one by one (404 on every
// thread route), and marking all as read (at once or in the background job) leaves them alone. When
// access returns, they are back with their read/unread state.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { classicToken } from '../../helpers/credentials.ts';
import { startServer, type TestServer, links } from '../../helpers/server.ts';

let server: TestServer;
const tokens: Record<string, string> = {};

/** Large enough for every case below but the background-job one, which goes over it. */
const MARK_READ_THRESHOLD = 5;

async function person(login: string): Promise<string> {
  await server.admin('POST', '/users', { login });
  tokens[login] = await classicToken(server, login, ['notifications']);
  return login;
}

async function notify(login: string, repository: string, title: string) {
  return server.admin('POST', '/notifications', {
    login,
    repository,
    subject: { type: 'Release', title, url: `https://example.com/${repository}/releases/${encodeURIComponent(title)}` },
    reason: 'subscribed',
  });
}

const call = (method: string, path: string, login: string, options: { headers?: Record<string, string>; body?: unknown } = {}) =>
  server.api(method, path, { token: tokens[login], ...options });
const titles = (body: { subject: { title: string } }[]) => body.map((t) => t.subject.title);
const byTitle = (body: { subject: { title: string }; unread: boolean }[]) => Object.fromEntries(body.map((t) => [t.subject.title, t.unread]));

before(async () => {
  // Background marking in batches of 2, so a job spans several batches with hidden threads among them.
  server = await startServer({ CODEHOST_NOTIFICATIONS_MARK_READ_THRESHOLD: String(MARK_READ_THRESHOLD), CODEHOST_NOTIFICATIONS_MARK_READ_BATCH: '2' });
  await person('olive');
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['olive'] });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'open' });
});
after(() => server.close());

interface Way {
  /** Creates the repository (private unless the way says otherwise) and gives the user read access. */
  grant(login: string, repo: string): Promise<void>;
  revoke(login: string, repo: string): Promise<void>;
  restore(login: string, repo: string): Promise<void>;
}

const ways: Record<string, Way> = {
  'removed as a collaborator': {
    async grant(login, repo) {
      await server.admin('POST', '/repos', { owner: 'acme', name: repo, visibility: 'private' });
      await server.admin('PUT', `/repos/acme/${repo}/collaborators/${login}`, { permission: 'pull' });
    },
    revoke: (login, repo) => server.admin('DELETE', `/repos/acme/${repo}/collaborators/${login}`),
    restore: (login, repo) => server.admin('PUT', `/repos/acme/${repo}/collaborators/${login}`, { permission: 'triage' }),
  },
  'removed from the team': {
    async grant(login, repo) {
      await server.admin('POST', '/repos', { owner: 'acme', name: repo, visibility: 'private' });
      await server.admin('POST', '/orgs/acme/teams', { slug: `${repo}-team`, members: [login] });
      await server.admin('PUT', `/orgs/acme/teams/${repo}-team/repos/acme/${repo}`, { permission: 'pull' });
    },
    revoke: (login, repo) => server.admin('DELETE', `/orgs/acme/teams/${repo}-team/members/${login}`),
    restore: (login, repo) => server.admin('PUT', `/orgs/acme/teams/${repo}-team/members/${login}`),
  },
  'the team lost the repository': {
    async grant(login, repo) {
      await server.admin('POST', '/repos', { owner: 'acme', name: repo, visibility: 'private' });
      await server.admin('POST', '/orgs/acme/teams', { slug: `${repo}-team`, members: [login], repositories: [{ name: repo, permission: 'push' }] });
    },
    revoke: (_login, repo) => server.admin('DELETE', `/orgs/acme/teams/${repo}-team/repos/acme/${repo}`),
    restore: (_login, repo) => server.admin('PUT', `/orgs/acme/teams/${repo}-team/repos/acme/${repo}`, { permission: 'pull' }),
  },
  'removed from the organization': {
    async grant(login, repo) {
      await server.admin('POST', '/repos', { owner: 'acme', name: repo, visibility: 'private' });
      await server.admin('PUT', `/orgs/acme/members/${login}`, { role: 'member' });
    },
    revoke: (login) => server.admin('DELETE', `/orgs/acme/members/${login}`),
    restore: (login) => server.admin('PUT', `/orgs/acme/members/${login}`, { role: 'member' }),
  },
  'the repository turned private': {
    async grant(_login, repo) {
      await server.admin('POST', '/repos', { owner: 'acme', name: repo, visibility: 'public' });
    },
    revoke: (_login, repo) => server.admin('PATCH', `/repos/acme/${repo}`, { visibility: 'private' }),
    restore: (_login, repo) => server.admin('PATCH', `/repos/acme/${repo}`, { visibility: 'public' }),
  },
};

describe('threads vanish when read access goes, and come back with it', () => {
  let n = 0;
  for (const [name, way] of Object.entries(ways)) {
    test(name, async () => {
      n++;
      const login = await person(`reader${n}`);
      const repo = `secret${n}`;
      await way.grant(login, repo);

      // One thread the user keeps seeing, then two in the repository they will lose: one read, one
      // not. The lost repository's activity is the newest, so it sets Last-Modified.
      await notify(login, 'acme/open', 'visible');
      await server.advance(2);
      const kept = await notify(login, `acme/${repo}`, 'secret unread');
      const read = await notify(login, `acme/${repo}`, 'secret read');
      assert.equal((await call('PATCH', `/notifications/threads/${read.id}`, login)).status, 205);
      const before = await call('GET', '/notifications?all=true', login);
      assert.deepEqual(titles(before.body).sort(), ['secret read', 'secret unread', 'visible']);
      const modifiedBefore = before.headers.get('last-modified')!;
      assert.equal((await call('GET', `/repos/acme/${repo}/notifications`, login)).status, 200);

      await server.advance(5);
      await way.revoke(login, repo);

      // Lists, counts and pages.
      const unread = await call('GET', '/notifications', login);
      assert.equal(unread.status, 200);
      assert.deepEqual(titles(unread.body), ['visible']);
      const all = await call('GET', '/notifications?all=true&per_page=1', login);
      assert.deepEqual(titles(all.body), ['visible']);
      assert.equal(links(all.headers.get('link')).next, undefined, 'no second page of hidden threads');
      assert.deepEqual(titles((await call('GET', '/notifications?participating=false&all=true', login)).body), ['visible']);
      assert.equal((await call('GET', `/repos/acme/${repo}/notifications`, login)).status, 404);

      // Last-Modified no longer comes from the hidden activity, and pollers see the change.
      const modifiedAfter = all.headers.get('last-modified')!;
      assert.notEqual(modifiedAfter, modifiedBefore);
      assert.ok(Date.parse(modifiedAfter) > Date.parse(modifiedBefore));
      const polled = await call('GET', '/notifications?all=true', login, { headers: { 'if-modified-since': modifiedBefore } });
      assert.equal(polled.status, 200);
      assert.deepEqual(titles(polled.body), ['visible']);

      // Each thread route answers 404.
      for (const thread of [kept, read]) {
        const path = `/notifications/threads/${thread.id}`;
        assert.equal((await call('GET', path, login)).status, 404, `GET ${path}`);
        assert.equal((await call('PATCH', path, login)).status, 404, `PATCH ${path}`);
        assert.equal((await call('DELETE', path, login)).status, 404, `DELETE ${path}`);
        assert.equal((await call('GET', `${path}/subscription`, login)).status, 404, `GET ${path}/subscription`);
        assert.equal((await call('PUT', `${path}/subscription`, login, { body: { ignored: true } })).status, 404, `PUT ${path}/subscription`);
        assert.equal((await call('DELETE', `${path}/subscription`, login)).status, 404, `DELETE ${path}/subscription`);
      }

      // Marking everything read leaves the hidden thread alone; the repository's own mark is a 404.
      assert.equal((await call('PUT', '/notifications', login, { body: {} })).status, 205);
      assert.equal((await call('PUT', `/repos/acme/${repo}/notifications`, login, { body: {} })).status, 404);
      assert.deepEqual(titles((await call('GET', '/notifications', login)).body), []);

      await server.advance(5);
      await way.restore(login, repo);

      // Back, with their state: the unread one still unread, the read one read.
      const back = await call('GET', '/notifications?all=true', login);
      assert.deepEqual(byTitle(back.body), { 'secret unread': true, 'secret read': false, visible: false });
      assert.ok(Date.parse(back.headers.get('last-modified')!) > Date.parse(modifiedAfter));
      assert.deepEqual(titles((await call('GET', '/notifications', login)).body), ['secret unread']);
      const single = await call('GET', `/notifications/threads/${kept.id}`, login);
      assert.equal(single.status, 200);
      assert.equal(single.body.unread, true);
      assert.equal((await call('GET', `/notifications/threads/${kept.id}/subscription`, login)).status, 200);
      assert.deepEqual(titles((await call('GET', `/repos/acme/${repo}/notifications?all=true`, login)).body).sort(), ['secret read', 'secret unread']);
    });
  }
});

describe('set-wise, inside the list queries', () => {
  test('pages and their Link count only readable threads', async () => {
    const login = await person('pager');
    await server.admin('POST', '/repos', { owner: 'acme', name: 'paged', visibility: 'private' });
    await server.admin('PUT', `/repos/acme/paged/collaborators/${login}`, { permission: 'push' });
    for (let i = 1; i <= 3; i++) {
      await notify(login, 'acme/open', `v${i}`);
      await server.advance(1);
      await notify(login, 'acme/paged', `h${i}`);
      await server.advance(1);
    }
    assert.equal((await call('GET', '/notifications', login)).body.length, 6);
    await server.admin('DELETE', `/repos/acme/paged/collaborators/${login}`);
    const first = await call('GET', '/notifications?per_page=2', login);
    assert.deepEqual(titles(first.body), ['v3', 'v2']);
    const pages = links(first.headers.get('link'));
    assert.match(pages.last!, /page=2$/);
    const second = await call('GET', '/notifications?per_page=2&page=2', login);
    assert.deepEqual(titles(second.body), ['v1']);
    assert.equal(links(second.headers.get('link')).next, undefined);
  });

  test('past a hundred hidden repositories, the same answers (access tested thread by thread)', async () => {
    const login = await person('many');
    await server.admin('POST', '/orgs', { login: 'many-org', owners: ['olive'], members: [login] });
    for (let i = 0; i < 101; i++) {
      await server.admin('POST', '/repos', { owner: 'many-org', name: `r${i}`, visibility: 'private' });
      await notify(login, `many-org/r${i}`, `hidden ${i}`);
    }
    await server.advance(1);
    await notify(login, 'acme/open', 'shown');
    assert.equal((await call('GET', '/notifications?all=true&per_page=1', login)).body.length, 1);
    await server.admin('DELETE', `/orgs/many-org/members/${login}`);
    const listed = await call('GET', '/notifications?per_page=1', login);
    assert.deepEqual(titles(listed.body), ['shown']);
    assert.equal(links(listed.headers.get('link')).next, undefined);
    assert.equal((await call('PUT', '/notifications', login, { body: {} })).status, 205);
    await server.admin('PUT', `/orgs/many-org/members/${login}`, { role: 'member' });
    const back = await call('GET', '/notifications?per_page=50', login);
    assert.equal(back.body.length, 50);
    assert.ok(back.body.every((t: { unread: boolean }) => t.unread));
  });

  test('hidden repositories before, between and after readable ones; a page past the end still counts', async () => {
    const login = await person('walker');
    // Repository ids ascend in this order: the hidden ones come first, in the middle and last.
    const names = ['w-lost-1', 'w-open-1', 'w-lost-2', 'w-open-2', 'w-lost-3'];
    for (const name of names) {
      await server.admin('POST', '/repos', { owner: 'acme', name, visibility: name.includes('lost') ? 'private' : 'public' });
      if (name.includes('lost')) await server.admin('PUT', `/repos/acme/${name}/collaborators/${login}`, { permission: 'pull' });
      await notify(login, `acme/${name}`, name);
      await server.advance(1);
    }
    for (const name of names.filter((n) => n.includes('lost'))) await server.admin('DELETE', `/repos/acme/${name}/collaborators/${login}`);

    assert.deepEqual(titles((await call('GET', '/notifications?all=true', login)).body), ['w-open-2', 'w-open-1']);
    const first = await call('GET', '/notifications?per_page=1', login);
    assert.deepEqual(titles(first.body), ['w-open-2']);
    assert.match(links(first.headers.get('link')).last!, /page=2$/);
    const beyond = await call('GET', '/notifications?per_page=1&page=3', login);
    assert.deepEqual(beyond.body, []);
    const beyondLinks = links(beyond.headers.get('link'));
    assert.match(beyondLinks.prev!, /[?&]page=2(&|$)/);
    assert.equal(beyondLinks.next, undefined);

    assert.equal((await call('PUT', '/notifications', login, { body: {} })).status, 205);
    assert.deepEqual((await call('GET', '/notifications', login)).body, []);
    await server.admin('PUT', `/orgs/acme/members/${login}`, { role: 'member' });
    assert.deepEqual(titles((await call('GET', '/notifications', login)).body), ['w-lost-3', 'w-lost-2', 'w-lost-1']);
  });

  test('the background mark-as-read job leaves hidden threads unread', async () => {
    const login = await person('bulk');
    await server.admin('POST', '/repos', { owner: 'acme', name: 'bulky', visibility: 'private' });
    await server.admin('PUT', `/repos/acme/bulky/collaborators/${login}`, { permission: 'pull' });
    // Hidden threads before, among and after the readable ones, in the order the batches walk.
    const hidden = await notify(login, 'acme/bulky', 'hidden');
    for (let i = 0; i <= MARK_READ_THRESHOLD; i++) {
      await notify(login, 'acme/open', `many ${i}`);
      if (i === 2) await notify(login, 'acme/bulky', 'hidden among');
    }
    await notify(login, 'acme/bulky', 'hidden last');
    await server.admin('DELETE', `/repos/acme/bulky/collaborators/${login}`);
    const marked = await call('PUT', '/notifications', login, { body: {} });
    assert.equal(marked.status, 202);
    await server.drain();
    assert.deepEqual((await call('GET', '/notifications', login)).body, []);
    await server.admin('PUT', `/repos/acme/bulky/collaborators/${login}`, { permission: 'pull' });
    const back = await call('GET', '/notifications', login);
    assert.deepEqual(titles(back.body), ['hidden last', 'hidden among', 'hidden']);
    assert.equal(back.body[2].id, hidden.id);
  });

  test('only as many hidden threads as the threshold do not push a mark into the background', async () => {
    const login = await person('few');
    await server.admin('POST', '/repos', { owner: 'acme', name: 'few', visibility: 'private' });
    await server.admin('PUT', `/repos/acme/few/collaborators/${login}`, { permission: 'pull' });
    for (let i = 0; i <= MARK_READ_THRESHOLD; i++) await notify(login, 'acme/few', `hidden ${i}`);
    await notify(login, 'acme/open', 'shown');
    await server.admin('DELETE', `/repos/acme/few/collaborators/${login}`);
    assert.equal((await call('PUT', '/notifications', login, { body: {} })).status, 205);
  });

  test('activity in a repository the user cannot read any more does not reach them', async () => {
    const login = await person('late');
    await server.admin('POST', '/repos', { owner: 'acme', name: 'late', visibility: 'private' });
    await server.admin('PUT', `/repos/acme/late/collaborators/${login}`, { permission: 'pull' });
    await server.admin('POST', '/repos/acme/late/issues', { author: 'olive', title: 'Before', body: `hey @${login}` });
    await server.drain();
    assert.deepEqual(titles((await call('GET', '/notifications', login)).body), ['Before']);
    await server.admin('DELETE', `/repos/acme/late/collaborators/${login}`);
    await server.admin('POST', '/repos/acme/late/issues', { author: 'olive', title: 'After', body: `hey @${login}` });
    await server.drain();
    assert.deepEqual((await call('GET', '/notifications?all=true', login)).body, []);
    await server.admin('PUT', `/repos/acme/late/collaborators/${login}`, { permission: 'pull' });
    assert.deepEqual(titles((await call('GET', '/notifications', login)).body), ['Before']);
  });
});
