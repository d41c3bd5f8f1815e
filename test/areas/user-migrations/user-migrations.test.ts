// User migrations end to end: start, list, status, repositories; validation; the export job and the
// archive it streams (unpacked with the system tar, git data cloned with git); every exclude flag;
// the download redirect and its signed URL (Range, tampering, expiry); archive deletion and the
// 7-day expiry; repository locks; a failing export; access for every credential kind.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Octokit } from '@octokit/core';
import { appJwt, appUserToken, classicToken, createApp, fineGrainedToken, installationToken, oauthToken } from '../../helpers/credentials.ts';
import { repositoryWithBrokenGitData } from '../../helpers/migrations.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

let server: TestServer;
let alice: string;
let bob: string;
const scratch = mkdtempSync(join(tmpdir(), 'codehost-migrations-'));

const OFFSET_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/;

before(async () => {
  // alice exports more often than the default cap of kept archives allows (test/deploy/bounded-storage.test.ts tests the cap).
  server = await startServer({ CODEHOST_MIGRATION_ARCHIVES_PER_USER: '1000' });
  await server.admin('POST', '/users', { login: 'alice', name: 'Alice', email: 'alice@example.com' });
  await server.admin('POST', '/users', { login: 'bob', email: 'bob@example.com' });
  await server.admin('POST', '/users', { login: 'carol' });
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['alice'], members: ['bob'] });
  await server.admin('POST', '/repos', { owner: 'alice', name: 'alpha', init_git: true, description: 'first' });
  await server.admin('POST', '/repos', { owner: 'alice', name: 'beta', init_git: true, visibility: 'private' });
  await server.admin('POST', '/repos', { owner: 'alice', name: 'gamma' });
  await server.admin('POST', '/repos', { owner: 'bob', name: 'bobrepo', init_git: true });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'orgrepo', init_git: true });
  // Activity on alpha: an issue with comments, assigned and closed; a pull request with a reviewer.
  await server.admin('POST', '/repos/alice/alpha/issues', { author: 'bob', title: 'Broken build', body: 'It fails', assignees: ['alice'] });
  await server.admin('POST', '/repos/alice/alpha/issues/1/comments', { author: 'carol', body: 'Same here' });
  await server.admin('POST', '/repos/alice/alpha/issues/1/comments', { author: 'alice', body: 'Fixed' });
  await server.admin('PATCH', '/repos/alice/alpha/issues/1', { actor: 'alice', state: 'closed' });
  await server.admin('POST', '/repos/alice/alpha/issues', { author: 'alice', title: 'Fix it', pull_request: true, reviewers: ['bob'] });
  await server.admin('POST', '/repos/alice/beta/issues', { author: 'alice', title: 'Private plans' });
  // `repo`: the exports include the private repository beta (a token without it may export only public ones)
  alice = await classicToken(server, 'alice', ['repo']);
  bob = await classicToken(server, 'bob', []);
});
after(async () => {
  await server.close();
  rmSync(scratch, { recursive: true, force: true });
});

async function start(body: unknown, token = alice) {
  const response = await server.api('POST', '/user/migrations', { token, body });
  assert.equal(response.status, 201, response.text);
  return response.body;
}

async function status(id: number, token = alice) {
  return (await server.api('GET', `/user/migrations/${id}`, { token })).body;
}

/** Follows the download redirect and returns the signed URL's response. */
async function download(id: number, headers: Record<string, string> = {}) {
  const redirect = await server.api('GET', `/user/migrations/${id}/archive`, { token: alice });
  assert.equal(redirect.status, 302, redirect.text);
  return fetch(redirect.headers.get('location')!, { headers });
}

/** Starts a migration, waits for the export, downloads and unpacks the archive; returns the folder and its files. */
async function exportAndUnpack(body: unknown): Promise<{ id: number; dir: string; files: string[] }> {
  const migration = await start(body);
  await server.drain();
  assert.equal((await status(migration.id)).state, 'exported');
  const response = await download(migration.id);
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('content-type'), 'application/gzip');
  const file = join(scratch, `${migration.id}.tar.gz`);
  writeFileSync(file, Buffer.from(await response.arrayBuffer()));
  const dir = join(scratch, String(migration.id));
  execFileSync('mkdir', ['-p', dir]);
  execFileSync('tar', ['-xzf', file, '-C', dir]);
  return { id: migration.id, dir, files: walk(dir) };
}

/** The kinds of JSON files the spec's archive layout lists (besides schema.json). */
const SPEC_KINDS = [
  'attachments', 'bases', 'commit_comments', 'issue_comments', 'issue_events', 'issues', 'milestones', 'organizations', 'projects',
  'protected_branches', 'pull_request_reviews', 'pull_requests', 'releases', 'repositories', 'review_comments', 'users',
];

function walk(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)) + (entry.isDirectory() ? '/' : ''))
    .sort();
}

