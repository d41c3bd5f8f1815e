// Background work survives what happened meanwhile (issue 37): an outbox row consumed after some
// of the users, repositories or apps it concerns were deleted delivers to those that remain, and
// requests racing a deletion get the platform's answers (a 404 for what is gone), never a 5xx or a
// 422. The deletions come before the queue is drained (deterministic), or, for requests, in rounds of
// the same requests sent at once.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { appJwt, classicToken, type TestApp } from '../helpers/credentials.ts';
import { Receiver } from '../helpers/receiver.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

/** Runs every queued job without waiting for retries; answers what is left (failed jobs wait for a retry). */
async function drainNow(server: TestServer): Promise<{ pending: number; deferred: number }> {
  const response = await server.adminRaw('POST', '/jobs/drain', { timeout_seconds: 30, wait_for_deferred: false });
  assert.equal(response.status, 200, response.text);
  return response.body;
}

/** The user's notification threads (all of them, read or not), by subject title. */
async function threadTitles(server: TestServer, token: string): Promise<string[]> {
  const response = await server.api('GET', '/notifications?all=true&per_page=100', { token });
  assert.equal(response.status, 200, response.text);
  return (response.body as { subject: { title: string } }[]).map((t) => t.subject.title).sort();
}

describe('notification fan-out after a recipient was deleted', () => {
  let database: TestDatabase;
  let api: TestServer;
  let worker: TestServer | undefined;
  before(async () => {
    database = await createTestDatabase();
    // The API process records the activity; no worker consumes it until the deletions are done.
    api = await startServer({ CODEHOST_WORKER: '0' }, { database });
  });
  after(async () => {
    await worker?.close();
    await api.close();
    await database.drop();
  });

  test('every remaining recipient gets the activity; the deleted ones are skipped', { timeout: 120_000 }, async () => {
    const logins = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank'];
    for (const login of logins) await api.admin('POST', '/users', { login });
    await api.admin('POST', '/orgs', { login: 'acme', owners: ['alice'], members: ['bob', 'carol', 'dave', 'erin', 'frank'] });
    await api.admin('POST', '/orgs/acme/teams', { slug: 'reviewers', members: ['bob', 'frank'] });
    await api.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
    for (const login of ['bob', 'dave']) await api.admin('PUT', '/repos/acme/widgets/subscription', { login, subscribed: true });
    const tokens: Record<string, string> = {};
    for (const login of logins) tokens[login] = await classicToken(api, login, ['notifications', 'repo']);

    // Each kind of recipient: assignees, requested reviewers, mentioned users and teams, watchers,
    // thread subscribers; bob is each of them and is deleted before any of it is consumed.
    await api.admin('POST', '/repos/acme/widgets/issues', { author: 'alice', title: 'Opened', body: 'cc @bob @carol @acme/reviewers', assignees: ['bob', 'carol'] });
    await api.admin('POST', '/repos/acme/widgets/issues', { author: 'alice', title: 'Pulled', pull_request: true, reviewers: ['bob', 'erin'] });
    await api.admin('POST', '/repos/acme/widgets/issues/1/comments', { author: 'erin', body: 'ping @bob and @frank' });
    await api.admin('DELETE', '/users/bob');

    worker = await startServer({}, { database });
    const left = await drainNow(worker);
    assert.deepEqual(left, { ...left, pending: 0, deferred: 0 }, 'a fan-out failed and waits for a retry');

    assert.deepEqual(await threadTitles(api, tokens.carol!), ['Opened']);
    assert.deepEqual(await threadTitles(api, tokens.dave!), ['Opened', 'Pulled']);
    assert.deepEqual(await threadTitles(api, tokens.erin!), ['Pulled']);
    assert.deepEqual(await threadTitles(api, tokens.frank!), ['Opened']);
    assert.deepEqual(await threadTitles(api, tokens.alice!), ['Opened']);
  });
});

