// Notifications at scale, against the real server in its own process:
// 1. GET /notifications?per_page=50 latency for a user with 1,000 threads, first when the database
//    holds only those, then when it holds 1,000,000 threads of 1,000 users (the user's rows spread
//    among the others'): the ratio should stay at or under 1.3. Each page read and written anew.
// 2. PUT /notifications for a user with 100,000 unread threads: the answer time (a 202, the rest in
//    the background) and the time until none is unread (checked in the database every 250 ms).
// 3. The list's requests/s against a bare node:http server answering the same bytes (the page,
//    written once under its tag, answered again: issue 42).
// 4. Polls that change nothing (304): If-Modified-Since, If-None-Match, and the repository's list.
// 5. One thread, GET /notifications/threads/{id}: the server's CPU per 200 and per 304.
// Threads, subjects and users are bulk-inserted with SQL (SQLite through node:sqlite on the server's
// file, or PostgreSQL on a database made for the run); repositories and tokens through the admin API.
//
//   node_modules/.bin/node bench/notifications.ts [--user-threads 1000] [--total 1000000] [--unread 100000] [--seconds 10]
//   DATABASE_URL=postgres://... node_modules/.bin/node bench/notifications.ts --postgres
//   ... --only polls,mark-read     some parts: latency (1), mark-read (2), list (3), polls (4), thread (5)
//   BENCH_CPU_PROF_DIR=dir         a V8 CPU profile of the server, written when it stops
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { capture, compareLoads, cpuSeconds, load, ratio, startBaseline, startServerProcess, warmUp, type ServerProcess } from './lib.ts';

export interface Options {
  seconds?: number;
  connections?: number;
  env?: Record<string, string>;
  /** Threads of the measured user (default 1,000). */
  userThreads?: number;
  /** Threads in the database for the second measurement (default 1,000,000). */
  totalThreads?: number;
  /** Unread threads of the user who marks everything read (default 100,000). */
  unreadThreads?: number;
  /** The parts to run (default all). */
  parts?: readonly Part[];
}

const PARTS = ['latency', 'mark-read', 'list', 'polls', 'thread'] as const;
type Part = (typeof PARTS)[number];

const REPOSITORIES = 10;
const MARK_READ_ROUNDS = 3;

/** Bulk SQL on the server's database: each statement builds its rows from a number series. */
interface Bulk {
  /** Runs `sql` with $series standing for a table of integers i in [0, count). */
  series(count: number, sql: (series: string, now: string) => string): Promise<void>;
  exec(sql: string): Promise<void>;
  scalar(sql: string): Promise<number>;
  /**
   * After a bulk load, what a server that had grown this data itself would see. PostgreSQL: fresh
   * planner statistics and visibility map (what autovacuum does by then). SQLite: the write-ahead
   * log folded into the database, so the server's next write does not pay for checkpointing the
   * load; no ANALYZE, which codehost never runs (and whose statistics the server's long-lived
   * connection would not even reload: an ANALYZE of a small table kept planning it as small).
   */
  settle(): Promise<void>;
  /** The database's server processes serving the codehost server (PostgreSQL backends; none for SQLite). */
  backends(): Promise<number[]>;
  close(): Promise<void>;
}

function sqliteBulk(dataDir: string): Bulk {
  const db = new DatabaseSync(join(dataDir, 'codehost.db'));
  db.exec('PRAGMA busy_timeout = 10000; PRAGMA foreign_keys = ON;');
  const now = `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`;
  return {
    async series(count, sql) {
      db.exec(`WITH RECURSIVE series(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM series WHERE i < ${count - 1}) ${sql('series', now)}`);
    },
    async exec(sql) {
      db.exec(sql);
    },
    async scalar(sql) {
      return Number(Object.values(db.prepare(sql).get() as Record<string, unknown>)[0]);
    },
    async settle() {
      db.exec('PRAGMA wal_checkpoint(TRUNCATE);');
    },
    async backends() {
      return [];
    },
    async close() {
      db.close();
    },
  };
}

async function postgresBulk(url: string): Promise<Bulk> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const now = `to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  return {
    async series(count, sql) {
      await client.query(`WITH series(i) AS (SELECT generate_series(0, ${count - 1})) ${sql('series', now)}`);
    },
    async exec(sql) {
      await client.query(sql);
    },
    async scalar(sql) {
      return Number(Object.values((await client.query(sql)).rows[0] as Record<string, unknown>)[0]);
    },
    async settle() {
      await client.query('VACUUM ANALYZE');
    },
    async backends() {
      const { rows } = await client.query('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
      return rows.map((row: { pid: number }) => row.pid);
    },
    async close() {
      await client.end();
    },
  };
}

/** A fresh PostgreSQL database for the run (dropped afterwards), so a run never touches real data. */
async function scratchDatabase(base: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `codehost_bench_${randomBytes(6).toString('hex')}`;
  const run = async (sql: string) => {
    const client = new pg.Client({ connectionString: base });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await run(`CREATE DATABASE ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/** ISO timestamp text `seconds` before now, in SQL (both engines store timestamps as ISO text). */