const json = (dir: string, name: string) => JSON.parse(readFileSync(join(dir, name), 'utf8'));
const topLevel = (files: string[]) => files.filter((f) => !f.startsWith('repositories/') || f === 'repositories/');

/** Clones the archive's bare git data and returns the README of the clone. */
function cloneReadme(dir: string, owner: string, name: string): string {
  const target = join(dir, `clone-${name}`);
  execFileSync('git', ['clone', '--quiet', join(dir, 'repositories', owner, `${name}.git`), target], { stdio: 'pipe' });
  return readFileSync(join(target, 'README.md'), 'utf8');
}

describe('start, list, status and repositories', () => {
  test('start answers 201 pending with the flags, the repositories and the spec fields', async () => {
    const migration = await start({ repositories: ['alpha', 'alice/beta'], exclude_attachments: true });
    assert.equal(migration.state, 'pending');
    assert.equal(migration.owner.login, 'alice');
    assert.equal(typeof migration.node_id, 'string');
    assert.match(migration.guid, /^[0-9a-f-]{36}$/);
    assert.deepEqual(
      [migration.lock_repositories, migration.exclude_metadata, migration.exclude_git_data, migration.exclude_attachments, migration.exclude_releases, migration.exclude_owner_projects, migration.org_metadata_only],
      [false, false, false, true, false, false, false],
    );
    assert.deepEqual(migration.repositories.map((r: any) => r.full_name), ['alice/alpha', 'alice/beta']);
    const [alpha] = migration.repositories;
    assert.equal(alpha.clone_url, `${server.server.ctx.config.webUrl}/alice/alpha.git`);
    assert.equal(alpha.open_issues_count, 1, 'the pull request is open, the issue closed');
    assert.deepEqual(alpha.permissions, { admin: true, push: true, pull: true });
    assert.equal(migration.url, `${server.server.ctx.config.apiUrl}/user/migrations/${migration.id}`);
    assert.match(migration.created_at, OFFSET_TIME);
    assert.match(migration.updated_at, OFFSET_TIME);
    assert.equal(migration.exclude, undefined);

    await server.drain();
    const done = await status(migration.id);
    assert.equal(done.state, 'exported');
    assert.equal(done.exclude_attachments, true);
    assert.equal(done.org_metadata_only, false);
  });

  test('start with `exclude` leaves the repositories out of the answer', async () => {
    const migration = await start({ repositories: ['gamma'], exclude: ['repositories'] });
    assert.equal(migration.repositories, undefined);
    assert.deepEqual(migration.exclude, ['repositories']);
    const repositories = await server.api('GET', `/user/migrations/${migration.id}/repositories`, { token: alice });
    assert.deepEqual(repositories.body.map((r: any) => r.name), ['gamma']);
  });

  test('status with `exclude`, conditional requests, and names with `.git` or another case', async () => {
    const migration = await start({ repositories: ['ALPHA.git'] });
    const full = await server.api('GET', `/user/migrations/${migration.id}`, { token: alice });
    assert.equal(full.status, 200);
    assert.deepEqual(full.body.repositories.map((r: any) => r.name), ['alpha']);
    assert.ok(full.headers.get('last-modified'));
    const slim = await server.api('GET', `/user/migrations/${migration.id}?exclude=repositories`, { token: alice });
    assert.equal(slim.body.repositories, undefined);
    assert.deepEqual(slim.body.exclude, ['repositories']);
    const bad = await server.api('GET', `/user/migrations/${migration.id}?exclude=owner`, { token: alice });
    assert.equal(bad.status, 422);
    await server.drain();
    const current = await server.api('GET', `/user/migrations/${migration.id}`, { token: alice });
    const again = await server.api('GET', `/user/migrations/${migration.id}`, { token: alice, headers: { 'if-none-match': current.headers.get('etag')! } });
    assert.equal(again.status, 304);
    assert.equal((await server.api('GET', '/user/migrations/999999', { token: alice })).status, 404);
    assert.equal((await server.api('GET', '/user/migrations/abc', { token: alice })).status, 422);
  });

  test('list: only the caller\'s migrations, oldest first, paginated with Link', async () => {
    await start({ repositories: ['bobrepo'] }, bob);
    const all = await server.api('GET', '/user/migrations', { token: alice });
    assert.equal(all.status, 200);
    assert.ok(all.body.length >= 3);
    assert.ok(all.body.every((m: any) => m.owner.login === 'alice'));
    assert.deepEqual(all.body.map((m: any) => m.id), [...all.body.map((m: any) => m.id)].sort((a: number, b: number) => a - b));
    assert.ok(all.body.every((m: any) => Array.isArray(m.repositories) && typeof m.node_id === 'string'));

    const first = await server.api('GET', '/user/migrations?per_page=2', { token: alice });
    assert.equal(first.body.length, 2);
    const link = first.headers.get('link')!;
    assert.match(link, /rel="next"/);
    assert.match(link, /rel="last"/);
    assert.match(link, new RegExp(`<${server.server.ctx.config.apiUrl}/user/migrations\\?per_page=2&page=2>; rel="next"`));
    const second = await server.api('GET', '/user/migrations?per_page=2&page=2', { token: alice });
    assert.match(second.headers.get('link')!, /rel="prev".*rel="first"/);
    assert.notEqual(second.body[0].id, first.body[0].id);
    const capped = await server.api('GET', '/user/migrations?per_page=1000', { token: alice });
    assert.equal(capped.status, 200);
    assert.equal(capped.body.length, all.body.length);
    for (const perPage of ['0', '-1', 'abc', '1.5']) {
      assert.equal((await server.api('GET', `/user/migrations?per_page=${perPage}`, { token: alice })).status, 422, perPage);
    }
    assert.equal((await server.api('GET', '/user/migrations?page=0', { token: alice })).status, 422);
    const beyond = await server.api('GET', '/user/migrations?page=50', { token: alice });
    assert.deepEqual(beyond.body, []);
    const bobs = await server.api('GET', '/user/migrations', { token: bob });
    assert.deepEqual(bobs.body.map((m: any) => m.owner.login), ['bob']);
  });

  test('repositories of a migration, in request order, paginated', async () => {
    const migration = await start({ repositories: ['gamma', 'alpha', 'beta'], exclude: ['repositories'] });
    const page = await server.api('GET', `/user/migrations/${migration.id}/repositories?per_page=2`, { token: alice });
    assert.equal(page.status, 200);
    assert.deepEqual(page.body.map((r: any) => r.name), ['gamma', 'alpha']);
    assert.match(page.headers.get('link')!, /page=2>; rel="next"/);
    const rest = await server.api('GET', `/user/migrations/${migration.id}/repositories?per_page=2&page=2`, { token: alice });
    assert.deepEqual(rest.body.map((r: any) => r.name), ['beta']);
    assert.equal(rest.body[0].private, true);
    assert.equal((await server.api('GET', '/user/migrations/999999/repositories', { token: alice })).status, 404);
    assert.equal((await server.api('GET', `/user/migrations/${migration.id}/repositories`, { token: bob })).status, 404);
    await server.drain();
  });

  test('@octokit/core starts a migration and reads its status', async () => {
    const octokit = new Octokit({ auth: alice, baseUrl: server.apiUrl });
    const started = await octokit.request('POST /user/migrations', { repositories: ['alpha'], exclude_git_data: true });
    assert.equal(started.status, 201);
    await server.drain();
    const read = await octokit.request('GET /user/migrations/{migration_id}', { migration_id: Number(started.data.id) });
    assert.equal(read.data.state, 'exported');
    assert.equal(read.data.exclude_git_data, true);
    await assert.rejects(octokit.request('GET /user/migrations/{migration_id}', { migration_id: 999999 }), (error: any) => error.status === 404);
  });
});

