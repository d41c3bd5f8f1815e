// PostgreSQL only: the token check and webhook deliveries through PgBouncer 1.18 in transaction pool
// mode (CODEHOST_DATABASE_POOLER=transaction) against the same directly connected, in one run (issue
// 22, "many processes behind a connection pooler"). Two databases on the one server, each with one
// `codehost serve`: one connected directly, one through a PgBouncer of the bench's own (few server
// connections); both migrated directly first. Loads alternate between the two (compareLoads), so a
// machine whose load changes weighs on both alike; each figure is reported with its ratio
// pooled/direct. On SQLite there is nothing to pool: the bench reports nothing.
import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../test/helpers/database.ts';
import { pgbouncerUnavailable, startPgBouncer, type PgBouncer } from '../test/helpers/pgbouncer.ts';
import { runCli } from '../test/helpers/process.ts';
import { compareLoads, cpuSeconds, ratio, startServerProcess, warmUp, type ServerProcess } from './lib.ts';

export interface Options {
  seconds?: number;
  env?: Record<string, string>;
}

const SECRET = 'bench-pgbouncer-secret';
const APPS = 5;
const EVENTS = 100;
const ROUNDS = 2;

interface Side {
  name: 'direct' | 'pooled';
  server: ServerProcess;
  arrivals: number;
  /** Posts whose signature did not verify (answered 400). */
  badSignatures: number;
  databaseUrl: string;
}

/** A database of its own on the server DATABASE_URL names, migrated on a direct connection. */
async function migratedDatabase(): Promise<TestDatabase> {
  const database = await createTestDatabase();
  const migrated = await runCli(['migrate'], { DATABASE_URL: database.databaseUrl!, CODEHOST_DATA_DIR: database.dataDir, CODEHOST_LOG_LEVEL: 'error' });
  if (migrated.code !== 0) throw new Error(`codehost migrate: ${migrated.output}`);
  return database;
}

/** What the database holds of the deliveries and their jobs (read directly), for a burst that came up short. */
async function facts(databaseUrl: string): Promise<string> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const deliveries = await client.query('SELECT status, status_code, count(*)::int AS n FROM webhook_deliveries GROUP BY 1, 2');
    const jobs = await client.query('SELECT name, state, count(*)::int AS n FROM pgboss.job GROUP BY 1, 2');
    return `deliveries ${JSON.stringify(deliveries.rows)}; jobs ${JSON.stringify(jobs.rows)}`;
  } finally {
    await client.end();
  }
}

