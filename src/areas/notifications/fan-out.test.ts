// Who is a recipient of an activity's notifications (fan-out.ts), on a real migrated database (SQLite,
// or PostgreSQL when DATABASE_URL is set), no server: each handler runs in a transaction as the
// dispatcher runs it, and the threads and thread subscriptions it leaves are read back. A row per
// neighbour: the actor (never notified, their participation subscribes them), an app's bot acting,
// a user who cannot read the repository (mentioned, on a team, watching), watchers (watching,
// ignoring), thread subscriptions (subscribed, ignored, muted) and what lifts them.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/database.ts';
import { sql } from 'kysely';
import { openDatabase, type Db } from '../../db/index.ts';
import { migrateToLatest } from '../../db/migrate.ts';
import { Clock } from '../../platform/clock.ts';
import type { Context } from '../../platform/context.ts';
import { notificationHandlers } from './fan-out.ts';

const NOW = '2026-06-01T12:00:00.000Z';
const USERS = ['owner', 'ann', 'bob', 'cat', 'dan', 'eve', 'out', 'bot'] as const;
type Login = (typeof USERS)[number];

let testDatabase: TestDatabase;
let db: Db;
let ctx: Context;
const id: Record<string, number> = {};

before(async () => {
  testDatabase = await createTestDatabase();
  db = openDatabase({ databaseUrl: testDatabase.databaseUrl, sqlitePath: `${testDatabase.dataDir}/codehost.db` });
  await migrateToLatest(db);
  ctx = { clock: new Clock(), db } as unknown as Context;
  const k = db.kysely;
  for (const login of [...USERS, 'org']) {
    id[login] = (await k.insertInto('users').values({
      login, login_lower: login, type: login === 'bot' ? 'Bot' : login === 'org' ? 'Organization' : 'User', site_admin: 0, created_at: NOW, updated_at: NOW,
    } as never).returning('id').executeTakeFirstOrThrow()).id;
  }
  await k.insertInto('organizations').values({ id: id.org!, enterprise_id: null } as never).execute();
  for (const [name, visibility] of [['secret', 'private'], ['open', 'public']] as const) {
    id[name] = (await k.insertInto('repositories').values({ owner_id: id.owner!, name, name_lower: name, visibility, created_at: NOW, updated_at: NOW } as never)
      .returning('id').executeTakeFirstOrThrow()).id;
  }
  // Everyone but `out` reads the private repository.
  await k.insertInto('repository_collaborators').values(['ann', 'bob', 'cat', 'dan', 'eve', 'bot'].map((login) => ({ repository_id: id.secret!, user_id: id[login]!, permission: 'pull', created_at: NOW })) as never).execute();
  id.devs = (await k.insertInto('teams').values({ org_id: id.org!, slug: 'devs', name: 'devs', created_at: NOW, updated_at: NOW } as never).returning('id').executeTakeFirstOrThrow()).id;
  await k.insertInto('team_members').values(['bob', 'out', 'ann'].map((login) => ({ team_id: id.devs!, user_id: id[login]! })) as never).execute();
});

after(async () => {
  await db?.close();
  await testDatabase?.drop();
});

let issues = 0;
let activities = 0;

/** A new issue (or pull request) in the repository, with who watches it and who has a subscription to it. */
interface Setup {
  repository?: 'secret' | 'open';
  pull?: boolean;
  /** Watching the repository: `watching` (subscribed), `ignoring`. */
  watches?: Partial<Record<Login, 'watching' | 'ignoring'>>;
  /** Thread subscriptions: state, and its reason (null: none). */
  subscriptions?: Partial<Record<Login, [state: 'subscribed' | 'ignored' | 'muted', reason: string | null]>>;
}

