// Creating a comment through the public API (issue 39): POST /repos/{o}/{r}/issues/{n}/comments with
// a classic token — the access check, the write and its `mentioned` event and outbox row in one
// transaction — and its activity carried to the end: the notification fan-out to the repository's
// watchers and the mentioned user, and a signed webhook delivery to an app's loopback receiver. The
// baseline, in the same run: a bare insert of the same row into issue_comments on the same database,
// one statement per row, from this process.
//   node_modules/.bin/node bench/comments.ts              SQLite
//   DATABASE_URL=postgres://... BENCH_DATABASE=postgres node_modules/.bin/node bench/comments.ts
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { load, ratio, startServerOnOwnDatabase } from './lib.ts';

export interface Options {
  seconds?: number;
  connections?: number;
  env?: Record<string, string>;
}

const WATCHERS = 20;
const BODY = 'Thanks for the report, @hubot will look at it this week.';

/** A receiver that answers 200 and counts what it got. */
async function receiver(): Promise<{ server: Server; url: string; received: () => number }> {
  let count = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      count++;
      response.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received: () => count };
}

export default async function comments(options: Options = {}): Promise<Record<string, number | string>> {
  const seconds = options.seconds ?? 10;
  const hook = await receiver();
  const server = await startServerOnOwnDatabase(options.env);
  try {
    await server.admin('POST', '/users', { login: 'mona' });
    await server.admin('POST', '/users', { login: 'hubot' });
    await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'], members: ['hubot'] });
    await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
    for (let i = 0; i < WATCHERS; i++) {
      await server.admin('POST', '/users', { login: `watcher${i}` });
      await server.admin('PUT', '/repos/acme/widgets/subscription', { login: `watcher${i}`, subscribed: true });
    }
    await server.admin('POST', '/apps', { slug: 'listener', permissions: { issues: 'read' }, events: ['issue_comment'], webhook: { url: hook.url, secret: 'bench' } });
    await server.admin('POST', '/apps/listener/installations', { account: 'acme', repositories: 'all' });
    const issue = await server.admin('POST', '/repos/acme/widgets/issues', { author: 'mona', title: 'Broken' });
    const { token } = await server.admin('POST', '/tokens', { login: 'mona', kind: 'classic', scopes: ['repo'] });
    await server.admin('POST', '/jobs/drain');

    // codehost: comments under load, then until every one's fan-out and delivery is done.
    const url = `${server.apiUrl}/repos/acme/widgets/issues/${issue.number}/comments`;
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/vnd.vendor+json' };
    const delivered = hook.received();
    const started = performance.now();
    const real = await load({ url, method: 'POST', headers, body: JSON.stringify({ body: BODY }), seconds, connections: options.connections ?? 4 });
    const written = performance.now();
    await server.admin('POST', '/jobs/drain');
    const done = performance.now();
    if (real.non2xx || real.errors) throw new Error(`codehost answered ${real.non2xx} non-2xx and ${real.errors} errors`);
    const count = Math.round(real.requestsPerSecond * seconds);
    const deliveries = hook.received() - delivered;

    // The bare insert of the same row, as many times, on the same database.
    const issueRow = { id: 0, repository_id: 0, author_id: 0 };
    let bareMs: number;
    if (server.databaseUrl) {
      const client = new pg.Client({ connectionString: server.databaseUrl });
      await client.connect();
      try {
        Object.assign(issueRow, (await client.query('select c.issue_id as id, c.repository_id, c.author_id from issue_comments c order by c.id desc limit 1')).rows[0]);
        const at = new Date().toISOString();
        const began = performance.now();
        for (let i = 0; i < count; i++) {
          await client.query('insert into issue_comments (issue_id, repository_id, author_id, body, created_at, updated_at) values ($1, $2, $3, $4, $5, $5)', [issueRow.id, issueRow.repository_id, issueRow.author_id, BODY, at]);
        }
        bareMs = performance.now() - began;
      } finally {
        await client.end();
      }
    } else {
      const db = new DatabaseSync(join(server.dataDir, 'codehost.db'));
      try {
        db.exec('PRAGMA busy_timeout = 10000');
        Object.assign(issueRow, db.prepare('select issue_id as id, repository_id, author_id from issue_comments order by id desc limit 1').get());
        const insert = db.prepare('insert into issue_comments (issue_id, repository_id, author_id, body, created_at, updated_at) values (?, ?, ?, ?, ?, ?)');
        const at = new Date().toISOString();
        const began = performance.now();
        for (let i = 0; i < count; i++) insert.run(issueRow.id, issueRow.repository_id, issueRow.author_id, BODY, at, at);
        bareMs = performance.now() - began;
      } finally {
        db.close();
      }
    }
    const writesPerSecond = count / ((written - started) / 1000);
    const completePerSecond = count / ((done - started) / 1000);
    const barePerSecond = count / (bareMs / 1000);
    return {
      'comments created': count,
      'webhook deliveries made': deliveries,
      'create comment req/s (codehost, the answer)': Math.round(writesPerSecond),
      'create comment p50 ms': real.latencyP50Ms,
      'create comment p99 ms': real.latencyP99Ms,
      'comments with fan-out and delivery done /s (codehost)': Math.round(completePerSecond),
      'bare insert of the same row /s': Math.round(barePerSecond),
      'create comment ratio codehost/bare insert (answers)': ratio(writesPerSecond, barePerSecond),
      'create comment ratio codehost/bare insert (all done)': ratio(completePerSecond, barePerSecond),
    };
  } finally {
    await server.stop();
    hook.server.closeAllConnections();
    await new Promise((resolve) => hook.server.close(resolve));
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const env: Record<string, string> = process.env.BENCH_DATABASE === 'postgres' ? { DATABASE_URL: process.env.DATABASE_URL! } : {};
  console.table(await comments({ seconds: Number(process.env.BENCH_SECONDS ?? 10), env }));
}
