// The internal-visibility rule (issue 21's billing-manager hole, issue 26's one definition): an
// internal repository is read by the members of every organization of its owner's enterprise — not
// by a billing manager (who is no member), not by a member of an organization outside the
// enterprise — through every route: the single read, its issues, the lists, and the notifications a
// mention would bring.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { classicToken } from '../../helpers/credentials.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

let server: TestServer;
const t: Record<string, string> = {};
let issueNumber = 0;

before(async () => {
  server = await startServer();
  for (const login of ['mona', 'lisa', 'bill', 'outsider', 'sam']) await server.admin('POST', '/users', { login });
  await server.admin('POST', '/enterprises', { slug: 'ent' });
  await server.admin('POST', '/orgs', { login: 'acme', enterprise: 'ent', owners: ['mona'], billing_managers: ['bill'] });
  // lisa is a member of another organization of the enterprise; sam its security manager; bill
  // manages the billing of both; outsider is a member of an organization outside the enterprise.
  await server.admin('POST', '/orgs', { login: 'beta', enterprise: 'ent', members: ['lisa'], security_managers: ['sam'], billing_managers: ['bill'] });
  await server.admin('POST', '/orgs', { login: 'other', members: ['outsider'] });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'inner', visibility: 'internal' });
  issueNumber = (await server.admin('POST', '/repos/acme/inner/issues', { author: 'mona', title: 'Plans', body: 'cc @lisa @bill @outsider @sam' })).number;
  await server.drain();
  for (const login of ['mona', 'lisa', 'bill', 'outsider', 'sam']) t[login] = await classicToken(server, login, ['repo', 'read:org', 'notifications']);
});
after(() => server.close());

const readers = ['mona', 'lisa', 'sam'];
const nonReaders = ['bill', 'outsider'];

describe('an internal repository', () => {
  test('the single read: enterprise members read it (pull), a billing manager and an outsider get 404', async () => {
    for (const login of readers) {
      const response = await server.api('GET', '/repos/acme/inner', { token: t[login] });
      assert.equal(response.status, 200, `${login}: ${response.text}`);
      assert.equal(response.body.visibility, 'internal');
      assert.equal(response.body.permissions.pull, true, login);
    }
    assert.equal((await server.api('GET', '/repos/acme/inner', { token: t.lisa })).body.permissions.push, false, 'a member of another organization only reads');
    for (const login of nonReaders) {
      const response = await server.api('GET', '/repos/acme/inner', { token: t[login] });
      assert.equal(response.status, 404, `${login}: ${response.text}`);
    }
  });

  test('its issues: the same rule', async () => {
    for (const login of readers) assert.equal((await server.api('GET', `/repos/acme/inner/issues/${issueNumber}`, { token: t[login] })).status, 200, login);
    for (const login of nonReaders) {
      assert.equal((await server.api('GET', `/repos/acme/inner/issues/${issueNumber}`, { token: t[login] })).status, 404, login);
      assert.equal((await server.api('GET', `/repos/acme/inner/issues/${issueNumber}/comments`, { token: t[login] })).status, 404, login);
    }
  });

  test('the lists: listed for enterprise members only', async () => {
    for (const login of readers) {
      const list = await server.api('GET', '/orgs/acme/repos', { token: t[login] });
      assert.equal(list.status, 200, list.text);
      assert.deepEqual(list.body.map((r: any) => r.name), ['inner'], login);
    }
    for (const login of nonReaders) {
      const list = await server.api('GET', '/orgs/acme/repos', { token: t[login] });
      assert.equal(list.status, 200, list.text);
      assert.deepEqual(list.body, [], login);
    }
  });

  test('a mention notifies the readers only', async () => {
    for (const login of readers.filter((l) => l !== 'mona')) {
      const threads = await server.api('GET', '/notifications', { token: t[login] });
      assert.equal(threads.status, 200, threads.text);
      assert.deepEqual(threads.body.map((thread: any) => thread.repository.full_name), ['acme/inner'], login);
    }
    for (const login of nonReaders) {
      const threads = await server.api('GET', '/notifications?all=true', { token: t[login] });
      assert.equal(threads.status, 200, threads.text);
      assert.deepEqual(threads.body, [], login);
    }
  });
});
