// The delivery engine's decisions of fan-out (engine.ts), no server: whether an app subscribes, whether
// an activity is on a pull request, which of the candidate apps are subscribed and covered by their
// grant, which apps each Targeting finds on a real migrated database (SQLite, or PostgreSQL when
// DATABASE_URL is set), why a queued delivery is dropped, what is a failure and when it is retried.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/database.ts';
import { openDatabase, type Db } from '../../db/index.ts';
import { migrateToLatest } from '../../db/migrate.ts';
import {
  droppedBecause, installedOver, isFailure, onPullRequest, retryDelay, subscribedAndCovered, subscribes,
  toCoveringInstallations, toInstallationApp, toOwnWebhook, type Activity,
} from './engine.ts';
import type { Target } from './store.ts';

const NOW = '2026-06-01T12:00:00.000Z';
const LATER = '2026-06-01T13:00:00.000Z';

test('subscribes: the app\'s events, a JSON list, name the event; anything but a list names nothing', () => {
  const rows: [events: string, event: string, expected: boolean][] = [
    ['["issues","push"]', 'issues', true],
    ['["issues","push"]', 'push', true],
    ['["issues"]', 'issue_comment', false],
    ['[]', 'issues', false],
    // A string contains its event's name, an object has it as a key: neither is a list.
    ['"issues"', 'issues', false],
    ['{"issues":true}', 'issues', false],
    ['null', 'issues', false],
  ];
  for (const [events, event, expected] of rows) assert.equal(subscribes(events, event), expected, `${events} ${event}`);
});

const activity = (changes: Partial<Activity> = {}): Activity => ({ event: 'issues', repository_id: null, account_id: null, created_at: NOW, ...changes });

test('onPullRequest: a typed activity by its `pull_request` fact (true alone); a raw event by its issue.pull_request', () => {
  const rows: [name: string, changes: Partial<Activity>, expected: boolean][] = [
    ['typed, pull_request true', { name: 'issue_comment.created', payload: { pull_request: true } }, true],
    ['typed, pull_request false', { name: 'issue_comment.created', payload: { pull_request: false } }, false],
    ['typed, pull_request truthy but not true', { name: 'issue_comment.created', payload: { pull_request: 'yes' } }, false],
    ['typed, no fact', { name: 'issue_comment.created', payload: {} }, false],
    ['typed, no payload', { name: 'issue_comment.created' }, false],
    // A typed activity's facts are not the platform's shape: an issue member there says nothing.
    ['typed, an issue member with a pull request', { name: 'issue_comment.created', payload: { issue: { pull_request: { url: 'x' } } } }, false],
    ['raw, issue.pull_request an object', { payload: { issue: { pull_request: { url: 'x' } } } }, true],
    ['raw, issue.pull_request true', { payload: { issue: { pull_request: true } } }, true],
    ['raw, issue.pull_request 0 (present, not false)', { payload: { issue: { pull_request: 0 } } }, true],
    ['raw, issue.pull_request null', { payload: { issue: { pull_request: null } } }, false],
    ['raw, issue.pull_request false', { payload: { issue: { pull_request: false } } }, false],
    ['raw, issue without pull_request', { payload: { issue: { number: 1 } } }, false],
    ['raw, issue null', { payload: { issue: null } }, false],
    ['raw, issue a list', { payload: { issue: Object.assign([], { pull_request: { url: 'x' } }) } }, false],
    ['raw, issue a string', { payload: { issue: 'pull_request' } }, false],
    ['raw, a pull_request fact but no issue', { payload: { pull_request: true } }, false],
    ['raw, no payload', {}, false],
  ];
  for (const [name, changes, expected] of rows) assert.equal(onPullRequest(activity(changes)), expected, name);
});

const target = (app_id: number, events: string[], app: object, installation: object): Target => ({
  app_id, events: JSON.stringify(events), installation_id: app_id * 10, app_permissions: JSON.stringify(app), installation_permissions: JSON.stringify(installation),
});

