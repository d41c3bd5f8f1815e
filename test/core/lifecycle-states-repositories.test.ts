// Every state of ONE repository × each area's reads and writes on it, beside a second repository of
// the same owner. acme/widgets moves — active, archived, unarchived, renamed (to sprockets: the old
// name and the new), transferred (to the organization `other`: the old owner's place and the new) —
// and each row runs at each of its places and at acme/gadgets, which must answer as an active
// repository whatever widgets' state. Areas: the repository itself, its issues (a new one: the write
// an archive refuses), issue types, its code security configuration (read; attach and apply by the
// owner's configuration), notifications (read, marked read), the updater's access list of its owner,
// a token narrowed to it (an installation token selecting it and gadgets: at each place, and by id),
// and app webhooks (the new issue delivered to the app installed on its owner). User migrations'
// move rule is not here: src/areas/user-migrations/lifecycle.test.ts and lifecycle-transfers.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { appJwt, classicToken, type TestApp } from '../helpers/credentials.ts';
import { Receiver } from '../helpers/receiver.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

type State = 'active' | 'archived' | 'unarchived' | 'renamed' | 'transferred';
/** Where the rows look, in each state: the moved repository's places, and its neighbour. */
const PLACES: Record<State, string[]> = {
  active: ['acme/widgets'],
  archived: ['acme/widgets'],
  unarchived: ['acme/widgets'],
  renamed: ['acme/widgets', 'acme/sprockets'],
  transferred: ['acme/sprockets', 'other/sprockets'],
};
const NEIGHBOUR = 'acme/gadgets';

let server: TestServer;
let receiver: Receiver;
let alice: string;
/** Installation tokens of bot on each organization, narrowed to widgets and gadgets (acme) or all (other). */
const narrowed: Record<string, string> = {};
const configurations: Record<string, number> = {};
const ids: Record<string, number> = {};
const installationOf: Record<number, string> = {};
let issues = 0;

/** The id a place names (its repository's id, as the rows' writes send it). */
const idAt = (place: string) => (place === NEIGHBOUR ? ids.gadgets! : ids.widgets!);
const ownerOf = (place: string) => place.split('/')[0]!;

type Operation = (place: string) => Promise<string | number>;
const OPERATIONS: Record<string, Operation> = {
  'GET /repos/{owner}/{repo}': async (place) => {
    const shown = await server.api('GET', `/repos/${place}`, { token: alice });
    return shown.status === 200 ? `200 ${shown.body.full_name}${shown.body.archived ? ' archived' : ''}` : shown.status;
  },
  'GET /repos/{owner}/{repo}/issue-types': async (place) => (await server.api('GET', `/repos/${place}/issue-types`, { token: alice })).status,
  'GET /repos/{owner}/{repo}/code-security-configuration': async (place) => {
    const shown = await server.api('GET', `/repos/${place}/code-security-configuration`, { token: alice });
    return shown.status === 200 ? `200 ${shown.body.configuration.name} ${shown.body.status}` : shown.status;
  },
  'GET /repos/{owner}/{repo}/notifications': async (place) => (await server.api('GET', `/repos/${place}/notifications?all=true`, { token: alice })).status,
  'PUT /repos/{owner}/{repo}/notifications': async (place) => (await server.api('PUT', `/repos/${place}/notifications`, { token: alice, body: {} })).status,
  'a new issue (operator) and its webhook to the app on its owner': async (place) => {
    const before = receiver.on('/bot').length;
    const created = await server.adminRaw('POST', `/repos/${place}/issues`, { author: 'alice', title: `issue ${++issues}` });
    await server.drain();
    const delivered = receiver.on('/bot').slice(before).filter((r) => r.headers['x-vendor-event'] === 'issues').map((r) => `${r.json.repository.full_name} to ${installationOf[r.json.installation.id]}`);
    return `${created.status} ${delivered.join(', ') || 'not delivered'}`;
  },
  'attach its owner\'s configuration to it, applied': async (place) => {
    const owner = ownerOf(place);
    const attached = await server.api('POST', `/orgs/${owner}/code-security/configurations/${configurations[owner]}/attach`, { token: alice, body: { scope: 'selected', selected_repository_ids: [idAt(place)] } });
    await server.drain();
    const listed = await server.api('GET', `/orgs/${owner}/code-security/configurations/${configurations[owner]}/repositories?status=all`, { token: alice });
    const status = (listed.body as { status: string; repository: { id: number } }[]).find((r) => r.repository.id === idAt(place))?.status ?? 'not attached';
    return `${attached.status} ${status}`;
  },
  'its owner\'s updater access list names it': async (place) => {
    const list = await server.api('GET', `/orgs/${ownerOf(place)}/updater/repository-access`, { token: alice });
    if (list.status !== 200) return list.status;
    return (list.body.accessible_repositories as { id: number }[]).some((r) => r.id === idAt(place)) ? 'listed' : 'not listed';
  },
  'an installation token narrowed to it': async (place) => (await server.api('GET', `/repos/${place}`, { token: narrowed[ownerOf(place)] })).status,
  'the old owner\'s token narrowed to it, by id': async (place) => (await server.api('GET', `/repositories/${idAt(place)}`, { token: narrowed.acme })).status,
};