function isoBefore(postgres: boolean, seconds: string): string {
  return postgres
    ? `to_char((now() - make_interval(secs => ${seconds})) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
    : `strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-' || (${seconds}) || ' seconds')`;
}

async function timed(fn: () => Promise<void>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

/** One GET on `agent`; resolves with the status once the whole body is read. */
function get(url: string, headers: Record<string, string>, agent: Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    request(url, { headers, agent }, (response) => {
      response.on('data', () => {}).on('end', () => resolve(response.statusCode ?? 0)).on('error', reject);
    }).on('error', reject).end();
  });
}

/**
 * Median and 95th percentile of `count` sequential requests, after a warm-up, on a keep-alive
 * connection of their own (closed afterwards: one kept idle through a long bulk load could meet the
 * server's keep-alive timeout just as it is reused). Each asks for the same threads under another
 * `since` (from `first` on, long before any thread), so each page is read and written anew: a page
 * already written under its tag would be answered as it was (NotificationService.list), which the
 * list's requests/s (3) measure.
 */
async function latency(url: string, headers: Record<string, string>, first: number, count = 300): Promise<{ p50: number; p95: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  let n = first;
  try {
    const once = async () => {
      const since = new Date(Date.UTC(2000, 0, 1) + n++ * 1000).toISOString();
      const status = await get(`${url}&since=${since}`, headers, agent);
      if (status !== 200) throw new Error(`${url} answered ${status}`);
    };
    for (let i = 0; i < 50; i++) await once();
    const times: number[] = [];
    for (let i = 0; i < count; i++) times.push(await timed(once));
    times.sort((a, b) => a - b);
    const at = (q: number) => Number(times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(2));
    return { p50: at(0.5), p95: at(0.95) };
  } finally {
    agent.destroy();
  }
}