describe('validation', () => {
  const cases: [string, unknown, (errors: any[]) => void][] = [
    ['repositories missing', {}, (e) => assert.deepEqual(e[0], { resource: 'body', field: 'repositories', code: 'missing_field' })],
    ['repositories empty without org_metadata_only', { repositories: [] }, (e) => assert.equal(e[0].field, 'repositories')],
    ['repositories with org_metadata_only', { repositories: ['alpha'], org_metadata_only: true }, (e) => assert.match(e[0].message, /must be empty/)],
    ['an unknown repository', { repositories: ['nope'] }, (e) => assert.match(e[0].message, /nope is not a repository owned by alice/)],
    ['another user\'s repository', { repositories: ['bob/bobrepo'] }, (e) => assert.match(e[0].message, /^bob\/bobrepo is not a repository owned by alice$/)],
    ['an organization\'s repository', { repositories: ['acme/orgrepo'] }, (e) => assert.equal(e[0].code, 'custom')],
    ['a malformed name', { repositories: ['alice/alpha/x'] }, (e) => assert.equal(e[0].field, 'repositories')],
    ['a duplicate', { repositories: ['alpha', 'alice/ALPHA'] }, (e) => assert.match(e[0].message, /more than once/)],
    ['every bad name is reported', { repositories: ['nope', 'alpha', 'zilch'] }, (e) => assert.deepEqual(e.map((x) => x.message.split(' ')[0]), ['nope', 'zilch'])],
    ['an empty name', { repositories: [''] }, (e) => assert.equal(e[0].code, 'invalid')],
    ['repositories not an array', { repositories: 'alpha' }, (e) => assert.equal(e[0].code, 'invalid')],
    ['a flag that is not a boolean', { repositories: ['alpha'], lock_repositories: 'yes' }, (e) => assert.equal(e[0].field, 'lock_repositories')],
    ['an unknown exclude value', { repositories: ['alpha'], exclude: ['owner'] }, (e) => assert.equal(e[0].code, 'invalid')],
  ];
  for (const [name, body, check] of cases) {
    test(`422: ${name}`, async () => {
      const before = (await server.api('GET', '/user/migrations?per_page=100', { token: alice })).body.length;
      const response = await server.api('POST', '/user/migrations', { token: alice, body });
      assert.equal(response.status, 422, response.text);
      assert.equal(response.body.message, 'Validation Failed');
      check(response.body.errors);
      const afterwards = (await server.api('GET', '/user/migrations?per_page=100', { token: alice })).body.length;
      assert.equal(afterwards, before, 'nothing was stored');
    });
  }

  test('400: malformed JSON and a body that is not an object', async () => {
    const malformed = await server.api('POST', '/user/migrations', { token: alice, rawBody: '{"repositories": [', headers: { 'content-type': 'application/json' } });
    assert.equal(malformed.status, 400);
    assert.equal(malformed.body.message, 'Problems parsing JSON');
    const array = await server.api('POST', '/user/migrations', { token: alice, body: ['alpha'] });
    assert.equal(array.status, 400);
    assert.equal(array.body.message, 'Body should be a JSON object');
  });
});

