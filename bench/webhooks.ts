// Webhook deliveries: signed posts to a loopback receiver that answers 200 at once, each recorded
// (the delivery row written and listed by the API). Throughput: a burst of raw events fanned out to
// many apps, from the first event to the last delivery recorded. Latency: activity to delivery
// (the event's POST to its arrival at the receiver) at a steady rate. Baseline: the same signed
// posts sent by a bare node:http loop with the same concurrency, no database. CPU per delivery: the
// server processes' CPU time (user + system) over the burst, divided by its deliveries; on
// PostgreSQL a second burst runs with a second worker process on the same database, and the row
// compares the CPU per delivery of the two processes together with the one process alone; on
// PostgreSQL (on this host) the CPU of the database's backends serving the bench's database too.
import { createHmac, createPrivateKey } from 'node:crypto';
import { createServer, request, Agent } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, importPKCS8 } from 'jose';
import pg from 'pg';
import { createTestDatabase } from '../test/helpers/database.ts';
import { cpuSeconds, ratio, startServerProcess, type ServerProcess } from './lib.ts';

export interface Options {
  seconds?: number;
  env?: Record<string, string>;
  /** Apps installed on the repository (each event is one delivery per app). */
  apps?: number;
  /** Events of the throughput burst. */
  events?: number;
  /** Events per second of the latency phase: below saturation, so the figure is latency, not backlog. */
  rate?: number;
}

const SECRET = 'bench-webhook-secret';
const CONCURRENCY = 32;
/** Events sent (and their deliveries drained) before each measured burst. */
const WARM_UP_EVENTS = 25;

interface Arrival {
  seq: number;
  at: number;
}

/** The receiver: verifies the signature, answers 200 at once, notes when each event's delivery came. */
async function startReceiver() {
  const arrivals: Arrival[] = [];
  let badSignatures = 0;
  let badBodies = 0;
  let sample = Buffer.alloc(0);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = performance.now();
      const body = Buffer.concat(chunks);
      const expected = `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
      if (req.headers['x-hub-signature-256'] !== expected) badSignatures++;
      res.writeHead(200).end();
      sample = body;
      let seq = -1;
      try {
        seq = (JSON.parse(body.toString('utf8')) as { seq: number }).seq;
      } catch {
        badBodies++;
      }
      arrivals.push({ seq, at });
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    arrivals,
    badSignatures: () => badSignatures,
    badBodies: () => badBodies,
    /** The last body received, for the baseline to send the same bytes. */
    sample: () => sample,
    stop: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Runs `count` tasks with at most `width` at once. */
async function pool(count: number, width: number, task: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(width, count) }, async () => {
    while (next < count) await task(next++);
  }));
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

/** Counts the deliveries recorded, as each app lists them through the API (pages of 100, by cursor). */
async function countRecorded(server: ServerProcess, apps: { id: number; private_key: string }[]): Promise<number> {
  let total = 0;
  for (const app of apps) {
    const now = Math.floor(Date.now() / 1000);
    const key = await importPKCS8(createPrivateKey(app.private_key).export({ type: 'pkcs8', format: 'pem' }).toString(), 'RS256');
    const jwt = await new SignJWT({}).setProtectedHeader({ alg: 'RS256' }).setIssuer(String(app.id)).setIssuedAt(now - 30).setExpirationTime(now + 300).sign(key);
    let url: string | undefined = `${server.apiUrl}/app/hook/deliveries?per_page=100`;
    while (url) {
      const response: Response = await fetch(url, { headers: { authorization: `Bearer ${jwt}` } });
      if (!response.ok) throw new Error(`list deliveries: ${response.status} ${await response.text()}`);
      total += ((await response.json()) as unknown[]).length;
      url = /<([^>]+)>; rel="next"/.exec(response.headers.get('link') ?? '')?.[1];
    }
  }
  return total;
}

/** The bare loop: the same signed body posted `count` times with the same concurrency, nothing stored. */
async function baseline(url: string, body: Buffer, count: number): Promise<number> {
  const agent = new Agent({ keepAlive: true });
  const signature = `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
  const started = performance.now();
  await pool(count, CONCURRENCY, () => new Promise<void>((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature, 'content-length': body.length } }, (res) => {
      res.resume();
      res.on('end', resolve);
    });
    req.on('error', reject);
    req.end(body);
  }));
  agent.destroy();
  return count / ((performance.now() - started) / 1000);
}

