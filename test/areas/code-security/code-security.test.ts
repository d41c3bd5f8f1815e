// Code security configurations of an organization and a repository's configuration, end to end:
// the built-in global configuration, create / update / delete rules, attach with every scope,
// re-attach, detach, delete while attached, licenses, defaults for new repositories, cursor
// pagination and conditional requests. One organization per test keeps the tests independent.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Octokit } from '@octokit/core';
import { loadSeed } from '../../../src/admin/seed.ts';
import { AREAS } from '../../../src/app.ts';
import { classicToken } from '../../helpers/credentials.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

let server: TestServer;
let owner: string;
let ownerToken: string;

const GLOBAL_ID = 1;

before(async () => {
  server = await startServer();
  for (const login of ['olivia', 'sam', 'mel', 'otto']) await server.admin('POST', '/users', { login });
  ownerToken = await classicToken(server, 'olivia', ['admin:org', 'repo']);
  owner = 'olivia';
});
after(() => server.close());

type Visibility = 'public' | 'private' | 'internal';

/** A new organization owned by olivia with some repositories; returns the repository ids by name. */
async function organization(login: string, repos: Record<string, Visibility> = {}, extra: Record<string, unknown> = {}): Promise<Record<string, number>> {
  await server.admin('POST', '/orgs', { login, owners: [owner], ...extra });
  const ids: Record<string, number> = {};
  for (const [name, visibility] of Object.entries(repos)) ids[name] = (await server.admin('POST', '/repos', { owner: login, name, visibility })).id;
  return ids;
}

const call = (method: string, path: string, body?: unknown, token = ownerToken, headers?: Record<string, string>) =>
  server.api(method, path, { token, body, headers });

async function create(org: string, body: Record<string, unknown>) {
  const response = await call('POST', `/orgs/${org}/code-security/configurations`, body);
  assert.equal(response.status, 201, response.text);
  return response.body;
}

async function attach(org: string, id: number, body: Record<string, unknown>) {
  const response = await call('POST', `/orgs/${org}/code-security/configurations/${id}/attach`, body);
  assert.equal(response.status, 202, response.text);
  assert.deepEqual(response.body, {});
}

/** The repository's configuration: `{status, id}`, or null on 204. */
async function repositoryConfiguration(org: string, repo: string) {
  const response = await call('GET', `/repos/${org}/${repo}/code-security-configuration`);
  if (response.status === 204) {
    assert.equal(response.text, '');
    return null;
  }
  assert.equal(response.status, 200, response.text);
  return { status: response.body.status as string, id: response.body.configuration.id as number };
}

/** The repositories attached to a configuration, as `name: status`. */
async function attached(org: string, id: number, query = '') {
  const response = await call('GET', `/orgs/${org}/code-security/configurations/${id}/repositories${query}`);
  assert.equal(response.status, 200, response.text);
  return Object.fromEntries(response.body.map((r: any) => [r.repository.name, r.status]));
}

/** Every effective feature a repository has (the public representation shows four of them). */
async function features(repositoryId: number): Promise<Record<string, string>> {
  const row = await server.server.ctx.db.kysely.selectFrom('repositories').select('security_and_analysis').where('id', '=', repositoryId).executeTakeFirstOrThrow();
  return JSON.parse(row.security_and_analysis);
}

async function securityAndAnalysis(org: string, repo: string) {
  return (await server.admin('GET', `/repos/${org}/${repo}`)).security_and_analysis;
}

describe('the global configuration', () => {
  test('is listed for every organization, filtered by target_type, and read-only', async () => {
    await organization('glob');
    const all = await call('GET', '/orgs/glob/code-security/configurations');
    assert.equal(all.status, 200);
    assert.deepEqual(all.body.map((c: any) => c.target_type), ['global']);
    const own = await create('glob', { name: 'Own' });
    const both = await call('GET', '/orgs/glob/code-security/configurations?target_type=all');
    assert.deepEqual(both.body.map((c: any) => c.id), [GLOBAL_ID, own.id]);
    const globals = await call('GET', '/orgs/glob/code-security/configurations?target_type=global');
    assert.deepEqual(globals.body.map((c: any) => c.id), [GLOBAL_ID]);
    assert.equal((await call('GET', '/orgs/glob/code-security/configurations?target_type=mine')).status, 422);

    const global = await call('GET', `/orgs/glob/code-security/configurations/${GLOBAL_ID}`);
    assert.equal(global.status, 200);
    assert.equal(global.body.target_type, 'global');
    assert.equal(global.body.url, `${server.server.ctx.urls.api}/orgs/glob/code-security/configurations/${GLOBAL_ID}`);

    const update = await call('PATCH', `/orgs/glob/code-security/configurations/${GLOBAL_ID}`, { description: 'mine now' });
    assert.equal(update.status, 409);
    assert.match(update.body.message, /Global configurations/);
    const remove = await call('DELETE', `/orgs/glob/code-security/configurations/${GLOBAL_ID}`);
    assert.equal(remove.status, 409);
    assert.equal((await call('GET', `/orgs/glob/code-security/configurations/${GLOBAL_ID}`)).body.description, global.body.description);
  });

  test('can be attached', async () => {
    const repos = await organization('globattach', { site: 'public' });
    await attach('globattach', GLOBAL_ID, { scope: 'all' });
    await server.drain();
    assert.deepEqual(await repositoryConfiguration('globattach', 'site'), { status: 'attached', id: GLOBAL_ID });
    assert.equal((await features(repos.site!)).secret_scanning, 'enabled');
  });
});

