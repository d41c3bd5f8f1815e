// Three `codehost serve` processes through PgBouncer in transaction pool mode (issue 22), with
// CODEHOST_DATABASE_POOLER=transaction: each transaction of any process may run on any of a few
// server connections. The database is migrated first on a direct connection (`codehost migrate`):
// Kysely's migrator holds a session advisory lock across statements, which a transaction pooler
// does not keep (docs/operations.md). Then: webhook deliveries exactly once with valid signatures,
// the rate-limit bound from both sides, and an export made through one process and downloaded
// through another.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { leaseSize } from '../../src/platform/rate-limit.ts';
import { signAppJwt } from '../helpers/credentials.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { pgbouncerUnavailable, startPgBouncer, type PgBouncer } from '../helpers/pgbouncer.ts';
import { eventually, freePort, runCli, spawnServe, startCli, stopped, waitFor } from '../helpers/process.ts';
import { Receiver } from '../helpers/receiver.ts';
import { unavailable } from '../helpers/skips.ts';

const skip = process.env.DATABASE_URL ? unavailable(pgbouncerUnavailable()) : 'PostgreSQL only: DATABASE_URL is not set (a SQLite-only run)';

const ADMIN_TOKEN = 'pgbouncer-admin-token';
const SECRET = 'pgbouncer-secret';
const PROCESSES = 3;
/** PgBouncer's server connections for the database: far fewer than the processes' clients. */
const SERVER_CONNECTIONS = 6;
const LIMIT = 600;
const BLOCK = 10;
const EVENTS = 60;
const LOOKUP_CACHE_MS = 300;

let database: TestDatabase;
/** A database left unmigrated, also behind the PgBouncer. */
let unmigrated: TestDatabase;
let bouncer: PgBouncer | null = null;
const children: ChildProcess[] = [];
const bases: string[] = [];
const scratch = mkdtempSync(join(tmpdir(), 'codehost-pgbouncer-test-'));
const receiver = new Receiver();

async function serve(port: number, databaseUrl: string): Promise<ChildProcess> {
  const child = spawnServe({
    port,
    database,
    adminToken: ADMIN_TOKEN,
    env: {
      DATABASE_URL: databaseUrl,
      CODEHOST_DATABASE_POOLER: process.env.PGB_POOLER ?? 'transaction',
      CODEHOST_DATABASE_POOL_SIZE: '8',
      CODEHOST_RATE_LIMIT: String(LIMIT),
      CODEHOST_RATE_LIMIT_BLOCK: String(BLOCK),
      CODEHOST_WEBHOOK_CONCURRENCY: '4',
      CODEHOST_LOOKUP_CACHE_MS: String(LOOKUP_CACHE_MS),
    },
  });
  await waitFor('a server to answer /readyz', 60, async () => {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}`);
    return (await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false)) ? true : undefined;
  });
  return child;
}

async function call(base: string, method: string, path: string, init: { token?: string; authorization?: string; body?: unknown } = {}): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/vnd.vendor+json', 'content-type': 'application/json' };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  if (init.authorization) headers.authorization = init.authorization;
  return fetch(`${base}${path}`, { method, headers, body: init.body === undefined ? undefined : JSON.stringify(init.body), redirect: 'manual' });
}

async function admin(base: string, method: string, path: string, body?: unknown): Promise<any> {
  const response = await call(base, method, `/_admin${path}`, { token: ADMIN_TOKEN, body: body ?? (method === 'GET' ? undefined : {}) });
  const text = await response.text();
  if (!response.ok) throw new Error(`admin ${method} ${path}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

const dbName = (db: TestDatabase) => new URL(db.databaseUrl!).pathname.slice(1);

/** `codehost serve` with the settings of a deployment that left CODEHOST_DATABASE_POOLER unset. */
function serveUnset(port: number, databaseUrl: string, dataDir: string) {
  return startCli(['serve'], {
    env: { CODEHOST_PORT: String(port), CODEHOST_DATA_DIR: dataDir, CODEHOST_ADMIN_TOKEN: ADMIN_TOKEN, CODEHOST_DEMO: '0', CODEHOST_LOG_LEVEL: 'error', DATABASE_URL: databaseUrl },
  });
}

function signed(body: Buffer, header: string | string[] | undefined): boolean {
  if (typeof header !== 'string') return false;
  const expected = Buffer.from(`sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`);
  const got = Buffer.from(header);
  return got.length === expected.length && timingSafeEqual(got, expected);
}

before(async () => {
  if (skip) return;
  await receiver.start();
  database = await createTestDatabase();
  unmigrated = await createTestDatabase();
  const name = new URL(database.databaseUrl!).pathname.slice(1);
  // Migrated on a direct connection: the migrator's lock is a session advisory lock.
  const migrated = await runCli(['migrate'], { DATABASE_URL: database.databaseUrl!, CODEHOST_DATA_DIR: database.dataDir, CODEHOST_LOG_LEVEL: 'error' });
  assert.equal(migrated.code, 0, migrated.output);
  bouncer = await startPgBouncer({ serverUrl: database.databaseUrl!, databases: [name, dbName(unmigrated)], poolSize: SERVER_CONNECTIONS });
  // One at a time: the first one settles the secret key and creates the job queue's schema.
  for (let i = 0; i < PROCESSES; i++) {
    const port = await freePort();
    children.push(await serve(port, process.env.PGB_DIRECT ? database.databaseUrl! : bouncer.url(name)));
    bases.push(`http://127.0.0.1:${port}`);
  }
});

after(async () => {
  await Promise.all(children.map((child) => new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(null);
    child.once('exit', resolve);
    child.kill('SIGTERM');
  })));
  await bouncer?.stop();
  await receiver.stop();
  await database?.drop();
  await unmigrated?.drop();
  rmSync(scratch, { recursive: true, force: true });
});

