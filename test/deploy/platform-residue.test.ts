// What replaying the platform's own recorded traffic against codehost showed (issue 37, "The
// platform's residue"): a 201 names the new resource in `Location`; an error body's
// `documentation_url` is the server's own reference (/docs under the public URL, at the operation's
// anchor); `X-Accepted-OAuth-Scopes` names every scope that includes the required one, and is absent
// where no OAuth scope is taken at all; a new organization configuration's default setup options are
// `{runner_type: not_set, runner_label: null}`, the global configuration's `null`.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { classicToken } from '../helpers/credentials.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let token: string;

before(async () => {
  server = await startServer();
  await server.admin('POST', '/users', { login: 'rhea' });
  await server.admin('POST', '/orgs', { login: 'residue', owners: ['rhea'] });
  await server.admin('POST', '/repos', { owner: 'rhea', name: 'notes' });
  token = await classicToken(server, 'rhea', ['admin:org', 'repo', 'notifications']);
});
after(() => server.close());

/** The reference's anchor of an operation, as Swagger UI deep-links it: `#/{tag}/{operationId}`. */
async function anchorOf(method: string, path: string): Promise<string> {
  const document = (await server.api('GET', '/openapi.json')).body as { paths: Record<string, Record<string, { tags: string[]; operationId: string }>> };
  const operation = document.paths[path]![method.toLowerCase()]!;
  return `#/${encodeURIComponent(operation.tags[0]!)}/${encodeURIComponent(operation.operationId)}`;
}

describe('documentation_url names the server\'s own reference', () => {
  test('an error of an operation points at its anchor under /docs', async () => {
    const refused = await server.api('POST', '/orgs/residue/code-security/configurations', { token, body: {} });
    assert.equal(refused.status, 422, refused.text);
    assert.equal(refused.body.documentation_url, `${server.url}/docs${await anchorOf('POST', '/orgs/{org}/code-security/configurations')}`);
    const missing = await server.api('GET', '/orgs/nobody-here/code-security/configurations', { token });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.documentation_url, `${server.url}/docs${await anchorOf('GET', '/orgs/{org}/code-security/configurations')}`);
  });

  test('an error outside any operation (an unknown route, the operator surface) points at /docs', async () => {
    const unknown = await server.api('GET', '/no/such/route');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.documentation_url, `${server.url}/docs`);
    const admin = await server.adminRaw('POST', '/users', {});
    assert.equal(admin.status, 422);
    assert.equal(admin.body.documentation_url, `${server.url}/docs`);
  });

  test('it follows CODEHOST_API_URL as the root document does', async () => {
    const other = await startServer({ CODEHOST_API_URL: 'https://code.example.com/api/v3', CODEHOST_WEB_URL: 'https://code.example.com' });
    try {
      const unknown = await other.api('GET', '/no/such/route');
      assert.equal(unknown.body.documentation_url, 'https://code.example.com/docs');
      const root = await other.api('GET', '/');
      assert.equal(unknown.body.documentation_url, root.body.documentation_url);
    } finally {
      await other.close();
    }
  });
});

describe('a 201 carries Location, the new resource\'s API URL', () => {
  test('POST /orgs/{org}/code-security/configurations', async () => {
    const created = await server.api('POST', '/orgs/residue/code-security/configurations', { token, body: { name: 'Located', description: 'x' } });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.headers.get('location'), `${server.apiUrl}/orgs/residue/code-security/configurations/${created.body.id}`);
    assert.equal(created.headers.get('location'), created.body.url);
    assert.equal((await server.api('GET', new URL(created.headers.get('location')!).pathname.replace(/^\/api\/v3/, ''), { token })).status, 200);
  });

  test('POST /user/migrations', async () => {
    const started = await server.api('POST', '/user/migrations', { token, body: { repositories: ['notes'] } });
    assert.equal(started.status, 201, started.text);
    assert.equal(started.headers.get('location'), `${server.apiUrl}/user/migrations/${started.body.id}`);
  });

  test('the operator surface\'s creates name the resource as the public API shows it', async () => {
    const user = await server.adminRaw('POST', '/users', { login: 'located' });
    assert.equal(user.status, 201);
    assert.equal(user.headers.get('location'), `${server.apiUrl}/users/located`);
    const org = await server.adminRaw('POST', '/orgs', { login: 'located-org', owners: ['located'] });
    assert.equal(org.headers.get('location'), `${server.apiUrl}/orgs/located-org`);
    const repo = await server.adminRaw('POST', '/repos', { owner: 'located-org', name: 'here' });
    assert.equal(repo.headers.get('location'), `${server.apiUrl}/repos/located-org/here`);
    const issue = await server.adminRaw('POST', '/repos/located-org/here/issues', { author: 'located', title: 'Where' });
    assert.equal(issue.headers.get('location'), `${server.apiUrl}/repos/located-org/here/issues/${issue.body.number}`);
    const comment = await server.adminRaw('POST', `/repos/located-org/here/issues/${issue.body.number}/comments`, { author: 'located', body: 'here' });
    assert.equal(comment.headers.get('location'), `${server.apiUrl}/repos/located-org/here/issues/comments/${comment.body.id}`);
  });

  test('it follows CODEHOST_API_URL', async () => {
    const other = await startServer({ CODEHOST_API_URL: 'https://code.example.com/api/v3', CODEHOST_WEB_URL: 'https://code.example.com' });
    try {
      const user = await other.adminRaw('POST', '/users', { login: 'elsewhere' });
      assert.equal(user.headers.get('location'), 'https://code.example.com/api/v3/users/elsewhere');
    } finally {
      await other.close();
    }
  });
});

describe('code_scanning_default_setup_options', () => {
  test('a new organization configuration: not_set with no label; the global configuration: null', async () => {
    const created = await server.api('POST', '/orgs/residue/code-security/configurations', { token, body: { name: 'Fresh' } });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.body.code_scanning_default_setup_options, { runner_type: 'not_set', runner_label: null });
    const listed = await server.api('GET', '/orgs/residue/code-security/configurations?target_type=global', { token });
    assert.equal(listed.status, 200);
    assert.ok(listed.body.length >= 1);
    for (const configuration of listed.body) assert.equal(configuration.code_scanning_default_setup_options, null, configuration.name);
  });
});

describe('X-Accepted-OAuth-Scopes', () => {
  test('names the scopes that include the required one', async () => {
    const write = await server.api('POST', '/orgs/residue/code-security/configurations', { token, body: {} });
    assert.equal(write.headers.get('x-accepted-oauth-scopes'), 'admin:org, write:org');
    const notifications = await server.api('GET', '/notifications', { token });
    assert.equal(notifications.headers.get('x-accepted-oauth-scopes'), 'notifications, repo');
  });

  test('an endpoint that takes no OAuth scope at all (Basic, JWT) sends no header', async () => {
    const basic = await server.api('POST', '/applications/nobody/token', { authorization: `Basic ${Buffer.from('nobody:nothing').toString('base64')}`, body: { access_token: 'x' } });
    assert.equal(basic.headers.get('x-accepted-oauth-scopes'), null, basic.text);
    const jwt = await server.api('GET', '/app/hook/config', { authorization: 'Bearer not.a.jwt' });
    assert.equal(jwt.headers.get('x-accepted-oauth-scopes'), null, jwt.text);
    // A token endpoint that asks no scope still says so, with an empty header.
    const user = await server.api('GET', '/user', { token });
    assert.equal(user.headers.get('x-accepted-oauth-scopes'), '');
  });
});
