// Commits of a repository's git data (issue 39): a commit and a branch read by sha or name, statuses
// made by a user and by an app's bot with their combined state, check runs made and completed by an
// app; each write reaches a second app as the platform's `status` and `check_run` events, valid
// against the platform's schemas. Then who may, and what a refused write leaves.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { Receiver } from '../../helpers/receiver.ts';
import { watchDeliveries } from '../../helpers/deliveries.ts';
import { install, mintInstallationToken } from '../../helpers/app-credentials.ts';
import { classicToken, type TestApp } from '../../helpers/credentials.ts';

let server: TestServer;
let receiver: Receiver;
const watch = watchDeliveries(() => server, () => receiver, '/listener');
const delivered = watch.delivered;
let ci: string;
let other: string;
let mona: string;
let olga: string;
let head: string;

before(async () => {
  receiver = await new Receiver().start();
  server = await startServer();
  for (const login of ['mona', 'olga']) await server.admin('POST', '/users', { login });
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'] });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets', init_git: true });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'empty' });
  const checker: TestApp = await server.admin('POST', '/apps', { slug: 'ci', owner: 'acme', permissions: { checks: 'write', statuses: 'write', metadata: 'read' } });
  ci = await mintInstallationToken(server, checker, await install(server, checker, 'acme'));
  const second: TestApp = await server.admin('POST', '/apps', { slug: 'other-ci', owner: 'acme', permissions: { checks: 'write', statuses: 'read', metadata: 'read' } });
  other = await mintInstallationToken(server, second, await install(server, second, 'acme'));
  await server.admin('POST', '/apps', { slug: 'listener', permissions: { checks: 'read', statuses: 'read', metadata: 'read' }, events: ['check_run', 'status'], webhook: { url: receiver.url('/listener') } });
  await server.admin('POST', '/apps/listener/installations', { account: 'acme', repositories: 'all' });
  mona = await classicToken(server, 'mona', ['repo']);
  olga = await classicToken(server, 'olga', ['public_repo']);
  await server.drain();
  watch.skip();
});

after(async () => {
  await server?.close();
  await receiver?.stop();
});

describe('commits and branches', () => {
  test('a commit by branch name and by sha, with its files; the branch with its head', async () => {
    const branch = await server.api('GET', '/repos/acme/widgets/branches/main', { token: mona });
    assert.equal(branch.status, 200);
    head = branch.body.commit.sha;
    assert.match(head, /^[0-9a-f]{40}$/);
    assert.equal(branch.body.name, 'main');
    assert.equal(branch.body.protected, false);
    assert.equal(branch.body._links.self, `${server.apiUrl}/repos/acme/widgets/branches/main`);
    const byName = await server.api('GET', '/repos/acme/widgets/commits/main', { token: mona });
    assert.equal(byName.status, 200);
    assert.equal(byName.body.sha, head);
    assert.equal(byName.body.commit.message, 'Initial commit');
    assert.deepEqual(byName.body.parents, []);
    assert.deepEqual(byName.body.files.map((f: { filename: string; status: string; additions: number }) => [f.filename, f.status, f.additions]), [['README.md', 'added', 1]]);
    assert.deepEqual(byName.body.stats, { additions: 1, deletions: 0, total: 1 });
    const bySha = await server.api('GET', `/repos/acme/widgets/commits/${head}`);
    assert.equal(bySha.status, 200, 'a public repository answers anyone');
    assert.equal(bySha.body.url, `${server.apiUrl}/repos/acme/widgets/commits/${head}`);
    assert.equal((await server.api('GET', `/repos/acme/widgets/commits/${head.slice(0, 7)}`)).body.sha, head, 'a short sha');
  });

  test('what names no commit is a 422, no branch a 404, a repository without git data a 409', async () => {
    for (const ref of ['nope', 'main..main', '-p', 'HEAD~1', `${'0'.repeat(40)}`]) {
      const answer = await server.api('GET', `/repos/acme/widgets/commits/${encodeURIComponent(ref)}`, { token: mona });
      assert.equal(answer.status, 422, ref);
      assert.equal(answer.body.message, 'Validation Failed');
      assert.match(answer.body.errors[0].message, /^No commit found for SHA: /);
    }
    assert.equal((await server.api('GET', '/repos/acme/widgets/branches/nope', { token: mona })).status, 404);
    assert.equal((await server.api('GET', '/repos/acme/widgets/branches/nope', { token: mona })).body.message, 'Branch not found');
    const empty = await server.api('GET', '/repos/acme/empty/commits/main', { token: mona });
    assert.equal(empty.status, 409);
    assert.equal(empty.body.message, 'Git Repository is empty.');
  });
});

