// PostgreSQL faults against a spawned `codehost serve` on a PostgreSQL instance of the test's own
// (never the shared cluster): its connections terminated under load, the instance stopped and
// started again. The process stays up, answers 503 (never 500) while the database is gone, and
// serves again within 10 s; every acknowledged write is there afterwards.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { eventually, freePort, processAlive, spawnServe } from '../helpers/process.ts';
import { unavailable } from '../helpers/skips.ts';
import { startThrowawayPostgres, throwawayPostgresUnavailable, type ThrowawayPostgres } from '../helpers/throwaway-postgres.ts';

const ADMIN_TOKEN = 'db-faults-admin-token';
// PostgreSQL only by design (DATABASE_URL unset: a SQLite run); a machine that cannot run the
// instance skips, or fails on CI (helpers/skips.ts).
const skip = process.env.DATABASE_URL ? unavailable(throwawayPostgresUnavailable()) : 'PostgreSQL only: DATABASE_URL is not set (a SQLite-only run)';

let postgres: ThrowawayPostgres;
let child: ChildProcess;
let base: string;
let dataDir: string;
let exitedWith: string | null = null;

/** A webhook receiver that holds deliveries while `holding`, then answers 200; it keeps the GUID of every post. */
const receiver = {
  holding: false,
  held: [] as { guid: string; res: ServerResponse }[],
  guids: [] as string[],
  server: createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const guid = String(req.headers['x-vendor-delivery']);
      receiver.guids.push(guid);
      if (receiver.holding) receiver.held.push({ guid, res });
      else res.writeHead(200).end('ok');
    });
  }),
};

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; headers: Headers; body: any }> {
  const admin = path.startsWith('/_admin');
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { accept: 'application/json', ...(admin ? { authorization: `Bearer ${ADMIN_TOKEN}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

/** Requests while `active()`: reads of a user and creations of new users; counts statuses and remembers acknowledged creations. */
async function load(active: () => boolean, statuses: Map<number, number>, created: string[], tag: string): Promise<void> {
  let n = 0;
  const worker = async (w: number) => {
    while (active()) {
      const write = n++ % 3 === 0;
      const login = `${tag}-${w}-${n}`;
      const response = await (write ? call('POST', '/_admin/users', { login }) : call('GET', '/api/v3/users/alice')).catch(() => ({ status: 0, headers: new Headers(), body: undefined }));
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      if (response.status === 503) assert.ok(response.headers.get('retry-after'), '503 without Retry-After');
      if (write && response.status === 201) created.push(login);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };
  await Promise.all([0, 1, 2, 3, 4, 5].map(worker));
}

before(async () => {
  if (skip) return;
  await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
  postgres = await startThrowawayPostgres();
  dataDir = mkdtempSync(join(tmpdir(), 'codehost-faults-'));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  child = spawnServe({
    port,
    database: { databaseUrl: postgres.databaseUrl, dataDir, drop: async () => {} },
    adminToken: ADMIN_TOKEN,
    env: { CODEHOST_DATABASE_POOL_SIZE: '4', CODEHOST_LOG_LEVEL: 'fatal', CODEHOST_DATABASE_CONNECT_TIMEOUT_MS: '1000', CODEHOST_RATE_LIMIT_ANONYMOUS: '1000000', CODEHOST_WEBHOOK_CONCURRENCY: '2', CODEHOST_WEBHOOK_TIMEOUT_MS: '60000' },
  });
  child.once('exit', (code, signal) => (exitedWith = String(code ?? signal)));
  assert.ok(await eventually(async () => (await call('GET', '/healthz').catch(() => ({ status: 0 }))).status === 200, 30), 'the server did not start');
  // The start goes on after the port opens (the job queue boots, then LISTENs): a fault before it
  // ends is a failed start, which exits. Wait for the LISTEN connection.
  const probe = new pg.Client({ connectionString: postgres.databaseUrl });
  await probe.connect();
  try {
    const listening = async () => (await probe.query(`select 1 from pg_stat_activity where pid <> pg_backend_pid() and (query ilike 'listen %' or query ilike '%pg_listening_channels%')`)).rowCount! > 0;
    assert.ok(await eventually(listening, 30), 'the job queue did not start');
  } finally {
    await probe.end();
  }
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.equal((await call('POST', '/_admin/users', { login: 'alice' })).status, 201);
});

after(async () => {
  if (skip) return;
  if (child && exitedWith === null) {
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
  }
  postgres?.destroy();
  rmSync(dataDir, { recursive: true, force: true });
  for (const { res } of receiver.held) res.destroy();
  receiver.server.closeAllConnections();
  await new Promise((resolve) => receiver.server.close(resolve));
});

/** Full service again: a read and /readyz both answer 200 within 10 s. */
async function recovered(): Promise<string | null> {
  let last = '';
  const ok = await eventually(async () => {
    const read = await call('GET', '/api/v3/users/alice').catch((error: Error) => ({ status: 0, body: error.message }));
    const ready = await call('GET', '/readyz').catch((error: Error) => ({ status: 0, body: error.message }));
    last = `read ${read.status} ${JSON.stringify(read.body)}, readyz ${ready.status} ${JSON.stringify(ready.body)}`;
    return read.status === 200 && ready.status === 200;
  }, 10);
  return ok ? null : `no full service within 10 s: ${last}`;
}

async function assertCreated(created: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: postgres.databaseUrl });
  client.on('error', () => undefined); // a lost connection fails the query below
  await client.connect();
  try {
    const { rows } = await client.query<{ login: string }>('select login from users where login = any($1)', [created]);
    const found = new Set(rows.map((row) => row.login));
    assert.deepEqual(created.filter((login) => !found.has(login)), [], 'acknowledged creations are missing');
  } finally {
    await client.end();
  }
}

test('terminating the server\'s connections under load: the process stays up, no 500, full service after', { skip: skip ?? false, timeout: 60_000 }, async (t) => {
  const statuses = new Map<number, number>();
  const created: string[] = [];
  let running = true;
  const traffic = load(() => running, statuses, created, 'kill');
  const killer = new pg.Client({ connectionString: postgres.databaseUrl });
  // The test's own connection must not be an uncaught exception if it is lost.
  let killerLost: Error | null = null;
  killer.on('error', (error) => (killerLost = error));
  await killer.connect();
  try {
    for (let round = 0; round < 3; round++) {
      await new Promise((resolve) => setTimeout(resolve, 400));
      await killer.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()');
    }
    await new Promise((resolve) => setTimeout(resolve, 400));
  } finally {
    running = false;
    await traffic;
    await killer.end().catch(() => undefined);
  }
  assert.equal(killerLost, null, 'the test\'s own connection was lost');
  assert.equal(exitedWith, null, 'the server process exited');
  assert.ok(processAlive(child.pid!));
  assert.equal(await recovered(), null);
  const counts = Object.fromEntries(statuses);
  t.diagnostic(`statuses: ${JSON.stringify(counts)}, acknowledged creations: ${created.length}`);
  assert.deepEqual(Object.keys(counts).filter((status) => !['200', '201', '503'].includes(status)), [], `unexpected statuses: ${JSON.stringify(counts)}`);
  await assertCreated(created);
});

test('PostgreSQL stopped and started again: 503 with Retry-After while it is down, /readyz 503, /healthz 200, full service after', { skip: skip ?? false, timeout: 60_000 }, async (t) => {
  const statuses = new Map<number, number>();
  const created: string[] = [];
  let running = true;
  const traffic = load(() => running, statuses, created, 'stop');
  try {
    await new Promise((resolve) => setTimeout(resolve, 300));
    postgres.stop('immediate');
    const downSince = Date.now();
    // While it is down: every request that needs the database answers 503 (within the connect timeout), never hangs.
    const read = await call('GET', '/api/v3/users/alice');
    assert.equal(read.status, 503);
    assert.ok(read.headers.get('retry-after'));
    assert.equal(read.body.status, '503');
    assert.match(read.body.message, /database/);
    const write = await call('POST', '/_admin/users', { login: 'while-down' });
    assert.equal(write.status, 503);
    // /readyz caches its answer for a second.
    assert.ok(await eventually(async () => (await call('GET', '/readyz')).status === 503, 3), '/readyz still ready');
    assert.equal((await call('GET', '/healthz')).status, 200);
    // The operator still sees the metrics, with the 503s counted.
    const metrics = await fetch(`${base}/metrics`);
    assert.equal(metrics.status, 200);
    assert.match(await metrics.text(), /codehost_http_requests_total\{[^}]*status_code="503"\}/);
    assert.ok(Date.now() - downSince < 10_000, 'requests hung while the database was down');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  } finally {
    postgres.start();
    running = false;
    await traffic;
  }
  assert.equal(exitedWith, null, 'the server process exited');
  assert.equal(await recovered(), null);
  const counts = Object.fromEntries(statuses);
  t.diagnostic(`statuses: ${JSON.stringify(counts)}, acknowledged creations: ${created.length}`);
  assert.deepEqual(Object.keys(counts).filter((status) => !['200', '201', '503'].includes(status)), [], `unexpected statuses: ${JSON.stringify(counts)}`);
  assert.ok((statuses.get(503) ?? 0) > 0);
  await assertCreated(created);
});

test('PostgreSQL down while webhook jobs are in flight and queued: each runs to one recorded delivery after it is back', { skip: skip ?? false, timeout: 90_000 }, async (t) => {
  const EVENTS = 6;
  await call('POST', '/_admin/users', { login: 'mona' });
  await call('POST', '/_admin/repos', { owner: 'mona', name: 'durable' });
  assert.equal((await call('POST', '/_admin/apps', { slug: 'durable-app', permissions: { contents: 'read' }, events: ['push'], webhook: { url: `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}/hook` } })).status, 201);
  assert.equal((await call('POST', '/_admin/apps/durable-app/installations', { account: 'mona' })).status, 201);
  // Creating the app pings its webhook and installing sends it `installation` `created` (each answered
  // at once): both posted before the pushes.
  assert.ok(await eventually(() => receiver.guids.length === 2, 20), 'the ping and the installation event were delivered');
  receiver.guids.length = 0;
  receiver.holding = true;
  for (let i = 0; i < EVENTS; i++) {
    const sent = await call('POST', '/_admin/events', { event: 'push', repository: 'mona/durable', sender: 'mona', payload: { seq: i } });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
  }
  // Two deliveries in flight (held by the receiver), the rest queued; then the database goes away.
  assert.ok(await eventually(() => receiver.held.length === 2, 20), 'no deliveries in flight');
  postgres.stop('immediate');
  receiver.holding = false;
  // Answered once the database is gone: their outcomes cannot be recorded, so their jobs post them again.
  const interrupted = receiver.held.splice(0).map(({ guid, res }) => {
    res.writeHead(200).end('ok');
    return guid;
  });
  try {
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    assert.equal((await call('GET', '/readyz')).status, 503);
  } finally {
    postgres.start();
  }
  assert.equal(await recovered(), null);

  const client = new pg.Client({ connectionString: postgres.databaseUrl });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const deliveries = async () =>
      (await client.query<{ guid: string; delivered: boolean }>(
        `select m.guid, d.delivered_at is not null as delivered from webhook_deliveries d join webhook_messages m on m.id = d.message_id where m.event = 'push'`,
      )).rows;
    const done = await eventually(async () => {
      const rows = await deliveries();
      return rows.length >= EVENTS && rows.every((row) => row.delivered);
    }, 60);
    const rows = await deliveries();
    const jobs = (await client.query<{ state: string; count: number }>(`select state, count(*)::int as count from pgboss.job group by state`)).rows;
    t.diagnostic(`deliveries: ${rows.length}, posts received: ${receiver.guids.length}, jobs by state: ${JSON.stringify(jobs)}`);
    assert.ok(done, `deliveries not all recorded: ${JSON.stringify(rows)}`);
    assert.equal(rows.length, EVENTS, 'one delivery per event');
    assert.equal(new Set(rows.map((row) => row.guid)).size, EVENTS, 'one record per delivery');
    // Posts counted exactly, by GUID: each delivery once, and an interrupted one once more (same GUID).
    const posts = new Map<string, number>();
    for (const guid of receiver.guids) posts.set(guid, (posts.get(guid) ?? 0) + 1);
    assert.deepEqual(
      Object.fromEntries(rows.map((row) => [row.guid, posts.get(row.guid) ?? 0])),
      Object.fromEntries(rows.map((row) => [row.guid, interrupted.includes(row.guid) ? 2 : 1])),
      `posts by GUID (interrupted: ${JSON.stringify(interrupted)})`,
    );
    assert.equal(receiver.guids.length, EVENTS + interrupted.length, 'no post of anything else');
    assert.deepEqual(jobs.filter((job) => job.state === 'failed'), [], 'no job failed for good');
  } finally {
    await client.end();
  }
  assert.equal(exitedWith, null, 'the server process exited');
});