/**
 * What an active repository answers at its place (gadgets always; widgets while it is): `configured`
 * once the first state's row attached its owner's configuration to it, `archived` while it is.
 */
const active = (place: string, { archived = false, configured = true } = {}): Record<string, string | number> => ({
  'GET /repos/{owner}/{repo}': `200 ${place}${archived ? ' archived' : ''}`,
  'GET /repos/{owner}/{repo}/issue-types': 200,
  'GET /repos/{owner}/{repo}/code-security-configuration': configured ? `200 ${ownerOf(place)} scanning enforced` : 204,
  'GET /repos/{owner}/{repo}/notifications': 200,
  'PUT /repos/{owner}/{repo}/notifications': 205,
  'a new issue (operator) and its webhook to the app on its owner': archived ? '403 not delivered' : `201 ${place} to ${ownerOf(place)}`,
  'attach its owner\'s configuration to it, applied': archived ? '202 failed' : '202 enforced',
  'its owner\'s updater access list names it': 'listed',
  'an installation token narrowed to it': 200,
  'the old owner\'s token narrowed to it, by id': 200,
});

/** The answers at each place of widgets, by state. */
const EXPECTED: Record<State, Record<string, Record<string, string | number>>> = {
  active: { 'acme/widgets': active('acme/widgets', { configured: false }) },
  // Its configuration's apply ran while it was active: enforced; attaching now fails it.
  archived: { 'acme/widgets': active('acme/widgets', { archived: true }) },
  // Unarchiving does not apply its configuration again: its attachment stays failed until attached again (the next row).
  unarchived: { 'acme/widgets': { ...active('acme/widgets'), 'GET /repos/{owner}/{repo}/code-security-configuration': '200 acme scanning failed' } },
  renamed: {
    // The old name: a read follows it (301), every other route is at the new name only.
    'acme/widgets': {
      'GET /repos/{owner}/{repo}': 301,
      'GET /repos/{owner}/{repo}/issue-types': 301,
      'GET /repos/{owner}/{repo}/code-security-configuration': 301,
      'GET /repos/{owner}/{repo}/notifications': 301,
      'PUT /repos/{owner}/{repo}/notifications': 307,
      'a new issue (operator) and its webhook to the app on its owner': '404 not delivered',
      // By id, as the platform's attach names repositories: the rename changes nothing.
      'attach its owner\'s configuration to it, applied': '202 enforced',
      'its owner\'s updater access list names it': 'listed',
      'an installation token narrowed to it': 301,
      'the old owner\'s token narrowed to it, by id': 200,
    },
    'acme/sprockets': active('acme/sprockets'),
  },
  transferred: {
    'acme/sprockets': {
      'GET /repos/{owner}/{repo}': 301,
      'GET /repos/{owner}/{repo}/issue-types': 301,
      'GET /repos/{owner}/{repo}/code-security-configuration': 301,
      'GET /repos/{owner}/{repo}/notifications': 301,
      'PUT /repos/{owner}/{repo}/notifications': 307,
      'a new issue (operator) and its webhook to the app on its owner': '404 not delivered',
      // The old owner's configuration let go of it, and cannot take it again: it is not acme's.
      'attach its owner\'s configuration to it, applied': '422 not attached',
      // The old owner's list dropped it.
      'its owner\'s updater access list names it': 'not listed',
      // The old owner's installation no longer selects it: its token does not reach it.
      'an installation token narrowed to it': 404,
      'the old owner\'s token narrowed to it, by id': 404,
    },
    'other/sprockets': {
      // The old owner's configuration let go of it; the new owner has no default: none, until attached.
      ...active('other/sprockets', { configured: false }),
      // Only its new owner's list may name it, and that one never did.
      'its owner\'s updater access list names it': 'not listed',
      // The old owner's installation no longer selects it: its token does not reach it at the new place either.
      'the old owner\'s token narrowed to it, by id': 404,
    },
  },
};

