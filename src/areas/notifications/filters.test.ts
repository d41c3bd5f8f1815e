// The filters of the notifications list, no server: what a query asks for (service.ts `threadFilter`:
// `all`, `participating`, `since`, `before`, a repository) and what the store's one statement answers
// for it (store.ts `listPage`: unread or all but done, the reasons, the time bounds, one repository,
// the hidden repositories left out of the page and the count, newest first, a page of them) on a real
// migrated database (SQLite, or PostgreSQL when DATABASE_URL is set); and the reasons (reasons.ts).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/database.ts';
import { openDatabase, type Db } from '../../db/index.ts';
import { migrateToLatest } from '../../db/migrate.ts';
import { ApiError } from '../../platform/errors.ts';
import { mostDirect, PARTICIPATING, REASONS, SUBSCRIBING, type Reason } from './reasons.ts';
import { threadFilter } from './service.ts';
import { listPage, type ThreadFilter } from './store.ts';

const at = (hour: number, ms = 0) => new Date(Date.UTC(2026, 5, 1, hour, 0, 0, ms)).toISOString();

test('reasons: the most direct wins, in the platform\'s order; unknown ones last; none gives none', () => {
  const order: Reason[] = ['mention', 'team_mention', 'review_requested', 'assign', 'author', 'comment', 'state_change', 'manual', 'subscribed'];
  for (let i = 0; i < order.length; i++) {
    for (let j = i + 1; j < order.length; j++) {
      assert.equal(mostDirect([order[j]!, order[i]!]), order[i], `${order[i]} over ${order[j]}`);
      assert.equal(mostDirect([order[i]!, order[j]!]), order[i], `${order[i]} over ${order[j]}, given first`);
    }
    assert.equal(mostDirect([order[i]!, 'security_alert']), order[i]);
    assert.equal(mostDirect(['ci_activity', order[i]!]), order[i]);
  }
  assert.equal(mostDirect(['security_alert']), 'security_alert');
  assert.equal(mostDirect(['ci_activity', 'invitation']), 'ci_activity');
  assert.equal(mostDirect([]), undefined);
  // The input is left as it was.
  const given: Reason[] = ['subscribed', 'mention'];
  mostDirect(given);
  assert.deepEqual(given, ['subscribed', 'mention']);
});

test('reasons: which show participation, which subscribe, and every one the platform has', () => {
  assert.deepEqual([...PARTICIPATING].sort(), ['approval_requested', 'assign', 'author', 'comment', 'mention', 'review_requested', 'state_change', 'team_mention']);
  assert.deepEqual([...SUBSCRIBING].sort(), ['assign', 'author', 'comment', 'mention', 'review_requested', 'state_change']);
  assert.deepEqual([...REASONS], [
    'approval_requested', 'assign', 'author', 'ci_activity', 'comment', 'invitation', 'manual', 'member_feature_requested',
    'mention', 'review_requested', 'security_advisory_credit', 'security_alert', 'state_change', 'subscribed', 'team_mention',
  ]);
});

test('threadFilter: unread unless `all`; the participating reasons alone; the times as stored; one repository', () => {
  assert.deepEqual(threadFilter(7, {}), { userId: 7, repositoryId: undefined, all: false, reasons: undefined, since: undefined, before: undefined });
  assert.deepEqual(threadFilter(7, { all: true, participating: true, repositoryId: 3 }), { userId: 7, repositoryId: 3, all: true, reasons: PARTICIPATING, since: undefined, before: undefined });
  assert.deepEqual(threadFilter(7, { all: false, participating: false }), { userId: 7, repositoryId: undefined, all: false, reasons: undefined, since: undefined, before: undefined });
  assert.deepEqual(threadFilter(7, { since: '2026-06-01T12:00:00Z', before: '2026-06-01T14:30:00+02:00' }).since, '2026-06-01T12:00:00.000Z');
  assert.deepEqual(threadFilter(7, { since: '2026-06-01T12:00:00Z', before: '2026-06-01T14:30:00+02:00' }).before, '2026-06-01T12:30:00.000Z');
  for (const field of ['since', 'before'] as const) {
    assert.throws(() => threadFilter(7, { [field]: '2026-06-01T23:59:60Z' }), (error: unknown) => {
      assert.ok(error instanceof ApiError);
      assert.equal(error.status, 422);
      assert.deepEqual(error.errors, [{ resource: 'Notification', field, code: 'invalid', message: `${field} is not a valid timestamp: 2026-06-01T23:59:60Z` }]);
      return true;
    });
  }
});

let testDatabase: TestDatabase;
let db: Db;
const id: Record<string, number> = {};

