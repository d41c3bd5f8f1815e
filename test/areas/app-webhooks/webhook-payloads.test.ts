// Every kind of delivery codehost makes validates against the platform's published webhook schemas
// (test/helpers/webhook-schemas.ts: @octokit/openapi-webhooks, names mapped as the spec maps them).
// Real activity goes through the admin API (issues, comments, pull requests with reviewers and team
// reviewers, raw events) to a receiver on a loopback port; every body it gets is validated, and the
// table event/action → delivered → valid is printed as a diagnostic. Also the envelope: an
// organization's repository brings `organization` (and `enterprise` when it has one), a user's
// does not; `installation` is `{id, node_id}` except in installation events, where it is whole.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { Receiver, type Received } from '../../helpers/receiver.ts';
import { webhookSchemas } from '../../helpers/webhook-schemas.ts';
import { appJwt } from '../../helpers/credentials.ts';

const schemas = webhookSchemas();
const kind = (r: Received) => `${r.headers['x-vendor-event']}${r.json.action ? `/${r.json.action}` : ''}`;

describe('webhook payloads validate against the platform schemas', () => {
  let server: TestServer;
  let receiver: Receiver;
  let installations: { acme: number; mona: number; plain?: number };

  before(async () => {
    receiver = await new Receiver().start();
    server = await startServer();
    for (const login of ['mona', 'hubot', 'octocat']) await server.admin('POST', '/users', { login });
    await server.admin('POST', '/enterprises', { slug: 'bigcorp', name: 'Big Corp', owners: ['mona'] });
    await server.admin('POST', '/orgs', { login: 'acme', enterprise: 'bigcorp', owners: ['mona'], members: ['hubot', 'octocat'] });
    await server.admin('POST', '/orgs', { login: 'plain', owners: ['mona'] });
    await server.admin('POST', '/orgs/acme/teams', { slug: 'reviewers', name: 'Reviewers', members: ['hubot'] });
    await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets', init_git: true, description: 'with git data' });
    await server.admin('POST', '/repos', { owner: 'acme', name: 'bare', visibility: 'private' });
    await server.admin('POST', '/repos', { owner: 'plain', name: 'tools' });
    await server.admin('POST', '/repos', { owner: 'mona', name: 'personal' });
    await server.admin('POST', '/apps', {
      slug: 'inspector',
      permissions: { issues: 'write', pull_requests: 'write', administration: 'read', members: 'read', metadata: 'read' },
      events: ['issues', 'issue_comment', 'pull_request', 'security_and_analysis', 'repository', 'member', 'membership', 'organization', 'team', 'team_add'],
      webhook: { url: receiver.url('/hook') },
    });
    installations = {
      acme: (await server.admin('POST', '/apps/inspector/installations', { account: 'acme', sender: 'mona', repositories: ['widgets', 'bare'] })).id,
      mona: (await server.admin('POST', '/apps/inspector/installations', { account: 'mona' })).id,
    };
    installations.plain = (await server.admin('POST', '/apps/inspector/installations', { account: 'plain', sender: 'mona' })).id;
    await server.admin('POST', '/apps/inspector/installations', { account: 'hubot' });
    await server.drain();

    // Issues: opened (with an assignee), unassigned, assigned, closed, reopened, a comment.
    const patch = (repo: string, number: number, body: object) => server.admin('PATCH', `/repos/${repo}/issues/${number}`, body);
    const issue = await server.admin('POST', '/repos/acme/widgets/issues', { author: 'hubot', title: 'Broken', body: 'It breaks', assignees: ['octocat'] });
    await patch('acme/widgets', issue.number, { actor: 'mona', assignees: [] });
    await patch('acme/widgets', issue.number, { actor: 'mona', assignees: ['mona'] });
    await patch('acme/widgets', issue.number, { actor: 'mona', state: 'closed' });
    await patch('acme/widgets', issue.number, { actor: 'mona', state: 'open' });
    await server.admin('POST', `/repos/acme/widgets/issues/${issue.number}/comments`, { author: 'octocat', body: 'Same here @hubot' });

    // Pull requests on a repository with git data: reviewers and team reviewers, assignees, a comment, merged.
    const pull = await server.admin('POST', '/repos/acme/widgets/issues', { author: 'hubot', title: 'Fix', pull_request: true, reviewers: ['octocat'], team_reviewers: ['reviewers'] });
    await patch('acme/widgets', pull.number, { actor: 'hubot', reviewers: ['mona'] });
    await patch('acme/widgets', pull.number, { actor: 'hubot', team_reviewers: [] });
    await patch('acme/widgets', pull.number, { actor: 'hubot', team_reviewers: ['reviewers'] });
    await patch('acme/widgets', pull.number, { actor: 'hubot', assignees: ['hubot'] });
    await patch('acme/widgets', pull.number, { actor: 'hubot', assignees: [] });
    await server.admin('POST', `/repos/acme/widgets/issues/${pull.number}/comments`, { author: 'mona', body: 'Looks good' });
    await patch('acme/widgets', pull.number, { actor: 'mona', state: 'merged' });

    // A pull request on a repository without git data: opened, closed, reopened.
    const barePull = await server.admin('POST', '/repos/acme/bare/issues', { author: 'mona', title: 'Draft', pull_request: true });
    await patch('acme/bare', barePull.number, { actor: 'mona', state: 'closed' });
    await patch('acme/bare', barePull.number, { actor: 'mona', state: 'open' });

    // A user's repository, and an organization without an enterprise.
    await server.admin('POST', '/repos/mona/personal/issues', { author: 'mona', title: 'Mine' });
    await server.admin('POST', '/repos/plain/tools/issues', { author: 'mona', title: 'Theirs' });

    // Raw events: a repository never pushed to (pushed_at), and installation events.
    await server.admin('POST', '/events', {
      event: 'security_and_analysis', repository: 'acme/bare', sender: 'mona',
      payload: { changes: { from: { security_and_analysis: { secret_scanning: { status: 'disabled' } } } } },
    });
    // The account accepting more than its installation held: `new_permissions_accepted` (narrowing sends none).
    await server.admin('PATCH', `/apps/inspector/installations/${installations.acme}`, { permissions: { issues: 'read', pull_requests: 'write', administration: 'read', members: 'read', metadata: 'read' } });
    await server.admin('PATCH', `/apps/inspector/installations/${installations.acme}`, { permissions: { issues: 'write', pull_requests: 'write', administration: 'read', members: 'read', metadata: 'read' }, sender: 'mona' });
    await server.admin('POST', '/events', { event: 'installation', action: 'suspend', account: 'mona', sender: 'mona' });
    await server.drain();
    // The installation lifecycle's writes (the operator's routes) on a user's installation.
    await server.admin('PUT', `/apps/inspector/installations/${installations.mona}/suspended`);
    await server.admin('DELETE', `/apps/inspector/installations/${installations.mona}/suspended`);
    await server.admin('DELETE', `/apps/inspector/installations/${installations.mona}`);
    await server.drain();

    // Repository writes on plain, whose installation covers all its repositories; the transfer goes
    // to hubot, whose installation covers all of theirs, and the deletion there.
    await server.admin('POST', '/repos', { owner: 'plain', name: 'fresh' });
    await server.admin('PATCH', '/repos/plain/fresh', { description: 'now described' });
    await server.admin('PATCH', '/repos/plain/fresh', { visibility: 'private' });
    await server.admin('PATCH', '/repos/plain/fresh', { visibility: 'public' });
    await server.admin('PATCH', '/repos/plain/fresh', { archived: true });
    await server.admin('PATCH', '/repos/plain/fresh', { archived: false });
    await server.admin('PATCH', '/repos/plain/fresh', { name: 'renamed' });
    await server.drain();
    await server.admin('PATCH', '/repos/plain/renamed', { owner: 'hubot' });
    await server.drain();
    await server.admin('DELETE', '/repos/hubot/renamed');
    // Collaborators (member), organization members (organization), teams (team, membership, team_add).
    await server.admin('PUT', '/repos/plain/tools/collaborators/octocat', { permission: 'pull' });
    await server.admin('PUT', '/repos/plain/tools/collaborators/octocat', { permission: 'push' });
    await server.admin('DELETE', '/repos/plain/tools/collaborators/octocat');
    await server.admin('PUT', '/orgs/plain/members/hubot', {});
    await server.admin('POST', '/orgs/plain/teams', { slug: 'crew', name: 'Crew' });
    await server.admin('PUT', '/orgs/plain/teams/crew/members/hubot');
    await server.admin('DELETE', '/orgs/plain/teams/crew/members/hubot');
    await server.admin('PUT', '/orgs/plain/teams/crew/repos/plain/tools', { permission: 'pull' });
    await server.admin('DELETE', '/orgs/plain/teams/crew/repos/plain/tools');
    await server.admin('DELETE', '/orgs/plain/members/hubot');
    await server.drain();
    // An installation's selected repositories changed (PATCH /_admin/apps/{app_slug}/installations/{id}).
    await server.admin('PATCH', `/apps/inspector/installations/${installations.acme}`, { repositories: ['widgets'], sender: 'mona' });
    await server.drain();
    await server.admin('PATCH', `/apps/inspector/installations/${installations.acme}`, { repositories: ['widgets', 'bare'] });
    await server.drain();
    // An organization's installation lifecycle: the sender is the organization (no user acted).
    await server.admin('PUT', `/apps/inspector/installations/${installations.plain}/suspended`);
    await server.admin('DELETE', `/apps/inspector/installations/${installations.plain}/suspended`);
    await server.drain();
  });

  after(async () => {
    await server?.close();
    await receiver?.stop();
  });

  test('every delivery validates; the table of kinds', (t) => {
    const table = new Map<string, { delivered: number; valid: number; errors: string[] }>();
    for (const received of receiver.on('/hook')) {
      const event = String(received.headers['x-vendor-event']);
      const row = table.get(kind(received)) ?? { delivered: 0, valid: 0, errors: [] };
      table.set(kind(received), row);
      row.delivered++;
      const errors = schemas.errors(event, received.json.action, received.json);
      if (errors.length === 0) row.valid++;
      else row.errors.push(...errors.slice(0, 40).map((e) => `${e.instancePath || '/'} ${e.message}${e.params && 'missingProperty' in e.params ? '' : ` ${JSON.stringify(e.params)}`}`));
    }
    const lines = [`schemas: @octokit/openapi-webhooks ${schemas.version} (api.github.com), names mapped`, 'event/action | delivered | valid'];
    for (const [name, row] of [...table].sort()) lines.push(`${name} | ${row.delivered} | ${row.valid}`);
    t.diagnostic(lines.join('\n'));
    const expected = [
      'installation/created', 'installation/deleted', 'installation/new_permissions_accepted', 'installation/suspend', 'installation/unsuspend',
      'installation_repositories/added', 'installation_repositories/removed',
      'issue_comment/created',
      'issues/assigned', 'issues/closed', 'issues/opened', 'issues/reopened', 'issues/unassigned',
      'member/added', 'member/edited', 'member/removed',
      'membership/added', 'membership/removed',
      'organization/member_added', 'organization/member_removed',
      'ping',
      'pull_request/assigned', 'pull_request/closed', 'pull_request/opened', 'pull_request/reopened',
      'pull_request/review_request_removed', 'pull_request/review_requested', 'pull_request/unassigned',
      'repository/archived', 'repository/created', 'repository/deleted', 'repository/edited', 'repository/privatized',
      'repository/publicized', 'repository/renamed', 'repository/transferred', 'repository/unarchived',
      'security_and_analysis',
      'team/added_to_repository', 'team/created', 'team/removed_from_repository', 'team_add',
    ];
    assert.deepEqual([...table.keys()].sort(), expected);
    const failures = [...table].filter(([, row]) => row.valid !== row.delivered).map(([name, row]) => `${name}: ${[...new Set(row.errors)].join('; ')}`);
    assert.equal(failures.length, 0, failures.join("\n"));
  });

  test("the envelope: organization and enterprise for an organization's repository, neither for a user's", () => {
    const byRepository = (name: string) => receiver.on('/hook').filter((r) => r.json.repository?.full_name === name);
    for (const received of byRepository('acme/widgets')) {
      assert.equal(received.json.organization?.login, 'acme', kind(received));
      assert.equal(received.json.enterprise?.slug, 'bigcorp', kind(received));
      assert.deepEqual(Object.keys(received.json.installation).sort(), ['id', 'node_id']);
      assert.equal(received.json.installation.id, installations.acme);
    }
    const [tools] = byRepository('plain/tools');
    assert.equal(tools!.json.organization.login, 'plain');
    assert.equal(tools!.json.enterprise, undefined);
    const [personal] = byRepository('mona/personal');
    assert.equal(personal!.json.organization, undefined);
    assert.equal(personal!.json.enterprise, undefined);
    assert.equal(personal!.json.installation.id, installations.mona);
  });

  test('installation events carry the whole installation', () => {
    const [accepted] = receiver.on('/hook').filter((r) => kind(r) === 'installation/new_permissions_accepted');
    assert.equal(accepted!.json.installation.id, installations.acme);
    assert.equal(accepted!.json.installation.account.login, 'acme');
    assert.equal(accepted!.json.installation.app_slug, 'inspector');
    assert.equal(accepted!.json.organization.login, 'acme');
    const created = receiver.on('/hook').find((r) => kind(r) === 'installation/created' && r.json.installation.id === installations.acme)!;
    assert.deepEqual(created.json.repositories.map((r: any) => [r.full_name, r.private]), [['acme/widgets', false], ['acme/bare', true]]);
    assert.equal(created.json.sender.login, 'mona');
    const deleted = receiver.on('/hook').find((r) => kind(r) === 'installation/deleted')!;
    assert.deepEqual([deleted.json.installation.id, deleted.json.installation.account.login, deleted.json.sender.login], [installations.mona, 'mona', 'mona']);
    assert.ok(deleted.json.repositories.some((r: any) => r.full_name === 'mona/personal'));
    const [suspended] = receiver.on('/hook').filter((r) => kind(r) === 'installation/suspend');
    assert.equal(suspended!.json.installation.account.login, 'mona');
    assert.equal(suspended!.json.organization, undefined);
  });

  test("an installation's sender must be a user: 404 for an unknown login or an organization, 422 for a non-string", async () => {
    const install = (sender: unknown) => server.adminRaw('POST', '/apps/inspector/installations', { account: 'octocat', sender });
    for (const sender of ['nobody', 'acme']) {
      const refused = await install(sender);
      assert.equal(refused.status, 404, refused.text);
      assert.equal(refused.body.message, `User not found: ${sender}`);
    }
    assert.equal((await install(42)).status, 422);
    assert.equal((await server.adminRaw('POST', '/apps/inspector/installations', { account: 'octocat', sender: ['mona'] })).status, 422);
  });

  test('pull requests carry head and base (git data, or the null object id without), merged_by, full teams; issues and comments their associations', () => {
    const pulls = receiver.on('/hook').filter((r) => r.headers['x-vendor-event'] === 'pull_request');
    const withGit = pulls.find((r) => r.json.repository.full_name === 'acme/widgets')!.json.pull_request;
    assert.match(withGit.base.sha, /^[0-9a-f]{40}$/);
    assert.equal(withGit.base.ref, 'main');
    assert.equal(withGit.base.repo.full_name, 'acme/widgets');
    assert.equal(withGit.base.label, 'acme:main');
    assert.equal(withGit.head.sha, withGit.base.sha);
    assert.equal(withGit.statuses_url, `${server.apiUrl}/repos/acme/widgets/statuses/${withGit.head.sha}`);
    const bare = pulls.find((r) => r.json.repository.full_name === 'acme/bare')!.json.pull_request;
    assert.equal(bare.head.sha, '0'.repeat(40), 'a repository without git data: the null object id');
    const merged = pulls.find((r) => r.json.action === 'closed' && r.json.pull_request.merged)!.json.pull_request;
    assert.equal(merged.merged_by.login, 'mona');
    const team = pulls.find((r) => r.json.requested_team)!.json.requested_team;
    assert.deepEqual([team.slug, team.privacy, team.permission, team.members_url], ['reviewers', 'closed', 'pull', `${server.apiUrl}/orgs/acme/teams/reviewers/members{/member}`]);
    const issueDelivery = receiver.on('/hook').find((r) => kind(r) === 'issues/opened')!;
    assert.equal(issueDelivery.json.issue.reactions.total_count, 0);
    assert.equal(issueDelivery.json.issue.author_association, 'MEMBER');
    const comment = receiver.on('/hook').find((r) => kind(r) === 'issue_comment/created')!.json.comment;
    assert.deepEqual([comment.author_association, comment.performed_via_vendor_app, comment.reactions.total_count], ['MEMBER', null, 0]);
    const personal = receiver.on('/hook').find((r) => r.json.repository?.full_name === 'mona/personal')!;
    assert.equal(personal.json.issue.author_association, 'OWNER');
  });

  test('repository, member, organization, membership and team events: their subjects and senders', () => {
    const one = (name: string) => {
      const found = receiver.on('/hook').filter((r) => kind(r) === name);
      assert.equal(found.length, 1, name);
      return found[0]!.json;
    };
    assert.equal(one('repository/created').repository.full_name, 'plain/fresh');
    assert.deepEqual(one('repository/edited').changes, { description: { from: null } });
    assert.equal(one('repository/edited').repository.description, 'now described');
    assert.equal(one('repository/privatized').repository.private, true);
    assert.equal(one('repository/publicized').repository.private, false);
    assert.equal(one('repository/archived').repository.archived, true);
    assert.deepEqual(one('repository/renamed').changes, { repository: { name: { from: 'fresh' } } });
    assert.equal(one('repository/transferred').repository.full_name, 'hubot/renamed');
    assert.equal(one('repository/deleted').repository.full_name, 'hubot/renamed');
    // No user acted on these writes: the sender is the account they are about.
    assert.deepEqual([one('repository/created').sender.login, one('repository/created').sender.type], ['plain', 'Organization']);
    assert.equal(one('repository/deleted').sender.login, 'hubot');

    const added = one('member/added');
    assert.deepEqual([added.member.login, added.repository.full_name, added.changes], ['octocat', 'plain/tools', { permission: { to: 'read' }, role_name: { to: 'read' } }]);
    assert.deepEqual(one('member/edited').changes, { old_permission: { from: 'read' }, permission: { from: 'read', to: 'write' } });
    assert.equal(one('member/removed').member.login, 'octocat');

    const joined = one('organization/member_added');
    assert.deepEqual([joined.membership.user.login, joined.membership.role, joined.membership.state, joined.organization.login], ['hubot', 'member', 'active', 'plain']);
    assert.equal(joined.repository, undefined);
    assert.equal(one('organization/member_removed').membership.user.login, 'hubot');

    const team = one('team/created');
    assert.deepEqual([team.team.slug, team.team.name, team.organization.login], ['crew', 'Crew', 'plain']);
    const membership = one('membership/added');
    assert.deepEqual([membership.scope, membership.member.login, membership.team.slug], ['team', 'hubot', 'crew']);
    assert.equal(one('membership/removed').member.login, 'hubot');
    const teamAdd = one('team_add');
    assert.deepEqual([teamAdd.team.slug, teamAdd.repository.full_name], ['crew', 'plain/tools']);
    for (const action of ['added_to_repository', 'removed_from_repository']) {
      const changed = one(`team/${action}`);
      assert.deepEqual([changed.team.slug, changed.repository.full_name, changed.organization.login], ['crew', 'plain/tools', 'plain'], action);
    }

    const removed = one('installation_repositories/removed');
    assert.deepEqual([removed.repository_selection, removed.repositories_removed.map((r: any) => r.full_name), removed.repositories_added, removed.sender.login], ['selected', ['acme/bare'], [], 'mona']);
    assert.deepEqual([removed.installation.id, removed.installation.account.login], [installations.acme, 'acme']);
    const restored = one('installation_repositories/added');
    assert.deepEqual([restored.repositories_added.map((r: any) => [r.full_name, r.private]), restored.repositories_removed, restored.sender.login], [[['acme/bare', true]], [], 'acme']);

    const suspended = receiver.on('/hook').find((r) => kind(r) === 'installation/suspend' && r.json.installation.id === installations.plain)!;
    assert.deepEqual([suspended.json.sender.login, suspended.json.sender.type, suspended.json.organization.login], ['plain', 'Organization', 'plain']);
  });

  test('new_permissions_accepted: only when the grant gains something, with the installation as accepted', () => {
    const accepted = receiver.on('/hook').filter((r) => kind(r) === 'installation/new_permissions_accepted');
    assert.equal(accepted.length, 1, 'narrowing the grant sends none; widening it back sends one');
    assert.deepEqual([accepted[0]!.json.installation.permissions.issues, accepted[0]!.json.sender.login], ['write', 'mona']);
  });

  test("ping: when an app's webhook URL is first set and each time it changes, to the new URL, valid against the schema", async () => {
    const app = await server.admin('POST', '/apps', { slug: 'pinger', permissions: { metadata: 'read' }, events: ['repository'] });
    const config = async (body: object) => {
      const answer = await server.api('PATCH', '/app/hook/config', { token: await appJwt(server, app), body });
      assert.equal(answer.status, 200, answer.text);
      await server.drain();
    };
    await config({ url: receiver.url('/pinged') });
    await config({ url: receiver.url('/pinged'), content_type: 'form' });
    await config({ content_type: 'json' });
    await config({ url: receiver.url('/pinged-again') });
    const pings = [...receiver.on('/pinged'), ...receiver.on('/pinged-again')];
    assert.deepEqual(pings.map((r) => [r.path, r.headers['x-vendor-event']]), [['/pinged', 'ping'], ['/pinged-again', 'ping']]);
    for (const ping of pings) {
      assert.deepEqual(schemas.errors('ping', undefined, ping.json), []);
      assert.equal(typeof ping.json.zen, 'string');
      assert.equal(ping.json.hook_id, Number(ping.headers['x-vendor-hook-id']));
      assert.deepEqual([ping.json.hook.type, ping.json.hook.app_id, ping.json.hook.events, ping.json.hook.active], ['App', app.id, ['repository'], true]);
      assert.equal(ping.json.installation, undefined);
    }
    assert.equal(pings[1]!.json.hook.config.url, receiver.url('/pinged-again'));
  });

  test('ping: an app created with a webhook URL is pinged once at it, valid against the schema; one created without is not', async () => {
    const app = await server.admin('POST', '/apps', { slug: 'born-pinged', permissions: { metadata: 'read' }, events: ['repository'], webhook: { url: receiver.url('/born') } });
    await server.admin('POST', '/apps', { slug: 'born-silent', permissions: { metadata: 'read' }, events: ['repository'] });
    await server.drain();
    const pings = receiver.on('/born');
    assert.deepEqual(pings.map((r) => r.headers['x-vendor-event']), ['ping']);
    assert.deepEqual(schemas.errors('ping', undefined, pings[0]!.json), []);
    assert.deepEqual([pings[0]!.json.hook.app_id, pings[0]!.json.hook.config.url], [app.id, receiver.url('/born')]);
  });
});

