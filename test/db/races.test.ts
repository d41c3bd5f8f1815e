// Writes that race (issue 12): concurrent requests over real HTTP that each read something and then
// write from it. The database makes each safe (an atomic counter, a constraint, ON CONFLICT, a row
// lock), so every request gets its right answer and nothing is doubled, lost or skipped.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { engine } from '../helpers/database.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { classicToken } from '../helpers/credentials.ts';

const CONCURRENCY = 64;
const REVIEWERS = Array.from({ length: 8 }, (_, i) => `reviewer${i}`);

describe('issue numbers', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ CODEHOST_RATE_LIMIT_ANONYMOUS: '1000' });
    await server.admin('POST', '/users', { login: 'mona' });
    await server.admin('POST', '/repos', { owner: 'mona', name: 'busy' });
    await server.admin('POST', '/repos', { owner: 'mona', name: 'quiet' });
  });
  after(() => server?.close());

  test(`${CONCURRENCY} concurrent issues and pull requests in one repository get the numbers 1..${CONCURRENCY}`, async () => {
    const responses = await Promise.all(
      Array.from({ length: CONCURRENCY }, (_, i) =>
        server.adminRaw('POST', '/repos/mona/busy/issues', { author: 'mona', title: `race ${i}`, pull_request: i % 3 === 0 }),
      ),
    );
    assert.deepEqual(responses.map((r) => r.status).filter((s) => s !== 201), [], responses.find((r) => r.status !== 201)?.text);
    const numbers = responses.map((r) => r.body.number as number).sort((a, b) => a - b);
    assert.deepEqual(numbers, Array.from({ length: CONCURRENCY }, (_, i) => i + 1));

    // The public API shows each of them under its number, and the next one continues the sequence.
    for (const response of responses) {
      const shown = await server.api('GET', `/repos/mona/busy/issues/${response.body.number}`);
      assert.equal(shown.status, 200, shown.text);
      assert.equal(shown.body.title, response.body.title);
    }
    const next = await server.admin('POST', '/repos/mona/busy/issues', { author: 'mona', title: 'after the race' });
    assert.equal(next.number, CONCURRENCY + 1);
    // Another repository has its own sequence.
    const other = await server.admin('POST', '/repos/mona/quiet/issues', { author: 'mona', title: 'first' });
    assert.equal(other.number, 1);
  });

  test('a creation that fails does not use up a number', async () => {
    const refused = await server.adminRaw('POST', '/repos/mona/quiet/issues', { author: 'mona', title: 'x', assignees: ['nobody-here'] });
    assert.equal(refused.status, 404, refused.text);
    const next = await server.admin('POST', '/repos/mona/quiet/issues', { author: 'mona', title: 'second' });
    assert.equal(next.number, 2);
  });
});