describe('the archive', () => {
  test('default: schema, records in the platform shapes, attachments folder, git data that git clone accepts', async () => {
    const { dir, files } = await exportAndUnpack({ repositories: ['alpha', 'beta', 'gamma'] });
    assert.deepEqual(topLevel(files), [
      'attachments/', ...SPEC_KINDS.map((kind) => `${kind}_000001.json`), 'repositories/', 'schema.json',
    ].sort());
    assert.deepEqual(json(dir, 'schema.json'), { version: '1.2.0' });

    const users = json(dir, 'users_000001.json');
    assert.deepEqual(users.map((u: any) => u.login).sort(), ['alice', 'bob', 'carol']);
    const owner = users.find((u: any) => u.login === 'alice');
    assert.equal(owner.email, 'alice@example.com');
    assert.equal(users.find((u: any) => u.login === 'bob').email, undefined, 'other users\' e-mail stays private');
    assert.equal(owner.url, `${server.server.ctx.config.apiUrl}/users/alice`);

    const orgs = json(dir, 'organizations_000001.json');
    assert.deepEqual(orgs.map((o: any) => [o.login, o.roles]), [['acme', ['owner']]]);

    const repositories = json(dir, 'repositories_000001.json');
    assert.deepEqual(repositories.map((r: any) => r.full_name), ['alice/alpha', 'alice/beta', 'alice/gamma']);
    assert.equal(repositories[0].description, 'first');

    const issues = json(dir, 'issues_000001.json');
    assert.deepEqual(issues.map((i: any) => [i.number, i.title, i.state]), [[1, 'Broken build', 'closed'], [1, 'Private plans', 'open']]);
    assert.equal(issues[0].url, `${server.server.ctx.config.apiUrl}/repos/alice/alpha/issues/1`);
    assert.equal(issues[0].user.login, 'bob');
    assert.deepEqual(issues[0].assignees.map((u: any) => u.login), ['alice']);
    assert.equal(issues[0].comments, 2);

    const pulls = json(dir, 'pull_requests_000001.json');
    assert.equal(pulls.length, 1);
    assert.equal(pulls[0].number, 2);
    assert.ok(pulls[0].pull_request.url.endsWith('/repos/alice/alpha/pulls/2'));
    assert.deepEqual(pulls[0].requested_reviewers.map((u: any) => u.login), ['bob']);

    const comments = json(dir, 'issue_comments_000001.json');
    assert.deepEqual(comments.map((c: any) => [c.user.login, c.body]), [['carol', 'Same here'], ['alice', 'Fixed']]);
    assert.ok(comments[0].issue_url.endsWith('/repos/alice/alpha/issues/1'));

    const events = json(dir, 'issue_events_000001.json');
    assert.ok(events.some((e: any) => e.event === 'closed' && e.actor.login === 'alice' && e.issue_url.endsWith('/issues/1')));

    assert.deepEqual(readdirSync(join(dir, 'attachments')), []);
    assert.deepEqual(readdirSync(join(dir, 'repositories', 'alice')).sort(), ['alpha.git', 'beta.git'], 'gamma has no git data');
    assert.equal(cloneReadme(dir, 'alice', 'alpha'), '# alpha\n');
    assert.equal(cloneReadme(dir, 'alice', 'beta'), '# beta\n');
  });

  test('every kind the layout lists has its file, an empty array where there is nothing', async () => {
    const { dir, files } = await exportAndUnpack({ repositories: ['gamma'] });
    for (const kind of SPEC_KINDS) {
      assert.ok(files.includes(`${kind}_000001.json`), kind);
      assert.ok(Array.isArray(json(dir, `${kind}_000001.json`)), kind);
    }
    for (const kind of ['attachments', 'bases', 'commit_comments', 'milestones', 'projects', 'protected_branches', 'pull_request_reviews', 'releases', 'review_comments']) {
      assert.deepEqual(json(dir, `${kind}_000001.json`), [], kind);
      assert.ok(!files.includes(`${kind}_000002.json`), kind);
    }
    // gamma has no issues yet: its kinds with no records are empty arrays too.
    for (const kind of ['issues', 'pull_requests', 'issue_comments', 'issue_events']) assert.deepEqual(json(dir, `${kind}_000001.json`), [], kind);
    assert.deepEqual(json(dir, 'repositories_000001.json').map((r: any) => r.full_name), ['alice/gamma']);
  });

  test('record files are split every 1,000 records', async () => {
    // 2,100 issues in gamma, written with SQL: the split is about volume, not about how issues are opened.
    const db = server.server.ctx.db.kysely;
    const gamma = await db.selectFrom('repositories').select('id').where('name', '=', 'gamma').executeTakeFirstOrThrow();
    const aliceRow = await db.selectFrom('users').select('id').where('login', '=', 'alice').executeTakeFirstOrThrow();
    const now = new Date().toISOString();
    for (let first = 1; first <= 2100; first += 300) {
      await db.insertInto('issues').values(Array.from({ length: 300 }, (_, i) => ({
        repository_id: gamma.id, number: first + i, author_id: aliceRow.id, title: `Issue ${first + i}`, body: null, state: 'open', state_reason: null,
        is_pull_request: 0, merged_at: null, closed_at: null, issue_type_id: null, created_at: now, updated_at: now,
      }))).execute();
    }
    const { dir, files } = await exportAndUnpack({ repositories: ['gamma'] });
    assert.deepEqual(files.filter((f) => f.startsWith('issues_')), ['issues_000001.json', 'issues_000002.json', 'issues_000003.json']);
    const sizes = ['issues_000001.json', 'issues_000002.json', 'issues_000003.json'].map((f) => json(dir, f).length);
    assert.deepEqual(sizes, [1000, 1000, 100]);
    assert.equal(json(dir, 'issues_000003.json').at(-1).number, 2100);
    const progress = await server.admin('GET', `/migrations/${(await server.api('GET', '/user/migrations?per_page=100', { token: alice })).body.at(-1).id}`);
    assert.ok(progress.records_exported >= 2102);
  });

  test('exclude_metadata: only the git source', async () => {
    const { dir, files } = await exportAndUnpack({ repositories: ['alpha'], exclude_metadata: true });
    assert.deepEqual(topLevel(files), ['repositories/', 'schema.json']);
    assert.equal(cloneReadme(dir, 'alice', 'alpha'), '# alpha\n');
  });

  test('exclude_git_data: no repositories folder', async () => {
    const { files } = await exportAndUnpack({ repositories: ['alpha'], exclude_git_data: true });
    assert.ok(!files.some((f) => f.startsWith('repositories/')));
    assert.ok(files.includes('issues_000001.json'));
    assert.ok(files.includes('attachments/'));
  });

  test('exclude_attachments: no attachments folder', async () => {
    const { files } = await exportAndUnpack({ repositories: ['alpha'], exclude_attachments: true });
    assert.ok(!files.includes('attachments/'));
    assert.ok(!files.includes('attachments_000001.json'));
    assert.ok(files.includes('releases_000001.json'));
    assert.ok(files.includes('repositories/alice/alpha.git/HEAD'));
  });

  test('exclude_releases and exclude_owner_projects: stored, shown, and each drops its own file', async () => {
    for (const [flag, dropped, kept] of [['exclude_releases', 'releases', 'projects'], ['exclude_owner_projects', 'projects', 'releases']] as const) {
      const { id, files } = await exportAndUnpack({ repositories: ['alpha'], [flag]: true });
      assert.equal((await status(id))[flag], true);
      assert.ok(!files.some((f) => f.startsWith(`${dropped}_`)), flag);
      assert.ok(files.includes(`${kept}_000001.json`), flag);
      assert.ok(files.includes('issues_000001.json'));
    }
  });

  test('org_metadata_only: the user and their organizations, nothing else', async () => {
    const { dir, files, id } = await exportAndUnpack({ repositories: [], org_metadata_only: true, exclude_metadata: true });
    assert.deepEqual(files, ['organizations_000001.json', 'schema.json', 'users_000001.json']);
    assert.deepEqual(json(dir, 'users_000001.json').map((u: any) => u.login), ['alice']);
    assert.deepEqual(json(dir, 'organizations_000001.json').map((o: any) => o.login), ['acme']);
    const shown = await status(id);
    assert.equal(shown.org_metadata_only, true);
    assert.deepEqual(shown.repositories, []);
  });

  test('a failing export ends `failed` and leaves no archive', async () => {
    await repositoryWithBrokenGitData(server, 'alice', 'broken');
    const db = server.server.ctx.db.kysely;
    const migration = await start({ repositories: ['alpha', 'broken'] });
    await server.drain();
    const failed = await status(migration.id);
    assert.equal(failed.state, 'failed');
    assert.equal((await server.api('GET', `/user/migrations/${migration.id}/archive`, { token: alice })).status, 404);
    assert.equal((await server.api('DELETE', `/user/migrations/${migration.id}/archive`, { token: alice })).status, 404);
    const view = await server.admin('GET', `/migrations/${migration.id}`);
    assert.match(view.failure, /git data of repositories\/alice\/broken\.git is missing or unreadable/);
    assert.equal(view.archive, null);
    const folder = join(server.server.ctx.config.dataDir, 'migration-archives', String(migration.id));
    assert.deepEqual(existsSync(folder) ? readdirSync(folder) : [], [], 'no archive, finished or partial');

    // Git data holding something other than files and directories (here a FIFO) fails mid-stream.
    await server.admin('POST', '/repos', { owner: 'alice', name: 'odd', init_git: true });
    const odd = await db.selectFrom('repositories').select('git_path').where('name', '=', 'odd').executeTakeFirstOrThrow();
    execFileSync('mkfifo', [join(server.server.ctx.config.dataDir, odd.git_path!, 'objects', 'pipe')]);
    const midway = await start({ repositories: ['alpha', 'odd'] });
    await server.drain();
    assert.equal((await status(midway.id)).state, 'failed');
    assert.match((await server.admin('GET', `/migrations/${midway.id}`)).failure, /unexpected file: repositories\/alice\/odd\.git\/objects\/pipe/);
    const midwayFolder = join(server.server.ctx.config.dataDir, 'migration-archives', String(midway.id));
    assert.deepEqual(existsSync(midwayFolder) ? readdirSync(midwayFolder) : [], []);
  });
});

