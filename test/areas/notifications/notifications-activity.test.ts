// The operator surface's activity rows end to end: issues and pull requests (numbers per repository,
// the Issue and Comment representations, issue types), state changes, assignees and review
// requests with their errors, locked repositories, the timeline events and outbox rows each write
// records (the format webhook deliveries read), and the `issues` / `comments` seed keys.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadSeed } from '../../../src/admin/seed.ts';
import { AREAS } from '../../../src/app.ts';
import { classicToken } from '../../helpers/credentials.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

let server: TestServer;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

const db = () => server.server.ctx.db.kysely;

/** Outbox rows recorded after `afterId`, oldest first, payload parsed; its `snapshot` (the subject as rendered) apart. */
async function outboxAfter(afterId: number) {
  const rows = await db().selectFrom('activity_outbox').selectAll().where('id', '>', afterId).orderBy('id').execute();
  return rows.map((r) => {
    const { snapshot, ...payload } = JSON.parse(r.payload) as Record<string, unknown>;
    return { ...r, payload, snapshot };
  });
}
async function lastOutboxId(): Promise<number> {
  const row = await db().selectFrom('activity_outbox').select((eb) => eb.fn.max('id').as('id')).executeTakeFirst();
  return Number(row?.id ?? 0);
}
const userId = async (login: string) => (await db().selectFrom('users').select('id').where('login_lower', '=', login).executeTakeFirstOrThrow()).id;
const teamId = async (slug: string) => (await db().selectFrom('teams').select('id').where('slug', '=', slug).executeTakeFirstOrThrow()).id;

async function expectError(method: string, path: string, body: unknown, status: number, message?: RegExp) {
  const response = await server.adminRaw(method, path, body);
  assert.equal(response.status, status, `${method} ${path} ${JSON.stringify(body)}: ${response.text}`);
  if (message) assert.match(response.body.message + JSON.stringify(response.body.errors ?? []), message);
  return response;
}

before(async () => {
  server = await startServer();
  for (const login of ['alice', 'bob', 'carol', 'dave']) await server.admin('POST', '/users', { login });
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['alice'], members: ['bob', 'carol', 'dave'] });
  await server.admin('POST', '/orgs/acme/teams', { slug: 'reviewers', members: ['carol', 'dave'] });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'gadgets' });
  await server.admin('POST', '/repos', { owner: 'alice', name: 'dotfiles' });
});
after(() => server.close());

