// The public reads of the shared resources: users, organizations, teams, repositories, issues,
// pull requests and comments, in the platform's shapes, with its access rules (private → 404 for
// those who may not read it), ETag / 304 and the rate-limit headers.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { classicToken, createApp, fineGrainedToken, installationToken } from '../../helpers/credentials.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

let server: TestServer;
const t: Record<string, string> = {};
const numbers: Record<string, number> = {};
const comments: Record<string, number> = {};

const get = (path: string, token?: string, headers?: Record<string, string>) => server.api('GET', path, { token, headers });

before(async () => {
  server = await startServer();
  for (const login of ['mona', 'lisa', 'stranger']) await server.admin('POST', '/users', { login, name: login.toUpperCase(), email: `${login}@example.com` });
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'], members: ['lisa'] });
  await server.admin('POST', '/orgs', { login: 'other', owners: ['stranger'] });
  await server.admin('POST', '/orgs/acme/teams', { slug: 'core', name: 'Core', members: ['mona', 'lisa'] });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'open' });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'secret', visibility: 'private' });
  await server.admin('POST', '/repos', { owner: 'mona', name: 'mine', visibility: 'private' });
  for (const repo of ['open', 'secret']) {
    numbers[`${repo}-issue`] = (await server.admin('POST', `/repos/acme/${repo}/issues`, { author: 'mona', title: `${repo} issue` })).number;
    numbers[`${repo}-pull`] = (await server.admin('POST', `/repos/acme/${repo}/issues`, { author: 'lisa', title: `${repo} pull`, pull_request: true, team_reviewers: ['core'] })).number;
    comments[repo] = (await server.admin('POST', `/repos/acme/${repo}/issues/${numbers[`${repo}-issue`]}/comments`, { author: 'lisa', body: 'hi @mona' })).id;
  }
  await server.drain();
  Object.assign(t, {
    monaRepo: await classicToken(server, 'mona', ['repo', 'user', 'read:org']),
    monaBare: await classicToken(server, 'mona', []),
    monaAdminOrg: await classicToken(server, 'mona', ['admin:org']),
    lisaOrg: await classicToken(server, 'lisa', ['read:org', 'repo']),
    lisaBare: await classicToken(server, 'lisa', []),
    strangerRepo: await classicToken(server, 'stranger', ['repo', 'read:org']),
    fgMetadata: await fineGrainedToken(server, 'mona', 'acme', { metadata: 'read' }),
    fgPulls: await fineGrainedToken(server, 'mona', 'acme', { pull_requests: 'read' }),
    fgIssues: await fineGrainedToken(server, 'mona', 'acme', { issues: 'read', metadata: 'read' }),
    fgElsewhere: await fineGrainedToken(server, 'mona', 'mona', { metadata: 'read', issues: 'read' }),
    fgOrgOnly: await fineGrainedToken(server, 'mona', 'acme', { organization_administration: 'read' }),
    fgMembers: await fineGrainedToken(server, 'lisa', 'acme', { members: 'read' }),
  });
  const reader = await createApp(server, 'reader-app', { issues: 'read', pull_requests: 'read', metadata: 'read', members: 'read' });
  t.installation = await installationToken(server, reader, 'acme');
  const elsewhere = await createApp(server, 'elsewhere-app', { issues: 'read', metadata: 'read' });
  t.otherInstallation = await installationToken(server, elsewhere, 'other');
});
after(() => server.close());