describe('download', () => {
  let exported: number;

  before(async () => {
    exported = (await start({ repositories: ['alpha'] })).id;
    await server.drain();
  });

  test('302 to a signed URL served by codehost: the whole archive, as application/gzip', async () => {
    const redirect = await server.api('GET', `/user/migrations/${exported}/archive`, { token: alice });
    assert.equal(redirect.status, 302);
    const location = new URL(redirect.headers.get('location')!);
    assert.equal(`${location.origin}${location.pathname}`, `${server.server.ctx.config.apiUrl}/_storage/user-migrations/${exported}/archive.tar.gz`);
    assert.ok(location.searchParams.get('signature'));
    const expires = Number(location.searchParams.get('expires'));
    const now = Date.parse((await server.admin('GET', '/clock')).now) / 1000;
    assert.ok(expires > now && expires <= now + server.server.ctx.config.migrations.downloadUrlSeconds + 1);

    const response = await fetch(location);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'application/gzip');
    assert.equal(response.headers.get('accept-ranges'), 'bytes');
    const body = Buffer.from(await response.arrayBuffer());
    assert.equal(Number(response.headers.get('content-length')), body.length);
    assert.deepEqual([...body.subarray(0, 2)], [0x1f, 0x8b], 'gzip magic');
    const head = await fetch(location, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(Number(head.headers.get('content-length')), body.length);
    // A client that carries its token over to the signed URL is not refused for it.
    assert.equal((await fetch(location, { headers: { authorization: `Bearer ${bob}` } })).status, 200);
  });

  test('Range: a byte range, a suffix, an open end, and an unsatisfiable range', async () => {
    const whole = Buffer.from(await (await download(exported)).arrayBuffer());
    const part = await download(exported, { range: 'bytes=10-99' });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), `bytes 10-99/${whole.length}`);
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), whole.subarray(10, 100));
    const suffix = await download(exported, { range: 'bytes=-20' });
    assert.equal(suffix.status, 206);
    assert.deepEqual(Buffer.from(await suffix.arrayBuffer()), whole.subarray(whole.length - 20));
    const open = await download(exported, { range: `bytes=${whole.length - 5}-` });
    assert.deepEqual(Buffer.from(await open.arrayBuffer()), whole.subarray(whole.length - 5));
    const beyond = await download(exported, { range: `bytes=${whole.length}-` });
    assert.equal(beyond.status, 416);
    assert.equal(beyond.headers.get('content-range'), `bytes */${whole.length}`);
    await beyond.arrayBuffer();
    const ignored = await download(exported, { range: 'bytes=0-1,5-6' });
    assert.equal(ignored.status, 200, 'several ranges: the whole archive');
    await ignored.arrayBuffer();
  });

  test('a tampered or expired URL answers 403', async () => {
    const redirect = await server.api('GET', `/user/migrations/${exported}/archive`, { token: alice });
    const location = new URL(redirect.headers.get('location')!);
    const tamper = (change: (url: URL) => void) => {
      const copy = new URL(location);
      change(copy);
      return copy;
    };
    const signature = location.searchParams.get('signature')!;
    const variants = [
      tamper((u) => u.searchParams.set('signature', `${signature.slice(0, -2)}xx`)),
      tamper((u) => u.searchParams.set('expires', String(Number(u.searchParams.get('expires')) + 3600))),
      tamper((u) => (u.pathname = u.pathname.replace(`/${exported}/`, `/${exported - 1}/`))),
      tamper((u) => u.searchParams.delete('signature')),
      tamper((u) => u.searchParams.set('expires', 'soon')),
    ];
    for (const url of variants) {
      const response = await fetch(url);
      assert.equal(response.status, 403, url.toString());
      assert.equal(((await response.json()) as { message: string }).message, 'Request signature does not match');
    }
    await server.advance(server.server.ctx.config.migrations.downloadUrlSeconds + 1);
    const expired = await fetch(location);
    assert.equal(expired.status, 403);
    assert.equal(((await expired.json()) as { message: string }).message, 'Request has expired');
  });

  test('404 before the export, for another user, and for an unknown migration', async () => {
    assert.equal((await server.api('GET', `/user/migrations/${exported}/archive`, { token: bob })).status, 404);
    assert.equal((await server.api('GET', '/user/migrations/999999/archive', { token: alice })).status, 404);
  });

  test('delete: 204, then 404; the migration stays readable and the signed URL finds nothing', async () => {
    const redirect = await server.api('GET', `/user/migrations/${exported}/archive`, { token: alice });
    assert.equal((await server.api('DELETE', `/user/migrations/${exported}/archive`, { token: bob })).status, 404);
    const deleted = await server.api('DELETE', `/user/migrations/${exported}/archive`, { token: alice });
    assert.equal(deleted.status, 204);
    assert.equal(deleted.text, '');
    assert.equal((await server.api('DELETE', `/user/migrations/${exported}/archive`, { token: alice })).status, 404);
    assert.equal((await server.api('GET', `/user/migrations/${exported}/archive`, { token: alice })).status, 404);
    assert.equal((await fetch(redirect.headers.get('location')!)).status, 404);
    assert.equal((await status(exported)).state, 'exported');
    assert.ok(!existsSync(join(server.server.ctx.config.dataDir, 'migration-archives', String(exported))));
    assert.equal((await server.api('DELETE', '/user/migrations/999999/archive', { token: alice })).status, 404);
  });
});