async function issue(setup: Setup): Promise<number> {
  const k = db.kysely;
  const repositoryId = id[setup.repository ?? 'secret']!;
  const issueId = (await k.insertInto('issues').values({
    repository_id: repositoryId, number: ++issues, author_id: id.ann!, title: `issue ${issues}`, body: null, state: 'open', is_pull_request: setup.pull ? 1 : 0, created_at: NOW, updated_at: NOW,
  } as never).returning('id').executeTakeFirstOrThrow()).id;
  await k.deleteFrom('repository_subscriptions').execute();
  for (const [login, watch] of Object.entries(setup.watches ?? {})) {
    await k.insertInto('repository_subscriptions').values({ repository_id: repositoryId, user_id: id[login]!, subscribed: watch === 'watching' ? 1 : 0, ignored: watch === 'ignoring' ? 1 : 0, created_at: NOW } as never).execute();
  }
  const subscriptions = Object.entries(setup.subscriptions ?? {});
  if (subscriptions.length) {
    const subjectId = (await k.insertInto('notification_subjects').values({
      repository_id: repositoryId, issue_id: issueId, subject_key: `issue:${issueId}`, type: setup.pull ? 'PullRequest' : 'Issue', title: `issue ${issues}`, url: null, created_at: NOW, updated_at: NOW,
    } as never).returning('id').executeTakeFirstOrThrow()).id;
    await k.insertInto('thread_subscriptions').values(subscriptions.map(([login, [state, reason]]) => ({ user_id: id[login]!, subject_id: subjectId, state, reason, created_at: NOW })) as never).execute();
  }
  return issueId;
}

type HandlerName = keyof typeof notificationHandlers;

/** Runs the handler of `name` on a row of it, as the dispatcher does (in a transaction). */
async function notify(name: HandlerName, issueId: number | null, actor: Login | null, payload: object, repository: 'secret' | 'open' = 'secret'): Promise<void> {
  const row = {
    id: ++activities, name, event: name.split('.')[0], action: name.split('.')[1], repository_id: id[repository]!, account_id: id.owner!,
    actor_id: actor === null ? null : id[actor]!, issue_id: issueId, comment_id: name === 'issue_comment.created' ? 500 + activities : null,
    payload: { number: 1, pull_request: false, mentioned_user_ids: [], mentioned_team_ids: [], ...payload }, created_at: NOW,
  };
  await db.kysely.transaction().execute((trx) => (notificationHandlers[name] as (c: Context, t: typeof trx, r: never) => Promise<void>)(ctx, trx, row as never));
}

const loginOf = (userId: number) => USERS.find((login) => id[login] === userId) ?? String(userId);

/** The issue's threads (login: reason) and thread subscriptions (login: state:reason). */
async function outcome(issueId: number): Promise<{ threads: Record<string, string>; subscriptions: Record<string, string> }> {
  const threads = await db.kysely.selectFrom('notification_threads as t').innerJoin('notification_subjects as s', 's.id', 't.subject_id')
    .select(['t.user_id', 't.reason', 't.latest_comment_id', 't.unread', 't.repository_id', 's.type']).where('s.issue_id', '=', issueId).orderBy('t.user_id').execute();
  const subscriptions = await db.kysely.selectFrom('thread_subscriptions as ts').innerJoin('notification_subjects as s', 's.id', 'ts.subject_id')
    .select(['ts.user_id', 'ts.state', 'ts.reason']).where('s.issue_id', '=', issueId).orderBy('ts.user_id').execute();
  return {
    threads: Object.fromEntries(threads.map((t) => [loginOf(t.user_id), t.reason])),
    subscriptions: Object.fromEntries(subscriptions.map((s) => [loginOf(s.user_id), `${s.state}:${s.reason}`])),
  };
}

const mentions = (users: Login[], teams: string[] = []) => ({ mentioned_user_ids: users.map((u) => id[u]!), mentioned_team_ids: teams.map((t) => id[t]!) });

interface Row {
  name: string;
  setup: Setup;
  handler: HandlerName;
  actor: Login;
  payload: () => object;
  threads: Record<string, string>;
  subscriptions: Record<string, string>;
}

