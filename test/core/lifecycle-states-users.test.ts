// Every state of ONE user × each of their credentials × each area's reads and writes, beside a
// second user holding the same credentials. alice's state moves — active, suspended, unsuspended,
// deleted — and each row runs for alice and for bob: alice's answer is her state's, bob's is an
// active user's whatever alice's. Credentials: classic and fine-grained personal tokens, an OAuth
// token, an app user token (of an app someone else owns), and the app each of them owns (its JWT and
// its installation's token). Operations: the user, their own private repository and its issue, the
// organization's repository, its and the organization's issue types, notifications (read and
// marked read), migrations, the app's own reads; and an app installed on each user's account.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { appJwt, classicToken, fineGrainedToken, oauthToken, appUserToken, type TestApp } from '../helpers/credentials.ts';
import { Receiver } from '../helpers/receiver.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

type Login = 'alice' | 'bob';
const USERS: Login[] = ['alice', 'bob'];
const MOVED: Login = 'alice';
type State = 'active' | 'suspended' | 'unsuspended' | 'deleted';
type Kind = 'classic' | 'fine_grained' | 'oauth' | 'app_user';
const KINDS: Kind[] = ['classic', 'fine_grained', 'oauth', 'app_user'];

let server: TestServer;
let receiver: Receiver;
let watcher: TestApp;
const credentials = {} as Record<Login, Record<Kind, string> & { app: TestApp; installationToken: string }>;

/** A user-token operation: its status (the path names the user as `{me}`). */
const USER_OPERATIONS: Record<string, { method: string; path: string; body?: object }> = {
  'GET /user': { method: 'GET', path: '/user' },
  'GET /repos/{me}/mine': { method: 'GET', path: '/repos/{me}/mine' },
  'GET /repos/{me}/mine/issues/1': { method: 'GET', path: '/repos/{me}/mine/issues/1' },
  'GET /repos/acme/shared': { method: 'GET', path: '/repos/acme/shared' },
  'GET /repos/acme/shared/issue-types': { method: 'GET', path: '/repos/acme/shared/issue-types' },
  'GET /notifications': { method: 'GET', path: '/notifications' },
  'PUT /notifications': { method: 'PUT', path: '/notifications', body: {} },
  'GET /user/migrations': { method: 'GET', path: '/user/migrations' },
};

/** What an active user's tokens answer, by kind (the kinds' scopes and permissions differ). */
const ACTIVE: Record<Kind, Record<string, number>> = {
  classic: { 'GET /user': 200, 'GET /repos/{me}/mine': 200, 'GET /repos/{me}/mine/issues/1': 200, 'GET /repos/acme/shared': 200, 'GET /repos/acme/shared/issue-types': 200, 'GET /notifications': 200, 'PUT /notifications': 205, 'GET /user/migrations': 200 },
  fine_grained: { 'GET /user': 200, 'GET /repos/{me}/mine': 200, 'GET /repos/{me}/mine/issues/1': 200, 'GET /repos/acme/shared': 200, 'GET /repos/acme/shared/issue-types': 200, 'GET /notifications': 403, 'PUT /notifications': 403, 'GET /user/migrations': 403 },
  oauth: { 'GET /user': 200, 'GET /repos/{me}/mine': 200, 'GET /repos/{me}/mine/issues/1': 200, 'GET /repos/acme/shared': 200, 'GET /repos/acme/shared/issue-types': 200, 'GET /notifications': 200, 'PUT /notifications': 205, 'GET /user/migrations': 200 },
  app_user: { 'GET /user': 200, 'GET /repos/{me}/mine': 404, 'GET /repos/{me}/mine/issues/1': 404, 'GET /repos/acme/shared': 200, 'GET /repos/acme/shared/issue-types': 200, 'GET /notifications': 403, 'PUT /notifications': 403, 'GET /user/migrations': 403 },
};

/** The app a user owns: its JWT's reads and its installation token's. */
const APP_OPERATIONS: Record<string, (login: Login) => Promise<number>> = {
  'app JWT: GET /app': async (login) => (await server.api('GET', '/app', { token: await appJwt(server, credentials[login].app) })).status,
  'app JWT: GET /app/installations': async (login) => (await server.api('GET', '/app/installations', { token: await appJwt(server, credentials[login].app) })).status,
  'installation token: GET /installation/repositories': async (login) => (await server.api('GET', '/installation/repositories', { token: credentials[login].installationToken })).status,
  'installation token: GET /repos/acme/shared': async (login) => (await server.api('GET', '/repos/acme/shared', { token: credentials[login].installationToken })).status,
};
const APP_ACTIVE: Record<string, number> = {
  'app JWT: GET /app': 200, 'app JWT: GET /app/installations': 200, 'installation token: GET /installation/repositories': 200, 'installation token: GET /repos/acme/shared': 200,
};