describe('locks', () => {
  test('lock_repositories locks at start; writes are refused until the repository is unlocked', async () => {
    const migration = await start({ repositories: ['beta'], lock_repositories: true });
    assert.equal(migration.lock_repositories, true);
    const refused = await server.adminRaw('POST', '/repos/alice/beta/issues', { author: 'alice', title: 'While locked' });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.message, 'Repository is locked for migration');
    const again = await server.api('POST', '/user/migrations', { token: alice, body: { repositories: ['beta'], lock_repositories: true } });
    assert.equal(again.status, 422);
    assert.match(again.body.errors[0].message, /already locked by migration/);
    // Exporting a locked repository without locking it again is fine.
    await start({ repositories: ['beta'] });
    await server.drain();
    assert.deepEqual((await server.admin('GET', `/migrations/${migration.id}`)).locked_repositories, ['alice/beta']);

    assert.equal((await server.api('DELETE', `/user/migrations/${migration.id}/repos/beta/lock`, { token: bob })).status, 404);
    assert.equal((await server.api('DELETE', `/user/migrations/${migration.id}/repos/alpha/lock`, { token: alice })).status, 404, 'not locked');
    assert.equal((await server.api('DELETE', `/user/migrations/${migration.id}/repos/nope/lock`, { token: alice })).status, 404);
    const unlocked = await server.api('DELETE', `/user/migrations/${migration.id}/repos/BETA/lock`, { token: alice });
    assert.equal(unlocked.status, 204);
    assert.equal((await server.api('DELETE', `/user/migrations/${migration.id}/repos/beta/lock`, { token: alice })).status, 404);
    assert.equal((await server.adminRaw('POST', '/repos/alice/beta/issues', { author: 'alice', title: 'Unlocked' })).status, 201);
    assert.deepEqual((await server.admin('GET', `/migrations/${migration.id}`)).locked_repositories, []);
  });

  test('unlocking needs the migration to be exported: 422 while pending (a server with no worker)', async () => {
    const idle = await startServer({ CODEHOST_WORKER: '0' });
    try {
      await idle.admin('POST', '/users', { login: 'dana' });
      await idle.admin('POST', '/repos', { owner: 'dana', name: 'notes', init_git: true });
      const token = await classicToken(idle, 'dana', []);
      const started = await idle.api('POST', '/user/migrations', { token, body: { repositories: ['notes'], lock_repositories: true } });
      assert.equal(started.body.state, 'pending');
      const early = await idle.api('DELETE', `/user/migrations/${started.body.id}/repos/notes/lock`, { token });
      assert.equal(early.status, 422);
      assert.equal((await idle.api('GET', `/user/migrations/${started.body.id}/archive`, { token })).status, 404, 'not exported yet');
      assert.equal((await idle.api('DELETE', `/user/migrations/${started.body.id}/archive`, { token })).status, 404);
    } finally {
      await idle.close();
    }
  });
});