before(async () => {
  testDatabase = await createTestDatabase();
  db = openDatabase({ databaseUrl: testDatabase.databaseUrl, sqlitePath: `${testDatabase.dataDir}/codehost.db` });
  await migrateToLatest(db);
  const k = db.kysely;
  const NOW = at(0);
  for (const login of ['ana', 'bob', 'cid']) {
    id[login] = (await k.insertInto('users').values({ login, login_lower: login, type: 'User', site_admin: 0, created_at: NOW, updated_at: NOW } as never)
      .returning('id').executeTakeFirstOrThrow()).id;
  }
  for (const [owner, name, visibility] of [['ana', 'one', 'public'], ['bob', 'two', 'public'], ['bob', 'hidden', 'private']] as const) {
    id[name] = (await k.insertInto('repositories').values({ owner_id: id[owner]!, name, name_lower: name, visibility, created_at: NOW, updated_at: NOW } as never)
      .returning('id').executeTakeFirstOrThrow()).id;
  }
  let n = 0;
  const thread = async (name: string, user: string, repository: string, reason: string, updated: string, state: { unread?: number; done?: number } = {}) => {
    n++;
    const subject = (await k.insertInto('notification_subjects').values({
      repository_id: id[repository]!, issue_id: null, subject_key: `subject:${n}`, type: 'Release', title: name, url: `https://api.example/${n}`, created_at: NOW, updated_at: NOW,
    } as never).returning('id').executeTakeFirstOrThrow()).id;
    id[name] = (await k.insertInto('notification_threads').values({
      user_id: id[user]!, subject_id: subject, repository_id: id[repository]!, reason, unread: state.unread ?? 1, done: state.done ?? 0,
      updated_at: updated, last_read_at: null, latest_comment_id: null, last_activity_id: 0, created_at: NOW,
    } as never).returning('id').executeTakeFirstOrThrow()).id;
  };
  // Ana's threads: made in this order, so a later one has the greater id.
  await thread('mentioned', 'ana', 'one', 'mention', at(10));
  await thread('watched', 'ana', 'one', 'subscribed', at(11));
  await thread('commentedRead', 'ana', 'two', 'comment', at(12), { unread: 0 });
  await thread('manualDone', 'ana', 'two', 'manual', at(13), { unread: 0, done: 1 });
  await thread('authoredHidden', 'ana', 'hidden', 'author', at(14));
  await thread('reviewSameTime', 'ana', 'one', 'review_requested', at(10));
  await thread('manualRead', 'ana', 'one', 'manual', at(9), { unread: 0 });
  // Bob's own, in ana's repository and his hidden one (he reads it).
  await thread('bobs', 'bob', 'one', 'mention', at(15));
  await thread('bobsHidden', 'bob', 'hidden', 'subscribed', at(8));
  await k.insertInto('notification_inboxes').values([{ user_id: id.ana!, modified_at: at(16) }, { user_id: id.bob!, modified_at: at(17) }] as never).execute();
});

after(async () => {
  await db?.close();
  await testDatabase?.drop();
});

const NAMES = ['mentioned', 'watched', 'commentedRead', 'manualDone', 'authoredHidden', 'reviewSameTime', 'manualRead', 'bobs', 'bobsHidden'];

async function listed(user: string, filter: Omit<ThreadFilter, 'userId' | 'all'> & { all?: boolean }, limit = 50, offset = 0) {
  const page = await listPage(db.kysely, { userId: id[user]!, all: false, ...filter }, limit, offset);
  return { threads: page.threads.map((t) => NAMES.find((name) => id[name] === t.id)), total: page.total, page };
}

