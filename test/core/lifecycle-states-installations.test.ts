// Every state of ONE installation × every operation that reaches installations, with its neighbours:
// two apps (`one`, `two`) installed on the SAME organization (acme), and `one` installed on another
// organization (other). The state moves on `one`'s installation on acme alone — active, suspended,
// unsuspended, deleted — and each row runs for all three installations: the moved one answers as
// its state says, the other app's installation on the same account and the same app's installation
// on the other account answer as active ones, whatever the first's state.
// Operations: minting a token (app JWT), a token minted while active used on each area's reads and
// writes it may reach (installation repositories, a repository, an issue and its comments, issue types, code security
// configuration, the organization's issue types — read and created — and updater access), the app's
// reads of its installations (GET /app/installations/{id}, the list), and webhook deliveries.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { appJwt, type TestApp } from '../helpers/credentials.ts';
import { Receiver } from '../helpers/receiver.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const PERMISSIONS = {
  metadata: 'read', issues: 'write', administration: 'read', organization_issue_types: 'write', organization_administration: 'read',
} as const;

type Name = 'one@acme' | 'two@acme' | 'one@other';
const NAMES: Name[] = ['one@acme', 'two@acme', 'one@other'];
/** The installation whose state moves. */
const MOVED: Name = 'one@acme';
type State = 'active' | 'suspended' | 'unsuspended' | 'deleted';

let server: TestServer;
let types = 0;
let receiver: Receiver;
const apps: Record<string, TestApp> = {};
const installations = {} as Record<Name, { id: number; app: string; account: string; repo: string; token: string }>;

const jwt = async (name: Name) => appJwt(server, apps[installations[name].app]!);

/** An operation, answering what it answered (a status, or a status and what it showed). */
type Operation = (name: Name) => Promise<string | number>;
const withToken = (method: string, path: (i: (typeof installations)[Name]) => string, body?: object): Operation => async (name) => {
  const installation = installations[name];
  return (await server.api(method, path(installation), { token: installation.token, body })).status;
};

const OPERATIONS: Record<string, Operation> = {
  'POST /app/installations/{id}/access_tokens': async (name) =>
    (await server.api('POST', `/app/installations/${installations[name].id}/access_tokens`, { token: await jwt(name) })).status,
  'GET /app/installations/{id}': async (name) => {
    const shown = await server.api('GET', `/app/installations/${installations[name].id}`, { token: await jwt(name) });
    return shown.status === 200 ? `200 ${shown.body.suspended_at === null ? 'active' : 'suspended'}` : shown.status;
  },
  'GET /app/installations': async (name) => {
    const list = await server.api('GET', '/app/installations', { token: await jwt(name) });
    const found = (list.body as { id: number; suspended_at: string | null }[]).find((i) => i.id === installations[name].id);
    return !found ? 'not listed' : found.suspended_at === null ? 'listed active' : 'listed suspended';
  },
  'GET /installation/repositories': withToken('GET', () => '/installation/repositories'),
  'GET /repos/{owner}/{repo}': withToken('GET', (i) => `/repos/${i.account}/${i.repo}`),
  'GET /repos/{owner}/{repo}/issues/1': withToken('GET', (i) => `/repos/${i.account}/${i.repo}/issues/1`),
  'GET /repos/{owner}/{repo}/issues/1/comments': withToken('GET', (i) => `/repos/${i.account}/${i.repo}/issues/1/comments`),
  'POST /orgs/{org}/issue-types': async (name) => {
    const installation = installations[name];
    return (await server.api('POST', `/orgs/${installation.account}/issue-types`, { token: installation.token, body: { name: `type ${++types}`, is_enabled: true } })).status;
  },
  'GET /repos/{owner}/{repo}/issue-types': withToken('GET', (i) => `/repos/${i.account}/${i.repo}/issue-types`),
  'GET /repos/{owner}/{repo}/code-security-configuration': withToken('GET', (i) => `/repos/${i.account}/${i.repo}/code-security-configuration`),
  'GET /orgs/{org}/issue-types': withToken('GET', (i) => `/orgs/${i.account}/issue-types`),
  'GET /orgs/{org}/updater/repository-access': withToken('GET', (i) => `/orgs/${i.account}/updater/repository-access`),
  'webhook: issues opened on its account': async (name) => {
    const installation = installations[name];
    const path = `/${installation.app}`;
    const before = receiver.on(path).length;
    await server.admin('POST', `/repos/${installation.account}/${installation.repo}/issues`, { author: 'mona', title: `for ${name}` });
    await server.drain();
    const got = receiver.on(path).slice(before).filter((r) => r.json.installation?.id === installation.id && r.headers['x-vendor-event'] === 'issues');
    return got.length === 0 ? 'not delivered' : `delivered ${got.length}`;
  },
};

