// Issue types end to end: the organization's create, list, update and delete (owners only), a
// repository's view with per-repository overrides from the operator surface, public repositories
// without authentication, seed files, and the permission matrix of every operation.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Octokit } from '@octokit/core';
import { loadSeed } from '../../../src/admin/seed.ts';
import { AREAS } from '../../../src/app.ts';
import { appJwt, appUserToken, classicToken, createApp, fineGrainedToken, installationToken, oauthToken } from '../../helpers/credentials.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

let server: TestServer;
let owner: string;
let fixtureId: number;

const TYPES = '/orgs/acme/issue-types';
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

async function create(body: Record<string, unknown>, tokenValue = owner) {
  return server.api('POST', TYPES, { token: tokenValue, body });
}

before(async () => {
  server = await startServer();
  for (const login of ['mona', 'hubot', 'stranger']) await server.admin('POST', '/users', { login });
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'], members: ['hubot'] });
  await server.admin('POST', '/orgs', { login: 'outside', owners: ['mona'] });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'secret', visibility: 'private' });
  await server.admin('POST', '/repos', { owner: 'mona', name: 'dotfiles' });
  owner = await classicToken(server, 'mona', ['admin:org', 'repo']);
  const fixture = await create({ name: 'Fixture', is_enabled: true });
  fixtureId = fixture.body.id;
});
after(() => server.close());