describe('create', () => {
  test('fills in the defaults and answers the whole configuration', async () => {
    await organization('defaults');
    const created = await create('defaults', { name: 'Baseline' });
    const enablement = Object.entries(created).filter(([key]) => !['id', 'target_type', 'name', 'description', 'enforcement', 'url', 'html_url', 'created_at', 'updated_at'].includes(key) && !key.endsWith('_options'));
    assert.equal(enablement.length, 19);
    for (const [key, value] of enablement) assert.equal(value, key === 'dependency_graph' ? 'enabled' : 'disabled', key);
    assert.equal(created.target_type, 'organization');
    assert.equal(created.description, '');
    assert.equal(created.enforcement, 'enforced');
    assert.deepEqual(created.dependency_graph_autosubmit_action_options, { labeled_runners: false });
    assert.deepEqual(created.code_scanning_default_setup_options, { runner_type: 'not_set', runner_label: null });
    assert.equal(created.code_scanning_options, null);
    assert.deepEqual(created.secret_scanning_delegated_bypass_options, { reviewers: [] });
    assert.match(created.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(created.updated_at, created.created_at);
    assert.match(created.html_url, /\/organizations\/defaults\/settings\/security_products\/configurations\/view\/\d+$/);
    assert.equal((await call('GET', `/orgs/defaults/code-security/configurations/${created.id}`)).text, JSON.stringify(created));
  });

  test('takes every field, the legacy advanced_security values and the organization-only fields', async () => {
    await organization('fields');
    const team = await server.admin('POST', '/orgs/fields/teams', { slug: 'security' });
    const created = await create('fields', {
      name: 'Everything',
      description: 'All of it',
      advanced_security: 'code_security',
      updater_alerts: 'enabled',
      updater_delegated_alert_dismissal: 'enabled',
      dependency_graph_autosubmit_action: 'enabled',
      dependency_graph_autosubmit_action_options: { labeled_runners: true },
      code_scanning_default_setup: 'enabled',
      code_scanning_default_setup_options: { runner_type: 'labeled', runner_label: 'code-scanning' },
      code_scanning_options: { allow_advanced: true },
      secret_scanning: 'not_set',
      secret_scanning_delegated_bypass: 'enabled',
      secret_scanning_delegated_bypass_options: { reviewers: [{ reviewer_id: team.id, reviewer_type: 'TEAM' }, { reviewer_id: 3, reviewer_type: 'ROLE', mode: 'EXEMPT' }] },
      enforcement: 'unenforced',
    });
    assert.equal(created.advanced_security, 'code_security');
    assert.equal(created.code_security, 'enabled', 'the legacy value turns its product on');
    assert.equal(created.secret_protection, 'disabled');
    assert.equal(created.updater_delegated_alert_dismissal, 'enabled');
    assert.equal(created.secret_scanning, 'not_set');
    assert.deepEqual(created.dependency_graph_autosubmit_action_options, { labeled_runners: true });
    assert.deepEqual(created.code_scanning_default_setup_options, { runner_type: 'labeled', runner_label: 'code-scanning' });
    assert.deepEqual(created.code_scanning_options, { allow_advanced: true });
    assert.deepEqual(created.secret_scanning_delegated_bypass_options.reviewers, [
      { security_configuration_id: created.id, reviewer_id: team.id, reviewer_type: 'TEAM', mode: 'ALWAYS' },
      { security_configuration_id: created.id, reviewer_id: 3, reviewer_type: 'ROLE', mode: 'EXEMPT' },
    ]);
    assert.equal(created.enforcement, 'unenforced');
    const secretProtection = await create('fields', { name: 'Secrets', advanced_security: 'secret_protection' });
    assert.equal(secretProtection.secret_protection, 'enabled');
    assert.equal(secretProtection.code_security, 'disabled');
  });

  test('refuses what the rules forbid, with 422 and nothing stored', async () => {
    await organization('rules');
    await organization('rules-other');
    const otherTeam = await server.admin('POST', '/orgs/rules-other/teams', { slug: 'elsewhere' });
    await create('rules', { name: 'Taken' });
    const cases: [string, unknown, string, string][] = [
      ['missing name', {}, 'name', 'missing_field'],
      ['blank name', { name: '   ' }, 'name', 'invalid'],
      ['long name', { name: 'x'.repeat(256) }, 'name', 'invalid'],
      ['unknown enablement value', { name: 'A', secret_scanning: 'on' }, 'secret_scanning', 'invalid'],
      ['unknown key', { name: 'A', dependabot_alerts: 'enabled' }, 'dependabot_alerts', 'invalid'],
      ['string for an object', { name: 'A', code_scanning_options: 'yes' }, 'code_scanning_options', 'invalid'],
      ['delegated dismissal without updater alerts', { name: 'A', updater_delegated_alert_dismissal: 'enabled' }, 'updater_delegated_alert_dismissal', 'custom'],
      ['labeled runners without a label', { name: 'A', code_scanning_default_setup_options: { runner_type: 'labeled' } }, 'code_scanning_default_setup_options.runner_label', 'missing_field'],
      ['a label without labeled runners', { name: 'A', code_scanning_default_setup_options: { runner_type: 'standard', runner_label: 'x' } }, 'code_scanning_default_setup_options.runner_label', 'custom'],
      ['an unknown runner type', { name: 'A', code_scanning_default_setup_options: { runner_type: 'gpu' } }, 'code_scanning_default_setup_options.runner_type', 'invalid'],
      ['reviewers without delegated bypass', { name: 'A', secret_scanning_delegated_bypass_options: { reviewers: [{ reviewer_id: 1, reviewer_type: 'ROLE' }] } }, 'secret_scanning_delegated_bypass_options', 'custom'],
      ['a team of another organization', { name: 'A', secret_scanning_delegated_bypass: 'enabled', secret_scanning_delegated_bypass_options: { reviewers: [{ reviewer_id: otherTeam.id, reviewer_type: 'TEAM' }] } }, 'secret_scanning_delegated_bypass_options.reviewers', 'custom'],
      ['an unknown reviewer type', { name: 'A', secret_scanning_delegated_bypass: 'enabled', secret_scanning_delegated_bypass_options: { reviewers: [{ reviewer_id: 1, reviewer_type: 'USER' }] } }, 'secret_scanning_delegated_bypass_options.reviewers.0.reviewer_type', 'invalid'],
      ['an unknown enforcement', { name: 'A', enforcement: 'sometimes' }, 'enforcement', 'invalid'],
      ['a duplicate name (any case)', { name: 'TAKEN' }, 'name', 'already_exists'],
    ];
    for (const [label, body, field, code] of cases) {
      const response = await call('POST', '/orgs/rules/code-security/configurations', body);
      assert.equal(response.status, 422, `${label}: ${response.text}`);
      assert.equal(response.body.message, 'Validation Failed', label);
      assert.equal(response.body.errors[0].field, field, label);
      assert.equal(response.body.errors[0].code, code, label);
    }
    assert.equal((await call('POST', '/orgs/rules/code-security/configurations', undefined, ownerToken)).status, 422);
    const malformed = await server.api('POST', '/orgs/rules/code-security/configurations', { token: ownerToken, rawBody: '{"name":', headers: { 'content-type': 'application/json' } });
    assert.equal(malformed.status, 400);
    assert.equal(malformed.body.message, 'Problems parsing JSON');
    const notObject = await call('POST', '/orgs/rules/code-security/configurations', ['name']);
    assert.equal(notObject.status, 400);
    const names = (await call('GET', '/orgs/rules/code-security/configurations')).body.map((c: any) => c.name);
    assert.deepEqual(names.slice(1), ['Taken']);
    // Names are unique within their owner only.
    await create('rules-other', { name: 'Taken' });
  });
});

describe('retrieve', () => {
  test('answers 200 with ETag and Last-Modified, 304 while unchanged, 404 for what the organization does not see', async () => {
    await organization('retr');
    await organization('retr-other');
    const mine = await create('retr', { name: 'Mine' });
    const theirs = await create('retr-other', { name: 'Theirs' });
    const path = `/orgs/retr/code-security/configurations/${mine.id}`;
    const first = await call('GET', path);
    assert.equal(first.status, 200);
    const etag = first.headers.get('etag')!;
    assert.ok(etag.startsWith('W/"'));
    assert.ok(first.headers.get('last-modified'));
    const again = await call('GET', path, undefined, ownerToken, { 'if-none-match': etag });
    assert.equal(again.status, 304);
    assert.equal(again.text, '');
    const since = await call('GET', path, undefined, ownerToken, { 'if-modified-since': first.headers.get('last-modified')! });
    assert.equal(since.status, 304);
    await server.advance(5);
    assert.equal((await call('PATCH', path, { description: 'changed' })).status, 200);
    assert.equal((await call('GET', path, undefined, ownerToken, { 'if-none-match': etag })).status, 200);

    assert.equal((await call('GET', `/orgs/retr/code-security/configurations/${theirs.id}`)).status, 404);
    assert.equal((await call('GET', '/orgs/retr/code-security/configurations/999999')).status, 404);
    assert.equal((await call('GET', '/orgs/retr/code-security/configurations/99999999999')).status, 404);
    assert.equal((await call('GET', '/orgs/retr/code-security/configurations/abc')).status, 422);
    assert.equal((await call('GET', `/orgs/nobody-here/code-security/configurations/${mine.id}`)).status, 404);
  });
});

describe('update', () => {
  test('answers 200 when something changes and 204 when nothing does', async () => {
    await organization('upd');
    const created = await create('upd', { name: 'First', description: 'one', updater_alerts: 'enabled' });
    const path = `/orgs/upd/code-security/configurations/${created.id}`;
    await server.advance(2);
    const changed = await call('PATCH', path, { name: 'Second', secret_scanning: 'enabled', updater_delegated_alert_dismissal: 'enabled', code_scanning_options: { allow_advanced: false } });
    assert.equal(changed.status, 200, changed.text);
    assert.equal(changed.body.name, 'Second');
    assert.equal(changed.body.description, 'one', 'fields not sent stay');
    assert.equal(changed.body.secret_scanning, 'enabled');
    assert.equal(changed.body.updater_delegated_alert_dismissal, 'enabled');
    assert.deepEqual(changed.body.code_scanning_options, { allow_advanced: false });
    assert.notEqual(changed.body.updated_at, created.updated_at);
    assert.equal(changed.body.created_at, created.created_at);

    for (const body of [{}, { name: 'Second', secret_scanning: 'enabled' }, { description: 'one', enforcement: 'enforced' }]) {
      const same = await call('PATCH', path, body);
      assert.equal(same.status, 204, JSON.stringify(body));
      assert.equal(same.text, '');
    }
    assert.equal((await call('GET', path)).body.updated_at, changed.body.updated_at);
  });

  test('keeps names unique, the updater rule and the options rules; 400 for an enterprise configuration; 404 for unknown ones', async () => {
    await server.admin('POST', '/enterprises', { slug: 'upd-ent', owners: [owner] });
    await organization('upd2', {}, { enterprise: 'upd-ent' });
    const enterpriseToken = await classicToken(server, owner, ['admin:enterprise']);
    const enterpriseConfiguration = await server.api('POST', '/enterprises/upd-ent/code-security/configurations', { token: enterpriseToken, body: { name: 'Enterprise' } });
    assert.equal(enterpriseConfiguration.status, 201);
    const a = await create('upd2', { name: 'A', updater_alerts: 'enabled', updater_delegated_alert_dismissal: 'enabled' });
    await create('upd2', { name: 'B' });
    const path = `/orgs/upd2/code-security/configurations/${a.id}`;
    const duplicate = await call('PATCH', path, { name: 'b' });
    assert.equal(duplicate.status, 422);
    assert.equal(duplicate.body.errors[0].code, 'already_exists');
    const caseOnly = await call('PATCH', path, { name: 'a' });
    assert.equal(caseOnly.status, 200, 'a new case of its own name is fine');
    const alertsOff = await call('PATCH', path, { updater_alerts: 'disabled' });
    assert.equal(alertsOff.status, 422);
    assert.equal(alertsOff.body.errors[0].field, 'updater_delegated_alert_dismissal');
    assert.equal((await call('PATCH', path, { updater_alerts: 'disabled', updater_delegated_alert_dismissal: 'disabled' })).status, 200);
    assert.equal((await call('PATCH', path, { name: '' })).status, 422);
    assert.equal((await call('PATCH', path, { enforcement: 'maybe' })).status, 422);
    const bypass = await call('PATCH', path, { secret_scanning_delegated_bypass: 'enabled', secret_scanning_delegated_bypass_options: { reviewers: [{ reviewer_id: 7, reviewer_type: 'ROLE' }] } });
    assert.equal(bypass.status, 200);
    assert.equal(bypass.body.secret_scanning_delegated_bypass_options.reviewers.length, 1);
    const bypassOff = await call('PATCH', path, { secret_scanning_delegated_bypass: 'disabled' });
    assert.deepEqual(bypassOff.body.secret_scanning_delegated_bypass_options, { reviewers: [] }, 'turning bypass off drops its reviewers');
    const cleared = await call('PATCH', path, { code_scanning_default_setup_options: { runner_type: 'standard' } });
    assert.deepEqual(cleared.body.code_scanning_default_setup_options, { runner_type: 'standard', runner_label: null });
    assert.equal((await call('PATCH', path, { code_scanning_default_setup_options: null })).body.code_scanning_default_setup_options, null);

    const viaOrg = await call('PATCH', `/orgs/upd2/code-security/configurations/${enterpriseConfiguration.body.id}`, { description: 'x' });
    assert.equal(viaOrg.status, 400);
    assert.equal((await call('PATCH', '/orgs/upd2/code-security/configurations/424242', { description: 'x' })).status, 404);
  });

  test('re-applies the configuration to its repositories', async () => {
    const repos = await organization('reapply', { open: 'public' });
    const configuration = await create('reapply', { name: 'C', secret_scanning: 'enabled', enforcement: 'unenforced' });
    await attach('reapply', configuration.id, { scope: 'all' });
    await server.drain();
    assert.equal((await features(repos.open!)).secret_scanning, 'enabled');
    const path = `/orgs/reapply/code-security/configurations/${configuration.id}`;
    assert.equal((await call('PATCH', path, { secret_scanning: 'disabled', enforcement: 'enforced' })).status, 200);
    await server.drain();
    assert.equal((await features(repos.open!)).secret_scanning, 'disabled');
    assert.deepEqual(await attached('reapply', configuration.id), { open: 'enforced' });
    assert.equal((await call('PATCH', path, { name: 'Renamed' })).status, 200, 'a rename does not touch the repositories');
    assert.deepEqual(await attached('reapply', configuration.id), { open: 'enforced' });
  });
});

describe('attach', () => {
  test('all, public, private_or_internal, all_without_configurations and selected, re-attaching what is attached elsewhere', async () => {
    const repos = await organization('att', { pub1: 'public', pub2: 'public', priv: 'private', int: 'internal' });
    const a = await create('att', { name: 'A' });
    const b = await create('att', { name: 'B', enforcement: 'unenforced' });
    const c = await create('att', { name: 'C' });

    await attach('att', a.id, { scope: 'all' });
    await server.drain();
    assert.deepEqual(await attached('att', a.id), { pub1: 'enforced', pub2: 'enforced', priv: 'enforced', int: 'enforced' });

    await attach('att', b.id, { scope: 'public' });
    await server.drain();
    assert.deepEqual(await attached('att', b.id), { pub1: 'attached', pub2: 'attached' });
    assert.deepEqual(await attached('att', a.id), { priv: 'enforced', int: 'enforced' });
    assert.deepEqual(await repositoryConfiguration('att', 'pub1'), { status: 'attached', id: b.id });

    await attach('att', c.id, { scope: 'private_or_internal' });
    await server.drain();
    assert.deepEqual(await attached('att', c.id), { priv: 'enforced', int: 'enforced' });
    assert.deepEqual(await attached('att', a.id), {});

    assert.equal((await call('DELETE', '/orgs/att/code-security/configurations/detach', { selected_repository_ids: [repos.pub2, repos.int] })).status, 204);
    await attach('att', a.id, { scope: 'all_without_configurations' });
    await server.drain();
    assert.deepEqual(await attached('att', a.id), { pub2: 'enforced', int: 'enforced' });

    await attach('att', b.id, { scope: 'selected', selected_repository_ids: [repos.priv, repos.priv] });
    await server.drain();
    assert.deepEqual(await attached('att', b.id), { pub1: 'attached', priv: 'attached' });
    assert.deepEqual(await attached('att', c.id), {}, 'priv left C for B');
  });

  test('checks the scope and the selected repositories', async () => {
    const repos = await organization('attrules', { one: 'public' });
    const elsewhere = await organization('attrules-other', { theirs: 'public' });
    const configuration = await create('attrules', { name: 'A' });
    const path = `/orgs/attrules/code-security/configurations/${configuration.id}/attach`;
    const cases: [unknown, string, string][] = [
      [{}, 'scope', 'missing_field'],
      [{ scope: 'everything' }, 'scope', 'invalid'],
      [{ scope: 'selected' }, 'selected_repository_ids', 'missing_field'],
      [{ scope: 'selected', selected_repository_ids: [] }, 'selected_repository_ids', 'missing_field'],
      [{ scope: 'all', selected_repository_ids: [repos.one] }, 'selected_repository_ids', 'custom'],
      [{ scope: 'selected', selected_repository_ids: [repos.one, elsewhere.theirs] }, 'selected_repository_ids', 'custom'],
      [{ scope: 'selected', selected_repository_ids: [99999999999] }, 'selected_repository_ids', 'custom'],
      [{ scope: 'selected', selected_repository_ids: ['one'] }, 'selected_repository_ids.0', 'invalid'],
    ];
    for (const [body, field, code] of cases) {
      const response = await call('POST', path, body);
      assert.equal(response.status, 422, `${JSON.stringify(body)}: ${response.text}`);
      assert.equal(response.body.errors[0].field, field, JSON.stringify(body));
      assert.equal(response.body.errors[0].code, code, JSON.stringify(body));
    }
    assert.equal(await repositoryConfiguration('attrules', 'one'), null, 'nothing was attached');
    assert.equal((await call('POST', '/orgs/attrules/code-security/configurations/555555/attach', { scope: 'all' })).status, 404);
  });

  test('repositories whose job was lost are picked up again by the sweep after five minutes', async () => {
    const repos = await organization('lost', { one: 'public' });
    const configuration = await create('lost', { name: 'A', enforcement: 'unenforced' });
    // What a job lost for good leaves behind: an attachment waiting, and no job.
    const now = (await server.admin('GET', '/clock')).now;
    await server.server.ctx.db.kysely.insertInto('code_security_attachments')
      .values({ repository_id: repos.one!, configuration_id: configuration.id, status: 'attaching', created_at: now, updated_at: now })
      .execute();
    await server.drain();
    assert.deepEqual(await attached('lost', configuration.id), { one: 'attaching' });
    await server.advance(301);
    await server.drain();
    assert.deepEqual(await attached('lost', configuration.id), { one: 'attached' });
  });

  test('a locked repository fails; the others attach', async () => {
    const repos = await organization('locked', { free: 'public', held: 'public' });
    await server.server.ctx.db.kysely.updateTable('repositories').set({ locked_by_migration_id: 1 }).where('id', '=', repos.held!).execute();
    const configuration = await create('locked', { name: 'A', secret_scanning: 'enabled' });
    await attach('locked', configuration.id, { scope: 'all' });
    await server.drain();
    assert.deepEqual(await attached('locked', configuration.id), { free: 'enforced', held: 'failed' });
    assert.equal((await features(repos.held!)).secret_scanning, undefined, 'a failed repository keeps its settings');
    assert.deepEqual(await attached('locked', configuration.id, '?status=failed'), { held: 'failed' });
  });

  test('sets the repository security_and_analysis to the effective settings; not_set leaves a feature alone', async () => {
    const repos = await organization('effective', { site: 'public' });
    const on = await create('effective', { name: 'On', advanced_security: 'enabled', secret_scanning: 'enabled', secret_scanning_push_protection: 'enabled' });
    await attach('effective', on.id, { scope: 'all' });
    await server.drain();
    assert.deepEqual(await securityAndAnalysis('effective', 'site'), {
      advanced_security: { status: 'enabled' },
      secret_scanning: { status: 'enabled' },
      secret_scanning_push_protection: { status: 'enabled' },
      secret_scanning_non_provider_patterns: { status: 'disabled' },
    });
    const partly = await create('effective', { name: 'Partly', secret_scanning: 'not_set', secret_scanning_push_protection: 'disabled' });
    await attach('effective', partly.id, { scope: 'all' });
    await server.drain();
    const stored = await features(repos.site!);
    assert.equal(stored.secret_scanning, 'enabled');
    assert.equal(stored.secret_scanning_push_protection, 'disabled');
    assert.equal(stored.dependency_graph, 'enabled');
  });
});

describe('detach and delete', () => {
  test('detach removes the attachment and keeps the settings; ids must be repositories of the organization', async () => {
    const repos = await organization('det', { one: 'public', two: 'public' });
    const elsewhere = await organization('det-other', { theirs: 'public' });
    const configuration = await create('det', { name: 'A', secret_scanning: 'enabled' });
    await attach('det', configuration.id, { scope: 'all' });
    await server.drain();
    const path = '/orgs/det/code-security/configurations/detach';
    for (const [body, status] of [
      [{}, 422],
      [{ selected_repository_ids: [] }, 422],
      [{ selected_repository_ids: Array.from({ length: 251 }, (_, i) => i + 1) }, 422],
      [{ selected_repository_ids: [repos.one, elsewhere.theirs] }, 422],
      [{ selected_repository_ids: [0] }, 422],
    ] as const) {
      assert.equal((await call('DELETE', path, body)).status, status, JSON.stringify(body).slice(0, 80));
    }
    assert.deepEqual(await attached('det', configuration.id), { one: 'enforced', two: 'enforced' }, 'a refused detach changes nothing');
    const detached = await call('DELETE', path, { selected_repository_ids: [repos.one] });
    assert.equal(detached.status, 204);
    assert.equal(detached.text, '');
    assert.equal(await repositoryConfiguration('det', 'one'), null);
    assert.equal((await features(repos.one!)).secret_scanning, 'enabled');
    assert.deepEqual(await attached('det', configuration.id), { two: 'enforced' });
    assert.equal((await call('DELETE', path, { selected_repository_ids: [repos.one] })).status, 204, 'detaching again is fine');
  });

  test('delete while attached detaches the repositories, which keep their settings', async () => {
    const repos = await organization('del', { one: 'public' });
    const configuration = await create('del', { name: 'A', secret_scanning: 'enabled' });
    await attach('del', configuration.id, { scope: 'all' });
    await server.drain();
    const removed = await call('DELETE', `/orgs/del/code-security/configurations/${configuration.id}`);
    assert.equal(removed.status, 204);
    assert.equal(removed.text, '');
    assert.equal(await repositoryConfiguration('del', 'one'), null);
    assert.equal((await features(repos.one!)).secret_scanning, 'enabled');
    assert.equal((await call('GET', `/orgs/del/code-security/configurations/${configuration.id}`)).status, 404);
    assert.equal((await call('DELETE', `/orgs/del/code-security/configurations/${configuration.id}`)).status, 404);
  });

  test('a default cannot be deleted (409) until it is no longer one; an enterprise configuration is refused (400)', async () => {
    await server.admin('POST', '/enterprises', { slug: 'del-ent', owners: [owner] });
    await organization('deldef', {}, { enterprise: 'del-ent' });
    const configuration = await create('deldef', { name: 'A' });
    const path = `/orgs/deldef/code-security/configurations/${configuration.id}`;
    assert.equal((await call('PUT', `${path}/defaults`, { default_for_new_repos: 'public' })).status, 200);
    const refused = await call('DELETE', path);
    assert.equal(refused.status, 409);
    assert.match(refused.body.message, /default/);
    assert.equal((await call('PUT', `${path}/defaults`, { default_for_new_repos: 'none' })).status, 200);
    assert.equal((await call('DELETE', path)).status, 204);

    const enterpriseToken = await classicToken(server, owner, ['admin:enterprise']);
    const enterprise = await server.api('POST', '/enterprises/del-ent/code-security/configurations', { token: enterpriseToken, body: { name: 'E' } });
    const viaOrg = await call('DELETE', `/orgs/deldef/code-security/configurations/${enterprise.body.id}`);
    assert.equal(viaOrg.status, 400);
    assert.equal((await call('GET', `/orgs/deldef/code-security/configurations/${enterprise.body.id}`)).status, 200);
  });
});

describe('repositories of a configuration', () => {
  test('cursor pagination with Link, per_page limits and the status filter', async () => {
    const names = ['r1', 'r2', 'r3', 'r4', 'r5'];
    await organization('pages', Object.fromEntries(names.map((n) => [n, 'public'])));
    const configuration = await create('pages', { name: 'A', enforcement: 'unenforced' });
    await attach('pages', configuration.id, { scope: 'all' });
    await server.drain();
    const base = `/orgs/pages/code-security/configurations/${configuration.id}/repositories`;
    const first = await call('GET', `${base}?per_page=2`);
    assert.equal(first.status, 200);
    assert.deepEqual(first.body.map((r: any) => r.repository.name), ['r1', 'r2']);
    assert.deepEqual(Object.keys(first.body[0]).sort(), ['repository', 'status']);
    assert.equal(first.body[0].repository.full_name, 'pages/r1');
    const link = first.headers.get('link')!;
    assert.match(link, /rel="next"/);
    assert.doesNotMatch(link, /rel="prev"/);
    const next = /<([^>]+)>; rel="next"/.exec(link)![1]!;
    assert.ok(next.startsWith(`${server.server.ctx.urls.api}/orgs/pages/`), next);
    assert.match(next, /per_page=2/);
    const second = await call('GET', next.slice(next.indexOf('/orgs/')));
    assert.deepEqual(second.body.map((r: any) => r.repository.name), ['r3', 'r4']);
    const secondLink = second.headers.get('link')!;
    assert.match(secondLink, /rel="next"/);
    assert.match(secondLink, /rel="prev"/);
    const prev = /<([^>]+)>; rel="prev"/.exec(secondLink)![1]!;
    const back = await call('GET', prev.slice(prev.indexOf('/orgs/')));
    assert.deepEqual(back.body.map((r: any) => r.repository.name), ['r1', 'r2']);
    const third = await call('GET', /<([^>]+)>; rel="next"/.exec(secondLink)![1]!.replace(/^.*\/orgs\//, '/orgs/'));
    assert.deepEqual(third.body.map((r: any) => r.repository.name), ['r5']);
    assert.doesNotMatch(third.headers.get('link')!, /rel="next"/);

    assert.equal((await call('GET', `${base}?per_page=500`)).body.length, 5, 'per_page over 100 is capped');
    assert.equal((await call('GET', `${base}?per_page=0`)).status, 422);
    assert.equal((await call('GET', `${base}?per_page=two`)).status, 422);
    assert.equal((await call('GET', `${base}?after=bm9wZQ`)).status, 422);
    assert.equal((await call('GET', `${base}?status=attached,enforced`)).body.length, 5);
    assert.equal((await call('GET', `${base}?status=enforced`)).body.length, 0);
    assert.equal((await call('GET', `${base}?status=all`)).body.length, 5);
    const unknown = await call('GET', `${base}?status=attached,sleeping`);
    assert.equal(unknown.status, 422);
    assert.equal(unknown.body.errors[0].field, 'status');
    assert.equal((await call('GET', '/orgs/pages/code-security/configurations/4242/repositories')).status, 404);
  });

  test('configuration lists paginate by cursor too', async () => {
    await organization('listpages');
    const ids = [];
    for (const name of ['a', 'b', 'c']) ids.push((await create('listpages', { name })).id);
    const first = await call('GET', '/orgs/listpages/code-security/configurations?per_page=2');
    assert.deepEqual(first.body.map((c: any) => c.id), [GLOBAL_ID, ids[0]]);
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link')!)![1]!;
    const second = await call('GET', next.replace(/^.*\/orgs\//, '/orgs/'));
    assert.deepEqual(second.body.map((c: any) => c.id), [ids[1], ids[2]]);
    assert.match(second.headers.get('link')!, /rel="prev"/);
    assert.equal((await call('GET', '/orgs/listpages/code-security/configurations?before=x&after=y')).status, 422);
  });
});

describe('licenses', () => {
  test('a private repository without a license gets the free features only; public ones need none', async () => {
    const repos = await organization('lic', { open: 'public', secret1: 'private', secret2: 'internal' });
    assert.deepEqual(await server.admin('PUT', '/orgs/lic/licenses', { advanced_security: 1 }), { advanced_security: 1, used: 0 });
    const configuration = await create('lic', {
      name: 'Paid', advanced_security: 'enabled', secret_scanning: 'enabled', updater_alerts: 'enabled', enforcement: 'unenforced',
    });
    await attach('lic', configuration.id, { scope: 'all' });
    await server.drain();
    assert.deepEqual(await attached('lic', configuration.id), { open: 'attached', secret1: 'attached', secret2: 'attached' });
    const licensed = await features(repos.secret1!);
    assert.equal(licensed.advanced_security, 'enabled');
    assert.equal(licensed.secret_scanning, 'enabled');
    const shortage = await features(repos.secret2!);
    assert.equal(shortage.advanced_security, 'disabled');
    assert.equal(shortage.secret_scanning, 'disabled');
    assert.equal(shortage.updater_alerts, 'enabled', 'free features are enabled anyway');
    assert.equal(shortage.dependency_graph, 'enabled');
    assert.equal((await features(repos.open!)).secret_scanning, 'enabled');
    assert.deepEqual(await server.admin('GET', '/orgs/lic/licenses'), { advanced_security: 1, used: 1 });

    // More licenses: re-attaching gives the second repository the paid features too.
    await server.admin('PUT', '/orgs/lic/licenses', { advanced_security: 2 });
    await attach('lic', configuration.id, { scope: 'selected', selected_repository_ids: [repos.secret2] });
    await server.drain();
    assert.equal((await features(repos.secret2!)).secret_scanning, 'enabled');
    assert.deepEqual(await server.admin('GET', '/orgs/lic/licenses'), { advanced_security: 2, used: 2 });

    // A configuration without paid features gives the license back.
    const free = await create('lic', { name: 'Free', advanced_security: 'disabled', secret_scanning: 'disabled' });
    await attach('lic', free.id, { scope: 'selected', selected_repository_ids: [repos.secret1] });
    await server.drain();
    assert.deepEqual(await server.admin('GET', '/orgs/lic/licenses'), { advanced_security: 2, used: 1 });
  });

  test('an organization of an enterprise uses the enterprise licenses once its own run out', async () => {
    await server.admin('POST', '/enterprises', { slug: 'lic-ent', owners: [owner] });
    const repos = await organization('licent', { a: 'private', b: 'private', c: 'private' }, { enterprise: 'lic-ent' });
    await server.admin('PUT', '/orgs/licent/licenses', { advanced_security: 1 });
    await server.admin('PUT', '/enterprises/lic-ent/licenses', { advanced_security: 1 });
    const configuration = await create('licent', { name: 'Paid', secret_scanning: 'enabled' });
    await attach('licent', configuration.id, { scope: 'all' });
    await server.drain();
    const enabled = await Promise.all([repos.a!, repos.b!, repos.c!].map(async (id) => (await features(id)).secret_scanning));
    assert.deepEqual(enabled, ['enabled', 'enabled', 'disabled']);
    assert.deepEqual(await server.admin('GET', '/orgs/licent/licenses'), { advanced_security: 1, used: 1 });
    assert.deepEqual(await server.admin('GET', '/enterprises/lic-ent/licenses'), { advanced_security: 1, used: 1 });
  });

  test('a seed file sets license counts (idempotently) and refuses bad entries before setting any', async () => {
    await organization('licseed');
    await server.admin('POST', '/enterprises', { slug: 'licseed-ent', owners: [owner] });
    const seed = { licenses: [{ org: 'licseed', advanced_security: 3 }, { enterprise: 'licseed-ent', advanced_security: 7 }] };
    for (let run = 0; run < 2; run++) await loadSeed(server.server.ctx, AREAS, seed);
    assert.deepEqual(await server.admin('GET', '/orgs/licseed/licenses'), { advanced_security: 3, used: 0 });
    assert.deepEqual(await server.admin('GET', '/enterprises/licseed-ent/licenses'), { advanced_security: 7, used: 0 });
    for (const bad of [
      [{ org: 'licseed', advanced_security: 1 }, { org: 'licseed', enterprise: 'licseed-ent', advanced_security: 1 }],
      [{ org: 'licseed', advanced_security: 1 }, { advanced_security: 1 }],
      [{ org: 'licseed', advanced_security: -2 }],
    ]) {
      await assert.rejects(loadSeed(server.server.ctx, AREAS, { licenses: bad }), (error: any) => error.status === 422);
    }
    await assert.rejects(loadSeed(server.server.ctx, AREAS, { licenses: [{ org: 'no-such-org', advanced_security: 1 }] }), (error: any) => error.status === 404);
    assert.deepEqual(await server.admin('GET', '/orgs/licseed/licenses'), { advanced_security: 3, used: 0 }, 'nothing of a refused seed was set');
  });

  test('the operator routes check their input', async () => {
    await organization('licadmin');
    for (const body of [{}, { advanced_security: -1 }, { advanced_security: 1.5 }, { advanced_security: '3' }, { advanced_security: 1, extra: 1 }]) {
      assert.equal((await server.adminRaw('PUT', '/orgs/licadmin/licenses', body)).status, 422, JSON.stringify(body));
    }
    assert.equal((await server.adminRaw('PUT', '/orgs/nobody/licenses', { advanced_security: 1 })).status, 404);
    assert.equal((await server.adminRaw('PUT', `/orgs/${owner}/licenses`, { advanced_security: 1 })).status, 404, 'a user is not an organization');
    assert.equal((await server.adminRaw('PUT', '/enterprises/nobody/licenses', { advanced_security: 1 })).status, 404);
    const anonymous = await fetch(`${server.url}/_admin/orgs/licadmin/licenses`, { method: 'PUT', body: JSON.stringify({ advanced_security: 1 }) });
    assert.equal(anonymous.status, 401);
  });
});

describe('defaults for new repositories', () => {
  test('set, list and apply to repositories created later, by visibility', async () => {
    await organization('dflt');
    const pub = await create('dflt', { name: 'Public ones', enforcement: 'unenforced' });
    const priv = await create('dflt', { name: 'Private ones' });
    const base = '/orgs/dflt/code-security/configurations';
    assert.deepEqual((await call('GET', `${base}/defaults`)).body, []);

    const set = await call('PUT', `${base}/${pub.id}/defaults`, { default_for_new_repos: 'all' });
    assert.equal(set.status, 200);
    assert.equal(set.body.default_for_new_repos, 'all');
    assert.equal(set.body.configuration.id, pub.id);
    assert.equal((await call('PUT', `${base}/${priv.id}/defaults`, { default_for_new_repos: 'private_and_internal' })).status, 200);
    const listed = await call('GET', `${base}/defaults`);
    assert.deepEqual(listed.body.map((d: any) => [d.default_for_new_repos, d.configuration.id]), [['public', pub.id], ['private_and_internal', priv.id]]);

    await server.admin('POST', '/repos', { owner: 'dflt', name: 'new-public' });
    await server.admin('POST', '/repos', { owner: 'dflt', name: 'new-private', visibility: 'private' });
    await server.admin('POST', '/repos', { owner: 'dflt', name: 'new-internal', visibility: 'internal' });
    await server.drain();
    assert.deepEqual(await repositoryConfiguration('dflt', 'new-public'), { status: 'attached', id: pub.id });
    assert.deepEqual(await repositoryConfiguration('dflt', 'new-private'), { status: 'enforced', id: priv.id });
    assert.deepEqual(await repositoryConfiguration('dflt', 'new-internal'), { status: 'enforced', id: priv.id });

    assert.equal((await call('PUT', `${base}/${priv.id}/defaults`, { default_for_new_repos: 'none' })).status, 200);
    assert.equal((await call('PUT', `${base}/${pub.id}/defaults`, { default_for_new_repos: 'public' })).status, 200);
    assert.deepEqual((await call('GET', `${base}/defaults`)).body.map((d: any) => d.default_for_new_repos), ['public']);
    await server.admin('POST', '/repos', { owner: 'dflt', name: 'later-private', visibility: 'private' });
    await server.drain();
    assert.equal(await repositoryConfiguration('dflt', 'later-private'), null);

    for (const body of [{}, { default_for_new_repos: 'some' }, { default_for_new_repos: 'all', extra: true }]) {
      assert.equal((await call('PUT', `${base}/${pub.id}/defaults`, body)).status, 422, JSON.stringify(body));
    }
    assert.equal((await call('PUT', `${base}/31337/defaults`, { default_for_new_repos: 'all' })).status, 404);
    const global = await call('PUT', `${base}/${GLOBAL_ID}/defaults`, { default_for_new_repos: 'private_and_internal' });
    assert.equal(global.status, 200, 'the global configuration can be a default');
    assert.equal(global.body.configuration.target_type, 'global');
  });
});

describe('the repository configuration', () => {
  test('200 with status and configuration, 304 while unchanged, 204 without one (also for a user repository)', async () => {
    await organization('repocfg', { one: 'private' });
    await server.admin('POST', '/repos', { owner, name: 'personal' });
    assert.equal(await repositoryConfiguration('repocfg', 'one'), null);
    assert.equal(await repositoryConfiguration(owner, 'personal'), null);
    const configuration = await create('repocfg', { name: 'A', enforcement: 'unenforced' });
    await attach('repocfg', configuration.id, { scope: 'all' });
    await server.drain();
    const response = await call('GET', '/repos/REPOCFG/one.git/code-security-configuration');
    assert.equal(response.status, 200);
    assert.deepEqual(Object.keys(response.body), ['status', 'configuration']);
    assert.equal(response.body.status, 'attached');
    assert.equal(response.body.configuration.name, 'A');
    assert.ok(response.headers.get('last-modified'));
    const again = await call('GET', '/repos/repocfg/one/code-security-configuration', undefined, ownerToken, { 'if-none-match': response.headers.get('etag')! });
    assert.equal(again.status, 304);
    assert.equal((await call('GET', '/repos/repocfg/missing/code-security-configuration')).status, 404);
  });
});

describe('a real client', () => {
  test('@octokit/core creates, attaches and reads back', async () => {
    await organization('octo', { app: 'public' });
    const octokit = new Octokit({ auth: ownerToken, baseUrl: server.apiUrl });
    const created = await octokit.request('POST /orgs/{org}/code-security/configurations', { org: 'octo', name: 'From octokit', secret_scanning: 'enabled', enforcement: 'unenforced' } as any);
    assert.equal(created.status, 201);
    const attachResponse = await octokit.request('POST /orgs/{org}/code-security/configurations/{configuration_id}/attach', { org: 'octo', configuration_id: (created.data as any).id, scope: 'all' } as any);
    assert.equal(attachResponse.status, 202);
    await server.drain();
    const read = await octokit.request('GET /repos/{owner}/{repo}/code-security-configuration', { owner: 'octo', repo: 'app' });
    assert.equal(read.status, 200);
    assert.equal((read.data as any).status, 'attached');
    assert.equal((read.data as any).configuration.name, 'From octokit');
    const list = await octokit.request('GET /orgs/{org}/code-security/configurations', { org: 'octo', per_page: 1 } as any);
    assert.equal((list.data as any[]).length, 1);
    assert.match(list.headers.link ?? '', /rel="next"/);
  });
});