const opened = (extra: object = {}) => ({ assignee_ids: [], requested_reviewer_ids: [], requested_team_ids: [], ...extra });

const ROWS: Row[] = [
  {
    name: 'opened: the actor is never notified (their authorship subscribes them); the mentioned, the assignee and a watcher are; who cannot read is not',
    setup: { watches: { dan: 'watching', eve: 'ignoring', out: 'watching' } },
    handler: 'issues.opened', actor: 'ann', payload: () => opened({ ...mentions(['bob', 'out', 'ann']), assignee_ids: [id.cat] }),
    threads: { bob: 'mention', cat: 'assign', dan: 'subscribed' },
    subscriptions: { ann: 'subscribed:mention', bob: 'subscribed:mention', cat: 'subscribed:assign' },
  },
  {
    name: 'opened: requested reviewers and a requested team\'s members (who can read); a team member ignoring the repository is not',
    setup: { watches: { ann: 'ignoring' } },
    handler: 'pull_request.opened', actor: 'eve', payload: () => opened({ requested_reviewer_ids: [id.dan], requested_team_ids: [id.devs] }),
    threads: { bob: 'review_requested', dan: 'review_requested' },
    subscriptions: { bob: 'subscribed:review_requested', dan: 'subscribed:review_requested', eve: 'subscribed:author' },
  },
  {
    name: 'opened: a team mention is not direct, blocked by ignoring the repository; it never subscribes',
    setup: { watches: { bob: 'ignoring' } },
    handler: 'issues.opened', actor: 'eve', payload: () => opened(mentions([], ['devs'])),
    threads: { ann: 'team_mention' },
    subscriptions: { eve: 'subscribed:author' },
  },
  {
    name: 'comment: subscribers (their reason; none: manual) and watchers; ignored never; muted only by watching; the commenter subscribes',
    setup: {
      watches: { dan: 'watching', eve: 'ignoring', cat: 'watching' },
      subscriptions: { ann: ['subscribed', 'author'], cat: ['ignored', null], dan: ['muted', 'comment'], eve: ['subscribed', 'comment'], owner: ['subscribed', null] },
    },
    handler: 'issue_comment.created', actor: 'bob', payload: () => mentions([]),
    threads: { owner: 'manual', ann: 'author', dan: 'subscribed', eve: 'comment' },
    subscriptions: { owner: 'subscribed:null', ann: 'subscribed:author', bob: 'subscribed:comment', cat: 'ignored:null', dan: 'muted:comment', eve: 'subscribed:comment' },
  },
  {
    name: 'comment: a mention lifts an ignored or muted subscription; a team mention does not; a subscriber mentioned takes the more direct reason',
    setup: { subscriptions: { cat: ['ignored', null], dan: ['muted', 'author'], bob: ['ignored', null], eve: ['subscribed', 'comment'] } },
    handler: 'issue_comment.created', actor: 'owner', payload: () => mentions(['cat', 'dan', 'eve'], ['devs']),
    threads: { ann: 'team_mention', cat: 'mention', dan: 'mention', eve: 'mention' },
    subscriptions: { owner: 'subscribed:comment', bob: 'ignored:null', cat: 'subscribed:mention', dan: 'subscribed:mention', eve: 'subscribed:mention' },
  },
  {
    name: 'review submitted: the pull request\'s author hears of it (author), a watcher and a subscriber as of a comment; the reviewer subscribes (comment)',
    setup: { pull: true, watches: { dan: 'watching' }, subscriptions: { eve: ['subscribed', 'comment'] } },
    handler: 'pull_request_review.submitted', actor: 'bob', payload: () => ({ pull_request: true }),
    threads: { ann: 'author', dan: 'subscribed', eve: 'comment' },
    subscriptions: { ann: 'subscribed:author', bob: 'subscribed:comment', eve: 'subscribed:comment' },
  },
  {
    name: 'review submitted by the pull request\'s author (a comment on their own): nobody is told of it but a watcher; their subscription keeps its reason',
    setup: { pull: true, watches: { dan: 'watching' } },
    handler: 'pull_request_review.submitted', actor: 'ann', payload: () => ({ pull_request: true }),
    threads: { dan: 'subscribed' },
    subscriptions: { ann: 'subscribed:author' },
  },
  {
    name: 'comment: mentioning oneself notifies nobody of it, but subscribes (mention) and lifts one\'s own ignored subscription',
    setup: { subscriptions: { bob: ['ignored', null] } },
    handler: 'issue_comment.created', actor: 'bob', payload: () => mentions(['bob']),
    threads: {},
    subscriptions: { bob: 'subscribed:mention' },
  },
  {
    name: 'comment: the actor\'s own subscription takes the more direct reason; a muted one is lifted by commenting',
    setup: { subscriptions: { ann: ['subscribed', 'state_change'], bob: ['muted', null] }, watches: { ann: 'watching' } },
    handler: 'issue_comment.created', actor: 'ann', payload: () => mentions([]),
    threads: {},
    subscriptions: { ann: 'subscribed:comment', bob: 'muted:null' },
  },
  {
    name: 'comment: the actor\'s subscription already as direct stays as it is',
    setup: { subscriptions: { ann: ['subscribed', 'author'] } },
    handler: 'issue_comment.created', actor: 'ann', payload: () => mentions(['cat']),
    threads: { cat: 'mention' },
    subscriptions: { ann: 'subscribed:author', cat: 'subscribed:mention' },
  },
  {
    name: 'comment by an app\'s bot: the bot is never notified, not even watching or subscribed, nor subscribed by its mention; the others are',
    setup: { watches: { bot: 'watching', dan: 'watching' }, subscriptions: { bot: ['subscribed', 'manual'] } },
    handler: 'issue_comment.created', actor: 'bot', payload: () => mentions(['bot', 'cat']),
    threads: { cat: 'mention', dan: 'subscribed' },
    subscriptions: { bot: 'subscribed:manual', cat: 'subscribed:mention' },
  },
  {
    name: 'comment by a person: an app\'s bot subscribed, watching and mentioned gets no thread, its subscription unchanged',
    setup: { watches: { bot: 'watching' }, subscriptions: { bot: ['subscribed', 'comment'] } },
    handler: 'issue_comment.created', actor: 'ann', payload: () => mentions(['bot', 'cat']),
    threads: { cat: 'mention' },
    subscriptions: { ann: 'subscribed:comment', bot: 'subscribed:comment', cat: 'subscribed:mention' },
  },
  {
    name: 'comment in a public repository: anyone mentioned can read it',
    setup: { repository: 'open', watches: { out: 'watching' } },
    handler: 'issue_comment.created', actor: 'ann', payload: () => mentions(['out']),
    threads: { out: 'mention' },
    subscriptions: { ann: 'subscribed:comment', out: 'subscribed:mention' },
  },
  {
    name: 'comment: a user who cannot read the private repository, subscribed, is not notified',
    setup: { subscriptions: { out: ['subscribed', 'manual'] }, watches: { out: 'watching' } },
    handler: 'issue_comment.created', actor: 'ann', payload: () => mentions(['out']),
    threads: {},
    subscriptions: { ann: 'subscribed:comment', out: 'subscribed:manual' },
  },
  {
    name: 'closed: subscribers and watchers; the actor\'s state change subscribes them; their ignored subscription is not lifted',
    setup: { watches: { dan: 'watching' }, subscriptions: { ann: ['subscribed', 'author'], bob: ['ignored', null] } },
    handler: 'issues.closed', actor: 'bob', payload: () => ({}),
    threads: { ann: 'author', dan: 'subscribed' },
    subscriptions: { ann: 'subscribed:author', bob: 'ignored:null' },
  },
  {
    name: 'reopened: the actor without a subscription subscribes with state_change',
    setup: { subscriptions: { cat: ['subscribed', 'mention'] } },
    handler: 'pull_request.reopened', actor: 'dan', payload: () => ({}),
    threads: { cat: 'mention' },
    subscriptions: { cat: 'subscribed:mention', dan: 'subscribed:state_change' },
  },
  {
    name: 'assigned: the assignee alone, never subscribers or watchers; the actor is not subscribed',
    setup: { watches: { dan: 'watching' }, subscriptions: { ann: ['subscribed', 'author'], cat: ['subscribed', 'comment'] } },
    handler: 'issues.assigned', actor: 'eve', payload: () => ({ assignee_id: id.cat }),
    threads: { cat: 'assign' },
    subscriptions: { ann: 'subscribed:author', cat: 'subscribed:assign' },
  },
  {
    name: 'assigned: an assignee who cannot read the repository is not notified; the actor assigning themselves is not either',
    setup: {},
    handler: 'issues.assigned', actor: 'out', payload: () => ({ assignee_id: id.out }),
    threads: {},
    subscriptions: { out: 'subscribed:assign' },
  },
  {
    name: 'assigned: a muted subscriber assigned is not notified (only watching reaches a muted thread) and stays muted',
    setup: { subscriptions: { dan: ['muted', 'comment'] } },
    handler: 'issues.assigned', actor: 'eve', payload: () => ({ assignee_id: id.dan }),
    threads: {},
    subscriptions: { dan: 'muted:comment' },
  },
  {
    name: 'opened: the actor mentioning themselves lifts their own ignored subscription (mention)',
    setup: { subscriptions: { ann: ['ignored', null] } },
    handler: 'issues.opened', actor: 'ann', payload: () => opened(mentions(['ann'])),
    threads: {},
    subscriptions: { ann: 'subscribed:mention' },
  },
  {
    name: 'opened: the actor\'s ignored subscription stays ignored without a mention',
    setup: { subscriptions: { ann: ['ignored', null] } },
    handler: 'issues.opened', actor: 'ann', payload: () => opened(),
    threads: {},
    subscriptions: { ann: 'ignored:null' },
  },
  {
    name: 'opened: an assignee, a requested reviewer and a mentioned user ignoring the repository still hear (direct participation)',
    setup: { watches: { bob: 'ignoring', cat: 'ignoring', dan: 'ignoring' } },
    handler: 'pull_request.opened', actor: 'eve', payload: () => opened({ ...mentions(['dan']), assignee_ids: [id.bob], requested_reviewer_ids: [id.cat] }),
    threads: { bob: 'assign', cat: 'review_requested', dan: 'mention' },
    subscriptions: { bob: 'subscribed:assign', cat: 'subscribed:review_requested', dan: 'subscribed:mention', eve: 'subscribed:author' },
  },
  {
    name: 'comment: mentioning a user ignoring the repository notifies them (a mention is direct)',
    setup: { watches: { cat: 'ignoring' } },
    handler: 'issue_comment.created', actor: 'ann', payload: () => mentions(['cat']),
    threads: { cat: 'mention' },
    subscriptions: { ann: 'subscribed:comment', cat: 'subscribed:mention' },
  },
  {
    name: 'assigned: an assignee ignoring the repository still hears',
    setup: { watches: { cat: 'ignoring' } },
    handler: 'issues.assigned', actor: 'eve', payload: () => ({ assignee_id: id.cat }),
    threads: { cat: 'assign' },
    subscriptions: { cat: 'subscribed:assign' },
  },
  {
    name: 'assigned: a subscriber with a more direct reason keeps it',
    setup: { subscriptions: { cat: ['subscribed', 'mention'] } },
    handler: 'issues.assigned', actor: 'eve', payload: () => ({ assignee_id: id.cat }),
    threads: { cat: 'assign' },
    subscriptions: { cat: 'subscribed:mention' },
  },
  {
    name: 'review requested of a user ignoring the repository: still heard',
    setup: { watches: { bob: 'ignoring' } },
    handler: 'pull_request.review_requested', actor: 'eve', payload: () => ({ requested_reviewer_id: id.bob }),
    threads: { bob: 'review_requested' },
    subscriptions: { bob: 'subscribed:review_requested' },
  },
  {
    name: 'comment: the actor mentioning their own team subscribes for the comment, not the team mention',
    setup: {},
    handler: 'issue_comment.created', actor: 'ann', payload: () => mentions([], ['devs']),
    threads: { bob: 'team_mention' },
    subscriptions: { ann: 'subscribed:comment' },
  },
  {
    name: 'comment: the actor\'s muted subscription is lifted by commenting',
    setup: { subscriptions: { bob: ['muted', 'author'] } },
    handler: 'issue_comment.created', actor: 'bob', payload: () => mentions([]),
    threads: {},
    subscriptions: { bob: 'subscribed:author' },
  },
  {
    name: 'comment: a muted subscriber not watching hears nothing',
    setup: { subscriptions: { eve: ['muted', 'comment'], cat: ['subscribed', 'comment'] } },
    handler: 'issue_comment.created', actor: 'ann', payload: () => mentions([]),
    threads: { cat: 'comment' },
    subscriptions: { ann: 'subscribed:comment', cat: 'subscribed:comment', eve: 'muted:comment' },
  },
  {
    name: 'review requested of a user: that user alone',
    setup: { watches: { dan: 'watching' } },
    handler: 'pull_request.review_requested', actor: 'eve', payload: () => ({ requested_reviewer_id: id.bob }),
    threads: { bob: 'review_requested' },
    subscriptions: { bob: 'subscribed:review_requested' },
  },
  {
    name: 'review requested of a team: its members who read the repository, not through an ignored repository',
    setup: { watches: { bob: 'ignoring' } },
    handler: 'issues.review_requested', actor: 'eve', payload: () => ({ requested_team_id: id.devs }),
    threads: { ann: 'review_requested' },
    subscriptions: { ann: 'subscribed:review_requested' },
  },
  {
    name: 'assigned: a subscriber without a reason (a manual subscription) takes the assignment\'s',
    setup: { subscriptions: { cat: ['subscribed', null] } },
    handler: 'issues.assigned', actor: 'eve', payload: () => ({ assignee_id: id.cat }),
    threads: { cat: 'assign' },
    subscriptions: { cat: 'subscribed:assign' },
  },
];

