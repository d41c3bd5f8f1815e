// Webhook payloads show the subject as the activity left it, however late the delivery is built.
// Deterministic: the writes go to a server whose worker is off, so nothing is dispatched until a
// second server on the same database, with its worker on, drains the outbox afterwards.
import assert from 'node:assert/strict';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createServer, type Server } from '../../../src/app.ts';
import { ADMIN_TOKEN, startServer, type TestServer } from '../../helpers/server.ts';

interface Delivery {
  event: string;
  body: any;
}

describe('app webhook payloads: the subject as of the activity', () => {
  let writer: TestServer;
  let dispatcher: Server | undefined;
  let receiver: HttpServer;
  const received: Delivery[] = [];

  /** Runs every queued job on the dispatching server (its /_admin/jobs/drain). */
  async function dispatch(): Promise<void> {
    const config = writer.server.ctx.config;
    dispatcher = await createServer({ ...config, port: 0, jobs: { ...config.jobs, worker: true } });
    const url = await dispatcher.listen();
    const response = await fetch(`${url}/_admin/jobs/drain`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ timeout_seconds: 60 }),
    });
    assert.equal(response.status, 200, await response.text());
  }

  /** The one delivery of an action on issue or pull request `number`. */
  const find = (event: string, action: string, number: number) => {
    const found = received.filter((d) => d.event === event && d.body.action === action && (d.body.issue ?? d.body).number === number);
    assert.equal(found.length, 1, `one ${event} ${action} delivery of #${number}: ${JSON.stringify(received.map((d) => [d.event, d.body.action]))}`);
    return found[0]!.body;
  };

  before(async () => {
    receiver = createHttpServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({ event: String(req.headers['x-vendor-event']), body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const { port } = receiver.address() as AddressInfo;

    writer = await startServer({ CODEHOST_WORKER: '0' });
    await writer.admin('POST', '/users', { login: 'mona' });
    await writer.admin('POST', '/users', { login: 'hubot' });
    await writer.admin('POST', '/repos', { owner: 'mona', name: 'widgets' });
    await writer.admin('POST', '/apps', {
      slug: 'hooks-app',
      permissions: { issues: 'write', pull_requests: 'write', metadata: 'read' },
      events: ['issues', 'issue_comment', 'pull_request'],
      webhook: { url: `http://127.0.0.1:${port}/hook` },
    });
    await writer.admin('POST', '/apps/hooks-app/installations', { account: 'mona' });

    // Issue 1: opened, commented on, assigned, closed. Pull request 2: opened with a reviewer, merged.
    await writer.admin('POST', '/repos/mona/widgets/issues', { author: 'mona', title: 'Broken widget', body: 'It broke' });
    await writer.admin('POST', '/repos/mona/widgets/issues/1/comments', { author: 'hubot', body: 'Same here' });
    await writer.admin('PATCH', '/repos/mona/widgets/issues/1', { actor: 'mona', assignees: ['hubot'] });
    await writer.advance(60);
    await writer.admin('PATCH', '/repos/mona/widgets/issues/1', { actor: 'mona', state: 'closed' });
    await writer.admin('POST', '/repos/mona/widgets/issues', { author: 'hubot', title: 'Fix', pull_request: true, reviewers: ['mona'] });
    await writer.admin('PATCH', '/repos/mona/widgets/issues/2', { actor: 'mona', state: 'merged', reviewers: [] });
    // Issue 3: a row kept without a snapshot (as rows recorded before snapshots were kept), then
    // assigned and closed: rendered from the tables at dispatch, with the state of its action.
    await writer.admin('POST', '/repos/mona/widgets/issues', { author: 'mona', title: 'Old row' });
    const db = writer.server.ctx.db.kysely;
    const old = await db.selectFrom('activity_outbox').selectAll().where('action', '=', 'opened').orderBy('id', 'desc').executeTakeFirstOrThrow();
    const { snapshot, ...facts } = JSON.parse(old.payload) as Record<string, unknown>;
    assert.equal((snapshot as any).issue.title, 'Old row');
    await db.updateTable('activity_outbox').set({ payload: JSON.stringify(facts) }).where('id', '=', old.id).execute();
    await writer.admin('PATCH', '/repos/mona/widgets/issues/3', { actor: 'mona', state: 'closed', assignees: ['hubot'] });

    assert.deepEqual(received, [], 'nothing is dispatched while the worker is off');
    await dispatch();
  });
  after(async () => {
    await dispatcher?.close();
    await writer.close();
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  });

  test('an issue closed before the dispatch: opened shows it open, closed shows it closed', () => {
    const opened = find('issues', 'opened', 1);
    assert.equal(opened.issue.number, 1);
    assert.deepEqual([opened.issue.state, opened.issue.state_reason, opened.issue.closed_at], ['open', null, null]);
    assert.deepEqual([opened.issue.assignees, opened.issue.assignee, opened.issue.comments], [[], null, 0]);
    assert.equal(opened.issue.title, 'Broken widget');
    assert.equal(opened.issue.updated_at, opened.issue.created_at);

    const closed = find('issues', 'closed', 1);
    assert.equal(closed.issue.number, 1);
    assert.deepEqual([closed.issue.state, closed.issue.state_reason], ['closed', 'completed']);
    assert.match(closed.issue.closed_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    assert.notEqual(closed.issue.updated_at, opened.issue.updated_at);
    assert.deepEqual(closed.issue.assignees.map((u: any) => u.login), ['hubot']);
    assert.equal(closed.issue.comments, 1);
  });

  test('a comment and an assignment show the issue as each left it', () => {
    const commented = find('issue_comment', 'created', 1);
    assert.deepEqual([commented.issue.number, commented.issue.state, commented.issue.comments, commented.issue.assignees], [1, 'open', 1, []]);
    assert.deepEqual([commented.comment.body, commented.comment.user.login, commented.comment.issue_url], ['Same here', 'hubot', commented.issue.url]);

    const assigned = find('issues', 'assigned', 1);
    assert.equal(assigned.assignee.login, 'hubot');
    assert.deepEqual([assigned.issue.state, assigned.issue.closed_at], ['open', null]);
    assert.deepEqual(assigned.issue.assignees.map((u: any) => u.login), ['hubot']);
  });

  test('a pull request merged before the dispatch: opened shows it unmerged, with the reviewers requested then', () => {
    const opened = find('pull_request', 'opened', 2);
    assert.deepEqual([opened.pull_request.state, opened.pull_request.merged, opened.pull_request.merged_at, opened.pull_request.closed_at], ['open', false, null, null]);
    assert.deepEqual(opened.pull_request.requested_reviewers.map((u: any) => u.login), ['mona']);
    assert.ok(opened.pull_request.url.endsWith('/repos/mona/widgets/pulls/2'));

    const removed = find('pull_request', 'review_request_removed', 2);
    assert.equal(removed.requested_reviewer.login, 'mona');

    const merged = find('pull_request', 'closed', 2);
    assert.deepEqual([merged.pull_request.state, merged.pull_request.merged], ['closed', true]);
    assert.match(merged.pull_request.merged_at, /Z$/);
    assert.deepEqual(merged.pull_request.requested_reviewers, [], 'the rows of one write show the subject after the whole write');
    assert.equal(removed.pull_request.merged, true);
  });

  test('a row without a snapshot is rendered at dispatch, with the state its action implies', () => {
    const opened = find('issues', 'opened', 3);
    assert.deepEqual([opened.issue.state, opened.issue.closed_at], ['open', null]);
    // Fields other than the state are as they are at dispatch.
    assert.deepEqual(opened.issue.assignees.map((u: any) => u.login), ['hubot']);
  });

  test('the repository and the sender are rendered at dispatch', () => {
    // Every delivery of the repository's activity (the app's `installation` `created` and its creation's `ping` name no repository).
    assert.equal(received.filter(({ event }) => event === 'ping').length, 1);
    const activity = received.filter(({ event }) => event !== 'installation' && event !== 'ping');
    assert.ok(activity.length > 0);
    for (const { body } of activity) {
      assert.equal(body.repository.full_name, 'mona/widgets');
      assert.equal(typeof body.sender.login, 'string');
      assert.equal(typeof body.installation.id, 'number');
    }
    assert.equal(find('issue_comment', 'created', 1).sender.login, 'hubot');
  });
});
