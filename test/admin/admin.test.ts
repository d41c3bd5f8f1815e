// The operator surface: each admin create, its validation, unknown references (404) and
// duplicates (422 already_exists), real git data, real key pairs, the clock and the drain.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SignJWT, importPKCS8 } from 'jose';
import { createPrivateKey } from 'node:crypto';
import { startServer, type TestServer } from '../helpers/server.ts';
import { formatToken } from '../../src/platform/tokens.ts';

let server: TestServer;

before(async () => {
  server = await startServer();
});
after(() => server.close());

describe('accounts', () => {
  test('users: created as the public API shows them; bad logins and duplicates refused', async () => {
    const user = await server.admin('POST', '/users', { login: 'mona', name: 'Mona', email: 'mona@example.com', site_admin: true });
    assert.equal(user.login, 'mona');
    assert.equal(user.type, 'User');
    assert.equal(user.site_admin, true);
    assert.equal(user.name, 'Mona');
    assert.equal(user.url, `${server.server.ctx.config.apiUrl}/users/mona`);
    const bot = await server.admin('POST', '/users', { login: 'robot', type: 'Bot' });
    assert.equal(bot.type, 'Bot');
    for (const login of ['-bad', 'a--b', 'with space', '']) {
      assert.equal((await server.adminRaw('POST', '/users', { login })).status, 422, login);
    }
    assert.equal((await server.adminRaw('POST', '/users', {})).status, 422);
    assert.equal((await server.adminRaw('POST', '/users', { login: 'x', type: 'Organization' })).status, 422);
    const duplicate = await server.adminRaw('POST', '/users', { login: 'MONA' });
    assert.equal(duplicate.status, 422);
    assert.deepEqual(duplicate.body.errors, [{ resource: 'User', field: 'login', code: 'already_exists' }]);
  });

  test('enterprises, organizations and teams with their roles', async () => {
    await server.admin('POST', '/users', { login: 'hubot' });
    const enterprise = await server.admin('POST', '/enterprises', { slug: 'acme-corp', name: 'ACME', owners: ['mona'] });
    assert.deepEqual(Object.keys(enterprise).sort(), ['id', 'name', 'slug']);
    const org = await server.admin('POST', '/orgs', { login: 'acme', enterprise: 'acme-corp', owners: ['mona'], members: ['hubot'], security_managers: ['hubot'], billing_managers: ['mona'] });
    assert.equal(org.login, 'acme');
    assert.equal(org.type, 'Organization');
    const team = await server.admin('POST', '/orgs/acme/teams', { slug: 'Reviewers', name: 'Reviewers', members: ['hubot'] });
    assert.equal(team.slug, 'reviewers');
    assert.equal((await server.adminRaw('POST', '/orgs/acme/teams', { slug: 'reviewers' })).status, 422);
    assert.equal((await server.adminRaw('POST', '/orgs/nope/teams', { slug: 'x' })).status, 404);
    assert.equal((await server.adminRaw('POST', '/orgs/mona/teams', { slug: 'x' })).status, 404);
    assert.equal((await server.adminRaw('POST', '/orgs', { login: 'other', enterprise: 'nope' })).status, 404);
    assert.equal((await server.adminRaw('POST', '/orgs', { login: 'other', members: ['ghost'] })).status, 404);
    assert.equal((await server.adminRaw('POST', '/orgs', { login: 'mona' })).status, 422);
    assert.equal((await server.adminRaw('POST', '/enterprises', { slug: 'acme-corp' })).status, 422);
    // Nothing of a refused create is left behind.
    assert.equal((await server.adminRaw('POST', '/orgs', { login: 'other' })).status, 201);
  });
});