describe('issue changes', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ CODEHOST_RATE_LIMIT_ANONYMOUS: '1000' });
    for (const login of ['mona', 'hubot', 'octo', ...REVIEWERS]) await server.admin('POST', '/users', { login });
    await server.admin('POST', '/repos', { owner: 'mona', name: 'busy' });
  });
  after(() => server?.close());

  const events = async (number: number) => {
    const response = await server.api('GET', `/repos/mona/busy/issues/${number}/events?per_page=100`);
    assert.equal(response.status, 200, response.text);
    return (response.body as { event: string }[]).map((e) => e.event).sort();
  };
  const outbox = async (number: number) => {
    const rows = await server.server.ctx.db.kysely
      .selectFrom('activity_outbox')
      .innerJoin('issues', 'issues.id', 'activity_outbox.issue_id')
      .select(['activity_outbox.action'])
      .where('issues.number', '=', number)
      .execute();
    return rows.map((r) => r.action).sort();
  };
  const concurrently = async (count: number, path: string, body: unknown) => {
    const responses = await Promise.all(Array.from({ length: count }, () => server.adminRaw('PATCH', path, body)));
    assert.deepEqual(responses.map((r) => r.status).filter((s) => s !== 200), [], responses.find((r) => r.status !== 200)?.text);
    return responses;
  };

  test('concurrent assignments of the same user assign once (one event, one webhook row)', async () => {
    const issue = await server.admin('POST', '/repos/mona/busy/issues', { author: 'mona', title: 'assign me' });
    const responses = await concurrently(CONCURRENCY / 4, `/repos/mona/busy/issues/${issue.number}`, { actor: 'mona', assignees: ['hubot'] });
    for (const response of responses) assert.deepEqual(response.body.assignees.map((u: { login: string }) => u.login), ['hubot']);
    assert.deepEqual(await events(issue.number), ['assigned']);
    assert.deepEqual(await outbox(issue.number), ['assigned', 'opened']);
  });

  test('concurrent closes close once', async () => {
    const issue = await server.admin('POST', '/repos/mona/busy/issues', { author: 'mona', title: 'close me' });
    const responses = await concurrently(CONCURRENCY / 4, `/repos/mona/busy/issues/${issue.number}`, { actor: 'mona', state: 'closed' });
    for (const response of responses) assert.equal(response.body.state, 'closed');
    assert.deepEqual(await events(issue.number), ['closed']);
    assert.deepEqual(await outbox(issue.number), ['closed', 'opened']);
  });

  test('concurrent review requests of the same reviewer request once', async () => {
    const pull = await server.admin('POST', '/repos/mona/busy/issues', { author: 'mona', title: 'review me', pull_request: true });
    await concurrently(CONCURRENCY / 4, `/repos/mona/busy/issues/${pull.number}`, { actor: 'mona', reviewers: ['octo'] });
    const shown = await server.api('GET', `/repos/mona/busy/pulls/${pull.number}`);
    assert.deepEqual(shown.body.requested_reviewers.map((u: { login: string }) => u.login), ['octo']);
    assert.deepEqual(await events(pull.number), ['review_requested']);
    assert.deepEqual(await outbox(pull.number), ['opened', 'review_requested']);
  });

  test('concurrent POSTs and DELETEs of different reviewers through the public API each keep their change: none is lost', async () => {
    const pull = await server.admin('POST', '/repos/mona/busy/issues', { author: 'mona', title: 'review us', pull_request: true });
    const path = `/repos/mona/busy/pulls/${pull.number}/requested_reviewers`;
    const token = await classicToken(server, 'mona', ['repo']);
    const requested = async () => (await server.api('GET', path, { token })).body.users.map((u: { login: string }) => u.login).sort();
    const added = await Promise.all(REVIEWERS.map((login) => server.api('POST', path, { token, body: { reviewers: [login] } })));
    assert.deepEqual(added.map((r) => r.status), REVIEWERS.map(() => 201), added.find((r) => r.status !== 201)?.text);
    assert.deepEqual(await requested(), REVIEWERS);
    const gone = REVIEWERS.slice(0, 6);
    const removed = await Promise.all(gone.map((login) => server.api('DELETE', path, { token, body: { reviewers: [login] } })));
    assert.deepEqual(removed.map((r) => r.status), gone.map(() => 200), removed.find((r) => r.status !== 200)?.text);
    assert.deepEqual(await requested(), REVIEWERS.slice(6));
    const names = (await events(pull.number));
    assert.equal(names.filter((e) => e === 'review_requested').length, REVIEWERS.length);
    assert.equal(names.filter((e) => e === 'review_request_removed').length, gone.length);
  });
});

describe('names that must be unique', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ CODEHOST_RATE_LIMIT_ANONYMOUS: '1000' });
    await server.admin('POST', '/users', { login: 'mona' });
    await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'] });
  });
  after(() => server?.close());

  /** Runs the same creation concurrently: exactly one succeeds, every other one is refused with `refused`. */
  const once = async (create: () => Promise<{ status: number; text: string }>, created: number, refused: number) => {
    const responses = await Promise.all(Array.from({ length: CONCURRENCY / 4 }, create));
    const statuses = responses.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === created).length, 1, responses.map((r) => `${r.status} ${r.text}`).join('\n'));
    assert.equal(statuses.filter((s) => s === refused).length, statuses.length - 1, responses.map((r) => `${r.status} ${r.text}`).join('\n'));
  };

  test('concurrent creations of one user, organization, team, repository or enterprise: one 201, the others 422', async () => {
    await once(() => server.adminRaw('POST', '/users', { login: 'Twin' }), 201, 422);
    await once(() => server.adminRaw('POST', '/orgs', { login: 'twin-org' }), 201, 422);
    await once(() => server.adminRaw('POST', '/orgs/acme/teams', { slug: 'twins', members: ['mona'] }), 201, 422);
    await once(() => server.adminRaw('POST', '/repos', { owner: 'acme', name: 'twin' }), 201, 422);
    await once(() => server.adminRaw('POST', '/enterprises', { slug: 'twin-ent', owners: ['mona'] }), 201, 422);
  });

  test('concurrent creations of one issue type or code security configuration name: one created, the others 422', async () => {
    const token = (await server.admin('POST', '/tokens', { login: 'mona', kind: 'classic', scopes: ['admin:org', 'repo', 'write:org'] })).token;
    await once(() => server.api('POST', '/orgs/acme/issue-types', { token, body: { name: 'Twin', is_enabled: true } }), 200, 422);
    await once(() => server.api('POST', '/orgs/acme/code-security/configurations', { token, body: { name: 'twin', description: 'one of two' } }), 201, 422);
  });
});