describe('reads and writes racing a deletion', () => {
  let server: TestServer;
  const tokens: Record<string, string> = {};
  before(async () => {
    server = await startServer({ CODEHOST_RATE_LIMIT_ANONYMOUS: '1000' });
    for (const login of ['alice', 'mona']) {
      await server.admin('POST', '/users', { login });
      tokens[login] = await classicToken(server, login, ['notifications', 'repo']);
    }
  });
  after(() => server?.close());

  /** Statuses that are not among `allowed`, with their bodies. */
  const unexpected = (responses: { status: number; text: string }[], allowed: number[]) => responses.filter((r) => !allowed.includes(r.status)).map((r) => `${r.status} ${r.text}`);

  test('GET /notifications and a thread while their repository is deleted: 200 (without it) or 404, never a 500', { timeout: 120_000 }, async () => {
    const ROUNDS = 12;
    for (let i = 0; i < ROUNDS; i++) {
      await server.admin('POST', '/repos', { owner: 'alice', name: `doomed-${i}` });
      await server.admin('POST', `/repos/alice/doomed-${i}/issues`, { author: 'alice', title: `doomed ${i}`, body: 'for @mona' });
    }
    await server.admin('POST', '/repos', { owner: 'alice', name: 'kept' });
    await server.admin('POST', '/repos/alice/kept/issues', { author: 'alice', title: 'kept', body: 'for @mona' });
    await server.drain();
    const listed = await server.api('GET', '/notifications?per_page=100', { token: tokens.mona });
    assert.equal(listed.status, 200, listed.text);
    const threadOf = new Map((listed.body as { id: string; repository: { name: string } }[]).map((t) => [t.repository.name, t.id]));
    assert.equal(threadOf.size, ROUNDS + 1);

    const problems: string[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      // A new version of the repository: the page must load it again (not from the kept JSON).
      await server.admin('PATCH', `/repos/alice/doomed-${i}`, { description: `round ${i}` });
      const get = () => server.api('GET', '/notifications?per_page=100', { token: tokens.mona });
      const thread = () => server.api('GET', `/notifications/threads/${threadOf.get(`doomed-${i}`)}`, { token: tokens.mona });
      const [deleted, ...reads] = await Promise.all([server.adminRaw('DELETE', `/repos/alice/doomed-${i}`), get(), thread(), get(), thread(), get()]);
      assert.equal(deleted.status, 204, deleted.text);
      problems.push(...unexpected(reads.filter((_, n) => n % 2 === 0), [200]), ...unexpected(reads.filter((_, n) => n % 2 === 1), [200, 404]));
      for (const read of reads.filter((r, n) => n % 2 === 0 && r.status === 200)) {
        assert.ok((read.body as { repository: { name: string } }[]).some((t) => t.repository.name === 'kept'), 'the kept repository\'s thread is listed');
      }
    }
    assert.deepEqual(problems, []);
    const after = await server.api('GET', '/notifications?per_page=100', { token: tokens.mona });
    assert.deepEqual((after.body as { repository: { name: string } }[]).map((t) => t.repository.name), ['kept']);
  });
});

describe('notification writes racing the deletion of their user or repository', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ CODEHOST_RATE_LIMIT_ANONYMOUS: '1000' });
    await server.admin('POST', '/users', { login: 'alice' });
  });
  after(() => server?.close());

  test('thread and subscription writes answer as the platform does (a 404 or 401 for what is gone), never a 422 or a 5xx', { timeout: 120_000 }, async () => {
    const ROUNDS = 8;
    const rounds: { login: string; token: string; thread: string; repository: string }[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const login = `gone-${i}`;
      await server.admin('POST', '/users', { login });
      await server.admin('POST', '/repos', { owner: 'alice', name: `r${i}` });
      await server.admin('POST', `/repos/alice/r${i}/issues`, { author: 'alice', title: `for ${login}`, body: `cc @${login}` });
      rounds.push({ login, token: await classicToken(server, login, ['notifications', 'repo']), thread: '', repository: `r${i}` });
    }
    await server.drain();
    for (const round of rounds) {
      const listed = await server.api('GET', '/notifications', { token: round.token });
      assert.equal(listed.body.length, 1, listed.text);
      round.thread = listed.body[0].id;
    }
    const problems: string[] = [];
    for (const [i, { login, token, thread, repository }] of rounds.entries()) {
      const writes = () => [
        server.api('PUT', `/notifications/threads/${thread}/subscription`, { token, body: { ignored: i % 2 === 0 } }),
        server.api('DELETE', `/notifications/threads/${thread}/subscription`, { token }),
        server.api('PATCH', `/notifications/threads/${thread}`, { token }),
        server.api('DELETE', `/notifications/threads/${thread}`, { token }),
        server.api('PUT', '/notifications', { token, body: {} }),
      ];
      // Odd rounds delete the user, even ones the thread's repository.
      const deletion = i % 2 ? server.adminRaw('DELETE', `/users/${login}`) : server.adminRaw('DELETE', `/repos/alice/${repository}`);
      const [deleted, ...answers] = await Promise.all([deletion, ...writes(), ...writes()]);
      assert.equal(deleted.status, 204, deleted.text);
      problems.push(...answers.filter((r) => r.status === 422 || r.status >= 500).map((r) => `round ${i}: ${r.status} ${r.text}`));
    }
    assert.deepEqual(problems, []);
  });
});

