// A user's deletion (OwnerWrites deleteUser) on a real migrated database (SQLite, or PostgreSQL when
// DATABASE_URL is set), no server: alice is deleted, bob beside her must be untouched. A row per case:
// the sole owner of organizations refused (422 naming them, in order), the ghost refused, unknown
// logins and organizations 404; a deletion that goes through takes alice's account, repositories and
// their git data, memberships, leaves what she wrote on bob's repository (issues, comments, events) to `ghost`, records
// `user.deleted` — bob's account, repository, membership, writing and git data stay.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, beforeEach, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/database.ts';
import { openDatabase, type Db } from '../../db/index.ts';
import { migrateToLatest } from '../../db/migrate.ts';
import { Clock } from '../../platform/clock.ts';
import type { Context } from '../../platform/context.ts';
import { ApiError } from '../../platform/errors.ts';
import { OwnerWrites } from './owner-writes.ts';
import { LockSpy } from '../../../test/helpers/unit.ts';

const NOW = '2026-06-01T12:00:00.000Z';

let testDatabase: TestDatabase;
let db: Db;
let ctx: Context;
const id: Record<string, number> = {};

before(async () => {
  testDatabase = await createTestDatabase();
  db = openDatabase({ databaseUrl: testDatabase.databaseUrl, sqlitePath: `${testDatabase.dataDir}/codehost.db` });
  await migrateToLatest(db);
  ctx = { clock: new Clock(), db, config: { dataDir: testDatabase.dataDir }, queue: { send: async () => 'job' }, log: { error: () => {} } } as unknown as Context;
});

after(async () => {
  await db?.close();
  await testDatabase?.drop();
});

/** Afresh: alice and bob, each a repository with git data and an issue by the other; organizations by owner. */
beforeEach(async () => {
  const k = db.kysely;
  await k.deleteFrom('issue_comments').execute();
  await k.deleteFrom('issue_events').execute();
  await k.deleteFrom('issues').execute();
  await k.deleteFrom('repositories').execute();
  await k.deleteFrom('users').execute();
  await k.deleteFrom('activity_outbox').execute();
  for (const [login, type] of [['alice', 'User'], ['bob', 'User'], ['acme', 'Organization'], ['solo', 'Organization'], ['also', 'Organization']] as const) {
    id[login] = (await k.insertInto('users').values({ login, login_lower: login, type, site_admin: 0, created_at: NOW, updated_at: NOW } as never).returning('id').executeTakeFirstOrThrow()).id;
  }
  for (const org of ['acme', 'solo', 'also']) await k.insertInto('organizations').values({ id: id[org]!, enterprise_id: null } as never).execute();
  // acme: both own it; solo and also: alice alone owns them (bob a member of solo).
  await k.insertInto('org_memberships').values([['acme', 'alice', 'owner'], ['acme', 'bob', 'owner'], ['solo', 'alice', 'owner'], ['solo', 'bob', 'member'], ['also', 'alice', 'owner']].map(([org, user, role]) => ({ org_id: id[org!]!, user_id: id[user!]!, role })) as never).execute();
  for (const login of ['alice', 'bob']) {
    const git_path = `git/${login}-mine.git`;
    mkdirSync(join(testDatabase.dataDir, git_path), { recursive: true });
    id[`${login}/mine`] = (await k.insertInto('repositories').values({ owner_id: id[login]!, name: 'mine', name_lower: 'mine', visibility: 'private', git_path, created_at: NOW, updated_at: NOW } as never).returning('id').executeTakeFirstOrThrow()).id;
  }
  // On bob's repository: an issue by alice and one by bob. On alice's: one by bob.
  for (const [repository, author, number] of [['bob/mine', 'alice', 1], ['bob/mine', 'bob', 2], ['alice/mine', 'bob', 1]] as const) {
    await k.insertInto('issues').values({ repository_id: id[repository]!, number, author_id: id[author]!, title: `by ${author}`, body: null, state: 'open', is_pull_request: 0, created_at: NOW, updated_at: NOW } as never).execute();
  }
  // On bob's second issue: a comment and an event by each.
  const issue = (await k.selectFrom('issues').select('id').where('repository_id', '=', id['bob/mine']!).where('number', '=', 2).executeTakeFirstOrThrow()).id;
  for (const login of ['alice', 'bob']) {
    await k.insertInto('issue_comments').values({ issue_id: issue, repository_id: id['bob/mine']!, author_id: id[login]!, body: `by ${login}`, created_at: NOW, updated_at: NOW } as never).execute();
    await k.insertInto('issue_events').values({ issue_id: issue, repository_id: id['bob/mine']!, actor_id: id[login]!, event: 'labeled', created_at: NOW } as never).execute();
  }
});