export default async function webhooks(options: Options = {}): Promise<Record<string, number | string>> {
  const appCount = options.apps ?? 20;
  const events = options.events ?? 500;
  const steadySeconds = Math.max(3, Math.min(options.seconds ?? 10, 10));
  const receiver = await startReceiver();
  // On PostgreSQL a database of its own (dropped afterwards), never the one DATABASE_URL names.
  const database = options.env?.DATABASE_URL ? await createTestDatabase() : null;
  const server = await startServerProcess({
    CODEHOST_WEBHOOK_CONCURRENCY: String(CONCURRENCY),
    ...options.env,
    ...(database?.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}),
  });
  // PostgreSQL: the backends serving the bench's database (the servers' pools, pg-boss's, LISTEN).
  const observer = database ? new pg.Client({ connectionString: database.databaseUrl! }) : null;
  await observer?.connect();
  /** CPU seconds so far of each backend of the database (none on SQLite). */
  const backendCpu = async (): Promise<Map<number, number>> => {
    if (!observer) return new Map();
    const { rows } = await observer.query<{ pid: number }>('select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()');
    return new Map(rows.map(({ pid }) => [pid, cpuSeconds([pid])]));
  };
  try {
    await server.admin('POST', '/users', { login: 'mona' });
    await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'] });
    await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
    const apps: { id: number; private_key: string }[] = [];
    for (let i = 0; i < appCount; i++) {
      // The first app also takes `create` events: the steady phase's deliveries, one per event.
      apps.push(await server.admin('POST', '/apps', {
        slug: `bench-${i}`,
        permissions: { contents: 'read' },
        events: i === 0 ? ['push', 'create'] : ['push'],
        webhook: { url: receiver.url, secret: SECRET },
      }));
      await server.admin('POST', `/apps/bench-${i}/installations`, { account: 'acme', repositories: ['widgets'] });
    }
    const sendEvent = (event: string, seq: number) => server.admin('POST', '/events', { event, repository: 'acme/widgets', sender: 'mona', payload: { seq } });

    // Each burst comes after a warm-up through the same processes (a process that joins later is as
    // warm as the first when its CPU is counted), then every event (8 requests in flight), each
    // fanned out to every app.
    const expected = events * appCount;
    /** One burst: answers when the last delivery arrived, when the last was recorded, and the CPU the processes spent. */
    const burst = async (processes: ServerProcess[]) => {
      receiver.arrivals.length = 0;
      await pool(WARM_UP_EVENTS, 8, async (seq) => {
        await sendEvent('push', -1 - seq);
      });
      await waitFor('the warm-up deliveries', () => receiver.arrivals.length >= WARM_UP_EVENTS * appCount, 60_000);
      await server.admin('POST', '/jobs/drain', { timeout_seconds: 60 });
      receiver.arrivals.length = 0;
      const pids = processes.map((p) => p.pid);
      const cpuBefore = cpuSeconds(pids);
      const backendsBefore = await backendCpu();
      const started = performance.now();
      await pool(events, 8, async (seq) => {
        await sendEvent('push', seq);
      });
      const postedAt = performance.now();
      await waitFor('every burst delivery', () => receiver.arrivals.length >= expected, 120_000);
      const lastArrival = Math.max(...receiver.arrivals.map((a) => a.at));
      await server.admin('POST', '/jobs/drain', { timeout_seconds: 120 });
      const recordedAt = performance.now();
      const cpu = cpuSeconds(pids) - cpuBefore;
      // A backend that connected during the burst counts from zero; one that closed during it is lost.
      let backendSeconds = 0;
      for (const [pid, seconds] of await backendCpu()) backendSeconds += seconds - (backendsBefore.get(pid) ?? 0);
      return {
        postedMs: postedAt - started,
        deliveredPerSecond: expected / ((lastArrival - started) / 1000),
        recordedPerSecond: expected / ((recordedAt - started) / 1000),
        cpuMsPerDelivery: (cpu * 1000) / expected,
        backendCpuMsPerDelivery: (backendSeconds * 1000) / expected,
      };
    };
    const one = await burst([server]);
    // The warm-up's deliveries are recorded too.
    const recorded = (await countRecorded(server, apps)) - WARM_UP_EVENTS * appCount;

    // Latency at a steady rate: `create` events, one delivery each (only the first app subscribes).
    receiver.arrivals.length = 0;
    const rate = options.rate ?? 20;
    const steadyEvents = rate * steadySeconds;
    const sentAt = new Map<number, number>();
    const steadyStart = performance.now();
    await Promise.all(Array.from({ length: steadyEvents }, async (_, seq) => {
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, steadyStart + (seq * 1000) / rate - performance.now())));
      sentAt.set(seq, performance.now());
      await sendEvent('create', seq);
    }));
    await waitFor('every steady delivery', () => receiver.arrivals.length >= steadyEvents, 60_000);
    const arrivedAt = new Map(receiver.arrivals.map((a) => [a.seq, a.at]));
    const latencies = [...sentAt].map(([seq, sent]) => arrivedAt.get(seq)! - sent).sort((a, b) => a - b);

    // Scaling out (PostgreSQL): a second process working the same queue; events still arrive at the first.
    let two: Awaited<ReturnType<typeof burst>> | null = null;
    if (database) {
      const second = await startServerProcess({
        CODEHOST_WEBHOOK_CONCURRENCY: String(CONCURRENCY),
        ...options.env,
        ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}),
      });
      try {
        two = await burst([server, second]);
      } finally {
        await second.stop();
      }
    }

    const payload = receiver.sample();
    const bare = await baseline(receiver.url, payload, Math.min(expected, 10_000));
    return {
      'deliveries in the burst': expected,
      'deliveries recorded (listed by the API)': recorded,
      'bad signatures or bodies': receiver.badSignatures() + receiver.badBodies(),
      'payload bytes': payload.length,
      'burst events accepted by the API, ms': Math.round(one.postedMs),
      'deliveries/s to the receiver': Math.round(one.deliveredPerSecond),
      'deliveries/s recorded (first event to last record)': Math.round(one.recordedPerSecond),
      'bare signed posts/s (node:http loop, no database)': Math.round(bare),
      'recorded ratio codehost/bare': ratio(one.recordedPerSecond, bare),
      'server CPU ms per delivery (1 process)': Number(one.cpuMsPerDelivery.toFixed(3)),
      ...(database ? { 'PostgreSQL backends CPU ms per delivery (1 process)': Number(one.backendCpuMsPerDelivery.toFixed(3)) } : {}),
      ...(two
        ? {
            'deliveries/s recorded, 2 worker processes': Math.round(two.recordedPerSecond),
            'server CPU ms per delivery (2 processes)': Number(two.cpuMsPerDelivery.toFixed(3)),
            'PostgreSQL backends CPU ms per delivery (2 processes)': Number(two.backendCpuMsPerDelivery.toFixed(3)),
            'CPU per delivery ratio 2 processes/1': ratio(two.cpuMsPerDelivery, one.cpuMsPerDelivery),
          }
        : {}),
      [`activity to delivery p50 ms (${rate} events/s)`]: Number(percentile(latencies, 50).toFixed(1)),
      [`activity to delivery p99 ms (${rate} events/s)`]: Number(percentile(latencies, 99).toFixed(1)),
    };
  } finally {
    await observer?.end();
    await server.stop();
    await receiver.stop();
    await database?.drop();
  }
}

// Run directly: node bench/webhooks.ts [--postgres | --database postgres] (BENCH_CPU_PROF_DIR=dir: a
// CPU profile of each server process, written when it stops).
if (process.argv[1] === new URL(import.meta.url).pathname) {
  const postgres = process.argv.includes('--postgres') || (process.argv.includes('--database') && process.argv[process.argv.indexOf('--database') + 1] === 'postgres');
  if (postgres && !process.env.DATABASE_URL) throw new Error('--postgres needs DATABASE_URL (the server it names; the run uses a database of its own there)');
  const env: Record<string, string> = postgres ? { DATABASE_URL: process.env.DATABASE_URL! } : {};
  console.table(await webhooks({ env }));
}