describe('organization issue types', () => {
  test('POST creates a type; GET lists the organization\'s types', async () => {
    const created = await create({ name: 'Bug', is_enabled: true, description: 'Something is broken', color: 'red' });
    assert.equal(created.status, 200);
    assert.deepEqual(Object.keys(created.body).sort(), ['color', 'created_at', 'description', 'id', 'is_enabled', 'name', 'node_id', 'updated_at']);
    assert.equal(created.body.name, 'Bug');
    assert.equal(created.body.description, 'Something is broken');
    assert.equal(created.body.color, 'red');
    assert.equal(created.body.is_enabled, true);
    assert.match(created.body.created_at, TIMESTAMP);
    assert.equal(typeof created.body.node_id, 'string');

    const bare = await create({ name: '  Task  ', is_enabled: false });
    assert.equal(bare.status, 200);
    assert.equal(bare.body.name, 'Task');
    assert.equal(bare.body.description, null);
    assert.equal(bare.body.color, null);
    assert.equal(bare.body.is_enabled, false);

    const list = await server.api('GET', '/orgs/ACME/issue-types', { token: owner });
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.map((t: { name: string }) => t.name), ['Fixture', 'Bug', 'Task']);
    assert.deepEqual(list.body[1], created.body);
  });

  test('invalid bodies and duplicate names are 422s; nothing is stored', async () => {
    const before = (await server.api('GET', TYPES, { token: owner })).body.length;
    const cases: [unknown, 'missing_field' | 'invalid' | 'custom' | 'already_exists'][] = [
      [{ is_enabled: true }, 'missing_field'],
      [{ name: 'X' }, 'missing_field'],
      [{ name: '', is_enabled: true }, 'invalid'],
      [{ name: '   ', is_enabled: true }, 'custom'],
      [{ name: 'x'.repeat(256), is_enabled: true }, 'invalid'],
      [{ name: 'X', is_enabled: 'yes' }, 'invalid'],
      [{ name: 'X', is_enabled: true, color: 'teal' }, 'invalid'],
      [{ name: 'X', is_enabled: true, description: 5 }, 'invalid'],
      [{ name: 'bug', is_enabled: true }, 'already_exists'],
    ];
    for (const [body, code] of cases) {
      const response = await create(body as Record<string, unknown>);
      assert.equal(response.status, 422, JSON.stringify(body));
      assert.equal(response.body.message, 'Validation Failed');
      // The platform's simple validation body: `errors` is an array of strings.
      const sentence = { missing_field: /is missing/, invalid: /\S/, custom: /blank/, already_exists: /has already been taken/ }[code]!;
      assert.equal(typeof response.body.errors[0], 'string', JSON.stringify(body));
      assert.match(response.body.errors[0], sentence, JSON.stringify(body));
    }
    const notObject = await server.api('POST', TYPES, { token: owner, body: ['Bug'] });
    assert.equal(notObject.status, 400);
    assert.equal((await server.api('GET', TYPES, { token: owner })).body.length, before);
  });

  test('PUT updates name and is_enabled, keeps unsent fields, and refuses a duplicate name', async () => {
    const created = (await create({ name: 'Epic', is_enabled: true, description: 'Big', color: 'purple' })).body;
    await server.advance(60);
    const updated = await server.api('PUT', `${TYPES}/${created.id}`, { token: owner, body: { name: 'Initiative', is_enabled: false, color: null } });
    assert.equal(updated.status, 200);
    assert.equal(updated.body.id, created.id);
    assert.equal(updated.body.name, 'Initiative');
    assert.equal(updated.body.is_enabled, false);
    assert.equal(updated.body.description, 'Big');
    assert.equal(updated.body.color, null);
    assert.equal(updated.body.created_at, created.created_at);
    assert.ok(updated.body.updated_at > created.updated_at);

    const sameName = await server.api('PUT', `${TYPES}/${created.id}`, { token: owner, body: { name: 'INITIATIVE', is_enabled: true } });
    assert.equal(sameName.status, 200, 'renaming a type to its own name in another case is fine');
    const duplicate = await server.api('PUT', `${TYPES}/${created.id}`, { token: owner, body: { name: 'Bug', is_enabled: true } });
    assert.equal(duplicate.status, 422);
    assert.deepEqual(duplicate.body.errors, ['Name has already been taken']);
    const missing = await server.api('PUT', `${TYPES}/${created.id}`, { token: owner, body: { name: 'Only a name' } });
    assert.equal(missing.status, 422);
    const current = (await server.api('GET', TYPES, { token: owner })).body.find((t: { id: number }) => t.id === created.id);
    assert.equal(current.name, 'INITIATIVE');
  });

  test('DELETE removes a type; unknown ids and other organizations\' types are 404s', async () => {
    const created = (await create({ name: 'Chore', is_enabled: true })).body;
    const removed = await server.api('DELETE', `${TYPES}/${created.id}`, { token: owner });
    assert.equal(removed.status, 204);
    assert.equal(removed.text, '');
    const foreign = (await server.api('POST', '/orgs/outside/issue-types', { token: owner, body: { name: 'Foreign', is_enabled: true } })).body;
    for (const id of [created.id, foreign.id, 999_999, 2 ** 40]) {
      assert.equal((await server.api('DELETE', `${TYPES}/${id}`, { token: owner })).status, 404, String(id));
      assert.equal((await server.api('PUT', `${TYPES}/${id}`, { token: owner, body: { name: 'Z', is_enabled: true } })).status, 404, String(id));
    }
    assert.equal((await server.api('DELETE', `${TYPES}/abc`, { token: owner })).status, 422);
    for (const path of ['/orgs/nope/issue-types', '/orgs/mona/issue-types']) {
      assert.equal((await server.api('GET', path, { token: owner })).status, 404, path);
    }
  });
});