describe('issues and pull requests', () => {
  test('an issue as the platform shapes it; numbers count per repository', async () => {
    const before = await lastOutboxId();
    const response = await server.adminRaw('POST', '/repos/acme/widgets/issues', { author: 'alice', title: 'First', body: 'Hello @bob and @acme/reviewers', assignees: ['bob', 'carol'] });
    assert.equal(response.status, 201, response.text);
    const issue = response.body;
    assert.equal(issue.number, 1);
    assert.ok(issue.url.endsWith('/api/v3/repos/acme/widgets/issues/1'));
    assert.ok(issue.repository_url.endsWith('/api/v3/repos/acme/widgets'));
    assert.ok(issue.html_url.endsWith('/acme/widgets/issues/1'));
    assert.equal(issue.comments_url, `${issue.url}/comments`);
    assert.equal(typeof issue.node_id, 'string');
    assert.deepEqual([issue.state, issue.state_reason, issue.title, issue.body, issue.comments, issue.locked], ['open', null, 'First', 'Hello @bob and @acme/reviewers', 0, false]);
    assert.equal(issue.user.login, 'alice');
    assert.deepEqual(issue.assignees.map((u: { login: string }) => u.login), ['bob', 'carol']);
    assert.equal(issue.assignee.login, 'bob');
    assert.deepEqual(issue.labels, []);
    assert.equal(issue.milestone, null);
    assert.equal(issue.type, null);
    assert.equal(issue.pull_request, undefined);
    assert.equal(issue.closed_at, null);
    assert.match(issue.created_at, ISO);
    assert.match(issue.updated_at, ISO);

    assert.equal((await server.admin('POST', '/repos/acme/widgets/issues', { author: 'bob', title: 'Second' })).number, 2);
    assert.equal((await server.admin('POST', '/repos/acme/gadgets/issues', { author: 'bob', title: 'Elsewhere' })).number, 1);

    const [opened, second, third] = await outboxAfter(before);
    assert.deepEqual([opened!.event, opened!.action, opened!.actor_id, opened!.issue_id, opened!.comment_id], ['issues', 'opened', await userId('alice'), issue.id, null]);
    assert.deepEqual(opened!.payload, {
      number: 1,
      pull_request: false,
      mentioned_user_ids: [await userId('bob')],
      mentioned_team_ids: [await teamId('reviewers')],
      assignee_ids: [await userId('bob'), await userId('carol')],
      requested_reviewer_ids: [],
      requested_team_ids: [],
    });
    assert.deepEqual(opened!.snapshot, { issue }, 'the snapshot is the issue as the write answered it');
    assert.deepEqual([second!.event, second!.action, third!.event, third!.action], ['issues', 'opened', 'issues', 'opened']);

    const events = await db().selectFrom('issue_events').selectAll().where('issue_id', '=', issue.id).orderBy('id').execute();
    assert.deepEqual(events.map((e) => [e.event, e.subject_user_id]), [
      ['assigned', await userId('bob')], ['assigned', await userId('carol')], ['mentioned', await userId('bob')],
    ]);
  });

  test('a pull request: pull_request links, requested reviewers and teams', async () => {
    const before = await lastOutboxId();
    const pull = await server.admin('POST', '/repos/acme/widgets/issues', { author: 'alice', title: 'A change', pull_request: true, reviewers: ['bob'], team_reviewers: ['reviewers'] });
    assert.ok(pull.html_url.endsWith(`/acme/widgets/pull/${pull.number}`));
    assert.ok(pull.pull_request.url.endsWith(`/api/v3/repos/acme/widgets/pulls/${pull.number}`));
    assert.equal(pull.pull_request.diff_url, `${pull.html_url}.diff`);
    assert.equal(pull.pull_request.merged_at, null);
    const [row] = await outboxAfter(before);
    assert.deepEqual([row!.event, row!.action], ['pull_request', 'opened']);
    assert.deepEqual([row!.payload.requested_reviewer_ids, row!.payload.requested_team_ids], [[await userId('bob')], [await teamId('reviewers')]]);
  });

  test('comments: the Comment representation, the count, and an issue_comment row', async () => {
    const issue = await server.admin('POST', '/repos/acme/widgets/issues', { author: 'alice', title: 'Commented' });
    const before = await lastOutboxId();
    const response = await server.adminRaw('POST', `/repos/acme/widgets/issues/${issue.number}/comments`, { author: 'bob', body: 'see `@carol` and @dave' });
    assert.equal(response.status, 201, response.text);
    const comment = response.body;
    assert.deepEqual(Object.keys(comment).sort(), [
      'author_association', 'body', 'created_at', 'html_url', 'id', 'issue_url', 'node_id', 'performed_via_vendor_app', 'reactions', 'updated_at', 'url', 'user',
    ]);
    assert.deepEqual([comment.author_association, comment.performed_via_vendor_app, comment.reactions.total_count], ['MEMBER', null, 0]);
    assert.ok(comment.url.endsWith(`/api/v3/repos/acme/widgets/issues/comments/${comment.id}`));
    assert.equal(comment.html_url, `${issue.html_url}#issuecomment-${comment.id}`);
    assert.equal(comment.issue_url, issue.url);
    assert.equal(comment.user.login, 'bob');
    const [row] = await outboxAfter(before);
    assert.deepEqual([row!.event, row!.action, row!.comment_id, row!.issue_id], ['issue_comment', 'created', comment.id, issue.id]);
    assert.deepEqual(row!.payload, { number: issue.number, pull_request: false, mentioned_user_ids: [await userId('dave')], mentioned_team_ids: [] });
    assert.deepEqual((row!.snapshot as any).comment, comment);
    const changed = await server.admin('PATCH', `/repos/acme/widgets/issues/${issue.number}`, { actor: 'alice' });
    assert.equal(changed.comments, 1);
  });

  test('issue types: by name (any case), enabled ones of the organization only', async () => {
    const owner = await classicToken(server, 'alice', ['admin:org']);
    const created = await server.api('POST', '/orgs/acme/issue-types', { token: owner, body: { name: 'Bug', is_enabled: true, color: 'red' } });
    assert.equal(created.status, 200, created.text);
    await server.api('POST', '/orgs/acme/issue-types', { token: owner, body: { name: 'Retired', is_enabled: false } });
    const typed = await server.admin('POST', '/repos/acme/widgets/issues', { author: 'alice', title: 'Typed', type: 'bug' });
    assert.deepEqual([typed.type.id, typed.type.name, typed.type.color, typed.type.is_enabled], [created.body.id, 'Bug', 'red', true]);
    await expectError('POST', '/repos/acme/widgets/issues', { author: 'alice', title: 'x', type: 'Feature' }, 422, /type/);
    await expectError('POST', '/repos/acme/widgets/issues', { author: 'alice', title: 'x', type: 'Retired' }, 422, /type/);
    await expectError('POST', '/repos/acme/widgets/issues', { author: 'alice', title: 'x', type: 'Bug', pull_request: true }, 422, /pull requests/);
    await expectError('POST', '/repos/alice/dotfiles/issues', { author: 'alice', title: 'x', type: 'Bug' }, 422, /organizations/);
    await server.admin('PUT', '/repos/acme/gadgets/issue-types/Bug', { is_enabled: false });
    await expectError('POST', '/repos/acme/gadgets/issues', { author: 'alice', title: 'x', type: 'Bug' }, 422, /type/);
  });

  test('bad bodies and unknown references', async () => {
    await expectError('POST', '/repos/acme/widgets/issues', { author: 'alice' }, 422, /title/);
    await expectError('POST', '/repos/acme/widgets/issues', { author: 'alice', title: '' }, 422);
    await expectError('POST', '/repos/acme/widgets/issues', { author: 'alice', title: 'x', assignees: 'bob' }, 422);
    await expectError('POST', '/repos/acme/widgets/issues', { author: 'alice', title: 'x', reviewers: ['bob'] }, 422, /pull request/);
    await expectError('POST', '/repos/acme/widgets/issues', { author: 'alice', title: 'x', pull_request: true, reviewers: ['alice'] }, 422, /author/);
    await expectError('POST', '/repos/alice/dotfiles/issues', { author: 'alice', title: 'x', pull_request: true, team_reviewers: ['reviewers'] }, 422, /organization/);
    await expectError('POST', '/repos/acme/widgets/issues', { author: 'alice', title: 'x', pull_request: true, team_reviewers: ['nobody'] }, 404, /Team not found/);
    await expectError('POST', '/repos/acme/widgets/issues', { author: 'nobody', title: 'x' }, 404, /User not found/);
    await expectError('POST', '/repos/acme/widgets/issues', { author: 'acme', title: 'x' }, 404, /User not found/);
    await expectError('POST', '/repos/acme/widgets/issues', { author: 'alice', title: 'x', assignees: ['ghost'] }, 404, /ghost/);
    await expectError('POST', '/repos/acme/nothing/issues', { author: 'alice', title: 'x' }, 404, /Repository not found/);
    await expectError('POST', '/repos/acme/widgets/issues/999/comments', { author: 'alice', body: 'x' }, 404, /Issue not found/);
    await expectError('POST', '/repos/acme/widgets/issues/99999999999/comments', { author: 'alice', body: 'x' }, 404);
    await expectError('POST', '/repos/acme/widgets/issues/1/comments', { author: 'alice', body: '' }, 422);
    await expectError('POST', '/repos/acme/widgets/issues/abc/comments', { author: 'alice', body: 'x' }, 422);
    await expectError('PATCH', '/repos/acme/widgets/issues/1', { actor: 'alice', state: 'gone' }, 422);
    await expectError('PATCH', '/repos/acme/widgets/issues/1', { state: 'closed' }, 422, /actor/);
    const malformed = await fetch(`${server.url}/_admin/repos/acme/widgets/issues`, {
      method: 'POST', headers: { authorization: 'Bearer test-admin-token', 'content-type': 'application/json' }, body: '{"author":',
    });
    assert.equal(malformed.status, 400);
    const unauthenticated = await fetch(`${server.url}/_admin/repos/acme/widgets/issues`, { method: 'POST', body: '{}' });
    assert.equal(unauthenticated.status, 401);
    const stored = await db().selectFrom('issues').select('title').where('title', '=', 'x').execute();
    assert.deepEqual(stored, [], 'nothing half-written');
  });
});