for (const row of ROWS) {
  test(`recipients: ${row.name}`, async () => {
    const issueId = await issue(row.setup);
    await notify(row.handler, issueId, row.actor, row.payload(), row.setup.repository);
    assert.deepEqual(await outcome(issueId), { threads: row.threads, subscriptions: row.subscriptions });
  });
}

test('a thread shows the activity: the subject\'s type and repository, unread, the comment, the row\'s time; the subject is recorded once', async () => {
  const pull = await issue({ pull: true, subscriptions: { cat: ['subscribed', 'comment'] } });
  await notify('issue_comment.created', pull, 'ann', mentions(['bob']));
  const threads = await db.kysely.selectFrom('notification_threads as t').innerJoin('notification_subjects as s', 's.id', 't.subject_id')
    .select(['t.user_id', 't.repository_id', 't.unread', 't.done', 't.latest_comment_id', 't.last_activity_id', 't.updated_at', 't.last_read_at', 's.type', 's.title', 's.url', 's.subject_key'])
    .where('s.issue_id', '=', pull).orderBy('t.user_id').execute();
  assert.deepEqual(threads.map((t) => ({ ...t })), [id.bob!, id.cat!].map((userId) => ({
    user_id: userId, repository_id: id.secret!, unread: 1, done: 0, latest_comment_id: 500 + activities, last_activity_id: activities, updated_at: NOW, last_read_at: null,
    type: 'PullRequest', title: `issue ${issues}`, url: null, subject_key: `issue:${pull}`,
  })));
  // A subscription keeps when it was made; a new one is made now (as the thread).
  const kept = await issue({ subscriptions: { eve: ['subscribed', 'comment'] } });
  const started = new Date().toISOString();
  await notify('issue_comment.created', kept, 'owner', mentions(['eve', 'bob']));
  const made = await db.kysely.selectFrom('thread_subscriptions as ts').innerJoin('notification_subjects as s', 's.id', 'ts.subject_id')
    .select(['ts.user_id', 'ts.created_at']).where('s.issue_id', '=', kept).orderBy('ts.user_id').execute();
  assert.deepEqual(made.map((m) => [loginOf(m.user_id), m.created_at === NOW]), [['owner', false], ['bob', false], ['eve', true]].sort((a, b) => id[a[0] as string]! - id[b[0] as string]!));
  for (const m of made.filter((m) => m.created_at !== NOW)) assert.ok(m.created_at >= started, m.created_at);
  const [madeThread] = await db.kysely.selectFrom('notification_threads as t').innerJoin('notification_subjects as s', 's.id', 't.subject_id').select(['t.created_at']).where('s.issue_id', '=', kept).where('t.user_id', '=', id.bob!).execute();
  assert.ok(madeThread!.created_at >= started);
  const openedId = await issue({});
  await notify('issues.opened', openedId, 'ann', opened({ assignee_ids: [id.cat] }));
  const [thread] = await db.kysely.selectFrom('notification_threads as t').innerJoin('notification_subjects as s', 's.id', 't.subject_id').select(['s.type', 't.latest_comment_id']).where('s.issue_id', '=', openedId).execute();
  assert.deepEqual({ ...thread }, { type: 'Issue', latest_comment_id: null });
});