describe('repository issue types', () => {
  test('a public repository answers without authentication; overrides disable a type for one repository', async () => {
    const orgTypes = (await server.api('GET', TYPES, { token: owner })).body as { id: number; name: string; is_enabled: boolean }[];
    let response = await server.api('GET', '/repos/acme/widgets/issue-types');
    assert.equal(response.status, 200);
    assert.deepEqual(response.body, orgTypes);

    const override = await server.adminRaw('PUT', '/repos/acme/widgets/issue-types/bug', { is_enabled: false });
    assert.equal(override.status, 200);
    assert.equal(override.body.name, 'Bug');
    assert.equal(override.body.is_enabled, false);

    response = await server.api('GET', '/repos/ACME/Widgets.git/issue-types');
    const bug = response.body.find((t: { name: string }) => t.name === 'Bug');
    assert.equal(bug.is_enabled, false);
    const secret = await server.api('GET', '/repos/acme/secret/issue-types', { token: owner });
    assert.equal(secret.status, 200);
    assert.equal(secret.body.find((t: { name: string }) => t.name === 'Bug').is_enabled, true, 'other repositories keep the type');
    assert.equal(secret.body.find((t: { name: string }) => t.name === 'Task').is_enabled, false, 'a type the organization disables stays disabled');

    assert.equal((await server.adminRaw('PUT', '/repos/acme/widgets/issue-types/Bug', { is_enabled: true })).status, 200);
    response = await server.api('GET', '/repos/acme/widgets/issue-types');
    assert.equal(response.body.find((t: { name: string }) => t.name === 'Bug').is_enabled, true);
  });

  test('a user-owned repository has no types; an unknown or hidden repository is a 404', async () => {
    const personal = await server.api('GET', '/repos/mona/dotfiles/issue-types');
    assert.equal(personal.status, 200);
    assert.deepEqual(personal.body, []);
    assert.equal((await server.api('GET', '/repos/acme/nope/issue-types')).status, 404);
    assert.equal((await server.api('GET', '/repos/acme/secret/issue-types')).status, 404);
    assert.equal((await server.api('GET', '/repos/acme/secret/issue-types', { token: await classicToken(server, 'stranger', ['repo']) })).status, 404);
  });

  test('the operator override refuses unknown repositories and types, and bad bodies', async () => {
    assert.equal((await server.adminRaw('PUT', '/repos/acme/nope/issue-types/Bug', { is_enabled: false })).status, 404);
    assert.equal((await server.adminRaw('PUT', '/repos/acme/widgets/issue-types/Nope', { is_enabled: false })).status, 404);
    assert.equal((await server.adminRaw('PUT', '/repos/mona/dotfiles/issue-types/Bug', { is_enabled: false })).status, 404);
    assert.equal((await server.adminRaw('PUT', '/repos/acme/widgets/issue-types/Bug', {})).status, 422);
  });

  test('@octokit/core lists a repository\'s types', async () => {
    const octokit = new Octokit({ baseUrl: server.apiUrl, auth: owner, request: { fetch } });
    const response = await octokit.request('GET /repos/{owner}/{repo}/issue-types', { owner: 'acme', repo: 'secret' });
    assert.equal(response.status, 200);
    assert.ok((response.data as { name: string }[]).some((t) => t.name === 'Fixture'));
    assert.equal(response.headers['x-accepted-oauth-scopes'], 'repo');
    assert.equal(response.headers['x-accepted-vendor-permissions'], 'metadata=read');
  });
});

describe('seed files', () => {
  test('issue_types and issue_type_overrides load idempotently', async () => {
    const seed = {
      issue_types: [{ org: 'acme', name: 'Seeded', description: 'From a seed', color: 'green' }, { org: 'acme', name: 'Bug', is_enabled: false }],
      issue_type_overrides: [{ repository: 'acme/widgets', name: 'Seeded', is_enabled: false }],
    };
    await loadSeed(server.server.ctx, AREAS, seed);
    await loadSeed(server.server.ctx, AREAS, seed);
    const types = (await server.api('GET', TYPES, { token: owner })).body as { name: string; is_enabled: boolean; color: string }[];
    assert.equal(types.filter((t) => t.name === 'Seeded').length, 1);
    assert.equal(types.find((t) => t.name === 'Seeded')!.color, 'green');
    assert.equal(types.find((t) => t.name === 'Bug')!.is_enabled, true, 'an existing type is left alone');
    const widgets = (await server.api('GET', '/repos/acme/widgets/issue-types')).body as { name: string; is_enabled: boolean }[];
    assert.equal(widgets.find((t) => t.name === 'Seeded')!.is_enabled, false);
    await assert.rejects(loadSeed(server.server.ctx, AREAS, { issue_types: [{ org: 'acme' }] }), (error: { status?: number }) => error.status === 422);
    await assert.rejects(loadSeed(server.server.ctx, AREAS, { issue_types: [{ org: 'nope', name: 'X' }] }), (error: { status?: number }) => error.status === 404);
  });
});