describe('changing an issue', () => {
  test('close and reopen an issue: closed_at, state_reason, events and rows', async () => {
    const issue = await server.admin('POST', '/repos/acme/widgets/issues', { author: 'alice', title: 'To close' });
    const before = await lastOutboxId();
    const closed = await server.admin('PATCH', `/repos/acme/widgets/issues/${issue.number}`, { actor: 'bob', state: 'closed' });
    assert.deepEqual([closed.state, closed.state_reason], ['closed', 'completed']);
    assert.match(closed.closed_at, ISO);
    const same = await server.admin('PATCH', `/repos/acme/widgets/issues/${issue.number}`, { actor: 'bob', state: 'closed' });
    assert.equal(same.closed_at, closed.closed_at, 'closing a closed issue changes nothing');
    const reopened = await server.admin('PATCH', `/repos/acme/widgets/issues/${issue.number}`, { actor: 'bob', state: 'open' });
    assert.deepEqual([reopened.state, reopened.state_reason, reopened.closed_at], ['open', 'reopened', null]);
    const rows = await outboxAfter(before);
    assert.deepEqual(rows.map((r) => [r.event, r.action, r.payload.state]), [['issues', 'closed', 'closed'], ['issues', 'reopened', 'open']]);
    assert.equal(rows[0]!.actor_id, await userId('bob'));
    assert.equal('merged' in rows[0]!.payload, false, 'only pull requests carry merged');
    await expectError('PATCH', `/repos/acme/widgets/issues/${issue.number}`, { actor: 'bob', state: 'merged' }, 422, /pull request/);
  });

  test('merge a pull request: pull_request closed with merged true; a merged one cannot reopen', async () => {
    const pull = await server.admin('POST', '/repos/acme/widgets/issues', { author: 'alice', title: 'To merge', pull_request: true });
    const before = await lastOutboxId();
    const merged = await server.admin('PATCH', `/repos/acme/widgets/issues/${pull.number}`, { actor: 'carol', state: 'merged' });
    assert.equal(merged.state, 'closed');
    assert.match(merged.pull_request.merged_at, ISO);
    assert.equal(merged.closed_at, merged.pull_request.merged_at);
    const rows = await outboxAfter(before);
    assert.deepEqual(rows.map((r) => [r.event, r.action, r.payload.merged, r.payload.state]), [['pull_request', 'closed', true, 'closed']]);
    const events = await db().selectFrom('issue_events').select('event').where('issue_id', '=', pull.id).orderBy('id').execute();
    assert.deepEqual(events.map((e) => e.event), ['merged', 'closed']);
    await expectError('PATCH', `/repos/acme/widgets/issues/${pull.number}`, { actor: 'carol', state: 'open' }, 422, /merged/);

    const closedPull = await server.admin('POST', '/repos/acme/widgets/issues', { author: 'alice', title: 'Closed unmerged', pull_request: true });
    await server.admin('PATCH', `/repos/acme/widgets/issues/${closedPull.number}`, { actor: 'carol', state: 'closed' });
    await expectError('PATCH', `/repos/acme/widgets/issues/${closedPull.number}`, { actor: 'carol', state: 'merged' }, 422, /reopen/);
  });

  test('assignees and requested reviewers are replaced; one row per change, in order', async () => {
    const pull = await server.admin('POST', '/repos/acme/widgets/issues', { author: 'alice', title: 'Reassigned', pull_request: true, assignees: ['bob'], reviewers: ['bob'] });
    const before = await lastOutboxId();
    const changed = await server.admin('PATCH', `/repos/acme/widgets/issues/${pull.number}`, {
      actor: 'alice', state: 'closed', assignees: ['carol', 'dave'], reviewers: ['dave'], team_reviewers: ['reviewers'],
    });
    assert.deepEqual(changed.assignees.map((u: { login: string }) => u.login), ['carol', 'dave']);
    const rows = await outboxAfter(before);
    const [bob, carol, dave, reviewers] = [await userId('bob'), await userId('carol'), await userId('dave'), await teamId('reviewers')];
    assert.deepEqual(rows.map((r) => [r.action, r.payload.assignee_id ?? r.payload.requested_reviewer_id ?? r.payload.requested_team_id ?? null]), [
      ['closed', null],
      ['assigned', carol], ['assigned', dave],
      ['unassigned', bob],
      ['review_requested', dave], ['review_requested', reviewers],
      ['review_request_removed', bob],
    ]);
    assert.ok(rows.every((r) => r.event === 'pull_request' && r.issue_id === pull.id));
    const stored = await db().selectFrom('issue_review_requests').select(['user_id', 'team_id']).where('issue_id', '=', pull.id).orderBy('id').execute();
    assert.deepEqual(stored.map((r) => [r.user_id, r.team_id]), [[dave, null], [null, reviewers]]);

    const unchanged = await lastOutboxId();
    await server.admin('PATCH', `/repos/acme/widgets/issues/${pull.number}`, { actor: 'alice', assignees: ['dave', 'carol'], team_reviewers: ['reviewers'] });
    assert.deepEqual(await outboxAfter(unchanged), [], 'a change that changes nothing records nothing');
    await expectError('PATCH', `/repos/acme/widgets/issues/${pull.number}`, { actor: 'alice', reviewers: ['alice'] }, 422, /author/);
    await expectError('PATCH', `/repos/acme/widgets/issues/${pull.number}`, { actor: 'nobody', state: 'open' }, 404);
    await expectError('PATCH', '/repos/acme/widgets/issues/999', { actor: 'alice', state: 'open' }, 404);
  });

  test('a repository locked by a migration refuses every activity write', async () => {
    await server.admin('POST', '/repos', { owner: 'acme', name: 'locked' });
    const issue = await server.admin('POST', '/repos/acme/locked/issues', { author: 'alice', title: 'Before the lock' });
    await db().updateTable('repositories').set({ locked_by_migration_id: 1 }).where('name', '=', 'locked').execute();
    const before = await lastOutboxId();
    for (const [method, path, body] of [
      ['POST', '/repos/acme/locked/issues', { author: 'alice', title: 'After' }],
      ['POST', `/repos/acme/locked/issues/${issue.number}/comments`, { author: 'alice', body: 'After' }],
      ['PATCH', `/repos/acme/locked/issues/${issue.number}`, { actor: 'alice', state: 'closed' }],
    ] as const) {
      const response = await expectError(method, path, body, 403);
      assert.equal(response.body.message, 'Repository is locked for migration');
    }
    assert.deepEqual(await outboxAfter(before), []);
    await db().updateTable('repositories').set({ locked_by_migration_id: null }).where('name', '=', 'locked').execute();
  });
});