describe('replacing an organization\'s records', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await server.admin('POST', '/users', { login: 'mona' });
    await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'] });
    await server.admin('POST', '/orgs/acme/teams', { slug: 'reviewers', members: ['mona'] });
  });
  after(() => server?.close());

  test('concurrent replacements of assistant metrics days: each answers 200 and one of them is what stays', async () => {
    // Without a policy in the body (its upsert would lock the organization's policy row first).
    const body = (i: number) => ({
      days: Array.from({ length: 1 + (i % 4) }, (_, d) => ({ date: `2026-01-0${d + 1}`, total_active_users: i, licensed_members: 5 }))
        .concat([{ date: '2026-01-01', team: 'reviewers', total_active_users: i, licensed_members: 5 } as never]),
    });
    const responses = await Promise.all(Array.from({ length: CONCURRENCY / 4 }, (_, i) => server.adminRaw('PUT', '/orgs/acme/assistant', body(i))));
    assert.deepEqual(responses.map((r) => r.status).filter((s) => s !== 200), [], responses.find((r) => r.status !== 200)?.text);
    const db = server.server.ctx.db.kysely;
    const days = await db.selectFrom('assistant_metrics_days').select(['date', 'metrics']).orderBy('date').execute();
    // One request's days, whole: as many as it sent, all with its total.
    const totals = new Set(days.map((d) => JSON.parse(d.metrics).total_active_users));
    assert.equal(totals.size, 1, JSON.stringify(days));
    const winner = [...totals][0] as number;
    assert.equal(days.length, 1 + (winner % 4));
    const teamDays = await db.selectFrom('assistant_metrics_team_days').select('metrics').execute();
    assert.deepEqual(teamDays.map((d) => JSON.parse(d.metrics).total_active_users), [winner]);
  });
});

describe('memberships', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    for (const login of ['mona', 'hubot']) await server.admin('POST', '/users', { login });
    await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'] });
  });
  after(() => server?.close());

  test('concurrent role changes leave one of owner and member, never both', async () => {
    for (let round = 0; round < 3; round++) {
      const responses = await Promise.all(Array.from({ length: CONCURRENCY / 4 }, (_, i) =>
        server.adminRaw('PUT', '/orgs/acme/members/hubot', { role: i % 2 ? 'owner' : 'member' })));
      assert.deepEqual(responses.map((r) => r.status).filter((s) => s !== 200), [], responses.find((r) => r.status !== 200)?.text);
      const roles = await server.server.ctx.db.kysely
        .selectFrom('org_memberships')
        .innerJoin('users', 'users.id', 'org_memberships.user_id')
        .select('org_memberships.role')
        .where('users.login', '=', 'hubot')
        .execute();
      assert.equal(roles.length, 1, JSON.stringify(roles));
    }
  });
});

describe('app token resets', () => {
  let server: TestServer;
  let app: { client_id: string; client_secret: string };
  const basic = () => `Basic ${Buffer.from(`${app.client_id}:${app.client_secret}`).toString('base64')}`;
  const call = (method: string, accessToken: string) =>
    server.api(method, `/applications/${app.client_id}/token`, { authorization: basic(), body: { access_token: accessToken } });
  before(async () => {
    server = await startServer({ CODEHOST_RATE_LIMIT_FAILED_LOGINS: '1000' });
    await server.admin('POST', '/users', { login: 'mona' });
    app = await server.admin('POST', '/apps', { slug: 'resetter' });
  });
  after(() => server?.close());

  test('concurrent resets of one token: one gets the new value, the others 404, and the value it got works', async () => {
    const { token } = await server.admin('POST', '/apps/resetter/authorizations', { login: 'mona', scopes: ['repo'] });
    const responses = await Promise.all(Array.from({ length: CONCURRENCY / 4 }, () => call('PATCH', token)));
    const statuses = responses.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 200).length, 1, responses.map((r) => `${r.status} ${r.text}`).join('\n'));
    assert.equal(statuses.filter((s) => s === 404).length, statuses.length - 1);
    const fresh = responses.find((r) => r.status === 200)!.body.token as string;
    assert.equal((await call('POST', fresh)).status, 200);
    assert.equal((await call('POST', token)).status, 404);
  });

  test('a reset racing a delete of the token answers 200 or 404, never 500', async () => {
    for (let round = 0; round < 5; round++) {
      const { token } = await server.admin('POST', '/apps/resetter/authorizations', { login: 'mona', scopes: ['repo'] });
      const responses = await Promise.all([call('DELETE', token), call('PATCH', token), call('PATCH', token), call('DELETE', token)]);
      for (const response of responses) assert.ok([200, 204, 404].includes(response.status), `${response.status} ${response.text}`);
    }
  });
});