describe('permission matrix', () => {
  type Auth = { token?: string; authorization?: string };
  let counter = 0;

  /** GET list, POST, PUT (the fixture) and DELETE (a type made for the case) with one credential. */
  async function organizationStatuses(auth: Auth): Promise<number[]> {
    const victim = (await create({ name: `victim-${++counter}`, is_enabled: true })).body;
    const get = await server.api('GET', TYPES, auth);
    const post = await server.api('POST', TYPES, { ...auth, body: { name: `made-${counter}`, is_enabled: true } });
    const put = await server.api('PUT', `${TYPES}/${fixtureId}`, { ...auth, body: { name: 'Fixture', is_enabled: true } });
    const del = await server.api('DELETE', `${TYPES}/${victim.id}`, auth);
    return [get.status, post.status, put.status, del.status];
  }

  test('organization operations', async () => {
    const writer = await createApp(server, 'types-writer', { organization_issue_types: 'write', metadata: 'read' });
    const writerInstallation = await installationToken(server, writer, 'acme');
    const reader = await createApp(server, 'types-reader', { organization_issue_types: 'read' });
    const readerInstallation = await installationToken(server, reader, 'acme');
    const unrelated = await createApp(server, 'types-unrelated', { metadata: 'read' });
    const unrelatedInstallation = await installationToken(server, unrelated, 'acme');
    const elsewhere = await createApp(server, 'types-elsewhere', { organization_issue_types: 'write' });
    const elsewhereInstallation = await installationToken(server, elsewhere, 'outside');
    const oauthApp = await createApp(server, 'types-oauth', {});
    const classic = async (login: string, scopes: string[]) => ({ token: await classicToken(server, login, scopes) });
    const fine = async (login: string, resourceOwner: string, permissions: Record<string, 'read' | 'write'>) =>
      ({ token: await fineGrainedToken(server, login, resourceOwner, permissions) });

    const cases: [string, () => Promise<Auth>, number[]][] = [
      ['anonymous', async () => ({}), [401, 401, 401, 401]],
      ['classic owner admin:org', () => classic('mona', ['admin:org']), [200, 200, 200, 204]],
      ['classic owner read:org', () => classic('mona', ['read:org']), [200, 403, 403, 403]],
      ['classic owner write:org', () => classic('mona', ['write:org']), [200, 403, 403, 403]],
      ['classic owner repo', () => classic('mona', ['repo']), [403, 403, 403, 403]],
      ['classic member', () => classic('hubot', ['admin:org']), [404, 404, 404, 404]],
      ['classic stranger', () => classic('stranger', ['admin:org']), [404, 404, 404, 404]],
      ['oauth owner', async () => ({ token: await oauthToken(server, oauthApp, 'mona', ['admin:org']) }), [200, 200, 200, 204]],
      ['fine-grained owner write', () => fine('mona', 'acme', { organization_issue_types: 'write' }), [200, 200, 200, 204]],
      ['fine-grained owner read', () => fine('mona', 'acme', { organization_issue_types: 'read' }), [200, 403, 403, 403]],
      ['fine-grained owner without the permission', () => fine('mona', 'acme', { organization_administration: 'write' }), [403, 403, 403, 403]],
      ['fine-grained owner for another resource owner', () => fine('mona', 'outside', { organization_issue_types: 'write' }), [404, 404, 404, 404]],
      ['fine-grained member', () => fine('hubot', 'acme', { organization_issue_types: 'write' }), [404, 404, 404, 404]],
      ['installation with write', async () => ({ token: writerInstallation }), [200, 200, 200, 204]],
      ['installation with read', async () => ({ token: readerInstallation }), [200, 403, 403, 403]],
      ['installation without the permission', async () => ({ token: unrelatedInstallation }), [403, 403, 403, 403]],
      ['installation on another organization', async () => ({ token: elsewhereInstallation }), [404, 404, 404, 404]],
      ['app user owner', async () => ({ token: await appUserToken(server, writer, 'mona') }), [200, 200, 200, 204]],
      ['app user member', async () => ({ token: await appUserToken(server, writer, 'hubot') }), [404, 404, 404, 404]],
      ['app JWT', async () => ({ authorization: `Bearer ${await appJwt(server, writer)}` }), [403, 403, 403, 403]],
    ];
    for (const [name, credential, expected] of cases) {
      assert.deepEqual(await organizationStatuses(await credential()), expected, name);
    }
  });

  test('repository list', async () => {
    const withMetadata = await createApp(server, 'repo-metadata', { metadata: 'read' });
    const metadataInstallation = await installationToken(server, withMetadata, 'acme');
    const withoutMetadata = await createApp(server, 'repo-issues', { issues: 'read' });
    const issuesInstallation = await installationToken(server, withoutMetadata, 'acme');
    const elsewhere = await createApp(server, 'repo-elsewhere', { metadata: 'read' });
    const elsewhereInstallation = await installationToken(server, elsewhere, 'outside');
    const oauthApp = await createApp(server, 'repo-oauth', {});
    const classic = async (login: string, scopes: string[]) => ({ token: await classicToken(server, login, scopes) });
    const fine = async (login: string, resourceOwner: string, permissions: Record<string, 'read' | 'write'>) =>
      ({ token: await fineGrainedToken(server, login, resourceOwner, permissions) });

    // [public acme/widgets, private acme/secret]. Public repositories' issue types are read by anyone
    // (spec: "may be used without authentication for public resources"); a private one needs `repo`
    // (without it the repository is not there: 404, the spec's only other answer) or metadata.
    const cases: [string, () => Promise<Auth>, number[]][] = [
      ['anonymous', async () => ({}), [200, 404]],
      ['classic member repo', () => classic('hubot', ['repo']), [200, 200]],
      ['classic member without repo', () => classic('hubot', ['read:org']), [200, 404]],
      ['classic stranger repo', () => classic('stranger', ['repo']), [200, 404]],
      ['oauth member repo', async () => ({ token: await oauthToken(server, oauthApp, 'hubot', ['repo']) }), [200, 200]],
      ['fine-grained member metadata', () => fine('hubot', 'acme', { metadata: 'read' }), [200, 200]],
      ['fine-grained member without metadata', () => fine('hubot', 'acme', { issues: 'read' }), [200, 403]],
      ['fine-grained for another resource owner', () => fine('mona', 'outside', { metadata: 'read' }), [200, 404]],
      ['installation with metadata', async () => ({ token: metadataInstallation }), [200, 200]],
      ['installation without metadata', async () => ({ token: issuesInstallation }), [200, 403]],
      ['installation on another organization', async () => ({ token: elsewhereInstallation }), [200, 404]],
      ['app user member', async () => ({ token: await appUserToken(server, withMetadata, 'hubot') }), [200, 200]],
      ['app user stranger', async () => ({ token: await appUserToken(server, withMetadata, 'stranger') }), [200, 404]],
      ['app JWT', async () => ({ authorization: `Bearer ${await appJwt(server, withMetadata)}` }), [403, 403]],
    ];
    for (const [name, credential, expected] of cases) {
      const auth = await credential();
      const statuses = [];
      for (const path of ['/repos/acme/widgets/issue-types', '/repos/acme/secret/issue-types']) statuses.push((await server.api('GET', path, auth)).status);
      assert.deepEqual(statuses, expected, name);
    }
  });
});

describe('an update racing a delete', () => {
  test('a type deleted between the update\'s read and its write answers 404, never a 500', async () => {
    for (let round = 0; round < 20; round++) {
      const made = await create({ name: `Racing ${round}`, is_enabled: true });
      assert.equal(made.status, 200, made.text);
      const path = `${TYPES}/${made.body.id}`;
      const [updated, deleted] = await Promise.all([
        server.api('PUT', path, { token: owner, body: { name: `Raced ${round}`, is_enabled: false } }),
        server.api('DELETE', path, { token: owner }),
      ]);
      assert.ok([200, 404].includes(updated.status), `round ${round}: PUT answered ${updated.status} ${updated.text}`);
      if (updated.status === 404) assert.equal(updated.body.message, 'Not Found');
      assert.equal(deleted.status, 204, deleted.text);
    }
  });
});