describe('seed keys', () => {
  test('issues and comments load once', async () => {
    const seed = {
      issues: [
        { repository: 'acme/gadgets', author: 'bob', title: 'Seeded', body: 'from a file, cc @carol' },
        { repository: 'acme/gadgets', author: 'bob', title: 'Seeded PR', pull_request: true, reviewers: ['carol'] },
      ],
      comments: [{ repository: 'acme/gadgets', number: 2, author: 'carol', body: 'seeded comment' }],
    };
    const before = await lastOutboxId();
    await loadSeed(server.server.ctx, AREAS, seed);
    await loadSeed(server.server.ctx, AREAS, seed);
    const issues = await db().selectFrom('issues').innerJoin('repositories', 'repositories.id', 'issues.repository_id')
      .select(['issues.title', 'issues.number']).where('repositories.name', '=', 'gadgets').orderBy('issues.number').execute();
    assert.deepEqual(issues.map((i) => i.title), ['Elsewhere', 'Seeded', 'Seeded PR']);
    assert.equal((await db().selectFrom('issue_comments').select('id').where('body', '=', 'seeded comment').execute()).length, 1);
    assert.deepEqual((await outboxAfter(before)).map((r) => `${r.event}.${r.action}`), ['issues.opened', 'pull_request.opened', 'issue_comment.created']);
    await assert.rejects(loadSeed(server.server.ctx, AREAS, { issues: [{ repository: 'acme/gadgets', title: 'no author' }] }),
      (error: { status?: number; message?: string }) => error.status === 422 && /^issues\[0\]/.test(error.message ?? ''));
    await assert.rejects(loadSeed(server.server.ctx, AREAS, { comments: [{ repository: 'acme/gadgets', number: 99, author: 'bob', body: 'x' }] }), /Issue not found/);
  });
});