test('the inboxes of who got a thread or whose subscription changed move; nobody else\'s', async () => {
  const before = Object.fromEntries((await db.kysely.selectFrom('notification_inboxes').select(['user_id', 'version']).execute()).map((r) => [loginOf(r.user_id), Number(r.version)]));
  const issueId = await issue({ subscriptions: { eve: ['ignored', null] } });
  await notify('issue_comment.created', issueId, 'ann', mentions(['bob']));
  const after = Object.fromEntries((await db.kysely.selectFrom('notification_inboxes').select(['user_id', 'version']).execute()).map((r) => [loginOf(r.user_id), Number(r.version)]));
  const moved = USERS.filter((login) => (after[login] ?? 0) !== (before[login] ?? 0));
  assert.deepEqual(moved, ['ann', 'bob']);
  // Again: ann's subscription (comment) does not change, so her inbox does not move; bob's thread does.
  const again = Object.fromEntries((await db.kysely.selectFrom('notification_inboxes').select(['user_id', 'version']).execute()).map((r) => [loginOf(r.user_id), Number(r.version)]));
  await notify('issue_comment.created', issueId, 'ann', mentions([]));
  const last = Object.fromEntries((await db.kysely.selectFrom('notification_inboxes').select(['user_id', 'version']).execute()).map((r) => [loginOf(r.user_id), Number(r.version)]));
  assert.deepEqual(USERS.filter((login) => (last[login] ?? 0) !== (again[login] ?? 0)), ['bob']);
});