test('listPage: a row per filter, the threads in order (newest update first, the later thread first on a tie) and the count', async () => {
  const rows: [name: string, user: string, filter: Omit<ThreadFilter, 'userId' | 'all'> & { all?: boolean }, threads: string[], total?: number][] = [
    ['unread (the default): not read, not done, readable', 'ana', {}, ['watched', 'reviewSameTime', 'mentioned']],
    ['all: read ones too, never done ones nor hidden ones', 'ana', { all: true }, ['commentedRead', 'watched', 'reviewSameTime', 'mentioned', 'manualRead']],
    ['participating, unread', 'ana', { reasons: PARTICIPATING }, ['reviewSameTime', 'mentioned']],
    ['participating, all', 'ana', { all: true, reasons: PARTICIPATING }, ['commentedRead', 'reviewSameTime', 'mentioned']],
    ['since: at or after', 'ana', { all: true, since: at(11) }, ['commentedRead', 'watched']],
    ['since: a millisecond after leaves it out', 'ana', { all: true, since: at(11, 1) }, ['commentedRead']],
    ['before: strictly before', 'ana', { all: true, before: at(11) }, ['reviewSameTime', 'mentioned', 'manualRead']],
    ['before: a millisecond after takes it in', 'ana', { all: true, before: at(11, 1) }, ['watched', 'reviewSameTime', 'mentioned', 'manualRead']],
    ['since and before', 'ana', { all: true, since: at(10), before: at(12) }, ['watched', 'reviewSameTime', 'mentioned']],
    ['since and before, unread and participating', 'ana', { reasons: PARTICIPATING, since: at(10), before: at(12) }, ['reviewSameTime', 'mentioned']],
    ['one repository, unread', 'ana', { repositoryId: id.one! }, ['watched', 'reviewSameTime', 'mentioned']],
    ['one repository, all', 'ana', { all: true, repositoryId: id.two! }, ['commentedRead']],
    ['one repository, all, since', 'ana', { all: true, repositoryId: id.one!, since: at(10) }, ['watched', 'reviewSameTime', 'mentioned']],
    ['a repository the user cannot read', 'ana', { all: true, repositoryId: id.hidden! }, []],
    ['a repository of none of the user\'s threads', 'cid', { all: true }, []],
    ['another user\'s, nothing hidden from him', 'bob', { all: true }, ['bobs', 'bobsHidden']],
    ['another user\'s, his repository', 'bob', { repositoryId: id.hidden! }, ['bobsHidden']],
    ['reasons none of the threads have', 'ana', { all: true, reasons: ['security_alert'] }, []],
  ];
  for (const [name, user, filter, threads, total] of rows) {
    const got = await listed(user, filter);
    assert.deepEqual(got.threads, threads, name);
    assert.equal(got.total, total ?? threads.length, `${name}: the count`);
  }
});

test('listPage: a page of them, the count of all the filter covers', async () => {
  assert.deepEqual(await listed('ana', { all: true }, 2, 0).then((r) => [r.threads, r.total]), [['commentedRead', 'watched'], 5]);
  assert.deepEqual(await listed('ana', { all: true }, 2, 2).then((r) => [r.threads, r.total]), [['reviewSameTime', 'mentioned'], 5]);
  assert.deepEqual(await listed('ana', { all: true }, 2, 4).then((r) => [r.threads, r.total]), [['manualRead'], 5]);
  assert.deepEqual(await listed('ana', { all: true }, 2, 6).then((r) => [r.threads, r.total]), [[], 5]);
  assert.deepEqual(await listed('bob', {}, 1, 1).then((r) => [r.threads, r.total]), [['bobsHidden'], 2]);
});

test('listPage: each thread as the representation needs it; the validator: each repository of the user\'s threads, readable or not, and the inbox', async () => {
  const { page } = await listed('ana', { repositoryId: id.two!, all: true });
  const expected = {
    id: id.commentedRead!, repository_id: id.two!, reason: 'comment', unread: 0, updated_at: at(12), last_read_at: null, latest_comment_id: null,
    subject_type: 'Release', subject_title: 'commentedRead', subject_url: 'https://api.example/3', issue_number: null, is_pull_request: null,
  };
  assert.equal(page.threads.length, 1);
  assert.deepEqual(Object.fromEntries(Object.keys(expected).map((key) => [key, (page.threads[0] as Record<string, unknown>)[key]])), expected);
  // (Their versions are the repositories' own: none yet on SQLite, the first on PostgreSQL.)
  assert.deepEqual(page.validator.repositories.map(({ id, readable }) => ({ id, readable })), [
    { id: id.one!, readable: true },
    { id: id.two!, readable: true },
    { id: id.hidden!, readable: false },
  ].sort((a, b) => a.id - b.id));
  assert.deepEqual(new Set(page.validator.repositories.map((r) => typeof r.version)).size, 1);
  assert.equal(page.validator.inbox?.modifiedAt, at(16));
  assert.equal(typeof page.validator.inbox?.version, 'number');
  assert.equal(page.validator.thread, null);
  const bobs = (await listed('bob', {})).page.validator;
  assert.deepEqual(bobs.repositories.map((r) => [r.id, r.readable]), [[id.one!, true], [id.hidden!, true]].sort((a, b) => (a[0] as number) - (b[0] as number)));
  assert.equal(bobs.inbox?.modifiedAt, at(17));
  const none = (await listed('cid', {})).page.validator;
  assert.deepEqual([none.repositories, none.inbox], [[], null]);
});