export default async function pgbouncer(options: Options = {}): Promise<Record<string, number | string>> {
  if (!options.env?.DATABASE_URL) return { 'PostgreSQL only': 'nothing to pool on SQLite' };
  const unavailable = pgbouncerUnavailable();
  if (unavailable) return { 'not run': unavailable };
  const seconds = options.seconds ?? 10;
  const databases: TestDatabase[] = [];
  let bouncer: PgBouncer | null = null;
  const sides: Side[] = [];
  // One receiver; each side's apps post to their own path.
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const expected = `sha256=${createHmac('sha256', SECRET).update(Buffer.concat(chunks)).digest('hex')}`;
      res.writeHead(req.headers['x-hub-signature-256'] === expected ? 200 : 400).end();
      const side = sides.find((s) => req.url === `/${s.name}`);
      if (side && req.headers['x-hub-signature-256'] === expected) side.arrivals++;
      else if (side) side.badSignatures++;
    });
  });
  receiver.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  try {
    const direct = await migratedDatabase();
    databases.push(direct);
    const pooled = await migratedDatabase();
    databases.push(pooled);
    const pooledName = new URL(pooled.databaseUrl!).pathname.slice(1);
    bouncer = await startPgBouncer({ serverUrl: pooled.databaseUrl!, databases: [pooledName], poolSize: 8 });
    const settings = { ...options.env, CODEHOST_WEBHOOK_CONCURRENCY: '32' };
    sides.push({ name: 'direct', server: await startServerProcess({ ...settings, DATABASE_URL: direct.databaseUrl! }), arrivals: 0, badSignatures: 0, databaseUrl: direct.databaseUrl! });
    sides.push({
      name: 'pooled',
      server: await startServerProcess({ ...settings, DATABASE_URL: bouncer.url(pooledName), CODEHOST_DATABASE_POOLER: 'transaction' }),
      arrivals: 0,
      badSignatures: 0,
      databaseUrl: pooled.databaseUrl!,
    });

    // The same world on each side: a user, an app's user token (the token check), a repository
    // and APPS apps installed on it with webhooks (each event: APPS deliveries).
    const checks: Array<{ url: string; headers: Record<string, string>; body: string }> = [];
    for (const { name, server } of sides) {
      await server.admin('POST', '/users', { login: 'mona' });
      await server.admin('POST', '/repos', { owner: 'mona', name: 'widgets' });
      const app = await server.admin('POST', '/apps', { slug: 'bench-app' });
      const { token } = await server.admin('POST', '/apps/bench-app/authorizations', { login: 'mona', scopes: ['repo'] });
      checks.push({
        url: `${server.apiUrl}/applications/${app.client_id}/token`,
        headers: {
          authorization: `Basic ${Buffer.from(`${app.client_id}:${app.client_secret}`).toString('base64')}`,
          'content-type': 'application/json',
          accept: 'application/vnd.vendor+json',
        },
        body: JSON.stringify({ access_token: token }),
      });
      for (let i = 0; i < APPS; i++) {
        await server.admin('POST', '/apps', { slug: `hook-${i}`, permissions: { contents: 'read' }, events: ['push'], webhook: { url: `${receiverUrl}/${name}`, secret: SECRET } });
        await server.admin('POST', `/apps/hook-${i}/installations`, { account: 'mona', repositories: ['widgets'] });
      }
    }

    // The token check: direct and pooled in turns.
    const [directCheck, pooledCheck] = checks.map((check) => ({ ...check, method: 'POST', seconds }));
    await warmUp(directCheck!, pooledCheck!);
    const cpuBefore = sides.map((s) => cpuSeconds([s.server.pid]));
    const bouncerCpuBefore = cpuSeconds([bouncer.pid]);
    const tokens = await compareLoads(directCheck!, pooledCheck!, ROUNDS);
    const cpuPerCheck = sides.map((s, i) => ((cpuSeconds([s.server.pid]) - cpuBefore[i]!) * 1000) / ((i === 0 ? tokens.bare : tokens.real).requestsPerSecond * seconds));
    const bouncerCpuPerCheck = ((cpuSeconds([bouncer.pid]) - bouncerCpuBefore) * 1000) / (tokens.real.requestsPerSecond * seconds);
    if (tokens.real.non2xx || tokens.real.errors || tokens.bare.non2xx || tokens.bare.errors) {
      throw new Error(`token checks failed: direct ${tokens.bare.non2xx} non-2xx ${tokens.bare.errors} errors; pooled ${tokens.real.non2xx} non-2xx ${tokens.real.errors} errors`);
    }

    // Deliveries: a burst of EVENTS push events (8 in flight) per side, in turns; from the first event
    // to the last delivery recorded (the queue drained).
    const burst = async (side: Side, seq: number): Promise<number> => {
      side.arrivals = 0;
      const started = performance.now();
      let next = 0;
      await Promise.all(Array.from({ length: 8 }, async () => {
        while (next < EVENTS) {
          const i = next++;
          await side.server.admin('POST', '/events', { event: 'push', repository: 'mona/widgets', sender: 'mona', payload: { seq: seq * EVENTS + i } });
        }
      }));
      const deadline = Date.now() + 120_000;
      while (side.arrivals < EVENTS * APPS) {
        if (Date.now() > deadline) throw new Error(`${side.name}: ${side.arrivals} of ${EVENTS * APPS} deliveries arrived, ${side.badSignatures} badly signed; ${await facts(side.databaseUrl)}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await side.server.admin('POST', '/jobs/drain', { timeout_seconds: 120 });
      return (EVENTS * APPS) / ((performance.now() - started) / 1000);
    };
    // Warm-up; the setup's own deliveries (each app's ping and installation event) arrive first.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    for (const side of sides) await burst(side, 0);
    const recorded: [number[], number[]] = [[], []];
    for (let round = 1; round <= ROUNDS; round++) {
      recorded[0].push(await burst(sides[0]!, round));
      recorded[1].push(await burst(sides[1]!, round));
    }
    const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;
    const [directDeliveries, pooledDeliveries] = [mean(recorded[0]), mean(recorded[1])];
    const pools = (await bouncer.show('POOLS')).find((pool) => pool.database === pooledName);
    return {
      'check token req/s direct': Math.round(tokens.bare.requestsPerSecond),
      'check token req/s through PgBouncer': Math.round(tokens.real.requestsPerSecond),
      'check token ratio PgBouncer/direct': tokens.ratio,
      'check token p50 ms direct / PgBouncer': `${tokens.bare.latencyP50Ms} / ${tokens.real.latencyP50Ms}`,
      'check token server CPU ms/request direct': Number(cpuPerCheck[0]!.toFixed(3)),
      'check token server CPU ms/request through PgBouncer': Number(cpuPerCheck[1]!.toFixed(3)),
      'check token PgBouncer CPU ms/request': Number(bouncerCpuPerCheck.toFixed(3)),
      [`deliveries/s recorded direct (${EVENTS} events × ${APPS} apps)`]: Math.round(directDeliveries),
      [`deliveries/s recorded through PgBouncer (${EVENTS} events × ${APPS} apps)`]: Math.round(pooledDeliveries),
      'deliveries ratio PgBouncer/direct': ratio(pooledDeliveries, directDeliveries),
      'PgBouncer server connections (default_pool_size 8)': pools ? `${Number(pools.sv_active) + Number(pools.sv_idle) + Number(pools.sv_used)}` : '?',
    };
  } finally {
    for (const side of sides) await side.server.stop();
    await bouncer?.stop();
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
    for (const database of databases) await database.drop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (!process.env.DATABASE_URL) throw new Error('bench/pgbouncer.ts needs DATABASE_URL (PostgreSQL)');
  console.table(await pgbouncer({ seconds: Number(process.env.BENCH_SECONDS ?? 10), env: { DATABASE_URL: process.env.DATABASE_URL } }));
}