const MOVES: Record<State, (() => Promise<unknown>) | null> = {
  active: null,
  archived: () => server.admin('PATCH', '/repos/acme/widgets', { archived: true }),
  unarchived: () => server.admin('PATCH', '/repos/acme/widgets', { archived: false }),
  renamed: () => server.admin('PATCH', '/repos/acme/widgets', { name: 'sprockets' }),
  transferred: () => server.admin('PATCH', '/repos/acme/sprockets', { owner: 'other' }),
};

before(async () => {
  receiver = await new Receiver().start();
  server = await startServer();
  await server.admin('POST', '/users', { login: 'alice' });
  for (const org of ['acme', 'other']) await server.admin('POST', '/orgs', { login: org, owners: ['alice'] });
  for (const name of ['widgets', 'gadgets']) ids[name] = (await server.admin('POST', '/repos', { owner: 'acme', name, visibility: 'private' })).id;
  await server.admin('POST', '/repos', { owner: 'other', name: 'theirs' });
  alice = await classicToken(server, 'alice', ['repo', 'admin:org', 'notifications']);
  const bot: TestApp = await server.admin('POST', '/apps', { slug: 'bot', permissions: { metadata: 'read', issues: 'read' }, events: ['issues'], webhook: { url: receiver.url('/bot') } });
  await server.drain();
  for (const org of ['acme', 'other']) {
    const installation = await server.admin('POST', '/apps/bot/installations', { account: org, repositories: org === 'acme' ? ['widgets', 'gadgets'] : 'all' });
    installationOf[installation.id] = org;
    const minted = await server.api('POST', `/app/installations/${installation.id}/access_tokens`, { token: await appJwt(server, bot), body: org === 'acme' ? { repository_ids: [ids.widgets, ids.gadgets] } : {} });
    assert.equal(minted.status, 201, minted.text);
    narrowed[org] = minted.body.token;
    const created = await server.api('POST', `/orgs/${org}/code-security/configurations`, { token: alice, body: { name: `${org} scanning`, secret_scanning: 'enabled' } });
    assert.equal(created.status, 201, created.text);
    configurations[org] = created.body.id;
  }
  for (const [org, type] of [['acme', 'Bug'], ['other', 'Task']] as const) {
    const created = await server.api('POST', `/orgs/${org}/issue-types`, { token: alice, body: { name: type, is_enabled: true } });
    assert.equal(created.status, 200, created.text);
  }
  // The old organization's override of its type for widgets: it names a type the new owner does not have.
  await server.admin('PUT', '/repos/acme/widgets/issue-types/Bug', { is_enabled: true });
  const added = await server.api('PATCH', '/orgs/acme/updater/repository-access', { token: alice, body: { repository_ids_to_add: [ids.widgets, ids.gadgets] } });
  assert.equal(added.status, 204, added.text);
});

after(async () => {
  await server.close();
  await receiver.stop();
});

for (const state of Object.keys(MOVES) as State[]) {
  describe(`acme/widgets ${state}`, () => {
    before(async () => {
      await MOVES[state]?.();
    });
    for (const [operation, run] of Object.entries(OPERATIONS)) {
      for (const place of [...PLACES[state], NEIGHBOUR]) {
        const expected = place === NEIGHBOUR ? active(NEIGHBOUR, { configured: state !== 'active' })[operation] : EXPECTED[state][place]![operation];
        test(`${operation} at ${place}${place === NEIGHBOUR ? ' (unaffected)' : ''}: ${expected}`, async () => {
          assert.equal(await run(place), expected);
        });
      }
    }
  });
}

test('a transferred repository\'s issue types are its new owner\'s: the old organization\'s (and its override of one) are not; its neighbour keeps its owner\'s', async () => {
  const names = async (place: string) => ((await server.api('GET', `/repos/${place}/issue-types`, { token: alice })).body as { name: string }[]).map((type) => type.name);
  assert.deepEqual(await names('other/sprockets'), ['Task']);
  assert.deepEqual(await names(NEIGHBOUR), ['Bug']);
});
