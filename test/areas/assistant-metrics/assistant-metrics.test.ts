// Assistant metrics end to end: closed down at the configured date (404 naming the date and the
// replacement, with Sunset), and while open: day records as the spec's schema, the 100-day window
// ending yesterday, the five-licensed-members threshold, the metrics policy, pages of days, the team
// form, the operator route and seed key, and the permission matrix.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Octokit } from '@octokit/core';
import { loadSeed } from '../../../src/admin/seed.ts';
import { AREAS } from '../../../src/app.ts';
import { appJwt, appUserToken, classicToken, createApp, fineGrainedToken, installationToken, oauthToken } from '../../helpers/credentials.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

const DAY_MS = 86_400_000;
const ORG = '/orgs/acme/assistant/metrics';
const TEAM = '/orgs/acme/team/reviewers/assistant/metrics';

/** A fully spelled-out day record, as the spec's schema has it. */
function fullRecord(date: string) {
  return {
    date,
    total_active_users: 24,
    total_engaged_users: 20,
    assistant_ide_code_completions: {
      total_engaged_users: 20,
      languages: [{ name: 'python', total_engaged_users: 10 }],
      editors: [{
        name: 'vscode',
        total_engaged_users: 13,
        models: [{
          name: 'default',
          is_custom_model: false,
          custom_model_training_date: null,
          total_engaged_users: 13,
          languages: [{
            name: 'python', total_engaged_users: 6, total_code_suggestions: 249, total_code_acceptances: 123,
            total_code_lines_suggested: 225, total_code_lines_accepted: 135,
          }],
        }],
      }],
    },
    assistant_ide_chat: {
      total_engaged_users: 13,
      editors: [{
        name: 'vscode',
        total_engaged_users: 13,
        models: [{
          name: 'a-custom-model', is_custom_model: true, custom_model_training_date: '2024-02-01', total_engaged_users: 13,
          total_chats: 45, total_chat_insertion_events: 12, total_chat_copy_events: 16,
        }],
      }],
    },
    assistant_dotcom_chat: {
      total_engaged_users: 14,
      models: [{ name: 'default', is_custom_model: false, custom_model_training_date: null, total_engaged_users: 14, total_chats: 38 }],
    },
    assistant_dotcom_pull_requests: {
      total_engaged_users: 12,
      repositories: [{
        name: 'acme/widgets',
        total_engaged_users: 8,
        models: [{ name: 'default', is_custom_model: false, custom_model_training_date: null, total_pr_summaries_created: 6, total_engaged_users: 8 }],
      }],
    },
  };
}

/** What a day sent with only its date and totals answers: every block present and empty. */
function sparseRecord(date: string, active: number) {
  return {
    date,
    total_active_users: active,
    total_engaged_users: 0,
    assistant_ide_code_completions: { total_engaged_users: 0, languages: [], editors: [] },
    assistant_ide_chat: { total_engaged_users: 0, editors: [] },
    assistant_dotcom_chat: { total_engaged_users: 0, models: [] },
    assistant_dotcom_pull_requests: { total_engaged_users: 0, repositories: [] },
  };
}

async function setUp(server: TestServer) {
  for (const login of ['mona', 'hubot', 'octo', 'enty', 'stranger']) await server.admin('POST', '/users', { login });
  await server.admin('POST', '/enterprises', { slug: 'acme-corp', owners: ['enty'] });
  await server.admin('POST', '/orgs', { login: 'acme', enterprise: 'acme-corp', owners: ['mona'], members: ['hubot'], billing_managers: ['octo'] });
  await server.admin('POST', '/orgs', { login: 'outside', owners: ['mona'] });
  await server.admin('POST', '/orgs/acme/teams', { slug: 'reviewers', members: ['hubot'] });
}

const serverDay = async (server: TestServer, offsetDays: number) =>
  new Date(Math.floor(Date.parse((await server.admin('GET', '/clock')).now) / DAY_MS) * DAY_MS + offsetDays * DAY_MS).toISOString().slice(0, 10);

describe('closed down (the default closing date, 2026-04-02, has passed)', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await setUp(server);
  });
  after(() => server.close());

  test('both endpoints answer 404 naming the date and the replacement, with Sunset', async () => {
    const owner = await classicToken(server, 'mona', ['read:org']);
    for (const path of [ORG, TEAM, '/orgs/nope/assistant/metrics']) {
      const response = await server.api('GET', path, { token: owner });
      assert.equal(response.status, 404, path);
      assert.match(response.body.message, /closed down on 2026-04-02/);
      assert.match(response.body.message, /usage metrics API/);
      assert.equal(response.headers.get('sunset'), 'Thu, 02 Apr 2026 00:00:00 GMT');
      assert.deepEqual(Object.keys(response.body).sort(), ['documentation_url', 'message', 'status']);
    }
  });
});