describe('repositories', () => {
  test('created with their visibility; init_git makes real git data that git clone accepts', async () => {
    const repo = await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets', visibility: 'private', description: 'W', language: 'Go', topics: ['a'], init_git: true });
    assert.equal(repo.full_name, 'acme/widgets');
    assert.equal(repo.private, true);
    assert.equal(repo.visibility, 'private');
    assert.deepEqual(repo.topics, ['a']);
    assert.equal(repo.default_branch, 'main');
    assert.ok(repo.pushed_at);
    const row = await server.server.ctx.db.kysely.selectFrom('repositories').select('git_path').where('id', '=', repo.id).executeTakeFirstOrThrow();
    const dir = mkdtempSync(join(tmpdir(), 'codehost-clone-'));
    try {
      execFileSync('git', ['clone', '--quiet', join(server.server.ctx.config.dataDir, row.git_path!), join(dir, 'w')]);
      assert.equal(readFileSync(join(dir, 'w', 'README.md'), 'utf8'), '# widgets\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const internal = await server.admin('POST', '/repos', { owner: 'acme', name: 'handbook', visibility: 'internal' });
    assert.equal(internal.visibility, 'internal');
    assert.equal((await server.adminRaw('POST', '/repos', { owner: 'mona', name: 'x', visibility: 'internal' })).status, 422);
    assert.equal((await server.adminRaw('POST', '/repos', { owner: 'acme', name: 'WIDGETS' })).status, 422);
    assert.equal((await server.adminRaw('POST', '/repos', { owner: 'ghost', name: 'x' })).status, 404);
    assert.equal((await server.adminRaw('POST', '/repos', { owner: 'acme', name: 'bad/name' })).status, 422);
    assert.equal((await server.adminRaw('POST', '/repos', { owner: 'acme', name: 'x.git' })).status, 422);
    assert.equal((await server.adminRaw('POST', '/repos', { owner: 'acme', name: 'x', visibility: 'secret' })).status, 422);
  });

  test('watch state of a repository', async () => {
    const watch = await server.admin('PUT', '/repos/acme/widgets/subscription', { login: 'hubot', subscribed: true });
    assert.equal(watch.subscribed, true);
    assert.equal(watch.ignored, false);
    const ignored = await server.admin('PUT', '/repos/acme/widgets/subscription', { login: 'hubot', ignored: true });
    assert.equal(ignored.subscribed, false);
    assert.equal(ignored.ignored, true);
    assert.equal((await server.adminRaw('PUT', '/repos/acme/nope/subscription', { login: 'hubot' })).status, 404);
    assert.equal((await server.adminRaw('PUT', '/repos/acme/widgets/subscription', { login: 'ghost' })).status, 404);
  });
});

describe('credentials', () => {
  test('tokens: classic and fine-grained, fixed values must have the kind\'s format', async () => {
    const classic = await server.admin('POST', '/tokens', { login: 'mona', kind: 'classic', scopes: ['repo'] });
    assert.match(classic.token, /^chp_[0-9A-Za-z]{36}$/);
    assert.deepEqual(classic.scopes, ['repo']);
    const fine = await server.admin('POST', '/tokens', { login: 'mona', kind: 'fine_grained', resource_owner: 'acme', repositories: ['widgets'], permissions: { issues: 'write' } });
    assert.match(fine.token, /^chpat_/);
    assert.deepEqual(fine.permissions, { issues: 'write' });
    assert.equal((await server.adminRaw('POST', '/tokens', { login: 'mona', kind: 'classic', value: 'chp_notvalid' })).status, 422);
    assert.equal((await server.adminRaw('POST', '/tokens', { login: 'mona', kind: 'classic', value: fine.token })).status, 422);
    // A value of the right shape whose checksum is wrong is refused; the same body with its checksum is taken.
    const body = 'Q'.repeat(30);
    const wrongChecksum = await server.adminRaw('POST', '/tokens', { login: 'mona', kind: 'classic', value: `chp_${body}000000` });
    assert.equal(wrongChecksum.status, 422, wrongChecksum.text);
    assert.match(wrongChecksum.text, /well-formed classic token/);
    const fixed = await server.adminRaw('POST', '/tokens', { login: 'mona', kind: 'classic', value: formatToken('classic', body) });
    assert.equal(fixed.status, 201, fixed.text);
    assert.equal((await server.adminRaw('POST', '/tokens', { login: 'mona', kind: 'fine_grained', resource_owner: 'acme', repositories: ['nope'] })).status, 404);
    assert.equal((await server.adminRaw('POST', '/tokens', { login: 'mona', kind: 'classic', permissions: { issues: 'read' } })).status, 422);
    assert.equal((await server.adminRaw('POST', '/tokens', { login: 'mona', kind: 'magic' })).status, 422);
    assert.equal((await server.adminRaw('POST', '/tokens', { login: 'ghost', kind: 'classic' })).status, 404);
    const stored = await server.server.ctx.db.kysely.selectFrom('tokens').selectAll().execute();
    assert.ok(stored.every((row) => !JSON.stringify(row).includes(classic.token)), 'only hashes are stored');
  });

  test('apps: a real RS256 key pair whose private half signs accepted JWTs and is never stored', async () => {
    const created = await server.admin('POST', '/apps', { slug: 'ci-bot', owner: 'acme', permissions: { issues: 'write' }, events: ['issues'] });
    assert.match(created.private_key, /BEGIN RSA PRIVATE KEY/);
    assert.ok(created.client_secret.length >= 40);
    const row = await server.server.ctx.db.kysely.selectFrom('apps').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    assert.ok(!JSON.stringify(row).includes(created.client_secret));
    assert.ok(!JSON.stringify(row).includes('PRIVATE KEY'));
    const installation = await server.admin('POST', '/apps/ci-bot/installations', { account: 'acme', repositories: ['widgets'] });
    assert.equal(installation.repository_selection, 'selected');
    const key = await importPKCS8(createPrivateKey(created.private_key).export({ type: 'pkcs8', format: 'pem' }).toString(), 'RS256');
    const now = Math.floor(Date.parse((await server.admin('GET', '/clock')).now) / 1000);
    const jwt = await new SignJWT({}).setProtectedHeader({ alg: 'RS256' }).setIssuer(String(created.id)).setIssuedAt(now - 5).setExpirationTime(now + 300).sign(key);
    const minted = await server.api('POST', `/app/installations/${installation.id}/access_tokens`, { token: jwt, body: {} });
    assert.equal(minted.status, 201);
    assert.equal((await server.adminRaw('POST', '/apps', { slug: 'ci-bot' })).status, 422);
    assert.equal((await server.adminRaw('POST', '/apps', { slug: 'Bad Slug' })).status, 422);
    assert.equal((await server.adminRaw('POST', '/apps', { slug: 'k', private_key: 'not a key' })).status, 422);
    assert.equal((await server.adminRaw('POST', '/apps/ci-bot/installations', { account: 'acme' })).status, 422);
    assert.equal((await server.adminRaw('POST', '/apps/ci-bot/installations', { account: 'mona', permissions: { administration: 'write' } })).status, 422);
    assert.equal((await server.adminRaw('POST', '/apps/nope/installations', { account: 'mona' })).status, 404);
  });

  test('authorizations: an OAuth token by default, an app user token on request', async () => {
    const oauth = await server.admin('POST', '/apps/ci-bot/authorizations', { login: 'mona', scopes: ['repo'], note: 'ci' });
    assert.match(oauth.token, /^cho_/);
    assert.equal(oauth.note, 'ci');
    assert.equal(oauth.user.login, 'mona');
    const appUser = await server.admin('POST', '/apps/ci-bot/authorizations', { login: 'mona', kind: 'app_user' });
    assert.match(appUser.token, /^chu_/);
    assert.equal((await server.adminRaw('POST', '/apps/ci-bot/authorizations', { login: 'ghost' })).status, 404);
    assert.equal((await server.adminRaw('POST', '/apps/nope/authorizations', { login: 'mona' })).status, 404);
  });
});

describe('clock and jobs', () => {
  test('the test clock moves; the drain answers when the queue is empty', async () => {
    const before = Date.parse((await server.admin('GET', '/clock')).now);
    const moved = Date.parse((await server.admin('POST', '/clock', { advance_seconds: 86_400 })).now);
    assert.ok(moved - before >= 86_400_000);
    assert.equal((await server.adminRaw('POST', '/clock', { advance_seconds: -1 })).status, 422);
    assert.deepEqual(await server.admin('POST', '/jobs/drain', { timeout_seconds: 5 }), { pending: 0, deferred: 0, next_run_at: null });
  });

  test('without CODEHOST_TEST_CLOCK the clock routes are 404', async () => {
    const plain = await startServer({ CODEHOST_TEST_CLOCK: '0' });
    try {
      assert.equal((await plain.adminRaw('GET', '/clock')).status, 404);
      assert.equal((await plain.adminRaw('POST', '/clock', { advance_seconds: 1 })).status, 404);
    } finally {
      await plain.close();
    }
  });
});