async function world() {
  const k = db.kysely;
  const users = await k.selectFrom('users').select('login').orderBy('login').execute();
  const repositories = await k.selectFrom('repositories').innerJoin('users', 'users.id', 'repositories.owner_id').select(['users.login', 'repositories.name']).orderBy('users.login').execute();
  const memberships = await k.selectFrom('org_memberships').innerJoin('users as org', 'org.id', 'org_memberships.org_id').innerJoin('users as member', 'member.id', 'org_memberships.user_id')
    .select(['org.login as org', 'member.login as member', 'org_memberships.role']).orderBy('org.login').orderBy('member.login').execute();
  const issues = await k.selectFrom('issues').innerJoin('users', 'users.id', 'issues.author_id').innerJoin('repositories', 'repositories.id', 'issues.repository_id').innerJoin('users as owner', 'owner.id', 'repositories.owner_id')
    .select(['owner.login as owner', 'issues.number', 'users.login as author']).orderBy('owner.login').orderBy('issues.number').execute();
  const comments = await k.selectFrom('issue_comments').innerJoin('users', 'users.id', 'issue_comments.author_id').select(['users.login', 'issue_comments.body']).orderBy('issue_comments.id').execute();
  const events = await k.selectFrom('issue_events').innerJoin('users', 'users.id', 'issue_events.actor_id').select('users.login').orderBy('issue_events.id').execute();
  const activities = await k.selectFrom('activity_outbox').select(['event', 'action', 'payload']).execute();
  return {
    users: users.map((u) => u.login),
    repositories: repositories.map((r) => `${r.login}/${r.name}`),
    memberships: memberships.map((m) => `${m.org} ${m.member} ${m.role}`),
    issues: issues.map((i) => `${i.owner}#${i.number} by ${i.author}`),
    comments: comments.map((c) => `${c.body}: ${c.login}`),
    events: events.map((e) => e.login),
    git: ['alice', 'bob'].filter((login) => existsSync(join(testDatabase.dataDir, `git/${login}-mine.git`))),
    activities: activities.map((a) => `${a.event}.${a.action} ${a.payload}`),
  };
}

const BEFORE = {
  users: ['acme', 'alice', 'also', 'bob', 'solo'],
  repositories: ['alice/mine', 'bob/mine'],
  memberships: ['acme alice owner', 'acme bob owner', 'also alice owner', 'solo alice owner', 'solo bob member'],
  issues: ['alice#1 by bob', 'bob#1 by alice', 'bob#2 by bob'],
  comments: ['by alice: alice', 'by bob: bob'],
  events: ['alice', 'bob'],
  git: ['alice', 'bob'],
  activities: [],
};

const refusal = async (login: string, status: number, message: string) => {
  await assert.rejects(new OwnerWrites(ctx, []).deleteUser(login), (error: unknown) => {
    assert.ok(error instanceof ApiError);
    assert.equal(error.status, status);
    if (status === 422) assert.deepEqual(error.errors, [{ resource: 'User', field: 'login', code: 'custom', message }]);
    return true;
  });
};

test('the sole owner of organizations is refused, naming each in order; nothing goes', async () => {
  await refusal('alice', 422, 'alice is the only owner of also, solo: add another owner or delete the organization first');
  assert.deepEqual(await world(), BEFORE);
});

test('the sole owner of one organization is refused, naming it', async () => {
  await db.kysely.updateTable('org_memberships').set({ role: 'owner' }).where('org_id', '=', id.solo!).where('user_id', '=', id.bob!).execute();
  await refusal('alice', 422, 'alice is the only owner of also: add another owner or delete the organization first');
});

for (const login of ['nobody', 'acme', '']) {
  test(`deleting ${JSON.stringify(login)}: 404, nothing goes`, async () => {
    await refusal(login, 404, '');
    assert.deepEqual(await world(), BEFORE);
  });
}

test('alice, another owner beside her everywhere: she and hers go, what she wrote on bob\'s is ghost\'s; bob untouched', async () => {
  await db.kysely.deleteFrom('org_memberships').where('user_id', '=', id.bob!).where('org_id', 'in', [id.solo!, id.also!]).execute();
  await db.kysely.insertInto('org_memberships').values(['solo', 'also'].map((org) => ({ org_id: id[org]!, user_id: id.bob!, role: 'owner' })) as never).execute();
  await new OwnerWrites(ctx, []).deleteUser('alice');
  assert.deepEqual(await world(), {
    users: ['acme', 'also', 'bob', 'ghost', 'solo'],
    repositories: ['bob/mine'],
    memberships: ['acme bob owner', 'also bob owner', 'solo bob owner'],
    issues: ['bob#1 by ghost', 'bob#2 by bob'],
    comments: ['by alice: ghost', 'by bob: bob'],
    events: ['ghost', 'bob'],
    git: ['bob'],
    activities: [`user.deleted ${JSON.stringify({ user: { id: id.alice, login: 'alice' } })}`],
  });
  // The ghost, made on first use: a user, named as the platform names it.
  const ghost = await db.kysely.selectFrom('users').select(['login_lower', 'type', 'name', 'email', 'site_admin']).where('login', '=', 'ghost').executeTakeFirstOrThrow();
  assert.deepEqual({ ...ghost }, { login_lower: 'ghost', type: 'User', name: 'Deleted user', email: null, site_admin: 0 });
  // Deleting her again: 404.
  await refusal('alice', 404, '');
  // The ghost is not deleted; bob, once alone, is refused as the only owner.
  await refusal('ghost', 422, 'the ghost user cannot be deleted');
  await refusal('BOB', 422, 'bob is the only owner of acme, also, solo: add another owner or delete the organization first');
});

for (const dialect of ['postgres', 'sqlite'] as const) {
  test(`on ${dialect}, the account is ${dialect === 'postgres' ? 'locked (FOR NO KEY UPDATE) before it is checked' : 'not locked (SQLite\'s writer lock serializes deletions)'}`, async () => {
    const spy = new LockSpy();
    const spied = { ...ctx, db: { ...db, dialect, kysely: db.kysely.withPlugin(spy) } } as Context;
    await assert.rejects(new OwnerWrites(spied, []).deleteUser('alice'), (error: unknown) => error instanceof ApiError && error.status === 422);
    assert.deepEqual(spy.locks, dialect === 'postgres' ? ['ForNoKeyUpdate'] : []);
  });
}