describe('kept open with CODEHOST_ASSISTANT_METRICS_SUNSET=never', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ CODEHOST_ASSISTANT_METRICS_SUNSET: 'never' });
    await setUp(server);
  });
  after(() => server.close());

  test('answers without a Sunset header, also far in the future', async () => {
    const owner = await classicToken(server, 'mona', ['read:org']);
    await server.advance(5 * 365 * 86_400);
    const response = await server.api('GET', ORG, { token: owner });
    assert.equal(response.status, 200);
    assert.deepEqual(response.body, []);
    assert.equal(response.headers.get('sunset'), null);
  });
});

describe('open until a closing date after the test clock', () => {
  let server: TestServer;
  let owner: string;
  let sunset: string;
  const day: Record<number, string> = {};

  before(async () => {
    // The test clock starts at the real time: the closing date is 30 days after today, and the last
    // test moves the clock past it.
    sunset = new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS + 30 * DAY_MS).toISOString().slice(0, 10);
    server = await startServer({ CODEHOST_ASSISTANT_METRICS_SUNSET: sunset });
    await setUp(server);
    owner = await classicToken(server, 'mona', ['read:org']);
    for (const offset of [-101, -100, -50, -10, -3, -2, -1, 0, 1]) day[offset] = await serverDay(server, offset);
    const stored = await server.admin('PUT', '/orgs/acme/assistant', {
      metrics_policy: 'enabled',
      days: [
        { ...fullRecord(day[-1]!), licensed_members: 5 },
        { date: day[-2]!, total_active_users: 4, licensed_members: 4 },
        { date: day[-3]!, total_active_users: 7, licensed_members: 12 },
        { date: day[-10]!, total_active_users: 8, licensed_members: 9 },
        { date: day[-50]!, total_active_users: 9, licensed_members: 9 },
        { date: day[-100]!, total_active_users: 10, licensed_members: 9 },
        { date: day[-101]!, total_active_users: 11, licensed_members: 9 },
        { date: day[0]!, total_active_users: 12, licensed_members: 9 },
        { date: day[1]!, total_active_users: 13, licensed_members: 9 },
        { date: day[-1]!, team: 'reviewers', total_active_users: 3, licensed_members: 6 },
        { date: day[-2]!, team: 'Reviewers', total_active_users: 2, licensed_members: 2 },
      ],
    });
    assert.deepEqual(stored, { metrics_policy: 'enabled', days: 11 });
  });
  after(() => server.close());

  test('day records as the spec has them: the last 100 days up to yesterday with five or more licensed members', async () => {
    const response = await server.api('GET', ORG, { token: owner });
    assert.equal(response.status, 200);
    assert.deepEqual(response.body.map((d: { date: string }) => d.date), [day[-100], day[-50], day[-10], day[-3], day[-1]]);
    assert.deepEqual(response.body.at(-1), fullRecord(day[-1]!));
    assert.deepEqual(response.body[0], sparseRecord(day[-100]!, 10));
    assert.equal(response.headers.get('sunset'), new Date(`${sunset}T00:00:00Z`).toUTCString());
    assert.equal(response.headers.get('link'), null);
  });

  test('since and until select days; bad values are 422s', async () => {
    const since = `${day[-10]}T12:00:00Z`;
    let response = await server.api('GET', `${ORG}?since=${since}`, { token: owner });
    assert.deepEqual(response.body.map((d: { date: string }) => d.date), [day[-10], day[-3], day[-1]]);
    response = await server.api('GET', `${ORG}?since=${day[-50]}T00:00:00Z&until=${day[-3]}T00:00:00Z`, { token: owner });
    assert.deepEqual(response.body.map((d: { date: string }) => d.date), [day[-50], day[-10], day[-3]]);
    response = await server.api('GET', `${ORG}?until=${day[1]}T00:00:00Z`, { token: owner });
    assert.equal(response.body.at(-1).date, day[-1], 'nothing after yesterday');
    response = await server.api('GET', `${ORG}?since=${day[-100]}`, { token: owner });
    assert.equal(response.status, 200, 'exactly 100 days back is allowed');

    for (const query of [
      `since=${day[-101]}T00:00:00Z`,
      `since=${day[-3]}T00:00:00Z&until=${day[-10]}T00:00:00Z`,
      'since=yesterday',
      'since=2026-02-30T00:00:00Z',
      'until=2026-13-01',
      'per_page=0',
    ]) {
      const bad = await server.api('GET', `${ORG}?${query}`, { token: owner });
      assert.equal(bad.status, 422, query);
      assert.equal(bad.body.message, 'Validation Failed', query);
    }
  });

  test('pages of days: per_page defaults to 100, caps at 100, Link names the pages', async () => {
    const first = await server.api('GET', `${ORG}?per_page=2`, { token: owner });
    assert.deepEqual(first.body.map((d: { date: string }) => d.date), [day[-100], day[-50]]);
    assert.match(first.headers.get('link') ?? '', /per_page=2&page=2>; rel="next".*page=3>; rel="last"/);
    const last = await server.api('GET', `${ORG}?per_page=2&page=3`, { token: owner });
    assert.deepEqual(last.body.map((d: { date: string }) => d.date), [day[-1]]);
    const capped = await server.api('GET', `${ORG}?per_page=500`, { token: owner });
    assert.equal(capped.body.length, 5);
  });

  test('the team form answers the team\'s own days', async () => {
    const response = await server.api('GET', TEAM.replace('reviewers', 'REVIEWERS'), { token: owner });
    assert.equal(response.status, 200);
    assert.deepEqual(response.body, [sparseRecord(day[-1]!, 3)]);
    assert.equal((await server.api('GET', '/orgs/acme/team/nope/assistant/metrics', { token: owner })).status, 404);
  });

  test('@octokit/core reads the metrics', async () => {
    const octokit = new Octokit({ baseUrl: server.apiUrl, auth: owner, request: { fetch } });
    const response = await octokit.request('GET /orgs/{org}/assistant/metrics', { org: 'acme', since: `${day[-3]}T00:00:00Z` });
    assert.equal(response.status, 200);
    assert.equal((response.data as unknown[]).length, 2);
    assert.equal(response.headers['x-accepted-oauth-scopes'], 'admin:enterprise, admin:org, manage_billing:assistant, manage_billing:enterprise, read:enterprise, read:org, write:org');
    assert.equal(response.headers['x-accepted-vendor-permissions'], 'organization_assistant_business=read; organization_administration=read');
  });

  test('the operator route validates everything before replacing anything', async () => {
    const cases: [unknown, number][] = [
      [{ days: [{ total_active_users: 1, licensed_members: 5 }] }, 422],
      [{ days: [{ date: '2026-02-30', licensed_members: 5 }] }, 422],
      [{ days: [{ date: 'soon', licensed_members: 5 }] }, 422],
      [{ days: [{ date: day[-1], licensed_members: -1 }] }, 422],
      [{ days: [{ date: day[-1] }] }, 422],
      [{ days: [{ date: day[-1], licensed_members: 5, total_active_users: 'many' }] }, 422],
      [{ days: [{ date: day[-1], licensed_members: 5 }, { date: day[-1], licensed_members: 6 }] }, 422],
      [{ days: [{ date: day[-1], licensed_members: 5, team: 'nope' }] }, 404],
      [{ metrics_policy: 'sometimes' }, 422],
    ];
    for (const [body, status] of cases) {
      const response = await server.adminRaw('PUT', '/orgs/acme/assistant', body);
      assert.equal(response.status, status, JSON.stringify(body));
    }
    assert.equal((await server.adminRaw('PUT', '/orgs/nope/assistant', {})).status, 404);
    assert.equal((await server.adminRaw('PUT', '/orgs/mona/assistant', {})).status, 404);
    const response = await server.api('GET', ORG, { token: owner });
    assert.equal(response.body.length, 5, 'the stored days are unchanged');
  });

  test('a disabled metrics policy is a 422 on both forms', async () => {
    assert.deepEqual(await server.admin('PUT', '/orgs/acme/assistant', { metrics_policy: 'disabled' }), { metrics_policy: 'disabled', days: 11 });
    for (const path of [ORG, TEAM]) {
      const response = await server.api('GET', path, { token: owner });
      assert.equal(response.status, 422, path);
      assert.match(response.body.message, /disabled/);
    }
    await server.admin('PUT', '/orgs/acme/assistant', { metrics_policy: 'enabled' });
    assert.equal((await server.api('GET', ORG, { token: owner })).status, 200);
  });

  test('permission matrix', async () => {
    const business = await createApp(server, 'metrics-business', { organization_assistant_business: 'read' });
    const businessInstallation = await installationToken(server, business, 'acme');
    const admin = await createApp(server, 'metrics-admin', { organization_administration: 'read' });
    const adminInstallation = await installationToken(server, admin, 'acme');
    const unrelated = await createApp(server, 'metrics-unrelated', { metadata: 'read' });
    const unrelatedInstallation = await installationToken(server, unrelated, 'acme');
    const elsewhere = await createApp(server, 'metrics-elsewhere', { organization_assistant_business: 'read' });
    const elsewhereInstallation = await installationToken(server, elsewhere, 'outside');
    const oauthApp = await createApp(server, 'metrics-oauth', {});
    type Auth = { token?: string; authorization?: string };
    const classic = async (login: string, scopes: string[]) => ({ token: await classicToken(server, login, scopes) });
    const fine = async (login: string, resourceOwner: string, permissions: Record<string, 'read' | 'write'>) =>
      ({ token: await fineGrainedToken(server, login, resourceOwner, permissions) });

    // [organization form, team form]
    const cases: [string, () => Promise<Auth>, [number, number]][] = [
      ['anonymous', async () => ({}), [401, 401]],
      ['classic owner read:org', () => classic('mona', ['read:org']), [200, 200]],
      ['classic owner admin:org', () => classic('mona', ['admin:org']), [200, 200]],
      ['classic owner manage_billing:assistant', () => classic('mona', ['manage_billing:assistant']), [200, 200]],
      ['classic owner read:enterprise', () => classic('mona', ['read:enterprise']), [200, 200]],
      ['classic owner repo only', () => classic('mona', ['repo']), [403, 403]],
      ['classic billing manager', () => classic('octo', ['manage_billing:assistant']), [200, 404]],
      ['classic enterprise owner', () => classic('enty', ['read:enterprise']), [200, 404]],
      ['classic member', () => classic('hubot', ['read:org']), [404, 404]],
      ['classic stranger', () => classic('stranger', ['read:org']), [404, 404]],
      ['oauth owner', async () => ({ token: await oauthToken(server, oauthApp, 'mona', ['read:org']) }), [200, 200]],
      ['fine-grained owner assistant business', () => fine('mona', 'acme', { organization_assistant_business: 'read' }), [200, 200]],
      ['fine-grained owner administration', () => fine('mona', 'acme', { organization_administration: 'read' }), [200, 200]],
      ['fine-grained owner without the permission', () => fine('mona', 'acme', { metadata: 'read' }), [403, 403]],
      ['fine-grained owner for another resource owner', () => fine('mona', 'outside', { organization_assistant_business: 'read' }), [404, 404]],
      ['fine-grained billing manager', () => fine('octo', 'acme', { organization_assistant_business: 'read' }), [200, 404]],
      ['fine-grained enterprise owner', () => fine('enty', 'acme', { organization_assistant_business: 'read' }), [200, 404]],
      ['fine-grained member', () => fine('hubot', 'acme', { organization_assistant_business: 'read' }), [404, 404]],
      ['installation with assistant business', async () => ({ token: businessInstallation }), [200, 200]],
      ['installation with administration', async () => ({ token: adminInstallation }), [200, 200]],
      ['installation without the permission', async () => ({ token: unrelatedInstallation }), [403, 403]],
      ['installation on another organization', async () => ({ token: elsewhereInstallation }), [404, 404]],
      ['app user owner', async () => ({ token: await appUserToken(server, business, 'mona') }), [200, 200]],
      ['app user member', async () => ({ token: await appUserToken(server, business, 'hubot') }), [404, 404]],
      ['app JWT', async () => ({ authorization: `Bearer ${await appJwt(server, business)}` }), [403, 403]],
    ];
    for (const [name, credential, expected] of cases) {
      const auth = await credential();
      const statuses = [(await server.api('GET', ORG, auth)).status, (await server.api('GET', TEAM, auth)).status];
      assert.deepEqual(statuses, expected, name);
    }
  });

  test('the seed key `assistant` sets policy and days', async () => {
    await server.admin('POST', '/orgs', { login: 'seeded', owners: ['mona'] });
    const seed = { assistant: [{ org: 'seeded', metrics_policy: 'enabled', days: [{ date: day[-2], licensed_members: 8, total_active_users: 8 }] }] };
    await loadSeed(server.server.ctx, AREAS, seed);
    await loadSeed(server.server.ctx, AREAS, seed);
    const response = await server.api('GET', '/orgs/seeded/assistant/metrics', { token: owner });
    assert.deepEqual(response.body, [sparseRecord(day[-2]!, 8)]);
    await assert.rejects(loadSeed(server.server.ctx, AREAS, { assistant: [{ org: 'seeded', days: [{ date: 'x' }] }] }), (error: { status?: number }) => error.status === 422);
  });

  test('past the closing date the endpoints close down', async () => {
    const now = Date.parse((await server.admin('GET', '/clock')).now);
    await server.advance(Math.ceil((Date.parse(`${sunset}T00:00:00Z`) - now) / 1000) - 5);
    assert.equal((await server.api('GET', ORG, { token: owner })).status, 200, 'still open seconds before');
    await server.advance(5);
    for (const path of [ORG, TEAM]) {
      const response = await server.api('GET', path, { token: owner });
      assert.equal(response.status, 404, path);
      assert.match(response.body.message, new RegExp(`closed down on ${sunset}`));
      assert.equal(response.headers.get('sunset'), new Date(`${sunset}T00:00:00Z`).toUTCString());
    }
  });
});