describe('git data created while a deletion runs', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ CODEHOST_RATE_LIMIT_ANONYMOUS: '1000' });
    await server.admin('POST', '/users', { login: 'boss' });
  });
  after(() => server?.close());

  const gitRoot = () => join(server.server.ctx.config.dataDir, 'git');
  /** The git data directories on disk, and those the repositories' rows name. */
  async function gitData() {
    const onDisk = (existsSync(gitRoot()) ? readdirSync(gitRoot()) : []).map((name) => `git/${name}`).sort();
    const rows = await server.server.ctx.db.kysely.selectFrom('repositories').select('git_path').where('git_path', 'is not', null).execute();
    return { onDisk, named: rows.map((row) => row.git_path!.replaceAll('\\', '/')).sort() };
  }

  test('a creation racing the deletion of the repository before it, or of its owner: each ends cleanly, no stray files, every row\'s git data whole', { timeout: 120_000 }, async () => {
    const ROUNDS = 10;
    const problems: string[] = [];
    let previous = (await server.admin('POST', '/repos', { owner: 'boss', name: 'first', init_git: true })).name as string;
    for (let i = 0; i < ROUNDS; i++) {
      // The repository created last is deleted as the next is created (on SQLite the next may get its id).
      const [deleted, created] = await Promise.all([
        server.adminRaw('DELETE', `/repos/boss/${previous}`),
        server.adminRaw('POST', '/repos', { owner: 'boss', name: `next-${i}`, init_git: true }),
      ]);
      if (deleted.status !== 204) problems.push(`round ${i} delete: ${deleted.status} ${deleted.text}`);
      if (created.status !== 201) problems.push(`round ${i} create: ${created.status} ${created.text}`);
      else previous = created.body.name;
      // An owner deleted as a repository of theirs is created: the creation is a 404 or the repository goes with its owner.
      const login = `owner-${i}`;
      await server.admin('POST', '/users', { login });
      const [gone, made] = await Promise.all([
        server.adminRaw('DELETE', `/users/${login}`),
        server.adminRaw('POST', '/repos', { owner: login, name: 'theirs', init_git: true }),
      ]);
      if (gone.status !== 204) problems.push(`round ${i} delete owner: ${gone.status} ${gone.text}`);
      if (made.status !== 201 && made.status !== 404) problems.push(`round ${i} create for owner: ${made.status} ${made.text}`);
    }
    assert.deepEqual(problems, []);
    const { onDisk, named } = await gitData();
    assert.deepEqual(onDisk, named, 'the git data on disk is exactly what the rows name');
    for (const path of named) {
      assert.ok(existsSync(join(server.server.ctx.config.dataDir, path, 'HEAD')), `${path} is a git repository`);
    }
  });
});

