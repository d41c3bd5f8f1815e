// The journal explains itself (issue 40): an unserved route with its credential and the platform's
// operation, an injected fault naming its rule, a refused credential's reason, an access rule's
// needs beside what the caller held, what each credential used, and a journal that outlives resets
// and restores; the console's own calls and favicon requests not journaled. The answers stay the
// platform's: only the journal says more.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { appJwt, classicToken, createApp, fineGrainedToken, installationToken, type TestApp } from '../helpers/credentials.ts';
import { ADMIN_TOKEN, startServer, type TestServer } from '../helpers/server.ts';

const run = promisify(execFile);

describe('the journal explains why a call failed and what an app used', () => {
  let server: TestServer;
  let app: TestApp;
  let installation: string;
  let classic: string;
  const newest = async (query = '') => (await server.admin('GET', `/requests${query}`))[0];

  before(async () => {
    server = await startServer({ CODEHOST_TEST_MODE: '1' });
    await server.admin('POST', '/users', { login: 'mona' });
    await server.admin('POST', '/users', { login: 'hubot' });
    await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'] });
    await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets', visibility: 'private' });
    await server.admin('POST', '/repos', { owner: 'acme', name: 'open', visibility: 'public' });
    app = await createApp(server, 'explained-app', { issues: 'write', contents: 'read', metadata: 'read' });
    installation = await installationToken(server, app, 'acme');
    classic = await classicToken(server, 'mona', ['read:user']);
  });
  after(() => server.close());

  test('an unserved route: the same 404, journaled with its credential and the platform operation it is', async () => {
    await server.admin('DELETE', '/requests');
    const answer = await server.api('PUT', '/repos/acme/widgets/pulls/1/merge', { token: installation, body: { merge_method: 'squash' } });
    assert.equal(answer.status, 404);
    assert.equal(answer.body.message, 'Not Found');
    assert.doesNotMatch(answer.text, /unserved|pulls\/merge/);
    const [entry] = await server.admin('GET', `/requests?app=${app.slug}`);
    assert.equal(entry.path, '/repos/acme/widgets/pulls/1/merge');
    assert.equal(entry.status, 404);
    assert.equal(entry.credential.kind, 'installation');
    assert.equal(entry.credential.app, app.slug);
    assert.equal(entry.credential.token_last_eight, installation.slice(-8));
    assert.deepEqual(entry.warnings.filter((w: { code: string }) => w.code === 'unserved_operation'), [{
      code: 'unserved_operation',
      message: 'PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge (pulls/merge) is an operation of the platform codehost does not serve',
    }]);
    assert.equal(entry.access, null);

    // No platform operation at all; an unknown token on an unserved route says why it is refused.
    await server.api('GET', '/no/such/thing', { token: 'chp_notatoken' });
    const unknown = await newest();
    assert.match(unknown.warnings.find((w: { code: string }) => w.code === 'unserved_operation').message, /^GET \/no\/such\/thing is no operation of the platform/);
    assert.equal(unknown.explanation.reason, 'unknown_credential');
    assert.equal(await server.admin('POST', '/requests/count', { warning: 'unserved_operation' }).then((body) => body.count), 2);
  });

  test('an injected fault names its rule in the entry and a warning; a real answer has none', async () => {
    await server.admin('DELETE', '/requests');
    const rule = await server.admin('POST', '/faults', { effect: 'status', status: 500, match: { path: '/repos/acme/open', method: 'GET' } });
    const faulted = await server.api('GET', '/repos/acme/open', { token: installation });
    assert.equal(faulted.status, 500);
    assert.equal(faulted.body.message, 'Internal Server Error');
    const entry = await newest();
    assert.deepEqual(entry.fault, { id: rule.id, effect: 'status', match: { token_last_eight: null, app: null, user: null, method: 'GET', path: '/repos/acme/open' } });
    const warning = entry.warnings.find((w: { code: string }) => w.code === 'injected_fault');
    assert.match(warning.message, new RegExp(`^fault rule ${rule.id} \\(status, matching method GET, path /repos/acme/open\\) answered this 500`));
    const real = await server.api('GET', '/repos/acme/open', { token: installation });
    assert.equal(real.status, 200);
    const clean = await newest();
    assert.equal(clean.fault, null);
    assert.equal(clean.warnings.some((w: { code: string }) => w.code === 'injected_fault'), false);
  });

  test('a 403 or 404 from an access rule: what the operation needs and what the caller held', async () => {
    await server.admin('DELETE', '/requests');
    // A classic token without `repo` does not see the private repository: 404, the scope it needs.
    const hidden = await server.api('GET', '/repos/acme/widgets', { token: classic });
    assert.equal(hidden.status, 404);
    assert.doesNotMatch(hidden.text, /scope/);
    const scopeEntry = await newest();
    assert.equal(scopeEntry.explanation.reason, 'scope_missing');
    assert.deepEqual(scopeEntry.explanation.needed, { scopes: ['repo'] });
    assert.deepEqual(scopeEntry.explanation.held, { kind: 'classic', scopes: ['read:user'] });

    // A fine-grained token short of the permission the endpoint needs: 403, the sets and its own.
    const fine = await fineGrainedToken(server, 'mona', 'acme', { metadata: 'read' });
    const refused = await server.api('GET', '/orgs/acme/code-security/configurations', { token: fine });
    assert.equal(refused.status, 403);
    const fineEntry = await newest();
    assert.equal(fineEntry.explanation.reason, 'permission_missing');
    assert.deepEqual(fineEntry.explanation.needed, { permissions: [{ organization_administration: 'read' }] });
    assert.deepEqual(fineEntry.explanation.held, { kind: 'fine_grained', permissions: { metadata: 'read' } });

    // A user with no role on the private repository: 404, the role they hold (none).
    const outsider = await classicToken(server, 'hubot', ['repo']);
    assert.equal((await server.api('GET', '/repos/acme/widgets', { token: outsider })).status, 404);
    const roleEntry = await newest();
    assert.equal(roleEntry.explanation.reason, 'role_missing');
    assert.equal(roleEntry.explanation.held.role, null);

    // A repository that is not there at all explains nothing: a real 404.
    assert.equal((await server.api('GET', '/repos/acme/nothing', { token: outsider })).status, 404);
    assert.equal((await newest()).explanation, null);
    // Nor does a call that succeeds.
    assert.equal((await server.api('GET', '/repos/acme/widgets', { token: installation })).status, 200);
    assert.equal((await newest()).explanation, null);
  });

  test('what an app used: each entry the rule applied; permissionsUsed per credential beside its grant', async () => {
    await server.admin('DELETE', '/requests');
    assert.equal((await server.api('GET', '/repos/acme/open', { token: installation })).status, 200);
    assert.equal((await newest()).access.used, null, 'a public read needs nothing');
    assert.equal((await server.api('GET', '/repos/acme/widgets/issues/1', { token: installation })).status, 404);
    const issue = await newest();
    assert.deepEqual(issue.access.used, { permissions: { issues: 'read' } });
    assert.deepEqual(issue.access.held, { kind: 'installation', permissions: { issues: 'write', contents: 'read', metadata: 'read' } });
    // Refused: the org's configurations need organization_administration, which the installation lacks.
    const refusedCall = await server.api('GET', '/orgs/acme/code-security/configurations', { token: installation });
    assert.equal(refusedCall.status, 403, refusedCall.text);
    const refusedEntry = await newest();
    const jwt = await appJwt(server, app);
    assert.equal((await server.api('GET', '/app', { authorization: `Bearer ${jwt}` })).status, 200);

    const [used, ...others] = await server.admin('GET', `/requests/permissions-used?app=${app.slug}&installation=${issue.credential.installation}`);
    assert.deepEqual(others, []);
    assert.equal(used.credential.kind, 'installation');
    assert.equal(used.requests, 2);
    assert.deepEqual(used.used, { scopes: [], permissions: { issues: 'read' } });
    assert.deepEqual(used.granted, { kind: 'installation', permissions: { issues: 'write', contents: 'read', metadata: 'read' } });
    assert.deepEqual(used.unused, { scopes: [], permissions: { issues: 'read', contents: 'none', metadata: 'none' } });
    assert.deepEqual(used.operations[issue.operation], { calls: 1, used: { permissions: { issues: 'read' } } });
    assert.deepEqual(used.operations['repos/get-repository'], { calls: 1, used: null });
    // The refused call is not a use: listed apart, with what it needed.
    assert.equal(used.operations[refusedEntry.operation], undefined);
    assert.deepEqual(used.refused[refusedEntry.operation], { calls: 1, reason: 'permission_missing', needed: { permissions: [{ organization_administration: 'read' }] } });
    // By token (whole or its last eight), and the app's JWT calls as a credential of their own.
    assert.equal((await server.admin('GET', `/requests/permissions-used?token=${installation}`)).length, 1);
    const byApp = await server.admin('GET', `/requests/permissions-used?app=${app.slug}`);
    assert.deepEqual(byApp.map((group: { credential: { kind: string } }) => group.credential.kind).sort(), ['installation', 'jwt']);
    assert.equal((await server.adminRaw('GET', '/requests/permissions-used?installation=abc')).status, 422);
    // The CLI asks the same.
    const { stdout } = await run(process.execPath, ['bin/codehost.js', 'admin', 'requests', 'permissions-used', '--app', app.slug, '--installation', String(issue.credential.installation)], {
      cwd: new URL('../..', import.meta.url).pathname, timeout: 60_000, env: { PATH: process.env.PATH, CODEHOST_URL: server.url, CODEHOST_ADMIN_TOKEN: ADMIN_TOKEN },
    });
    assert.deepEqual(JSON.parse(stdout)[0].used, used.used);
  });

  // It moves the test clock past every token's expiry: after the tests that use them.
  test('a 401 says which credential and why: expired (when), unknown; a suspended user too; the answers unchanged', async () => {
    await server.admin('DELETE', '/requests');
    const expiring = await createApp(server, 'expiring-app', { metadata: 'read' });
    const token = await installationToken(server, expiring, 'hubot');
    // A suspended installation's token: 403, as the platform answers; the entry says which and why.
    const [{ id: installationId }] = await server.admin('GET', `/apps/${expiring.slug}/installations`);
    await server.admin('PUT', `/apps/${expiring.slug}/installations/${installationId}/suspended`);
    const suspendedInstallation = await server.api('GET', '/repos/acme/open', { token });
    assert.equal(suspendedInstallation.status, 403);
    assert.equal(suspendedInstallation.body.message, 'This installation has been suspended');
    const suspendedEntry0 = await newest();
    assert.equal(suspendedEntry0.explanation.reason, 'suspended_installation');
    assert.match(suspendedEntry0.explanation.message, new RegExp(`^installation ${installationId} was suspended at `));
    await server.admin('DELETE', `/apps/${expiring.slug}/installations/${installationId}/suspended`);
    // A JWT signed by another key: invalid_jwt.
    const stranger = await createApp(server, 'stranger-app', {});
    const forged = (await appJwt(server, stranger)).split('.');
    const mine = (await appJwt(server, expiring)).split('.');
    assert.equal((await server.api('GET', '/app', { authorization: `Bearer ${mine[0]}.${mine[1]}.${forged[2]}` })).status, 401);
    assert.equal((await newest()).explanation.reason, 'invalid_jwt');
    await server.advance(61 * 60);
    const expired = await server.api('GET', '/repos/acme/open', { token });
    assert.equal(expired.status, 401);
    assert.equal(expired.body.message, 'Bad credentials');
    assert.doesNotMatch(expired.text, /expired/);
    const entry = await newest();
    assert.equal(entry.explanation.reason, 'expired_credential');
    assert.equal(entry.explanation.credential.kind, 'installation');
    assert.equal(entry.explanation.credential.token_last_eight, token.slice(-8));
    assert.match(entry.explanation.credential.expired_at, /^\d{4}-\d\d-\d\dT/);
    assert.match(entry.explanation.message, /expired at /);
    assert.equal(entry.credential.kind, 'installation');
    assert.equal(entry.credential.token_last_eight, token.slice(-8));
    assert.equal(entry.access, null);

    const revoked = await classicToken(server, 'hubot', []);
    await server.admin('DELETE', '/requests');
    // A token the server has never issued (its checksum right): unknown.
    const unknownToken = `${revoked.slice(0, 4)}${'x'.repeat(revoked.length - 4)}`;
    const unknown = await server.api('GET', '/user', { token: unknownToken });
    assert.equal(unknown.status, 401);
    assert.equal((await newest()).explanation.reason, 'unknown_credential');

    const fresh = await classicToken(server, 'hubot', []);
    await server.admin('PUT', '/users/hubot/suspended', { reason: 'testing' });
    const suspended = await server.api('GET', '/user', { token: fresh });
    assert.equal(suspended.status, 403);
    const suspendedEntry = await newest();
    assert.equal(suspendedEntry.explanation.reason, 'suspended_user');
    assert.equal(suspendedEntry.explanation.credential.kind, 'classic');
    await server.admin('DELETE', '/users/hubot/suspended');
  });

  test('the journal outlives restore and reset; DELETE clears it; the console\'s calls and favicons are not journaled', async () => {
    await server.admin('DELETE', '/requests');
    await server.admin('POST', '/snapshots', { name: 'journal-outlives' });
    await server.api('GET', '/repos/acme/open', { token: installation });
    await server.admin('POST', '/snapshots/journal-outlives/restore', {});
    await server.admin('POST', '/reset', { to: 'empty' });
    const kept = await server.admin('GET', '/requests');
    assert.ok(kept.some((entry: { path: string }) => entry.path === '/repos/acme/open'), 'the call before the restore and the reset is still there');
    assert.ok(kept.some((entry: { path: string }) => entry.path === '/_admin/reset'));
    // Unless asked: then only the asking call is left.
    await server.admin('POST', '/snapshots', { name: 'journal-cleared' });
    await server.admin('POST', '/snapshots/journal-cleared/restore', { journal: 'clear' });
    assert.deepEqual((await server.admin('GET', '/requests')).map((entry: { path: string }) => entry.path), ['/_admin/snapshots/journal-cleared/restore']);
    await server.admin('POST', '/users', { login: 'temporary' });
    await server.admin('POST', '/reset', { to: 'empty', journal: 'clear' });
    assert.deepEqual((await server.admin('GET', '/requests')).map((entry: { path: string }) => entry.path), ['/_admin/reset']);
    assert.equal((await server.adminRaw('POST', '/reset', { to: 'empty', journal: 'forget' })).status, 422);

    await server.admin('DELETE', '/requests');
    const consoleCall = await fetch(`${server.url}/_admin/users`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'x-codehost-console': '1' } });
    assert.equal(consoleCall.status, 200);
    assert.equal((await fetch(`${server.url}/favicon.ico`)).status, 404);
    assert.deepEqual(await server.admin('GET', '/requests'), []);
  });
});