describe('access', () => {
  test('classic and OAuth tokens work; fine-grained, app user, installation tokens and app JWTs get 403; no credentials 401', async () => {
    const app = await createApp(server, 'migrator', { administration: 'write', metadata: 'read' });
    const exported = (await start({ repositories: ['alpha'] })).id;
    await server.drain();
    const allowed = {
      classic: alice,
      classicWithScopes: await classicToken(server, 'alice', ['repo', 'user']),
      classicNoScope: await classicToken(server, 'alice', []),
      oauth: await oauthToken(server, app, 'alice', []),
    };
    const denied: Record<string, [string, string]> = {
      fine_grained: [`Bearer ${await fineGrainedToken(server, 'alice', 'alice', { administration: 'write', metadata: 'read' })}`, 'Resource not accessible by personal access token'],
      app_user: [`Bearer ${await appUserToken(server, app, 'alice')}`, 'Resource not accessible by integration'],
      installation: [`Bearer ${await installationToken(server, app, 'alice')}`, 'Resource not accessible by integration'],
      jwt: [`Bearer ${await appJwt(server, app)}`, 'Resource not accessible by integration'],
    };
    const routes: [string, string, unknown?][] = [
      ['GET', '/user/migrations'],
      ['POST', '/user/migrations', { repositories: [], org_metadata_only: true }],
      ['GET', `/user/migrations/${exported}`],
      ['GET', `/user/migrations/${exported}/repositories`],
      ['GET', `/user/migrations/${exported}/archive`],
      ['DELETE', `/user/migrations/${exported}/repos/alpha/lock`],
    ];
    const expected = [200, 201, 200, 200, 302, 404];
    for (const [index, [method, path, body]] of routes.entries()) {
      for (const [kind, token] of Object.entries(allowed)) {
        const response = await server.api(method, path, { token, body });
        assert.equal(response.status, expected[index], `${kind} ${method} ${path}: ${response.text}`);
      }
      for (const [kind, [authorization, message]] of Object.entries(denied)) {
        const response = await server.api(method, path, { authorization, body });
        assert.equal(response.status, 403, `${kind} ${method} ${path}`);
        assert.equal(response.body.message, message);
      }
      const anonymous = await server.api(method, path, { body });
      assert.equal(anonymous.status, 401, `anonymous ${method} ${path}`);
      assert.equal(anonymous.body.message, 'Requires authentication');
      assert.equal((await server.api(method, path, { token: 'ghp_not_a_real_token', body })).status, 401);
    }
    const other = await server.api('GET', `/user/migrations/${exported}`, { token: bob });
    assert.equal(other.status, 404, 'only the owner sees a migration');
    const deleteDenied = await server.api('DELETE', `/user/migrations/${exported}/archive`, { authorization: denied.fine_grained![0] });
    assert.equal(deleteDenied.status, 403);
    const deleted = await server.api('DELETE', `/user/migrations/${exported}/archive`, { token: allowed.oauth });
    assert.equal(deleted.status, 204);
    const headers = (await server.api('GET', '/user/migrations', { token: alice })).headers;
    assert.equal(headers.get('x-accepted-oauth-scopes'), '');
    await server.drain();
  });

  test('the operations are in the OpenAPI document', async () => {
    const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, { summary?: string }>> };
    assert.equal(document.paths['/user/migrations']?.post?.summary, 'Start a user migration');
    assert.equal(document.paths['/user/migrations/{migration_id}/archive']?.get?.summary, 'Download a user migration archive');
    assert.equal(document.paths['/user/migrations/{migration_id}/archive']?.delete?.summary, 'Delete a user migration archive');
    assert.equal(document.paths['/user/migrations/{migration_id}/repos/{repo_name}/lock']?.delete?.summary, 'Unlock a user repository');
    assert.ok(document.paths['/user/migrations/{migration_id}/repositories']?.get);
  });
});