describe(`${PROCESSES} processes through PgBouncer in transaction mode`, { skip }, () => {
  test('every connection to the database goes through PgBouncer, on its few server connections', async () => {
    const name = new URL(database.databaseUrl!).pathname.slice(1);
    const direct = new pg.Client({ connectionString: database.databaseUrl! });
    await direct.connect();
    try {
      const { rows } = await direct.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
      assert.ok(rows[0].n <= SERVER_CONNECTIONS, `${rows[0].n} server connections to the database`);
    } finally {
      await direct.end();
    }
    const pools = (await bouncer!.show('POOLS')).filter((pool) => pool.database === name);
    assert.equal(pools.length, 1);
    assert.ok(Number(pools[0]!.cl_active) + Number(pools[0]!.cl_waiting) + Number(pools[0]!.cl_idle ?? 0) >= PROCESSES, JSON.stringify(pools));
  });

  test(`${EVENTS} events sent through all processes: each delivered exactly once, signed`, { timeout: 120_000 }, async () => {
    await admin(bases[0]!, 'POST', '/users', { login: 'mona' });
    await admin(bases[1]!, 'POST', '/repos', { owner: 'mona', name: 'pooled' });
    const app = await admin(bases[2]!, 'POST', '/apps', {
      slug: 'pooled-app',
      permissions: { contents: 'read' },
      events: ['push'],
      webhook: { url: receiver.url('/hook'), secret: SECRET },
    });
    await admin(bases[0]!, 'POST', '/apps/pooled-app/installations', { account: 'mona' });
    // The other processes read the new app and installation once their lookups expire (CODEHOST_LOOKUP_CACHE_MS).
    await new Promise((resolve) => setTimeout(resolve, LOOKUP_CACHE_MS + 200));
    await Promise.all(Array.from({ length: EVENTS }, async (_, i) => {
      const sent = await admin(bases[i % PROCESSES]!, 'POST', '/events', { event: 'push', repository: 'mona/pooled', sender: 'mona', payload: { seq: i } });
      if (sent.deliveries !== 1) console.log('DEBUG', i, i % PROCESSES, sent, new Date().toISOString());
    }));

    const pushes = () => receiver.on('/hook').filter((r) => r.headers['x-vendor-event'] === 'push');
    assert.ok(await eventually(() => pushes().length >= EVENTS, 60), `${pushes().length} of ${EVENTS} pushes delivered`);
    // A late duplicate (a job run twice) would arrive after the last first delivery.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const posts = pushes();
    const guids = posts.map((r) => String(r.headers['x-vendor-delivery']));
    assert.equal(new Set(guids).size, guids.length, 'a delivery guid posted twice');
    assert.equal(posts.length, EVENTS);
    assert.deepEqual(posts.map((r) => r.json.seq).sort((a, b) => a - b), Array.from({ length: EVENTS }, (_, i) => i));
    for (const post of posts) assert.ok(signed(post.bytes, post.headers['x-hub-signature-256']), `delivery ${post.headers['x-vendor-delivery']} is not signed with the secret`);
    // Each recorded once, on whichever process asks.
    const jwt = await signAppJwt(app);
    for (const base of bases) {
      const listed = await waitFor('every delivery recorded', 30, async () => {
        const response = await call(base, 'GET', '/api/v3/app/hook/deliveries?per_page=100', { token: jwt });
        assert.equal(response.status, 200);
        const deliveries = ((await response.json()) as Array<{ event: string; guid: string; status_code: number }>).filter((d) => d.event === 'push');
        return deliveries.length >= EVENTS ? deliveries : undefined;
      });
      assert.equal(listed.length, EVENTS);
      assert.deepEqual(listed.map((d) => d.guid).sort(), [...guids].sort());
      assert.ok(listed.every((d) => d.status_code === 200));
    }
  });

  test(`a user's ${LIMIT} requests an hour hold within the bound over all processes`, { timeout: 120_000 }, async () => {
    await admin(bases[0]!, 'POST', '/users', { login: 'hubot' });
    const token = (await admin(bases[1]!, 'POST', '/tokens', { login: 'hubot', kind: 'classic', scopes: [] })).token;
    const statuses: number[] = [];
    let next = 0;
    const total = LIMIT + 300;
    await Promise.all(Array.from({ length: 24 }, async () => {
      while (next < total) {
        const i = next++;
        const response = await call(bases[i % PROCESSES]!, 'GET', '/api/v3/user', { token });
        await response.arrayBuffer();
        statuses.push(response.status);
      }
    }));
    const allowed = statuses.filter((s) => s === 200).length;
    const lease = leaseSize(LIMIT, BLOCK);
    assert.ok(allowed <= LIMIT, `${allowed} requests allowed, over the limit of ${LIMIT}`);
    assert.ok(allowed >= LIMIT - PROCESSES * (lease - 1), `only ${allowed} requests allowed of ${LIMIT}`);
    assert.deepEqual([...new Set(statuses)].sort(), [200, 403]);
    for (const base of bases) assert.equal((await call(base, 'GET', '/api/v3/user', { token })).status, 403, base);
  });

  test('an export started through one process downloads through another and unpacks', { timeout: 120_000 }, async () => {
    await admin(bases[0]!, 'POST', '/users', { login: 'erin' });
    await admin(bases[0]!, 'POST', '/repos', { owner: 'erin', name: 'carried', init_git: true });
    const token = (await admin(bases[0]!, 'POST', '/tokens', { login: 'erin', kind: 'classic', scopes: ['repo'] })).token;
    const started = await call(bases[0]!, 'POST', '/api/v3/user/migrations', { token, body: { repositories: ['carried'] } });
    assert.equal(started.status, 201, await started.clone().text());
    const { id } = (await started.json()) as { id: number };
    const state = await waitFor('the export to end', 90, async () => {
      const view = (await (await call(bases[1]!, 'GET', `/api/v3/user/migrations/${id}`, { token })).json()) as { state: string };
      return ['exported', 'failed'].includes(view.state) ? view.state : undefined;
    });
    assert.equal(state, 'exported');
    const redirect = await call(bases[2]!, 'GET', `/api/v3/user/migrations/${id}/archive`, { token });
    assert.equal(redirect.status, 302, await redirect.text());
    const download = await fetch(redirect.headers.get('location')!);
    assert.equal(download.status, 200);
    const file = join(scratch, 'archive.tar.gz');
    writeFileSync(file, Buffer.from(await download.arrayBuffer()));
    const dir = join(scratch, 'unpacked');
    execFileSync('mkdir', ['-p', dir]);
    execFileSync('tar', ['-xzf', file, '-C', dir]);
    assert.ok(readdirSync(dir).includes('repositories'), readdirSync(dir).join(', '));
    assert.ok(readdirSync(join(dir, 'repositories', 'erin')).includes('carried.git'));
  });
});