describe('statuses', () => {
  test('a user and an app make statuses; the combined state follows the latest of each context; each is a status event', async () => {
    const pending = await server.api('POST', `/repos/acme/widgets/statuses/${head}`, { token: mona, body: { state: 'pending', context: 'ci/build', target_url: 'https://ci.example/1', description: 'Building' } });
    assert.equal(pending.status, 201);
    assert.equal(pending.body.creator.login, 'mona');
    assert.equal(pending.body.context, 'ci/build');
    assert.equal(pending.body.url, `${server.apiUrl}/repos/acme/widgets/statuses/${head}`);
    const first = await delivered();
    assert.deepEqual(first.kinds, ['status']);
    const event = first.body('status');
    assert.equal(event.sha, head);
    assert.equal(event.state, 'pending');
    assert.equal(event.name, 'acme/widgets');
    assert.deepEqual(event.branches.map((b: { name: string }) => b.name), ['main']);
    assert.equal(event.sender.login, 'mona');

    const success = await server.api('POST', `/repos/acme/widgets/statuses/main`, { token: ci, body: { state: 'success', context: 'ci/build' } });
    assert.equal(success.status, 201, 'a branch name names its head');
    assert.equal(success.body.creator.login, 'ci[bot]');
    assert.equal(success.body.creator.type, 'Bot');
    assert.equal((await delivered()).body('status').sender.login, 'ci[bot]');
    let combined = await server.api('GET', `/repos/acme/widgets/commits/${head}/status`, { token: mona });
    assert.equal(combined.status, 200);
    assert.equal(combined.body.state, 'success');
    assert.equal(combined.body.total_count, 1);
    assert.equal(combined.body.statuses[0].state, 'success');
    assert.equal(combined.body.repository.full_name, 'acme/widgets');

    const defaulted = await server.api('POST', `/repos/acme/widgets/statuses/${head}`, { token: ci, body: { state: 'failure' } });
    assert.equal(defaulted.body.context, 'default');
    await delivered();
    combined = await server.api('GET', '/repos/acme/widgets/commits/main/status', { token: mona });
    assert.equal(combined.body.state, 'failure');
    assert.deepEqual(combined.body.statuses.map((s: { context: string }) => s.context), ['ci/build', 'default']);
    const listed = await server.api('GET', '/repos/acme/widgets/commits/main/statuses', { token: mona });
    assert.deepEqual(listed.body.map((s: { state: string }) => s.state), ['failure', 'success', 'pending'], 'newest first');
    assert.equal((await server.api('GET', '/repos/acme/widgets/commits/main/statuses?per_page=1', { token: mona })).headers.get('link')?.includes('rel="last"'), true);
  });

  test('who may not make a status, or what is no status, leaves none', async () => {
    const before = (await server.api('GET', '/repos/acme/widgets/commits/main/statuses', { token: mona })).body.length;
    const refused: [string | undefined, unknown, string, number][] = [
      [olga, { state: 'success' }, head, 403],
      [undefined, { state: 'success' }, head, 401],
      [mona, { state: 'green' }, head, 422],
      [mona, { state: 'success', description: 'x'.repeat(141) }, head, 422],
      [mona, { state: 'success' }, 'f'.repeat(40), 422],
      [other, { state: 'success' }, head, 403],
    ];
    for (const [token, body, sha, status] of refused) {
      const answer = await server.api('POST', `/repos/acme/widgets/statuses/${sha}`, { ...(token ? { token } : {}), body });
      assert.equal(answer.status, status, JSON.stringify(body));
    }
    assert.equal((await server.api('POST', `/repos/acme/empty/statuses/${head}`, { token: mona, body: { state: 'success' } })).status, 409);
    assert.equal((await server.api('GET', '/repos/acme/widgets/commits/main/statuses', { token: mona })).body.length, before);
    assert.deepEqual((await delivered()).kinds, []);
  });
});