describe('writes and a migration locking the repository', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ CODEHOST_DATABASE_POOL_SIZE: '8' });
    await server.admin('POST', '/users', { login: 'mona' });
    await server.admin('POST', '/repos', { owner: 'mona', name: 'moving' });
  });
  after(() => server?.close());

  // PostgreSQL: holding the issue counter table makes issue creations wait inside their transactions,
  // after the repository was found unlocked; a migration then locks the repository. SQLite runs one
  // transaction at a time, so there the race cannot happen.
  test('an issue creation does not commit into a repository a migration locked after the creation checked it', { skip: engine !== 'postgres' }, async () => {
    const token = (await server.admin('POST', '/tokens', { login: 'mona', kind: 'classic', scopes: ['repo'] })).token;
    const holder = new pg.Client({ connectionString: server.server.ctx.config.databaseUrl! });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('lock table issue_numbers in share row exclusive mode');
      const creations = Array.from({ length: 2 }, (_, i) => server.adminRaw('POST', '/repos/mona/moving/issues', { author: 'mona', title: `during ${i}` }));
      await new Promise((r) => setTimeout(r, 500));
      let lockedAt: number | null = null;
      const start = server.api('POST', '/user/migrations', { token, body: { repositories: ['moving'], lock_repositories: true } }).then((response) => {
        lockedAt = Date.now();
        return response;
      });
      await new Promise((r) => setTimeout(r, 1_500));
      const releasedAt = Date.now();
      await holder.query('commit');
      const created = await Promise.all(creations);
      const started = await start;
      assert.equal(started.status, 201, started.text);
      for (const response of created) {
        // Either the creation committed before the lock (the migration waited for it), or it is refused.
        if (response.status === 201) assert.ok(lockedAt === null || lockedAt >= releasedAt, 'an issue was created in a repository locked before it committed');
        else assert.equal(response.status, 403, response.text);
      }
    } finally {
      await holder.end();
    }
  });
});

describe('deletions of one repository', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ CODEHOST_DATABASE_POOL_SIZE: '8' });
    await server.admin('POST', '/users', { login: 'mona' });
    await server.admin('POST', '/users', { login: 'hubot' });
  });
  after(() => server?.close());

  // Each deletion reads the repository, records its activity, tells the areas, then deletes the row
  // (its cascades lock the rows that point at it): two at once took those locks in different orders.
  test('2 to 4 concurrent deletions of one repository: one 204, the others 404, one repository.deleted activity', async () => {
    const wrong: string[] = [];
    for (let round = 0; round < 12; round++) {
      const count = 2 + (round % 3);
      const name = `doomed-${round}`;
      await server.admin('POST', '/repos', { owner: 'mona', name });
      await server.admin('PUT', `/repos/mona/${name}/collaborators/hubot`, { permission: 'push' });
      await server.admin('POST', `/repos/mona/${name}/issues`, { author: 'mona', title: 'in the way' });
      const responses = await Promise.all(Array.from({ length: count }, () => server.adminRaw('DELETE', `/repos/mona/${name}`)));
      const statuses = responses.map((r) => r.status).sort();
      if (statuses.join() !== [204, ...Array.from({ length: count - 1 }, () => 404)].join()) wrong.push(`round ${round}: ${responses.map((r) => `${r.status} ${r.text}`).join(' | ')}`);
    }
    assert.deepEqual(wrong, []);
    const deleted = await server.server.ctx.db.kysely.selectFrom('activity_outbox').select('repository_id').where('name', '=', 'repository.deleted').execute();
    assert.equal(deleted.length, 12, 'one repository.deleted activity per repository deleted');
  });
});