/** What an active installation answers (its neighbours', whatever the moved one's state). */
const ACTIVE: Record<string, string | number> = {
  'POST /app/installations/{id}/access_tokens': 201,
  'GET /app/installations/{id}': '200 active',
  'GET /app/installations': 'listed active',
  'GET /installation/repositories': 200,
  'GET /repos/{owner}/{repo}': 200,
  'GET /repos/{owner}/{repo}/issues/1': 200,
  'GET /repos/{owner}/{repo}/issues/1/comments': 200,
  'POST /orgs/{org}/issue-types': 200,
  'GET /repos/{owner}/{repo}/issue-types': 200,
  'GET /repos/{owner}/{repo}/code-security-configuration': 204,
  'GET /orgs/{org}/issue-types': 200,
  'GET /orgs/{org}/updater/repository-access': 200,
  'webhook: issues opened on its account': 'delivered 1',
};

/** What the moved installation answers in each state: its tokens 403 while suspended, gone (401) once deleted. */
const MOVED_ANSWERS: Record<State, Record<string, string | number>> = {
  active: ACTIVE,
  suspended: {
    ...Object.fromEntries(Object.keys(ACTIVE).map((operation) => [operation, 403])),
    'GET /app/installations/{id}': '200 suspended',
    'GET /app/installations': 'listed suspended',
    'webhook: issues opened on its account': 'not delivered',
  },
  unsuspended: ACTIVE,
  deleted: {
    ...Object.fromEntries(Object.keys(ACTIVE).map((operation) => [operation, 401])),
    'POST /app/installations/{id}/access_tokens': 404,
    'GET /app/installations/{id}': 404,
    'GET /app/installations': 'not listed',
    'webhook: issues opened on its account': 'not delivered',
  },
};

/** The moves into each state, by the app's API (its JWT). */
const MOVES: Record<State, (() => Promise<number>) | null> = {
  active: null,
  suspended: async () => (await server.api('PUT', `/app/installations/${installations[MOVED].id}/suspended`, { token: await jwt(MOVED) })).status,
  unsuspended: async () => (await server.api('DELETE', `/app/installations/${installations[MOVED].id}/suspended`, { token: await jwt(MOVED) })).status,
  deleted: async () => (await server.api('DELETE', `/app/installations/${installations[MOVED].id}`, { token: await jwt(MOVED) })).status,
};

before(async () => {
  receiver = await new Receiver().start();
  server = await startServer();
  await server.admin('POST', '/users', { login: 'mona' });
  for (const org of ['acme', 'other']) {
    await server.admin('POST', '/orgs', { login: org, owners: ['mona'] });
    await server.admin('POST', '/repos', { owner: org, name: 'widgets' });
    await server.admin('POST', `/repos/${org}/widgets/issues`, { author: 'mona', title: 'the first' });
  }
  for (const slug of ['one', 'two']) {
    apps[slug] = await server.admin('POST', '/apps', { slug, permissions: PERMISSIONS, events: ['issues'], webhook: { url: receiver.url(`/${slug}`) } });
  }
  await server.drain();
  for (const name of NAMES) {
    const [app, account] = name.split('@') as [string, string];
    const { id } = await server.admin('POST', `/apps/${app}/installations`, { account, repositories: 'all' });
    installations[name] = { id, app, account, repo: 'widgets', token: '' };
  }
  // Each installation's token, minted while all are active: the rows use it in every state.
  for (const name of NAMES) {
    const minted = await server.api('POST', `/app/installations/${installations[name].id}/access_tokens`, { token: await jwt(name) });
    assert.equal(minted.status, 201, minted.text);
    installations[name].token = minted.body.token;
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
    for (const [operation, run] of Object.entries(OPERATIONS)) {
      for (const name of NAMES) {
        const expected = name === MOVED ? MOVED_ANSWERS[state][operation] : ACTIVE[operation];
        test(`${operation} through ${name}${name === MOVED ? '' : ' (unaffected)'}: ${expected}`, async () => {
          assert.equal(await run(name), expected);
        });
      }
    }
  });
}

test('unsuspended, a token minted while suspended is refused and one minted after works: minting is restored', async () => {
  // By now one@acme is deleted: the sequence again on the same app's other installation.
  const other = installations['one@other'];
  const token = await jwt('one@other');
  assert.equal((await server.api('PUT', `/app/installations/${other.id}/suspended`, { token })).status, 204);
  assert.equal((await server.api('POST', `/app/installations/${other.id}/access_tokens`, { token })).status, 403);
  // The other app's installation on acme mints meanwhile.
  assert.equal((await server.api('POST', `/app/installations/${installations['two@acme'].id}/access_tokens`, { token: await jwt('two@acme') })).status, 201);
  assert.equal((await server.api('DELETE', `/app/installations/${other.id}/suspended`, { token })).status, 204);
  const minted = await server.api('POST', `/app/installations/${other.id}/access_tokens`, { token });
  assert.equal(minted.status, 201, minted.text);
  assert.equal((await server.api('GET', '/installation/repositories', { token: minted.body.token })).status, 200);
});