test('subscribedAndCovered: subscribed (installation events need not be), and covered by granted ∩ requested (a pull request\'s own permission)', () => {
  const targets = [
    target(1, ['issues', 'issue_comment'], { issues: 'read' }, { issues: 'write' }),
    target(2, ['push'], { issues: 'read', contents: 'read' }, { issues: 'read', contents: 'read' }),
    // Requested but not granted, granted but not requested.
    target(3, ['issues', 'issue_comment'], { issues: 'read' }, { metadata: 'read' }),
    target(4, ['issues', 'issue_comment'], { metadata: 'read' }, { issues: 'read' }),
    target(5, ['issue_comment'], { pull_requests: 'read' }, { pull_requests: 'write' }),
    target(6, [], {}, {}),
  ];
  const ids = (a: Activity) => subscribedAndCovered(a, targets).map((t) => t.app_id);
  assert.deepEqual(ids(activity({ event: 'issues' })), [1]);
  assert.deepEqual(ids(activity({ event: 'push' })), [2]);
  // The targets come back as they were, in their order.
  assert.deepEqual(subscribedAndCovered(activity({ event: 'push' }), targets), [targets[1]]);
  assert.deepEqual(ids(activity({ event: 'installation' })), [1, 2, 3, 4, 5, 6]);
  assert.deepEqual(ids(activity({ event: 'installation_repositories' })), [1, 2, 3, 4, 5, 6]);
  assert.deepEqual(ids(activity({ event: 'issue_comment', name: 'issue_comment.created', payload: { pull_request: false } })), [1]);
  assert.deepEqual(ids(activity({ event: 'issue_comment', name: 'issue_comment.created', payload: { pull_request: true } })), [1, 5]);
  assert.deepEqual(ids(activity({ event: 'issue_comment', payload: { issue: { pull_request: { url: 'x' } } } })), [1, 5]);
  assert.deepEqual(ids(activity({ event: 'watch' })), []);
  assert.deepEqual(subscribedAndCovered(activity({ event: 'issues' }), []), []);
});

test('droppedBecause: a queued delivery of a deleted or suspended installation is dropped; installation events and app-only ones are not', () => {
  const attempt = (changes: Partial<Parameters<typeof droppedBecause>[0]>) =>
    droppedBecause({ installation_id: 5, event: 'issues', installation_found: 5, installation_suspended_at: null, ...changes });
  assert.equal(attempt({}), null);
  assert.equal(attempt({ installation_found: null }), 'dropped: installation deleted');
  assert.equal(attempt({ installation_suspended_at: NOW }), 'dropped: installation suspended');
  // Deleted wins over suspended (a deleted installation's suspension is not read).
  assert.equal(attempt({ installation_found: null, installation_suspended_at: NOW }), 'dropped: installation deleted');
  assert.equal(attempt({ event: 'installation', installation_found: null }), null);
  assert.equal(attempt({ event: 'installation', installation_suspended_at: NOW }), null);
  assert.equal(attempt({ event: 'installation_repositories', installation_suspended_at: NOW }), 'dropped: installation suspended');
  // `ping` goes through no installation.
  assert.equal(attempt({ installation_id: null, event: 'ping', installation_found: null }), null);
  assert.equal(attempt({ installation_id: null, installation_suspended_at: NOW }), null);
});

test('isFailure: anything outside 2xx and 3xx, a post that got no status (0) included', () => {
  for (const code of [0, 100, 199, 400, 404, 410, 500, 503]) assert.equal(isFailure(code), true, String(code));
  for (const code of [200, 201, 204, 299, 301, 302, 399]) assert.equal(isFailure(code), false, String(code));
});

test('retryDelay: a failure with retries left, after the base doubled per earlier retry; no retry of a success or when spent', () => {
  const config = { retries: 3, retryBaseSeconds: 5 };
  assert.equal(retryDelay(500, 0, config), 5);
  assert.equal(retryDelay(0, 1, config), 10);
  assert.equal(retryDelay(404, 2, config), 20);
  assert.equal(retryDelay(500, 3, config), null);
  assert.equal(retryDelay(500, 4, config), null);
  assert.equal(retryDelay(200, 0, config), null);
  assert.equal(retryDelay(302, 0, config), null);
  assert.equal(retryDelay(500, 0, { retries: 0, retryBaseSeconds: 5 }), null);
  assert.equal(retryDelay(500, 1, { retries: 2, retryBaseSeconds: 3 }), 6);
});

// The Targetings on a real database.
let testDatabase: TestDatabase;
let db: Db;
const id: Record<string, number> = {};

