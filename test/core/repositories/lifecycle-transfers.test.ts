// A repository moved to another owner (PATCH /_admin/repos/{owner}/{repo} `owner`) leaves every area
// of its old owner: a user migration's lock refuses the move (403, as every write to a locked
// repository), an export exports only what its user owns when it runs and lists only what the user
// may read; the old organization's code security configuration lets go of it (and of the license it
// counted) and the new owner's default applies; the old organization's updater access list drops it;
// the old name redirects only a caller who may read the repository.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { classicToken } from '../../helpers/credentials.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

describe('user migrations and a transfer', () => {
  let database: TestDatabase;
  // No worker until the moves are made: the exports queued before them run after them.
  let server: TestServer;
  let alice: string;
  let locking: number;
  let exporting: number;
  const scratch = mkdtempSync(join(tmpdir(), 'codehost-transfer-export-'));

  before(async () => {
    database = await createTestDatabase();
    server = await startServer({ CODEHOST_WORKER: '0' }, { database });
    for (const login of ['alice', 'bob']) await server.admin('POST', '/users', { login });
    for (const name of ['diary', 'notes', 'locked']) await server.admin('POST', '/repos', { owner: 'alice', name, visibility: 'private', init_git: true });
    alice = await classicToken(server, 'alice', ['repo']);
  });
  after(async () => {
    await server.close();
    await database.drop();
    rmSync(scratch, { recursive: true, force: true });
  });

  test('a repository locked by a migration cannot be moved: 403, it stays where it is', async () => {
    const started = await server.api('POST', '/user/migrations', { token: alice, body: { repositories: ['locked'], lock_repositories: true } });
    assert.equal(started.status, 201, started.text);
    locking = started.body.id;
    const refused = await server.adminRaw('PATCH', '/repos/alice/locked', { owner: 'bob' });
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.body.message, 'Repository is locked for migration');
    assert.equal((await server.admin('GET', '/repos/alice/locked')).owner.login, 'alice');
    // A rename moves it too (and the unlock names the repository): refused alike.
    const renamed = await server.adminRaw('PATCH', '/repos/alice/locked', { name: 'renamed' });
    assert.equal(renamed.status, 403, renamed.text);
    assert.equal((await server.admin('GET', '/repos/alice/locked')).name, 'locked');
    // The other changes of the same route are not moves: a description still changes.
    assert.equal((await server.adminRaw('PATCH', '/repos/alice/locked', { description: 'kept' })).status, 200);
  });

  test('an export queued before a move exports only what the user still owns; its lists show only what the user may read', async () => {
    const started = await server.api('POST', '/user/migrations', { token: alice, body: { repositories: ['diary', 'notes'] } });
    assert.equal(started.status, 201, started.text);
    exporting = started.body.id;
    await server.admin('POST', '/repos/alice/notes/issues', { author: 'alice', title: 'bob\'s secret now' });
    assert.equal((await server.adminRaw('PATCH', '/repos/alice/notes', { owner: 'bob' })).status, 200);
    // Before the export too, the migration shows alice only what she may read.
    assert.deepEqual((await server.api('GET', `/user/migrations/${exporting}`, { token: alice })).body.repositories.map((r: { full_name: string }) => r.full_name), ['alice/diary']);
    await server.close();
    server = await startServer({}, { database });
    await server.drain();

    const migration = await server.api('GET', `/user/migrations/${exporting}`, { token: alice });
    assert.equal(migration.body.state, 'exported', migration.text);
    assert.deepEqual(migration.body.repositories.map((r: { full_name: string }) => r.full_name), ['alice/diary']);
    const listed = await server.api('GET', `/user/migrations/${exporting}/repositories`, { token: alice });
    assert.deepEqual(listed.body.map((r: { full_name: string }) => r.full_name), ['alice/diary']);
    const all = (await server.api('GET', '/user/migrations', { token: alice })).body as { id: number; repositories: { full_name: string }[] }[];
    assert.deepEqual(all.find((m) => m.id === exporting)!.repositories.map((r) => r.full_name), ['alice/diary']);

    const redirect = await server.api('GET', `/user/migrations/${exporting}/archive`, { token: alice });
    assert.equal(redirect.status, 302, redirect.text);
    const file = join(scratch, 'archive.tar.gz');
    writeFileSync(file, Buffer.from(await (await fetch(redirect.headers.get('location')!)).arrayBuffer()));
    const listing = execFileSync('tar', ['-tzf', file], { encoding: 'utf8' });
    assert.match(listing, /repositories\/alice\/diary\.git\//);
    assert.doesNotMatch(listing, /notes/);
    const unpacked = join(scratch, 'unpacked');
    execFileSync('mkdir', ['-p', unpacked]);
    execFileSync('tar', ['-xzf', file, '-C', unpacked]);
    const records = readdirSync(unpacked, { recursive: true, withFileTypes: true }).filter((f) => f.isFile() && f.name.endsWith('.json')).map((f) => readFileSync(join(f.parentPath, f.name), 'utf8')).join('\n');
    assert.match(records, /alice\/diary/);
    assert.doesNotMatch(records, /bob's secret now|notes/);
  });

  test('once unlocked, the repository moves', async () => {
    assert.equal((await server.api('DELETE', `/user/migrations/${locking}/repos/locked/lock`, { token: alice })).status, 204);
    const moved = await server.adminRaw('PATCH', '/repos/alice/locked', { owner: 'bob' });
    assert.equal(moved.status, 200, moved.text);
    assert.equal(moved.body.full_name, 'bob/locked');
  });
});

describe('code security and a transfer', () => {
  let server: TestServer;
  let owner: string;
  let id: number;
  let second: number;
  let acmeConfig: number;
  let otherConfig: number;

  const call = (method: string, path: string, body?: unknown) => server.api(method, path, { token: owner, body });

  before(async () => {
    server = await startServer();
    await server.admin('POST', '/users', { login: 'olivia' });
    for (const login of ['acme', 'other', 'plain']) await server.admin('POST', '/orgs', { login, owners: ['olivia'] });
    id = (await server.admin('POST', '/repos', { owner: 'acme', name: 'vault', visibility: 'private' })).id;
    second = (await server.admin('POST', '/repos', { owner: 'acme', name: 'safe', visibility: 'private' })).id;
    owner = await classicToken(server, 'olivia', ['admin:org', 'repo']);
    await server.admin('PUT', '/orgs/acme/licenses', { advanced_security: 2 });
    acmeConfig = (await call('POST', '/orgs/acme/code-security/configurations', { name: 'Strict', advanced_security: 'enabled', enforcement: 'enforced' })).body.id;
    otherConfig = (await call('POST', '/orgs/other/code-security/configurations', { name: 'Other default' })).body.id;
    assert.equal((await call('PUT', `/orgs/other/code-security/configurations/${otherConfig}/defaults`, { default_for_new_repos: 'private_and_internal' })).status, 200);
    assert.equal((await call('POST', `/orgs/acme/code-security/configurations/${acmeConfig}/attach`, { scope: 'selected', selected_repository_ids: [id, second] })).status, 202);
    await server.drain();
    assert.deepEqual(await server.admin('GET', '/orgs/acme/licenses'), { advanced_security: 2, used: 2 });
  });
  after(() => server.close());

  test('the old organization\'s configuration lets go of it and of its license; the new owner\'s default applies', async () => {
    assert.equal((await server.admin('GET', '/repos/acme/vault')).security_and_analysis.advanced_security.status, 'enabled');
    assert.equal((await server.adminRaw('PATCH', '/repos/acme/vault', { owner: 'other' })).status, 200);
    await server.drain();
    // The licensed features went with the license: other has none to give.
    assert.equal((await server.admin('GET', '/repos/other/vault')).security_and_analysis.advanced_security.status, 'disabled');
    const attached = await call('GET', `/orgs/acme/code-security/configurations/${acmeConfig}/repositories`);
    assert.deepEqual(attached.body.map((r: { repository: { id: number } }) => r.repository.id), [second]);
    assert.deepEqual(await server.admin('GET', '/orgs/acme/licenses'), { advanced_security: 2, used: 1 });
    const now = await call('GET', '/repos/other/vault/code-security-configuration');
    assert.equal(now.status, 200, now.text);
    assert.equal(now.body.configuration.id, otherConfig);
    // The old organization's updates no longer reach it.
    const before = (await server.admin('GET', '/repos/other/vault')).security_and_analysis;
    assert.equal((await call('PATCH', `/orgs/acme/code-security/configurations/${acmeConfig}`, { secret_scanning: 'enabled' })).status, 200);
    await server.drain();
    assert.deepEqual((await server.admin('GET', '/repos/other/vault')).security_and_analysis, before);
    // And the new one may detach it.
    assert.equal((await call('DELETE', '/orgs/other/code-security/configurations/detach', { selected_repository_ids: [id] })).status, 204);
    assert.equal((await call('GET', '/repos/other/vault/code-security-configuration')).status, 204);
  });

  test('moved to an owner with no default, it keeps no configuration and no licensed feature', async () => {
    assert.equal((await server.admin('GET', '/repos/acme/safe')).security_and_analysis.advanced_security.status, 'enabled');
    assert.equal((await server.adminRaw('PATCH', '/repos/acme/safe', { owner: 'plain' })).status, 200);
    await server.drain();
    assert.deepEqual(await server.admin('GET', '/orgs/acme/licenses'), { advanced_security: 2, used: 0 });
    assert.equal((await call('GET', '/repos/plain/safe/code-security-configuration')).status, 204);
    const features = (await server.admin('GET', '/repos/plain/safe')).security_and_analysis;
    assert.equal(features.advanced_security.status, 'disabled', JSON.stringify(features));
    assert.deepEqual(await server.admin('GET', '/orgs/plain/licenses'), { advanced_security: 0, used: 0 });
  });
});

describe('updater access and a transfer', () => {
  let server: TestServer;
  let mona: string;
  let id: number;

  before(async () => {
    server = await startServer();
    await server.admin('POST', '/users', { login: 'mona' });
    for (const login of ['acme', 'other']) await server.admin('POST', '/orgs', { login, owners: ['mona'] });
    id = (await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets', visibility: 'private' })).id;
    mona = await classicToken(server, 'mona', ['admin:org']);
    const added = await server.api('PATCH', '/orgs/acme/updater/repository-access', { token: mona, body: { repository_ids_to_add: [id] } });
    assert.equal(added.status, 204, added.text);
  });
  after(() => server.close());

  test('the old organization\'s list drops the moved repository', async () => {
    assert.equal((await server.adminRaw('PATCH', '/repos/acme/widgets', { owner: 'other' })).status, 200);
    const list = await server.api('GET', '/orgs/acme/updater/repository-access', { token: mona });
    assert.deepEqual(list.body.accessible_repositories, []);
    // The new owner may add it to its own.
    assert.equal((await server.api('PATCH', '/orgs/other/updater/repository-access', { token: mona, body: { repository_ids_to_add: [id] } })).status, 204);
  });
});

describe('the old name of a moved private repository', () => {
  let server: TestServer;
  let bob: string;
  let olga: string;
  let id: number;

  before(async () => {
    server = await startServer();
    for (const login of ['alice', 'bob', 'olga']) await server.admin('POST', '/users', { login });
    await server.admin('POST', '/orgs', { login: 'acme', owners: ['alice'] });
    id = (await server.admin('POST', '/repos', { owner: 'acme', name: 'hidden', visibility: 'private' })).id;
    await server.admin('PUT', '/repos/acme/hidden/collaborators/bob', { permission: 'pull' });
    await server.admin('POST', '/repos', { owner: 'acme', name: 'open' });
    await server.admin('PATCH', '/repos/acme/hidden', { name: 'secret' });
    await server.admin('PATCH', '/repos/acme/open', { name: 'opened' });
    bob = await classicToken(server, 'bob', ['repo']);
    olga = await classicToken(server, 'olga', ['repo']);
  });
  after(() => server.close());

  test('redirects a caller who may read it; anyone else gets the 404 of no repository', async () => {
    const read = await server.api('GET', '/repos/acme/hidden', { token: bob });
    assert.equal(read.status, 301, read.text);
    assert.equal(read.headers.get('location'), `${server.apiUrl}/repositories/${id}`);
    for (const [who, token] of [['anonymous', undefined], ['olga', olga]] as const) {
      for (const [method, path] of [['GET', '/repos/acme/hidden'], ['GET', '/repos/acme/hidden/issues/1'], ['PUT', '/repos/acme/hidden/notifications']] as const) {
        const answer = await server.api(method, path, { token, body: method === 'PUT' ? {} : undefined });
        // The same operation's answer for a repository that never was (its documentation_url names the operation).
        const none = await server.api(method, path.replace('/hidden', '/never-was'), { token, body: method === 'PUT' ? {} : undefined });
        assert.equal(answer.status, method === 'PUT' && !token ? answer.status : 404, `${who} ${method} ${path}: ${answer.text}`);
        assert.equal(answer.headers.get('location'), null, `${who} ${method} ${path}`);
        if (answer.status === 404) assert.deepEqual(answer.body, none.body);
        assert.doesNotMatch(answer.text, new RegExp(`repositories/${id}\b`));
      }
    }
    // A public repository's old name redirects anyone.
    assert.equal((await server.api('GET', '/repos/acme/open')).status, 301);
  });
});

describe('notifications and a transfer', () => {
  let server: TestServer;
  let bob: string;

  before(async () => {
    server = await startServer();
    for (const login of ['alice', 'bob']) await server.admin('POST', '/users', { login });
    await server.admin('POST', '/orgs', { login: 'acme', owners: ['alice'] });
    await server.admin('POST', '/orgs', { login: 'other', owners: ['alice'] });
    await server.admin('POST', '/orgs/acme/teams', { slug: 'core', members: ['bob'] });
    await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets', visibility: 'private' });
    await server.admin('PUT', '/orgs/acme/teams/core/repos/acme/widgets', { permission: 'pull' });
    await server.admin('POST', '/repos/acme/widgets/issues', { author: 'alice', title: 'Private to acme', assignees: ['bob'] });
    await server.drain();
    bob = await classicToken(server, 'bob', ['repo', 'notifications']);
  });
  after(() => server.close());

  test('the threads of who read it only through the old organization go with their access', async () => {
    const threads = async () => ((await server.api('GET', '/notifications?all=true', { token: bob })).body as { subject: { title: string } }[]).map((t) => t.subject.title);
    assert.deepEqual(await threads(), ['Private to acme']);
    assert.equal((await server.adminRaw('PATCH', '/repos/acme/widgets', { owner: 'other' })).status, 200);
    await server.drain();
    assert.deepEqual(await threads(), []);
  });
});