test('nothing without an issue, an actor, or an issue that still exists', async () => {
  const issueId = await issue({ watches: { dan: 'watching' } });
  await notify('issue_comment.created', null, 'ann', mentions(['bob']));
  await notify('issue_comment.created', issueId, null, mentions(['bob']));
  await notify('issue_comment.created', 999_999, 'ann', mentions(['bob']));
  assert.deepEqual(await outcome(issueId), { threads: {}, subscriptions: {} });
  assert.equal(Number((await db.kysely.selectFrom('notification_subjects').select((eb) => eb.fn.countAll().as('n')).where('issue_id', '=', 999_999).executeTakeFirstOrThrow()).n), 0);
});

test('access changed: the inboxes of the users named, or of those with threads in the repositories, move', async () => {
  const versions = async () => Object.fromEntries((await db.kysely.selectFrom('notification_inboxes').select(['user_id', 'version']).execute()).map((r) => [loginOf(r.user_id), Number(r.version)]));
  const change = async (payload: object) => {
    const before = await versions();
    await db.kysely.transaction().execute((trx) => notificationHandlers['access.changed']!(ctx, trx, { name: 'access.changed', payload } as never));
    const after = await versions();
    return USERS.filter((login) => (after[login] ?? 0) !== (before[login] ?? 0));
  };
  assert.deepEqual(await change({ userIds: [id.eve!, id.out!] }), ['eve', 'out']);
  const withThreads = (await db.kysely.selectFrom('notification_threads').select('user_id').distinct().where('repository_id', '=', id.open!).execute()).map((r) => loginOf(r.user_id));
  assert.deepEqual(await change({ repositoryIds: [id.open!] }), USERS.filter((login) => withThreads.includes(login)));
  assert.ok(withThreads.length > 0);
});