describe('users and organizations', () => {
  test('GET /user: the caller, with private fields for the user scope', async () => {
    const full = await get('/user', t.monaRepo);
    assert.equal(full.status, 200, full.text);
    assert.equal(full.body.login, 'mona');
    assert.equal(full.body.name, 'MONA');
    assert.equal(full.body.owned_private_repos, 1);
    assert.equal(full.body.public_repos, 0);
    assert.ok(full.body.url.endsWith('/api/v3/users/mona'));
    const bare = await get('/user', t.monaBare);
    assert.equal(bare.status, 200);
    assert.equal(bare.body.login, 'mona');
    assert.equal(bare.body.owned_private_repos, undefined);
    assert.equal((await get('/user', t.fgMetadata)).body.login, 'mona');
    assert.equal((await get('/user')).status, 401);
    assert.equal((await get('/user', t.installation)).status, 403);
  });

  test('GET /users/{username}: a user or an organization, to anyone', async () => {
    const user = await get('/users/LISA');
    assert.equal(user.status, 200);
    assert.equal(user.body.login, 'lisa');
    assert.equal(user.body.type, 'User');
    assert.match(user.headers.get('x-ratelimit-limit') ?? '', /^\d+$/);
    const org = await get('/users/acme', t.lisaBare);
    assert.equal(org.body.type, 'Organization');
    assert.equal(org.body.public_repos, 1);
    assert.equal((await get('/users/nobody')).status, 404);
  });

  test('GET /orgs/{org}: public to anyone; private counts for its owners', async () => {
    const anonymous = await get('/orgs/acme');
    assert.equal(anonymous.status, 200);
    assert.equal(anonymous.body.login, 'acme');
    assert.equal(anonymous.body.public_repos, 1);
    assert.equal(anonymous.body.total_private_repos, undefined);
    assert.equal((await get('/orgs/acme', t.monaAdminOrg)).body.total_private_repos, 1);
    assert.equal((await get('/orgs/acme', t.lisaOrg)).body.total_private_repos, undefined);
    assert.equal((await get('/orgs/mona')).status, 404, 'a user is not an organization');
    assert.equal((await get('/orgs/nothing')).status, 404);
  });

  test('GET /orgs/{org}/teams/{team_slug}: members of the organization only', async () => {
    const team = await get('/orgs/acme/teams/core', t.lisaOrg);
    assert.equal(team.status, 200, team.text);
    assert.equal(team.body.slug, 'core');
    assert.equal(team.body.members_count, 2);
    assert.equal(team.body.organization.login, 'acme');
    assert.ok(team.body.url.endsWith('/orgs/acme/teams/core'));
    assert.equal((await get('/orgs/acme/teams/core', t.fgMembers)).status, 200);
    assert.equal((await get('/orgs/acme/teams/core', t.installation)).status, 200);
    assert.equal((await get('/orgs/acme/teams/core', t.strangerRepo)).status, 404);
    assert.equal((await get('/orgs/acme/teams/nope', t.lisaOrg)).status, 404);
    assert.equal((await get('/orgs/acme/teams/core', t.lisaBare)).status, 403, 'read:org is needed');
    assert.equal((await get('/orgs/acme/teams/core')).status, 401);
  });
});