describe('check runs', () => {
  let run: number;

  test('an app makes a check run, then completes it: created and completed events, and the runs of its commit', async () => {
    const made = await server.api('POST', '/repos/acme/widgets/check-runs', { token: ci, body: { name: 'build', head_sha: head, external_id: 'job-1', details_url: 'https://ci.example/runs/1' } });
    assert.equal(made.status, 201);
    run = made.body.id;
    assert.equal(made.body.status, 'queued');
    assert.equal(made.body.conclusion, null);
    assert.equal(made.body.app.slug, 'ci');
    assert.equal(typeof made.body.check_suite.id, 'number');
    assert.match(made.body.started_at, /Z$/);
    assert.equal(made.body.url, `${server.apiUrl}/repos/acme/widgets/check-runs/${run}`);
    const created = await delivered();
    assert.deepEqual(created.kinds, ['check_run/created']);
    assert.equal(created.body('check_run/created').check_run.check_suite.head_branch, 'main');
    assert.equal(created.body('check_run/created').sender.login, 'ci[bot]');

    const progress = await server.api('PATCH', `/repos/acme/widgets/check-runs/${run}`, { token: ci, body: { status: 'in_progress', output: { title: 'Building', summary: 'Step 1 of 2' } } });
    assert.equal(progress.status, 200);
    assert.equal(progress.body.output.title, 'Building');
    assert.deepEqual((await delivered()).kinds, [], 'no event until it completes');
    const done = await server.api('PATCH', `/repos/acme/widgets/check-runs/${run}`, { token: ci, body: { conclusion: 'success' } });
    assert.equal(done.status, 200);
    assert.equal(done.body.status, 'completed');
    assert.match(done.body.completed_at, /Z$/);
    const completed = await delivered();
    assert.deepEqual(completed.kinds, ['check_run/completed']);
    assert.equal(completed.body('check_run/completed').check_run.check_suite.conclusion, 'success');

    const got = await server.api('GET', `/repos/acme/widgets/check-runs/${run}`, { token: mona });
    assert.equal(got.status, 200);
    assert.equal(got.body.conclusion, 'success');
    await server.api('POST', '/repos/acme/widgets/check-runs', { token: ci, body: { name: 'build', head_sha: head, status: 'completed', conclusion: 'failure' } });
    await server.api('POST', '/repos/acme/widgets/check-runs', { token: other, body: { name: 'lint', head_sha: 'main' } });
    await delivered();
    const latest = await server.api('GET', '/repos/acme/widgets/commits/main/check-runs', { token: mona });
    assert.equal(latest.status, 200);
    assert.equal(latest.body.total_count, 2, 'the latest of each name');
    assert.deepEqual(latest.body.check_runs.map((r: { name: string; conclusion: string | null }) => [r.name, r.conclusion]), [['lint', null], ['build', 'failure']]);
    const all = await server.api('GET', `/repos/acme/widgets/commits/${head}/check-runs?filter=all&check_name=build`, { token: mona });
    assert.equal(all.body.total_count, 2);
    const completedOnly = await server.api('GET', `/repos/acme/widgets/commits/${head}/check-runs?status=completed`, { token: mona });
    assert.deepEqual(completedOnly.body.check_runs.map((r: { name: string }) => r.name), ['build']);
  });

  test('only an installation makes check runs, only its app changes one, and a completed one needs a conclusion', async () => {
    const count = async () => (await server.api('GET', '/repos/acme/widgets/commits/main/check-runs?filter=all', { token: mona })).body.total_count;
    const before = await count();
    assert.equal((await server.api('POST', '/repos/acme/widgets/check-runs', { token: mona, body: { name: 'x', head_sha: head } })).status, 403);
    assert.equal((await server.api('POST', '/repos/acme/widgets/check-runs', { token: ci, body: { name: 'x', head_sha: head, status: 'completed' } })).status, 422);
    assert.equal((await server.api('POST', '/repos/acme/widgets/check-runs', { token: ci, body: { name: 'x', head_sha: head, conclusion: 'done' } })).status, 422);
    assert.equal((await server.api('POST', '/repos/acme/widgets/check-runs', { token: ci, body: { name: 'x', head_sha: 'nope' } })).status, 422);
    assert.equal((await server.api('POST', '/repos/acme/widgets/check-runs', { token: ci, body: { head_sha: head } })).status, 422);
    const changed = await server.api('PATCH', `/repos/acme/widgets/check-runs/${run}`, { token: other, body: { name: 'hijacked' } });
    assert.equal(changed.status, 403);
    assert.equal((await server.api('PATCH', '/repos/acme/widgets/check-runs/999999', { token: ci, body: { name: 'x' } })).status, 404);
    assert.equal((await server.api('GET', `/repos/acme/widgets/check-runs/${run}`, { token: mona })).body.name, 'build');
    assert.equal(await count(), before);
    assert.deepEqual((await delivered()).kinds, []);
  });

  test('an archived repository refuses statuses and check runs, and keeps answering reads', async () => {
    await server.admin('PATCH', '/repos/acme/widgets', { archived: true });
    await delivered();
    assert.equal((await server.api('POST', `/repos/acme/widgets/statuses/${head}`, { token: mona, body: { state: 'success' } })).status, 403);
    assert.equal((await server.api('POST', '/repos/acme/widgets/check-runs', { token: ci, body: { name: 'x', head_sha: head } })).status, 403);
    assert.equal((await server.api('PATCH', `/repos/acme/widgets/check-runs/${run}`, { token: ci, body: { name: 'x' } })).status, 403);
    assert.equal((await server.api('GET', `/repos/acme/widgets/check-runs/${run}`, { token: mona })).status, 200);
    await server.admin('PATCH', '/repos/acme/widgets', { archived: false });
    await delivered();
  });
});
