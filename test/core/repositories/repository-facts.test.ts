// A repository is shaped in one place from real facts: the admin answer, a webhook payload and a
// notification thread show the same counts (open issues and pull requests, watchers), not zeros.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { classicToken } from '../../helpers/credentials.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

let server: TestServer;
let receiver: Server;
const payloads: any[] = [];

before(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      payloads.push({ event: req.headers['x-vendor-event'], body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const port = (receiver.address() as AddressInfo).port;

  server = await startServer();
  for (const login of ['mona', 'hubot', 'lisa']) await server.admin('POST', '/users', { login });
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'], members: ['lisa'] });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets', visibility: 'private' });
  await server.admin('POST', '/apps', {
    slug: 'facts-app',
    permissions: { issues: 'read', metadata: 'read' },
    events: ['issues'],
    webhook: { url: `http://127.0.0.1:${port}/hook` },
  });
  await server.admin('POST', '/apps/facts-app/installations', { account: 'acme', repositories: 'all' });
  // Two watchers (one more who unwatched), two open issues and a closed one.
  await server.admin('PUT', '/repos/acme/widgets/subscription', { login: 'mona', subscribed: true });
  await server.admin('PUT', '/repos/acme/widgets/subscription', { login: 'lisa', subscribed: true });
  await server.admin('PUT', '/repos/acme/widgets/subscription', { login: 'hubot', subscribed: false, ignored: true });
  await server.admin('POST', '/repos/acme/widgets/issues', { author: 'mona', title: 'one' });
  await server.admin('POST', '/repos/acme/widgets/issues', { author: 'mona', title: 'two' });
  const closed = await server.admin('POST', '/repos/acme/widgets/issues', { author: 'lisa', title: 'three' });
  await server.admin('PATCH', `/repos/acme/widgets/issues/${closed.number}`, { actor: 'lisa', state: 'closed' });
  await server.drain();
});
after(async () => {
  await server.close();
  receiver.closeAllConnections();
  await new Promise((resolve) => receiver.close(resolve));
});

const COUNTS = ['open_issues_count', 'open_issues', 'subscribers_count', 'watchers_count', 'watchers', 'stargazers_count', 'forks_count', 'forks', 'network_count'];
const counts = (repository: Record<string, unknown>) => Object.fromEntries(COUNTS.map((k) => [k, repository[k]]));

test('the admin answer, a webhook payload and a notification thread show the same real counts', async () => {
  const token = await classicToken(server, 'mona', ['notifications', 'repo']);
  const threads = await server.api('GET', '/notifications?all=true', { token });
  assert.equal(threads.status, 200, threads.text);
  const fromNotifications = threads.body.find((t: any) => t.repository.full_name === 'acme/widgets').repository;
  assert.equal(fromNotifications.open_issues_count, 2);
  assert.equal(fromNotifications.subscribers_count, 2);

  const fromAdmin = await server.admin('GET', '/repos/acme/widgets');
  assert.deepEqual(counts(fromAdmin), counts(fromNotifications));
  assert.equal(fromAdmin.open_issues_count, 2);
  assert.equal(fromAdmin.subscribers_count, 2);

  // The closing's delivery is rendered at dispatch, after every issue was written.
  const closing = payloads.find((p) => p.event === 'issues' && p.body.action === 'closed');
  assert.ok(closing, `a closed delivery among ${payloads.map((p) => p.body.action).join(', ')}`);
  assert.deepEqual(counts(closing.body.repository), counts(fromNotifications));

  // One more open issue changes every answer alike.
  await server.admin('POST', '/repos/acme/widgets/issues', { author: 'mona', title: 'four' });
  await server.drain();
  assert.equal((await server.admin('GET', '/repos/acme/widgets')).open_issues_count, 3);
  const opened = payloads.filter((p) => p.body.action === 'opened').at(-1);
  assert.equal(opened.body.issue.title, 'four');
  assert.equal(opened.body.repository.open_issues_count, 3);
});

test('a new repository answers with zero counts', async () => {
  const created = await server.admin('POST', '/repos', { owner: 'acme', name: 'empty' });
  assert.deepEqual(counts(created), Object.fromEntries(COUNTS.map((k) => [k, 0])));
});