describe('repositories', () => {
  test('a public repository answers anyone; permissions show for a user', async () => {
    const anonymous = await get('/repos/acme/open');
    assert.equal(anonymous.status, 200);
    assert.equal(anonymous.body.full_name, 'acme/open');
    assert.equal(anonymous.body.open_issues_count, 2);
    assert.equal(anonymous.body.permissions, undefined);
    const member = await get('/repos/ACME/open.git', t.lisaBare);
    assert.equal(member.status, 200);
    assert.deepEqual(member.body.permissions, { admin: false, push: true, pull: true });
    assert.deepEqual((await get('/repos/acme/open', t.monaBare)).body.permissions, { admin: true, push: true, pull: true });
    for (const token of [t.fgOrgOnly, t.fgElsewhere, t.otherInstallation, t.strangerRepo]) assert.equal((await get('/repos/acme/open', token)).status, 200);
  });

  test('a private repository: 404 for those who may not read it', async () => {
    const owner = await get('/repos/acme/secret', t.monaRepo);
    assert.equal(owner.status, 200);
    assert.equal(owner.body.private, true);
    assert.equal(owner.body.open_issues_count, 2);
    assert.equal((await get('/repos/acme/secret', t.fgMetadata)).status, 200);
    assert.equal((await get('/repos/acme/secret', t.installation)).status, 200);
    assert.equal((await get('/repos/acme/secret')).status, 404);
    assert.equal((await get('/repos/acme/secret', t.strangerRepo)).status, 404);
    assert.equal((await get('/repos/acme/secret', t.monaBare)).status, 404, 'a classic token needs repo');
    assert.equal((await get('/repos/acme/secret', t.fgElsewhere)).status, 404, 'the token does not reach acme');
    assert.equal((await get('/repos/acme/secret', t.otherInstallation)).status, 404);
    assert.equal((await get('/repos/acme/secret', t.fgOrgOnly)).status, 403, 'reaches it, without a repository permission');
    assert.equal((await get('/repos/acme/nothing', t.monaRepo)).status, 404);
  });

  test('ETag and 304', async () => {
    const first = await get('/repos/acme/open', t.lisaBare);
    const etag = first.headers.get('etag')!;
    assert.match(etag, /^W\//);
    const again = await get('/repos/acme/open', t.lisaBare, { 'if-none-match': etag });
    assert.equal(again.status, 304);
    assert.equal(again.text, '');
  });
});

describe('issues, pull requests and comments', () => {
  test('an issue, and a pull request as an issue', async () => {
    const issue = await get(`/repos/acme/open/issues/${numbers['open-issue']}`);
    assert.equal(issue.status, 200);
    assert.equal(issue.body.title, 'open issue');
    assert.equal(issue.body.comments, 1);
    assert.equal(issue.body.pull_request, undefined);
    assert.ok(issue.headers.get('last-modified'));
    const pullAsIssue = await get(`/repos/acme/open/issues/${numbers['open-pull']}`);
    assert.equal(pullAsIssue.status, 200);
    assert.ok(pullAsIssue.body.pull_request.url.endsWith(`/repos/acme/open/pulls/${numbers['open-pull']}`));
    for (const bad of ['999', 'abc', '0', '99999999999']) assert.equal((await get(`/repos/acme/open/issues/${bad}`)).status, 404, bad);
  });

  test('a pull request; an issue number is not one', async () => {
    const pull = await get(`/repos/acme/open/pulls/${numbers['open-pull']}`);
    assert.equal(pull.status, 200);
    assert.equal(pull.body.title, 'open pull');
    assert.equal(pull.body.merged, false);
    assert.equal(pull.body.requested_teams[0].slug, 'core');
    assert.equal((await get(`/repos/acme/open/pulls/${numbers['open-issue']}`)).status, 404);
  });

  test('a comment, only inside its repository', async () => {
    const comment = await get(`/repos/acme/open/issues/comments/${comments.open}`);
    assert.equal(comment.status, 200);
    assert.equal(comment.body.body, 'hi @mona');
    assert.ok(comment.body.issue_url.endsWith(`/repos/acme/open/issues/${numbers['open-issue']}`));
    assert.equal((await get(`/repos/acme/open/issues/comments/${comments.secret}`, t.monaRepo)).status, 404);
    assert.equal((await get('/repos/acme/open/issues/comments/x')).status, 404);
  });

  test('in a private repository: the repository rule, then the resource permission', async () => {
    const issue = `/repos/acme/secret/issues/${numbers['secret-issue']}`;
    const pull = `/repos/acme/secret/pulls/${numbers['secret-pull']}`;
    const comment = `/repos/acme/secret/issues/comments/${comments.secret}`;
    for (const path of [issue, pull, comment]) {
      assert.equal((await get(path, t.monaRepo)).status, 200, path);
      assert.equal((await get(path, t.installation)).status, 200, path);
      assert.equal((await get(path)).status, 404, path);
      assert.equal((await get(path, t.strangerRepo)).status, 404, path);
      assert.equal((await get(path, t.lisaBare)).status, 404, path);
      assert.equal((await get(path, t.otherInstallation)).status, 404, path);
    }
    assert.equal((await get(issue, t.fgIssues)).status, 200);
    assert.equal((await get(issue, t.fgPulls)).status, 200, 'pull_requests also reads issues');
    assert.equal((await get(pull, t.fgPulls)).status, 200);
    assert.equal((await get(pull, t.fgIssues)).status, 403, 'a pull request needs pull_requests');
    assert.equal((await get(issue, t.fgMetadata)).status, 403);
  });
});