/** What the moved user's credentials answer in each state; her apps' answers. */
const userAnswer = (state: State, kind: Kind, operation: string) =>
  state === 'suspended' ? 403 : state === 'deleted' ? 401 : ACTIVE[kind][operation];
const APP_ANSWERS: Record<State, Record<string, number>> = {
  active: APP_ACTIVE,
  // An app is not its owner's credential: it goes on while its owner is suspended.
  suspended: APP_ACTIVE,
  unsuspended: APP_ACTIVE,
  // Deleting its owner leaves it without one; it and its installation go on.
  deleted: APP_ACTIVE,
};

const MOVES: Record<State, (() => Promise<number>) | null> = {
  active: null,
  suspended: async () => (await server.adminRaw('PUT', `/users/${MOVED}/suspended`, { reason: 'spam' })).status,
  unsuspended: async () => (await server.adminRaw('DELETE', `/users/${MOVED}/suspended`)).status,
  deleted: async () => (await server.adminRaw('DELETE', `/users/${MOVED}`)).status,
};

before(async () => {
  receiver = await new Receiver().start();
  server = await startServer();
  for (const login of USERS) await server.admin('POST', '/users', { login });
  await server.admin('POST', '/orgs', { login: 'acme', owners: USERS });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'shared' });
  const helper = await server.admin('POST', '/apps', { slug: 'helper', permissions: { metadata: 'read', issues: 'read' } });
  await server.admin('POST', '/apps/helper/installations', { account: 'acme', repositories: 'all' });
  // An app installed on each user's own account, told of its installations (and nothing else).
  watcher = await server.admin('POST', '/apps', { slug: 'watcher', permissions: { metadata: 'read' }, events: [], webhook: { url: receiver.url('/watcher') } });
  await server.drain();
  for (const login of USERS) await server.admin('POST', '/apps/watcher/installations', { account: login, repositories: 'all' });
  await server.drain();
  for (const login of USERS) {
    await server.admin('POST', '/repos', { owner: login, name: 'mine', visibility: 'private' });
    await server.admin('POST', `/repos/${login}/mine/issues`, { author: login, title: 'mine' });
    const app = await server.admin('POST', '/apps', { slug: `${login}-app`, owner: login, permissions: { metadata: 'read' } });
    const installation = await server.admin('POST', `/apps/${login}-app/installations`, { account: 'acme', repositories: 'all' });
    const minted = await server.api('POST', `/app/installations/${installation.id}/access_tokens`, { token: await appJwt(server, app) });
    assert.equal(minted.status, 201, minted.text);
    credentials[login] = {
      classic: await classicToken(server, login, ['repo', 'notifications', 'user']),
      fine_grained: await fineGrainedToken(server, login, login, { metadata: 'read', issues: 'read' }),
      oauth: await oauthToken(server, helper, login, ['repo', 'notifications', 'user']),
      app_user: await appUserToken(server, helper, login),
      app,
      installationToken: minted.body.token,
    };
  }
});

after(async () => {
  await server.close();
  await receiver.stop();
});

for (const state of Object.keys(MOVES) as State[]) {
  describe(`${MOVED} ${state}`, () => {
    before(async () => {
      const move = MOVES[state];
      if (move) assert.equal(await move(), 204, `${state}: the move answers 204`);
    });
    for (const kind of KINDS) {
      for (const [operation, { method, path, body }] of Object.entries(USER_OPERATIONS)) {
        for (const login of USERS) {
          const expected = login === MOVED ? userAnswer(state, kind, operation) : ACTIVE[kind][operation];
          test(`${kind} of ${login}${login === MOVED ? '' : ' (unaffected)'}: ${operation} ${expected}`, async () => {
            const answer = await server.api(method, path.replace('{me}', login), { token: credentials[login][kind], body });
            assert.equal(answer.status, expected, answer.text);
            if (login === MOVED && state === 'suspended') assert.equal(answer.body.message, 'Sorry. Your account was suspended.');
          });
        }
      }
    }
    for (const [operation, run] of Object.entries(APP_OPERATIONS)) {
      for (const login of USERS) {
        const expected = login === MOVED ? APP_ANSWERS[state][operation]! : APP_ACTIVE[operation]!;
        test(`${login}'s app${login === MOVED ? '' : ' (unaffected)'}: ${operation} ${expected}`, async () => {
          assert.equal(await run(login), expected);
        });
      }
    }
  });
}

test('deleted: the installations on her account go with it, no app is sent anything for it; his stays', async () => {
  await server.drain();
  const listed = await server.api('GET', '/app/installations', { token: await appJwt(server, watcher) });
  assert.deepEqual((listed.body as { account: { login: string } }[]).map((installation) => installation.account.login), ['bob']);
  const got = receiver.on('/watcher').map((r) => `${r.headers['x-vendor-event']} ${r.json.action ?? ''} ${r.json.installation?.account?.login ?? ''}`.trim());
  assert.deepEqual(got, ['ping', 'installation created alice', 'installation created bob']);
});
