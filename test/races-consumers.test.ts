// Background work survives what happened meanwhile (issue 37): an outbox row consumed after some
// of the users, repositories or apps it concerns were deleted delivers to those that remain, and
// requests racing a deletion get the platform's answers (a 404 for what is gone), never a 5xx or a
// 422. The deletions come before the queue is drained (deterministic), or, for requests, in rounds of
// the same requests sent at once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { classicToken } from './helpers/credentials.ts';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';
import { startServer, type TestServer } from './helpers/server.ts';

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