/**
 * Runs `run` with a trigger that deletes the row when the fan-out writes the inboxes: the fan-out's
 * own statement just before it holds the repository and the issue, as a deletion committed after the
 * activity was read and before its writes would (the race the hold is there for).
 */
async function deletedOnInboxWrite(table: 'issues' | 'repositories', rowId: number, run: () => Promise<void>): Promise<void> {
  const k = db.kysely;
  const deletion = `delete from ${table} where id = ${Number(rowId)}`;
  const postgres = testDatabase.databaseUrl !== null;
  if (postgres) {
    await sql.raw(`create function fan_out_race() returns trigger language plpgsql as $$ begin ${deletion}; return null; end $$`).execute(k);
    await sql.raw('create trigger fan_out_race after insert or update on notification_inboxes for each statement execute function fan_out_race()').execute(k);
  } else {
    for (const when of ['insert', 'update']) await sql.raw(`create trigger fan_out_race_${when} after ${when} on notification_inboxes begin ${deletion}; end`).execute(k);
  }
  try {
    await run();
  } finally {
    if (postgres) {
      await sql.raw('drop trigger fan_out_race on notification_inboxes').execute(k);
      await sql.raw('drop function fan_out_race()').execute(k);
    } else {
      for (const when of ['insert', 'update']) await sql.raw(`drop trigger fan_out_race_${when}`).execute(k);
    }
  }
}

