// Two apps on one account (issue 43): the journal and permissions-used of app A hold A's calls only,
// B's only B's, whatever the filter (by app, installation, token, none): a row per filter. Each app
// calls with its installation token and its JWT, makes one call its permissions refuse, and the
// other app's calls sit between its own. Both databases.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApp, signAppJwt, type TestApp } from '../helpers/credentials.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const CODE_SECURITY = 'code-security/get-code-security-configuration-associated-with-repository';

interface Side {
  app: TestApp;
  installation: number;
  token: string;
  jwt: string;
  calls: number;
}

describe('two apps on one account: the journal and permissions-used never mix them', () => {
  let server: TestServer;
  const sides: Record<'a' | 'b', Side> = {} as never;

  before(async () => {
    server = await startServer({ CODEHOST_TEST_MODE: '1' });
    // One account, one private repository with an issue (#1) and a pull request (#2): reads that need a permission.
    await server.admin('POST', '/reset', {
      to: 'seed',
      seed: [
        'users:', '  - { login: mona }', 'orgs:', '  - { login: acme, owners: [mona] }',
        'repos:', '  - { owner: acme, name: shared, visibility: private }',
        'issues:', '  - { repository: acme/shared, author: mona, title: An issue }', '  - { repository: acme/shared, author: mona, title: A pull request, pull_request: true }',
      ].join('\n'),
    });
    const permissions = { a: { metadata: 'read', issues: 'write', contents: 'read' }, b: { metadata: 'read', pull_requests: 'write', contents: 'read' } } as const;
    const now = Math.floor(Date.parse((await server.admin('GET', '/clock')).now) / 1000);
    for (const name of ['a', 'b'] as const) {
      const app = await createApp(server, `two-apps-${name}`, permissions[name]);
      const installation = await server.admin('POST', `/apps/${app.slug}/installations`, { account: 'acme', repositories: 'all' });
      const jwt = await signAppJwt(app, now);
      const minted = await server.api('POST', `/app/installations/${installation.id}/access_tokens`, { authorization: `Bearer ${jwt}`, body: {} });
      assert.equal(minted.status, 201, minted.text);
      sides[name] = { app, installation: installation.id, token: minted.body.token, jwt, calls: 1 };
    }
    await server.admin('DELETE', '/requests');
    // Interleaved: A, B, A, B… Each: a read, its own permission's read and write, and one refusal.
    const calls: [side: 'a' | 'b', method: string, path: string, status: number][] = [
      ['a', 'GET', '/repos/acme/shared', 200],
      ['b', 'GET', '/repos/acme/shared', 200],
      ['a', 'GET', '/repos/acme/shared/issues/1', 200],
      ['b', 'GET', '/repos/acme/shared/pulls/2', 200],
      ['a', 'GET', '/repos/acme/shared/issues/1/comments', 200],
      ['b', 'GET', '/repos/acme/shared/code-security-configuration', 403],
      ['a', 'GET', '/repos/acme/shared/code-security-configuration', 403],
      ['b', 'GET', '/repos/acme/shared', 200],
    ];
    for (const [side, method, path, status] of calls) {
      const answer = await server.api(method, path, { token: sides[side].token, });
      assert.equal(answer.status, status, `${side} ${method} ${path}: ${answer.text}`);
    }
    for (const side of ['a', 'b'] as const) {
      const answer = await server.api('GET', '/app', { authorization: `Bearer ${sides[side].jwt}` });
      assert.equal(answer.status, 200, answer.text);
    }
  });
  after(() => server.close());

  const usedOf = (groups: any[]) => groups.map((group) => ({
    app: group.credential.app, kind: group.credential.kind, installation: group.credential.installation,
    requests: group.requests, used: group.used.permissions, unused: group.unused.permissions,
    operations: Object.fromEntries(Object.entries(group.operations).map(([operation, value]: [string, any]) => [operation, value.calls])),
    refused: Object.keys(group.refused),
  }));

  /** Each app's installation token's group, as its calls above make it. */
  const A_TOKEN = () => ({
    app: 'two-apps-a', kind: 'installation', installation: sides.a.installation, requests: 3,
    used: { metadata: 'read', issues: 'read' }, unused: { issues: 'read', contents: 'none' },
    operations: { 'repos/get-repository': 1, 'issues/get-issue': 1, 'issues/list-issue-comments-oldest-first': 1 }, refused: [CODE_SECURITY],
  });
  const B_TOKEN = () => ({
    app: 'two-apps-b', kind: 'installation', installation: sides.b.installation, requests: 3,
    used: { metadata: 'read', pull_requests: 'read' }, unused: { pull_requests: 'read', contents: 'none' },
    operations: { 'repos/get-repository': 2, 'pulls/get-pull-request': 1 }, refused: [CODE_SECURITY],
  });

  // A row per filter: the installation tokens' groups it must give (the JWTs' groups checked apart).
  const ROWS: [string, () => string, () => unknown[]][] = [
    ['app A', () => 'app=two-apps-a', () => [A_TOKEN()]],
    ['app B', () => 'app=two-apps-b', () => [B_TOKEN()]],
    ['installation A', () => `installation=${sides.a.installation}`, () => [A_TOKEN()]],
    ['installation B', () => `installation=${sides.b.installation}`, () => [B_TOKEN()]],
    ['token A', () => `token=${sides.a.token.slice(-8)}`, () => [A_TOKEN()]],
    ['token B whole', () => `token=${sides.b.token}`, () => [B_TOKEN()]],
    ['no filter', () => '', () => [A_TOKEN(), B_TOKEN()]],
    ['a path both called', () => 'path=/repos/acme/shared', () => [{ ...A_TOKEN(), requests: 1, used: { metadata: 'read' }, unused: { issues: 'none', contents: 'none' }, operations: { 'repos/get-repository': 1 }, refused: [] }, { ...B_TOKEN(), requests: 2, used: { metadata: 'read' }, unused: { pull_requests: 'none', contents: 'none' }, operations: { 'repos/get-repository': 2 }, refused: [] }]],
  ];

  for (const [row, query, expected] of ROWS) {
    test(`permissions-used by ${row}: each app's group holds its own calls only`, async () => {
      const groups = usedOf(await server.admin('GET', `/requests/permissions-used?${query()}`)).filter((group) => group.kind === 'installation');
      const sort = (list: any[]) => [...list].sort((x, y) => String(x.app).localeCompare(String(y.app)));
      assert.deepEqual(sort(groups), sort(expected()));
    });
  }

  test('the JWTs: one group per app, each with its own GET /app', async () => {
    for (const side of ['a', 'b'] as const) {
      const groups = usedOf(await server.admin('GET', `/requests/permissions-used?app=${sides[side].app.slug}`)).filter((group) => group.kind !== 'installation');
      assert.deepEqual(groups.map((group) => [group.app, group.operations]), [[sides[side].app.slug, { 'apps/get-authenticated-app': 1 }]], side);
    }
  });

  test('the journal by app and by installation: only that app\'s entries, as many as it made', async () => {
    const ROWS2: [string, string, 'a' | 'b', number][] = [
      ['app A', 'app=two-apps-a', 'a', 5],
      ['app B', 'app=two-apps-b', 'b', 5],
      ['installation A', `installation=${sides.a.installation}`, 'a', 4],
      ['installation B', `installation=${sides.b.installation}`, 'b', 4],
    ];
    for (const [row, query, side, count] of ROWS2) {
      const entries = (await server.admin('GET', `/requests?${query}&per_page=100`)) as any[];
      assert.equal(entries.length, count, `${row}: ${entries.map((entry) => `${entry.credential.app} ${entry.method} ${entry.path}`).join(', ')}`);
      assert.deepEqual([...new Set(entries.map((entry) => entry.credential.app))], [sides[side].app.slug], row);
      const counted = (await server.admin('POST', '/requests/count', Object.fromEntries(new URLSearchParams(query)))) as { count: number };
      assert.equal(counted.count, count, `${row}: count`);
    }
  });
});