describe('webhook fan-out after an installation, a repository and a user were deleted', () => {
  let database: TestDatabase;
  let api: TestServer;
  let worker: TestServer | undefined;
  let receiver: Receiver;
  before(async () => {
    receiver = await new Receiver().start();
    database = await createTestDatabase();
    api = await startServer({ CODEHOST_WORKER: '0' }, { database });
  });
  after(async () => {
    await worker?.close();
    await api.close();
    await database.drop();
    await receiver.stop();
  });

  test('each remaining app gets each event once; nothing fails or waits for a retry', { timeout: 120_000 }, async () => {
    for (const login of ['mona', 'leaver']) await api.admin('POST', '/users', { login });
    await api.admin('POST', '/orgs', { login: 'acme', owners: ['mona'], members: ['leaver'] });
    for (const name of ['widgets', 'doomed']) await api.admin('POST', '/repos', { owner: 'acme', name });
    const apps: Record<string, TestApp> = {};
    for (const slug of ['kept-app', 'gone-app']) {
      apps[slug] = await api.admin('POST', '/apps', { slug, permissions: { issues: 'read' }, events: ['issues', 'issue_comment'], webhook: { url: receiver.url(`/${slug}`) } });
      await api.admin('POST', `/apps/${slug}/installations`, { account: 'acme' });
    }
    const installation = await api.api('GET', '/app/installations', { token: await appJwt(api, apps['gone-app']!) });
    assert.equal(installation.status, 200, installation.text);

    await api.admin('POST', '/repos/acme/widgets/issues', { author: 'leaver', title: 'by the leaver', body: 'cc @mona' });
    await api.admin('POST', '/repos/acme/widgets/issues/1/comments', { author: 'mona', body: 'thanks @leaver' });
    await api.admin('POST', '/repos/acme/doomed/issues', { author: 'mona', title: 'in a doomed repository' });
    // Deleted before any of it is consumed.
    const removed = await api.api('DELETE', `/app/installations/${installation.body[0].id}`, { token: await appJwt(api, apps['gone-app']!) });
    assert.equal(removed.status, 204, removed.text);
    await api.admin('DELETE', '/repos/acme/doomed');
    await api.admin('DELETE', '/users/leaver');

    worker = await startServer({}, { database });
    const left = await drainNow(worker);
    assert.deepEqual(left, { ...left, pending: 0, deferred: 0 }, 'a fan-out or a delivery failed and waits for a retry');
    // Of the issue events (the apps also get their ping and installation events).
    const events = (slug: string) => receiver.received.filter((r) => r.path === `/${slug}` && String(r.headers['x-vendor-event']).startsWith('issue')).map((r) => `${r.headers['x-vendor-event']}.${r.json?.action}:${r.json?.repository?.name}`).sort();
    assert.deepEqual(events('kept-app'), ['issue_comment.created:widgets', 'issues.opened:widgets']);
    assert.deepEqual(events('gone-app'), []);
  });
});

describe('notification fan-out while its recipients and repositories are being deleted', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ CODEHOST_RATE_LIMIT_ANONYMOUS: '1000' });
    for (const login of ['alice', 'carol']) await server.admin('POST', '/users', { login });
    await server.admin('POST', '/orgs', { login: 'acme', owners: ['alice'], members: ['carol'] });
    await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
  });
  after(() => server?.close());

  test('activity consumed as the users it names and the repositories it is in go: the rest get it, no job fails', { timeout: 120_000 }, async () => {
    const ROUNDS = 12;
    const problems: string[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const login = `leaving-${i}`;
      await server.admin('POST', '/users', { login });
      await server.admin('PUT', '/orgs/acme/members/' + login, { role: 'member' });
      await server.admin('PUT', '/repos/acme/widgets/subscription', { login, subscribed: true });
      await server.admin('POST', '/repos', { owner: 'acme', name: `doomed-${i}` });
      const answers = await Promise.all([
        server.adminRaw('POST', '/repos/acme/widgets/issues', { author: 'alice', title: `round ${i}`, body: `cc @${login} @carol` }),
        server.adminRaw('POST', `/repos/acme/doomed-${i}/issues`, { author: 'alice', title: `doomed ${i}`, body: `cc @${login} @carol` }),
        server.adminRaw('DELETE', `/users/${login}`),
        server.adminRaw('DELETE', `/repos/acme/doomed-${i}`),
      ]);
      const [opened, inDoomed, ...deleted] = answers;
      if (opened!.status !== 201) problems.push(`round ${i} issue: ${opened!.status} ${opened!.text}`);
      if (inDoomed!.status !== 201 && inDoomed!.status !== 404) problems.push(`round ${i} issue in a doomed repository: ${inDoomed!.status} ${inDoomed!.text}`);
      for (const d of deleted) if (d.status !== 204) problems.push(`round ${i} deletion: ${d.status} ${d.text}`);
    }
    assert.deepEqual(problems, []);
    const left = await drainNow(server);
    assert.deepEqual(left, { ...left, pending: 0, deferred: 0 }, 'a fan-out failed and waits for a retry');
    const token = await classicToken(server, 'carol', ['notifications', 'repo']);
    assert.deepEqual(await threadTitles(server, token), Array.from({ length: ROUNDS }, (_, i) => `round ${i}`).sort());
  });
});