before(async () => {
  testDatabase = await createTestDatabase();
  db = openDatabase({ databaseUrl: testDatabase.databaseUrl, sqlitePath: `${testDatabase.dataDir}/codehost.db` });
  await migrateToLatest(db);
  const k = db.kysely;
  for (const login of ['acme', 'globex']) {
    id[login] = (await k.insertInto('users').values({ login, login_lower: login, type: 'User', site_admin: 0, created_at: NOW, updated_at: NOW } as never)
      .returning('id').executeTakeFirstOrThrow()).id;
  }
  for (const [owner, name] of [['acme', 'one'], ['acme', 'two'], ['globex', 'plans']] as const) {
    id[name] = (await k.insertInto('repositories').values({ owner_id: id[owner]!, name, name_lower: name, visibility: 'private', created_at: NOW, updated_at: NOW } as never)
      .returning('id').executeTakeFirstOrThrow()).id;
  }
  const app = async (slug: string, events: string[], webhook: { url: string | null; active: number } | null) => {
    id[slug] = (await k.insertInto('apps').values({
      slug, name: slug, owner_id: null, client_id: `Iv1.${slug}`, client_secret_hash: 'x', public_key_pem: 'x',
      permissions: JSON.stringify({ issues: 'write', metadata: 'read' }), events: JSON.stringify(events), created_at: NOW, updated_at: NOW,
    } as never).returning('id').executeTakeFirstOrThrow()).id;
    if (webhook) await k.insertInto('app_webhooks').values({ app_id: id[slug]!, ...webhook, created_at: NOW, updated_at: NOW } as never).execute();
  };
  const install = async (name: string, slug: string, account: string, selection: 'all' | 'selected', changes: object = {}) => {
    id[name] = (await k.insertInto('installations').values({
      app_id: id[slug]!, account_id: id[account]!, repository_selection: selection, permissions: JSON.stringify({ issues: 'read', metadata: 'read' }),
      created_at: NOW, updated_at: NOW, ...changes,
    } as never).returning('id').executeTakeFirstOrThrow()).id;
  };
  // On acme: every repository; a selection of two; not subscribed; no grant of issues; a webhook switched
  // off; one with no URL; suspended; installed after the event; and the first app again on globex.
  await app('all', ['issues'], { url: 'http://127.0.0.1:9/all', active: 1 });
  await app('picked', ['issues'], { url: 'http://127.0.0.1:9/picked', active: 1 });
  await app('unsubscribed', ['push'], { url: 'http://127.0.0.1:9/unsubscribed', active: 1 });
  await app('ungranted', ['issues'], { url: 'http://127.0.0.1:9/ungranted', active: 1 });
  await app('off', ['issues'], { url: 'http://127.0.0.1:9/off', active: 0 });
  await app('nourl', ['issues'], { url: null, active: 1 });
  await app('suspended', ['issues'], { url: 'http://127.0.0.1:9/suspended', active: 1 });
  await app('late', ['issues'], { url: 'http://127.0.0.1:9/late', active: 1 });
  await install('allOnAcme', 'all', 'acme', 'all');
  await install('allOnGlobex', 'all', 'globex', 'all');
  await install('pickedOnAcme', 'picked', 'acme', 'selected');
  await install('unsubscribedOnAcme', 'unsubscribed', 'acme', 'all');
  await install('ungrantedOnAcme', 'ungranted', 'acme', 'all', { permissions: JSON.stringify({ metadata: 'read' }) });
  await install('offOnAcme', 'off', 'acme', 'all');
  await install('nourlOnAcme', 'nourl', 'acme', 'all');
  await install('suspendedOnAcme', 'suspended', 'acme', 'all', { suspended_at: NOW });
  await install('lateOnAcme', 'late', 'acme', 'all', { created_at: LATER });
  await k.insertInto('installation_repositories').values({ installation_id: id.pickedOnAcme!, repository_id: id.two! } as never).execute();
});

after(async () => {
  await db?.close();
  await testDatabase?.drop();
});

const APPS = ['all', 'picked', 'unsubscribed', 'ungranted', 'off', 'nourl', 'suspended', 'late'];
const INSTALLATIONS = ['allOnAcme', 'allOnGlobex', 'pickedOnAcme', 'unsubscribedOnAcme', 'ungrantedOnAcme', 'offOnAcme', 'nourlOnAcme', 'suspendedOnAcme', 'lateOnAcme'];

/** The targets a Targeting finds, as app@installation. */
async function found(targeting: { targets: typeof installedOver.targets }, a: Activity): Promise<string[]> {
  const targets = await targeting.targets(db.kysely, a);
  return targets.map((t) => `${APPS.find((slug) => id[slug] === t.app_id)}@${t.installation_id === null ? 'none' : INSTALLATIONS.find((name) => id[name] === t.installation_id)}`);
}