describe('a start through PgBouncer in transaction mode with CODEHOST_DATABASE_POOLER unset', { skip }, () => {
  test('serve finds the pooler, runs as if it were set, says so in the banner, and its reusable queries answer', { timeout: 120_000 }, async () => {
    const port = await freePort();
    const cli = serveUnset(port, bouncer!.url(dbName(database)), join(scratch, 'unset'));
    try {
      await cli.waitFor(/codehost is listening/, 90);
      const output = cli.output();
      assert.match(output, /database: PostgreSQL \(CODEHOST_DATABASE_POOLER=transaction: no named prepared statements, no LISTEN\)/);
      assert.match(output, /^ {2}CODEHOST_DATABASE_POOLER=transaction \(DATABASE_URL leads to a transaction pooler: (two connections, both open, were answered by one backend|one connection was answered by two backends|a session setting was gone)/m);
      const base = `http://127.0.0.1:${port}`;
      await admin(base, 'POST', '/users', { login: 'unset' });
      const token = (await admin(base, 'POST', '/tokens', { login: 'unset', kind: 'classic', scopes: [] })).token;
      // The token lookup is a reusable query: named, it fails on the server connections that did not prepare it.
      const statuses = await Promise.all(Array.from({ length: 60 }, async () => (await call(base, 'GET', '/api/v3/user', { token })).status));
      assert.deepEqual([...new Set(statuses)], [200]);
    } finally {
      cli.child.kill('SIGTERM');
      await cli.exited();
      await stopped(cli);
    }
  });

  test('serve and migrate through it on an unmigrated database refuse in one line: migrate on a direct connection', { timeout: 120_000 }, async () => {
    for (const command of ['serve', 'migrate']) {
      const port = await freePort();
      const cli = command === 'serve'
        ? serveUnset(port, bouncer!.url(dbName(unmigrated)), unmigrated.dataDir)
        : startCli(['migrate'], { env: { CODEHOST_DATA_DIR: unmigrated.dataDir, CODEHOST_LOG_LEVEL: 'error', DATABASE_URL: bouncer!.url(dbName(unmigrated)) } });
      const code = await cli.exited();
      await stopped(cli);
      const lines = cli.output().trim().split('\n');
      assert.notEqual(code, 0, `${command}: ${cli.output()}`);
      assert.equal(lines.length, 1, `${command}: ${cli.output()}`);
      assert.match(lines[0]!, /DATABASE_URL leads to a transaction pooler \(.+\) and the database is not migrated: .*run `codehost migrate` with DATABASE_URL naming PostgreSQL itself \(a direct connection\)/);
    }
    // Nothing was migrated through the pooler.
    const direct = new pg.Client({ connectionString: unmigrated.databaseUrl! });
    await direct.connect();
    try {
      assert.equal((await direct.query("select to_regclass('kysely_migration') as t")).rows[0].t, null);
    } finally {
      await direct.end();
    }
  });

  test('a direct connection is not taken for a pooler: the banner names no pooler', { timeout: 120_000 }, async () => {
    const port = await freePort();
    const cli = serveUnset(port, database.databaseUrl!, join(scratch, 'direct'));
    try {
      await cli.waitFor(/codehost is listening/, 90);
      assert.match(cli.output(), /^database: PostgreSQL$/m);
      assert.doesNotMatch(cli.output(), /POOLER|pooler/);
    } finally {
      cli.child.kill('SIGTERM');
      await cli.exited();
      await stopped(cli);
    }
  });
});
