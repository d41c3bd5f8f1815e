// The user's issues and an organization's (issue 39): GET /issues, /user/issues and
// /orgs/{org}/issues list the issues (pull requests included) of the repositories the user owns or
// reaches as a member or collaborator that the credential sees, those assigned to them by default,
// or created, mentioning them, any of these or commented on (`subscribed`), or all; each with its
// repository. A credential's reach narrows them as it narrows every list.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { classicToken, fineGrainedToken } from '../../helpers/credentials.ts';
import { install, mintInstallationToken } from '../../helpers/app-credentials.ts';

let server: TestServer;
let hubot: string;
let hubotPublic: string;
let hubotOwn: string;
let installation: string;

before(async () => {
  server = await startServer();
  for (const login of ['mona', 'hubot', 'olga']) await server.admin('POST', '/users', { login });
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'], members: ['hubot'] });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'secret', visibility: 'private' });
  await server.admin('POST', '/repos', { owner: 'hubot', name: 'own' });
  await server.admin('POST', '/repos', { owner: 'olga', name: 'elsewhere' });
  const open = async (repository: string, author: string, title: string, extra: Record<string, unknown> = {}) => {
    const made = await server.admin('POST', `/repos/${repository}/issues`, { author, title, ...extra });
    await server.admin('POST', '/clock', { advance_seconds: 60 });
    return made.number as number;
  };
  await open('acme/widgets', 'mona', 'Assigned', { assignees: ['hubot'] });
  await open('acme/secret', 'hubot', 'Created in secret');
  await open('acme/widgets', 'mona', 'Mentioning', { body: 'What do you think, @hubot?' });
  await open('hubot/own', 'olga', 'In his own repository', { pull_request: true });
  const commented = await open('acme/widgets', 'mona', 'Commented on');
  await server.admin('POST', `/repos/acme/widgets/issues/${commented}/comments`, { author: 'hubot', body: 'Me too' });
  await open('olga/elsewhere', 'hubot', 'Not in his repositories');
  hubot = await classicToken(server, 'hubot', ['repo']);
  hubotPublic = await classicToken(server, 'hubot', []);
  hubotOwn = await fineGrainedToken(server, 'hubot', 'hubot', { issues: 'read', metadata: 'read' });
  const app = await server.admin('POST', '/apps', { slug: 'reader', permissions: { issues: 'read', metadata: 'read' } });
  installation = await mintInstallationToken(server, app, await install(server, app, 'acme'));
});

after(() => server?.close());

const titles = async (path: string, token = hubot) => {
  const answer = await server.api('GET', path, { token });
  assert.equal(answer.status, 200, `${path}: ${answer.text}`);
  return answer.body.map((issue: { title: string }) => issue.title);
};

describe('the user\'s issues', () => {
  test('assigned by default; created, mentioned, subscribed, all; the repository with each', async () => {
    for (const path of ['/issues', '/user/issues']) {
      assert.deepEqual(await titles(path), ['Assigned'], path);
      assert.deepEqual(await titles(`${path}?filter=created`), ['Created in secret']);
      assert.deepEqual(await titles(`${path}?filter=mentioned`), ['Mentioning']);
      assert.deepEqual(await titles(`${path}?filter=subscribed`), ['Commented on', 'Mentioning', 'Created in secret', 'Assigned']);
      assert.deepEqual(await titles(`${path}?filter=all`), ['Commented on', 'In his own repository', 'Mentioning', 'Created in secret', 'Assigned']);
      assert.deepEqual(await titles(`${path}?filter=repos&direction=asc&per_page=2`), ['Assigned', 'Created in secret']);
    }
    const [first] = (await server.api('GET', '/issues', { token: hubot })).body;
    assert.equal(first.repository.full_name, 'acme/widgets');
    const one = (await server.api('GET', `/repos/acme/widgets/issues/${first.number}`, { token: hubot })).body;
    const { repository: _repository, ...issue } = first;
    assert.deepEqual(issue, one, 'each as its own GET shows it, with its repository');
    assert.ok((await server.api('GET', '/issues?filter=all', { token: hubot })).body.some((i: { pull_request?: object }) => i.pull_request), 'pull requests included');
  });

  test('the credential narrows them: no repo scope, or a fine-grained token of another owner, sees no private repository', async () => {
    assert.deepEqual(await titles('/issues?filter=created', hubotPublic), []);
    assert.deepEqual(await titles('/issues?filter=all', hubotOwn), ['Commented on', 'In his own repository', 'Mentioning', 'Assigned'], 'public ones stay');
  });

  test('an organization\'s: its repositories only; an unknown one 404', async () => {
    assert.deepEqual(await titles('/orgs/acme/issues?filter=all'), ['Commented on', 'Mentioning', 'Created in secret', 'Assigned']);
    assert.deepEqual(await titles('/orgs/ACME/issues'), ['Assigned']);
    assert.equal((await server.api('GET', '/orgs/nope/issues', { token: hubot })).status, 404);
    assert.equal((await server.api('GET', '/orgs/hubot/issues', { token: hubot })).status, 404, 'a user is no organization');
  });

  test('state and labels filter; who is no user is refused; what is no filter is a 422', async () => {
    assert.deepEqual(await titles('/issues?state=closed&filter=all'), []);
    assert.deepEqual(await titles('/issues?labels=bug&filter=all'), []);
    assert.equal((await server.api('GET', '/issues')).status, 401);
    assert.equal((await server.api('GET', '/issues', { token: installation })).status, 403, 'an installation is no user');
    assert.equal((await server.api('GET', '/issues?filter=everything', { token: hubot })).status, 422);
    assert.equal((await server.api('GET', '/user/issues?sort=votes', { token: hubot })).status, 422);
  });
});