test('installedOver: the repository\'s covering installations on its owner; the account\'s for an event without one; nobody for neither', async () => {
  const rows: [name: string, a: Activity, expected: string[]][] = [
    ['a repository every installation covers', activity({ repository_id: id.one!, account_id: id.acme! }), ['all@allOnAcme']],
    ['a repository the selection covers', activity({ repository_id: id.two!, account_id: id.acme! }), ['all@allOnAcme', 'picked@pickedOnAcme']],
    // The repository decides, whatever account the activity names.
    ['a repository, another account named', activity({ repository_id: id.two!, account_id: id.globex! }), ['all@allOnAcme', 'picked@pickedOnAcme']],
    ['the other account\'s repository', activity({ repository_id: id.plans!, account_id: id.globex! }), ['all@allOnGlobex']],
    ['an account, no repository', activity({ account_id: id.acme! }), ['all@allOnAcme', 'picked@pickedOnAcme']],
    ['the other account', activity({ account_id: id.globex! }), ['all@allOnGlobex']],
    ['neither', activity({}), []],
    ['an event the grant does not cover', activity({ event: 'watch', repository_id: id.one! }), []],
    ['an event another app subscribes to', activity({ event: 'push', repository_id: id.one! }), []],
    ['an installation event: every app without subscribing', activity({ event: 'installation', repository_id: id.one! }), ['all@allOnAcme', 'unsubscribed@unsubscribedOnAcme', 'ungranted@ungrantedOnAcme']],
    ['after the late installation was made', activity({ repository_id: id.one!, created_at: LATER }), ['all@allOnAcme', 'late@lateOnAcme']],
  ];
  for (const [name, a, expected] of rows) assert.deepEqual(await found(installedOver, a), expected, name);
});

test('toCoveringInstallations: a deleted repository\'s installations named in its payload, on its account, subscribed and covered', async () => {
  const deleted = (installations: string[], changes: Partial<Activity> = {}) =>
    activity({ event: 'repository', account_id: id.acme!, payload: { installation_ids: installations.map((name) => id[name]!) }, ...changes });
  assert.deepEqual(await found(toCoveringInstallations, deleted(['allOnAcme', 'pickedOnAcme'])), []);
  // `repository` needs metadata alone; none of these apps subscribe to it but by their installation events.
  assert.deepEqual(await found(toCoveringInstallations, deleted(['allOnAcme'], { event: 'installation_repositories' })), ['all@allOnAcme']);
  assert.deepEqual(await found(toCoveringInstallations, deleted(['allOnAcme', 'pickedOnAcme'], { event: 'installation_repositories' })), ['all@allOnAcme', 'picked@pickedOnAcme']);
  assert.deepEqual(await found(toCoveringInstallations, deleted(['pickedOnAcme', 'allOnGlobex'], { event: 'issues' })), ['picked@pickedOnAcme']);
  assert.deepEqual(await found(toCoveringInstallations, deleted(['ungrantedOnAcme', 'unsubscribedOnAcme', 'allOnAcme'], { event: 'issues' })), ['all@allOnAcme']);
  assert.deepEqual(await found(toCoveringInstallations, deleted([], { event: 'issues' })), []);
  // No account: as installedOver.
  assert.deepEqual(await found(toCoveringInstallations, activity({ repository_id: id.two!, payload: { installation_ids: [] } })), ['all@allOnAcme', 'picked@pickedOnAcme']);
  assert.deepEqual(await found(toCoveringInstallations, activity({ payload: { installation_ids: [id.allOnAcme!] } })), []);
});

test('toInstallationApp and toOwnWebhook: the one app, through the installation or none; none without an active webhook', async () => {
  const about = (slug: string, installation: string) => activity({ event: 'installation', payload: { installation: { id: id[installation]!, app_id: id[slug]!, account: { login: 'acme' } } } });
  assert.deepEqual(await found(toInstallationApp, about('all', 'allOnGlobex')), ['all@allOnGlobex']);
  assert.deepEqual(await found(toInstallationApp, about('suspended', 'suspendedOnAcme')), ['suspended@suspendedOnAcme']);
  assert.deepEqual(await found(toInstallationApp, about('off', 'offOnAcme')), []);
  assert.deepEqual(await found(toInstallationApp, about('nourl', 'nourlOnAcme')), []);
  const [one] = await toInstallationApp.targets(db.kysely, about('picked', 'pickedOnAcme'));
  assert.deepEqual(one, { app_id: id.picked!, events: '["issues"]', installation_id: id.pickedOnAcme!, app_permissions: '{"issues":"write","metadata":"read"}', installation_permissions: '{"issues":"write","metadata":"read"}' });
  assert.deepEqual(toInstallationApp.recorded!(about('all', 'allOnGlobex')), { id: id.allOnGlobex!, app_id: id.all!, account: { login: 'acme' } });

  const ping = (slug: string) => activity({ event: 'ping', payload: { app_id: id[slug]! } });
  assert.deepEqual(await found(toOwnWebhook, ping('unsubscribed')), ['unsubscribed@none']);
  assert.deepEqual(await found(toOwnWebhook, ping('off')), []);
  assert.deepEqual(await found(toOwnWebhook, ping('nourl')), []);
  assert.equal(toOwnWebhook.recorded, undefined);
  assert.equal(installedOver.recorded, undefined);
});
