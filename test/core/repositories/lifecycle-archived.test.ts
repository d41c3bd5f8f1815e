// An archived repository (PATCH /_admin/repos/{owner}/{repo} `archived: true`) is read-only, as on the
// platform: every write of its contents — a new issue or pull request, a comment, a state,
// assignee or reviewer change, on the operator surface as through the platform — is refused with
// 403 `Repository was archived so is read-only.` and records no activity; attaching a code security
// configuration leaves it `failed` with its settings unchanged. Reads, and a user's own state on it
// (watching, marking read), keep working; unarchiving restores the writes.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { classicToken } from '../../helpers/credentials.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

const READ_ONLY = 'Repository was archived so is read-only.';

describe('an archived repository', () => {
  let server: TestServer;
  let alice: string;
  let issue: number;

  before(async () => {
    server = await startServer();
    await server.admin('POST', '/users', { login: 'alice' });
    await server.admin('POST', '/users', { login: 'bob' });
    await server.admin('POST', '/orgs', { login: 'acme', owners: ['alice'], members: ['bob'] });
    await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
    await server.admin('POST', '/repos', { owner: 'acme', name: 'gadgets' });
    issue = (await server.admin('POST', '/repos/acme/widgets/issues', { author: 'alice', title: 'Before the archive', assignees: ['bob'] })).number;
    await server.drain();
    alice = await classicToken(server, 'alice', ['repo', 'admin:org', 'notifications']);
    const archived = await server.admin('PATCH', '/repos/acme/widgets', { archived: true });
    assert.equal(archived.archived, true);
  });
  after(() => server.close());

  const outboxCount = async () => Number((await server.server.ctx.db.kysely.selectFrom('activity_outbox').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

  const writes = () => [
    ['POST', '/repos/acme/widgets/issues', { author: 'alice', title: 'After' }],
    ['POST', '/repos/acme/widgets/issues', { author: 'alice', title: 'A pull request', pull_request: true }],
    ['POST', `/repos/acme/widgets/issues/${issue}/comments`, { author: 'bob', body: 'After' }],
    ['PATCH', `/repos/acme/widgets/issues/${issue}`, { actor: 'alice', state: 'closed' }],
    ['PATCH', `/repos/acme/widgets/issues/${issue}`, { actor: 'alice', assignees: [] }],
  ] as const;

  test('every write of its issues, pull requests and comments is a 403 in the platform\'s words, and records nothing', async () => {
    const before = await outboxCount();
    for (const [method, path, body] of writes()) {
      const refused = await server.adminRaw(method, path, body);
      assert.equal(refused.status, 403, `${method} ${path}: ${refused.text}`);
      assert.equal(refused.body.message, READ_ONLY);
      assert.equal(refused.body.status, '403');
      assert.equal(typeof refused.body.documentation_url, 'string');
    }
    assert.equal(await outboxCount(), before);
    const shown = await server.api('GET', `/repos/acme/widgets/issues/${issue}`, { token: alice });
    assert.equal(shown.body.state, 'open');
    assert.deepEqual(shown.body.assignees.map((a: { login: string }) => a.login), ['bob']);
    // Another repository of the same owner is not touched by it.
    assert.equal((await server.adminRaw('POST', '/repos/acme/gadgets/issues', { author: 'alice', title: 'Elsewhere' })).status, 201);
  });

  test('reads keep working: the repository, its issues, issue types, notifications and its configuration', async () => {
    const repository = await server.api('GET', '/repos/acme/widgets', { token: alice });
    assert.equal(repository.status, 200);
    assert.equal(repository.body.archived, true);
    assert.equal((await server.api('GET', `/repos/acme/widgets/issues/${issue}`, { token: alice })).status, 200);
    assert.equal((await server.api('GET', '/repos/acme/widgets/issue-types', { token: alice })).status, 200);
    assert.equal((await server.api('GET', '/repos/acme/widgets/notifications?all=true', { token: alice })).status, 200);
    assert.equal((await server.api('GET', '/repos/acme/widgets/code-security-configuration', { token: alice })).status, 204);
  });

  test('a user\'s own state on it still changes: watching it, marking its notifications read', async () => {
    assert.equal((await server.admin('PUT', '/repos/acme/widgets/subscription', { login: 'alice', subscribed: true })).subscribed, true);
    assert.equal((await server.api('PUT', '/repos/acme/widgets/notifications', { token: alice, body: {} })).status, 205);
  });

  test('attaching a code security configuration fails it and keeps its settings; the others attach', async () => {
    const created = await server.api('POST', '/orgs/acme/code-security/configurations', { token: alice, body: { name: 'Scanning', secret_scanning: 'enabled' } });
    assert.equal(created.status, 201, created.text);
    assert.equal((await server.api('POST', `/orgs/acme/code-security/configurations/${created.body.id}/attach`, { token: alice, body: { scope: 'all' } })).status, 202);
    await server.drain();
    const listed = await server.api('GET', `/orgs/acme/code-security/configurations/${created.body.id}/repositories?status=all`, { token: alice });
    const statuses = Object.fromEntries((listed.body as { status: string; repository: { name: string } }[]).map((r) => [r.repository.name, r.status]));
    assert.deepEqual(statuses, { gadgets: 'enforced', widgets: 'failed' });
    const widgets = await server.api('GET', '/repos/acme/widgets', { token: alice });
    assert.notEqual(widgets.body.security_and_analysis?.secret_scanning?.status, 'enabled', 'its settings stay');
  });

  test('unarchiving restores the writes', async () => {
    assert.equal((await server.admin('PATCH', '/repos/acme/widgets', { archived: false })).archived, false);
    for (const [method, path, body] of writes()) {
      const response = await server.adminRaw(method, path, body);
      assert.ok(response.status === 200 || response.status === 201, `${method} ${path}: ${response.status} ${response.text}`);
    }
  });
});