export default async function notifications(options: Options = {}): Promise<Record<string, number | string>> {
  const seconds = options.seconds ?? 10;
  const userThreads = options.userThreads ?? 1000;
  const totalThreads = Math.max(options.totalThreads ?? 1_000_000, userThreads);
  const unreadThreads = options.unreadThreads ?? 100_000;
  const users = Math.ceil(totalThreads / userThreads);
  const postgresBase = options.env?.DATABASE_URL;
  const scratch = postgresBase ? await scratchDatabase(postgresBase) : null;
  const postgres = scratch !== null;
  const runs = (part: Part) => !options.parts || options.parts.includes(part);

  let server: ServerProcess | undefined;
  let bulk: Bulk | undefined;
  try {
    server = await startServerProcess({ ...options.env, ...(scratch ? { DATABASE_URL: scratch.url } : {}) });
    bulk = postgres ? await postgresBulk(scratch!.url) : sqliteBulk(server.dataDir);
    const results: Record<string, number | string> = { database: postgres ? 'postgres' : 'sqlite' };

    await server.admin('POST', '/users', { login: 'mona' });
    await server.admin('POST', '/users', { login: 'reader' });
    await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona', 'reader'] });
    const repositoryIds: number[] = [];
    for (let r = 0; r < REPOSITORIES; r++) repositoryIds.push((await server.admin('POST', '/repos', { owner: 'acme', name: `repo-${r}` })).id);
    if (repositoryIds.some((id, r) => id !== repositoryIds[0]! + r)) throw new Error('expected consecutive repository ids');
    const mona = (await server.admin('POST', '/tokens', { login: 'mona', kind: 'classic', scopes: ['notifications'] })).token as string;
    const reader = (await server.admin('POST', '/tokens', { login: 'reader', kind: 'classic', scopes: ['notifications'] })).token as string;
    const monaId = await bulk.scalar(`SELECT id FROM users WHERE login_lower = 'mona'`);
    const readerId = await bulk.scalar(`SELECT id FROM users WHERE login_lower = 'reader'`);
    const firstRepository = repositoryIds[0]!;

    // One subject per thread of a user, spread over the repositories; every user has a thread on each.
    await bulk.series(userThreads, (s, now) => `
      INSERT INTO notification_subjects (repository_id, issue_id, subject_key, type, title, url, created_at, updated_at)
      SELECT ${firstRepository} + (i % ${REPOSITORIES}), NULL, 'bench:' || i, 'Release', 'Release ' || i, 'https://example.com/releases/' || i, ${now}, ${now} FROM ${s}`);
    const firstSubject = await bulk.scalar(`SELECT min(id) FROM notification_subjects WHERE subject_key LIKE 'bench:%'`);
    const threads = (userIds: string, order: string) => `
      INSERT INTO notification_threads (user_id, subject_id, repository_id, reason, unread, done, updated_at, last_read_at, latest_comment_id, last_activity_id, created_at)
      SELECT u.id, s.id, s.repository_id, 'subscribed', 1, 0, ${isoBefore(postgres, `(s.id - ${firstSubject}) * 37 + u.id % 1000`)}, NULL, NULL, 0, ${isoBefore(postgres, '86400')}
      FROM notification_subjects s CROSS JOIN users u
      WHERE s.subject_key LIKE 'bench:%' AND u.id IN (${userIds}) ORDER BY ${order}`;

    // 1a. Only the measured user's threads.
    await bulk.exec(threads(String(monaId), 's.id'));
    await bulk.settle();
    const listUrl = `${server.apiUrl}/notifications?per_page=50`;
    const headers = { authorization: `Bearer ${mona}`, accept: 'application/vnd.vendor+json' };
    if (runs('latency')) {
      const alone = await latency(listUrl, headers, 0);

      // 1b. The same threads among `totalThreads`: the others' users, then every thread again, subject by
      // subject, so the measured user's rows lie spread through the table as they would after months of use.
      const built = await timed(async () => {
        await bulk!.series(users - 1, (s, now) => `
          INSERT INTO users (login, login_lower, type, name, email, site_admin, created_at, updated_at)
          SELECT 'bench-' || i, 'bench-' || i, 'User', NULL, NULL, 0, ${now}, ${now} FROM ${s}`);
        await bulk!.exec('DELETE FROM notification_threads');
        await bulk!.exec(threads(`SELECT id FROM users WHERE login_lower LIKE 'bench-%' OR id = ${monaId}`, 's.id, u.id'));
        await bulk!.settle();
      });
      const rows = await bulk.scalar('SELECT count(*) FROM notification_threads');
      const crowded = await latency(listUrl, headers, 1_000_000);
      Object.assign(results, {
        'threads in the database': rows,
        [`list p50 ms, ${userThreads} threads alone`]: alone.p50,
        [`list p50 ms, among ${rows}`]: crowded.p50,
        'list p50 ratio crowded/alone (goal <= 1.3)': ratio(crowded.p50, alone.p50),
        [`list p95 ms, ${userThreads} threads alone`]: alone.p95,
        [`list p95 ms, among ${rows}`]: crowded.p95,
        'bulk load seconds': Number((built / 1000).toFixed(1)),
      });
    }

    // 3. Requests/s of the list against a bare server answering the same bytes.
    if (runs('list')) {
      const sample = await capture(listUrl, { headers });
      if (sample.status !== 200) throw new Error(`list answered ${sample.status}`);
      const baseline = await startBaseline(sample);
      try {
        await warmUp({ url: baseline.url, headers }, { url: listUrl, headers, connections: options.connections });
        // CPU of the server and of its database backends (PostgreSQL on this host) over the rounds; the
        // bare rounds leave both idle, so the difference is the list's.
        const backends = await bulk.backends();
        const cpuBefore = [cpuSeconds([server.pid]), cpuSeconds(backends)];
        const { bare, real } = await compareLoads(
          { url: baseline.url, headers, seconds, connections: options.connections },
          { url: listUrl, headers, seconds, connections: options.connections },
        );
        const served = real.requestsPerSecond * seconds;
        const cpuPerRequest = (pids: number[], before: number) => Number((((cpuSeconds(pids) - before) * 1000) / served).toFixed(3));
        const serverCpuMs = cpuPerRequest([server.pid], cpuBefore[0]!);
        const databaseCpuMs = cpuPerRequest(backends, cpuBefore[1]!);
        if (real.non2xx || real.errors) throw new Error(`codehost answered ${real.non2xx} non-2xx and ${real.errors} errors`);
        Object.assign(results, {
          'list req/s (codehost)': Math.round(real.requestsPerSecond),
          'list req/s (bare node:http, same bytes)': Math.round(bare.requestsPerSecond),
          'list req/s ratio codehost/bare': ratio(real.requestsPerSecond, bare.requestsPerSecond),
          'list p99 ms under load (worst of 3 rounds)': real.latencyP99Ms,
          'list response bytes': Buffer.byteLength(sample.body),
          'list CPU ms per request, codehost process': serverCpuMs,
          ...(postgres ? { 'list CPU ms per request, PostgreSQL backends': databaseCpuMs } : {}),
        });
      } finally {
        await baseline.stop();
      }
    }

    // 4. Polls (issue 22): the list with If-Modified-Since and with If-None-Match, and the repository's
    // list with If-None-Match, each answered 304, against a bare server answering the same 304.
    if (runs('polls')) {
      const first = await capture(listUrl, { headers });
      const repositoryUrl = `${server.apiUrl}/repos/acme/repo-0/notifications`;
      const repositoryFirst = await capture(repositoryUrl, { headers });
      const polls = [
        ['poll If-Modified-Since', listUrl, { 'if-modified-since': first.headers['last-modified']! }],
        ['poll If-None-Match', listUrl, { 'if-none-match': first.headers.etag! }],
        ['repository poll If-None-Match', repositoryUrl, { 'if-none-match': repositoryFirst.headers.etag! }],
      ] as const;
      for (const [name, url, condition] of polls) {
        const pollHeaders = { ...headers, ...condition };
        const polled = await capture(url, { headers: pollHeaders });
        if (polled.status !== 304) throw new Error(`${name} answered ${polled.status}`);
        const bare = await startBaseline(polled);
        try {
          const sides = [
            { url: bare.url, headers: pollHeaders, seconds, connections: options.connections },
            { url, headers: pollHeaders, seconds, connections: options.connections },
          ] as const;
          await warmUp(...sides);
          const backends = await bulk.backends();
          const cpuBefore = [cpuSeconds([server.pid]), cpuSeconds(backends)];
          const compared = await compareLoads(...sides);
          // Every answer is a 304 (autocannon counts them as non-2xx): anything else is a failure.
          if (compared.real.errors) throw new Error(`${name}: ${compared.real.errors} errors`);
          const served = compared.real.requestsPerSecond * seconds;
          Object.assign(results, {
            [`${name} req/s (codehost)`]: Math.round(compared.real.requestsPerSecond),
            [`${name} req/s ratio codehost/bare`]: compared.ratio,
            [`${name} CPU ms per request, codehost process`]: Number((((cpuSeconds([server.pid]) - cpuBefore[0]!) * 1000) / served).toFixed(3)),
            ...(postgres ? { [`${name} CPU ms per request, PostgreSQL backends`]: Number((((cpuSeconds(backends) - cpuBefore[1]!) * 1000) / served).toFixed(3)) } : {}),
          });
        } finally {
          await bare.stop();
        }
        const after = await capture(url, { headers: pollHeaders });
        if (after.status !== 304) throw new Error(`${name}: answered ${after.status} after the load (nothing changed)`);
      }
    }

    // 5. One thread: CPU of the server per request, a 200 and the 304s (decided before the thread is read).
    if (runs('thread')) {
      const [thread] = JSON.parse((await capture(`${server.apiUrl}/notifications?per_page=1`, { headers })).body) as { id: string }[];
      const threadUrl = `${server.apiUrl}/notifications/threads/${thread!.id}`;
      const seen = await capture(threadUrl, { headers });
      const cases = [
        ['thread 200', headers, 200],
        ['thread 304 If-None-Match', { ...headers, 'if-none-match': seen.headers.etag! }, 304],
        ['thread 304 If-Modified-Since', { ...headers, 'if-modified-since': seen.headers['last-modified']! }, 304],
      ] as const;
      for (const [name, caseHeaders, expected] of cases) {
        if ((await capture(threadUrl, { headers: caseHeaders })).status !== expected) throw new Error(`${name}: not a ${expected}`);
        const before = cpuSeconds([server.pid]);
        const result = await load({ url: threadUrl, headers: caseHeaders, seconds, connections: options.connections });
        Object.assign(results, {
          [`${name} req/s`]: Math.round(result.requestsPerSecond),
          [`${name} CPU ms per request, codehost process`]: Number((((cpuSeconds([server.pid]) - before) * 1000) / (result.requestsPerSecond * seconds)).toFixed(3)),
        });
      }
    }

    // 2. Mark 100,000 unread threads as read.
    if (!runs('mark-read')) return results;
    await bulk.series(unreadThreads, (s, now) => `
      INSERT INTO notification_subjects (repository_id, issue_id, subject_key, type, title, url, created_at, updated_at)
      SELECT ${firstRepository} + (i % ${REPOSITORIES}), NULL, 'reader:' || i, 'Release', 'Release ' || i, 'https://example.com/reader/' || i, ${now}, ${now} FROM ${s}`);
    await bulk.exec(`
      INSERT INTO notification_threads (user_id, subject_id, repository_id, reason, unread, done, updated_at, last_read_at, latest_comment_id, last_activity_id, created_at)
      SELECT ${readerId}, s.id, s.repository_id, 'subscribed', 1, 0, ${isoBefore(postgres, 's.id % 100000 + 60')}, NULL, NULL, 0, ${isoBefore(postgres, '86400')}
      FROM notification_subjects s WHERE s.subject_key LIKE 'reader:%'`);
    // node:sqlite's bulk statements block this process's event loop: let fetch see the connections
    // the server closed meanwhile (keep-alive timeout), or it may send the PUT on one of them.
    const settled = async () => {
      await bulk!.settle();
      await new Promise((resolve) => setTimeout(resolve, 100));
    };
    await settled();
    const unread = await bulk.scalar(`SELECT count(*) FROM notification_threads WHERE user_id = ${readerId} AND unread = 1`);
    const unreadLeft = `SELECT count(*) FROM (SELECT 1 FROM notification_threads WHERE user_id = ${readerId} AND unread = 1 ORDER BY updated_at DESC, id DESC LIMIT 1) AS one`;
    const readerHeaders = { authorization: `Bearer ${reader}`, accept: 'application/vnd.vendor+json', 'content-type': 'application/json' };
    const answers: number[] = [];
    const completions: number[] = [];
    let status = 0;
    for (let round = 0; round < MARK_READ_ROUNDS; round++) {
      if (round > 0) {
        await bulk.exec(`UPDATE notification_threads SET unread = 1, last_read_at = NULL WHERE user_id = ${readerId}`);
        await settled();
      }
      const started = performance.now();
      const answer = await fetch(`${server.apiUrl}/notifications`, { method: 'PUT', headers: readerHeaders, body: '{}' });
      answers.push(performance.now() - started);
      await answer.arrayBuffer();
      status = answer.status;
      if (status !== 202 && status !== 205) throw new Error(`PUT /notifications answered ${status}`);
      // Done when no thread of the reader is unread, read through the bench's own connection every
      // 250 ms, not through the server it measures: from the newest end of the partial index of
      // unread threads, which the job (oldest first) reaches last, so each check reads one live
      // entry instead of stepping over the entries the marking has just left dead. (A poll of
      // `GET /notifications?per_page=1` every 50 ms counted every remaining thread exactly and was
      // half of PostgreSQL's active time at 1,000,000.)
      for (;;) {
        if (await bulk.scalar(unreadLeft) === 0) break;
        if (performance.now() - started > 120_000) throw new Error('threads still unread after 120 s');
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      completions.push(performance.now() - started);
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    Object.assign(results, {
      'mark as read: unread threads': unread,
      'mark as read: status': status,
      [`mark as read: answer ms, median of ${MARK_READ_ROUNDS} (goal <= 50)`]: Number(median(answers).toFixed(1)),
      [`mark as read: all read after ms, median of ${MARK_READ_ROUNDS}`]: Math.round(median(completions)),
      'mark as read: all read after ms, each round': completions.map((ms) => Math.round(ms)).join(', '),
    });
    return results;
  } finally {
    await bulk?.close();
    await server?.stop();
    await scratch?.drop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      'user-threads': { type: 'string' },
      total: { type: 'string' },
      unread: { type: 'string' },
      seconds: { type: 'string' },
      connections: { type: 'string' },
      postgres: { type: 'boolean' },
      only: { type: 'string' },
    },
  });
  const number = (value: string | undefined) => (value === undefined ? undefined : Number(value));
  if (values.postgres && !process.env.DATABASE_URL) throw new Error('--postgres needs DATABASE_URL');
  console.table(await notifications({
    seconds: number(values.seconds) ?? Number(process.env.BENCH_SECONDS ?? 10),
    connections: number(values.connections),
    userThreads: number(values['user-threads']),
    totalThreads: number(values.total),
    unreadThreads: number(values.unread),
    parts: values.only?.split(',').map((part) => {
      if (!(PARTS as readonly string[]).includes(part)) throw new Error(`--only: one of ${PARTS.join(', ')}`);
      return part as Part;
    }),
    env: values.postgres ? { DATABASE_URL: process.env.DATABASE_URL! } : {},
  }));
}