describe('expiry', () => {
  test('archives are deleted 7 days after export; the migration stays readable', async () => {
    const migration = await start({ repositories: ['alpha'], exclude_git_data: true });
    await server.drain();
    const folder = join(server.server.ctx.config.dataDir, 'migration-archives', String(migration.id));
    assert.ok(statSync(folder).isDirectory());
    await server.advance(6 * 86_400);
    await server.drain();
    assert.equal((await server.api('GET', `/user/migrations/${migration.id}/archive`, { token: alice })).status, 302);
    await server.advance(86_400 + 1);
    // Past seven days the archive is gone at once, and the sweep removes its file.
    assert.equal((await server.api('GET', `/user/migrations/${migration.id}/archive`, { token: alice })).status, 404);
    await server.drain();
    assert.ok(!existsSync(folder));
    const view = await server.admin('GET', `/migrations/${migration.id}`);
    assert.equal(view.archive, null);
    assert.ok(view.archive_deleted_at);
    const shown = await status(migration.id);
    assert.equal(shown.state, 'exported');
    assert.equal((await server.api('DELETE', `/user/migrations/${migration.id}/archive`, { token: alice })).status, 404);
    assert.ok((await server.api('GET', '/user/migrations', { token: alice })).body.some((m: any) => m.id === migration.id));
  });
});