test('the issue or its repository deleted before the writes: nothing is written for it, and the fan-out does not fail', async () => {
  const k = db.kysely;
  const rows: [name: string, table: 'issues' | 'repositories'][] = [['the issue deleted (its repository stays)', 'issues'], ['the repository deleted (its issues with it)', 'repositories']];
  for (const [name, table] of rows) {
    const repositoryId = (await k.insertInto('repositories').values({ owner_id: id.owner!, name: `gone-${table}`, name_lower: `gone-${table}`, visibility: 'public', created_at: NOW, updated_at: NOW } as never)
      .returning('id').executeTakeFirstOrThrow()).id;
    const issueId = (await k.insertInto('issues').values({
      repository_id: repositoryId, number: 1, author_id: id.ann!, title: 'gone', body: null, state: 'open', is_pull_request: 0, created_at: NOW, updated_at: NOW,
    } as never).returning('id').executeTakeFirstOrThrow()).id;
    id[`gone-${table}`] = repositoryId;
    await deletedOnInboxWrite(table, table === 'issues' ? issueId : repositoryId, () => notify('issue_comment.created', issueId, 'ann', mentions(['bob']), `gone-${table}` as never));
    assert.equal((await k.selectFrom('issues').select('id').where('id', '=', issueId).execute()).length, 0, name);
    assert.equal((await k.selectFrom('repositories').select('id').where('id', '=', repositoryId).execute()).length, table === 'issues' ? 1 : 0, name);
    assert.deepEqual(await outcome(issueId), { threads: {}, subscriptions: {} }, name);
    assert.equal((await k.selectFrom('notification_threads').select('id').where('repository_id', '=', repositoryId).execute()).length, 0, name);
  }
});
