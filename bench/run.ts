// `npm run bench`: every benchmark in one run, each figure beside the baseline it measured in the same
// run, then the table of issue 22 (each hot path's figure, today's goal beside it).
//   npm run bench                   SQLite (the embedded database)
//   npm run bench -- --postgres     PostgreSQL on DATABASE_URL (each benchmark makes its own database)
// BENCH_DATABASE=postgres does what --postgres does; BENCH_ONLY=app-tokens,notifications picks some
// (BENCH_ONLY=pgbouncer: the token check and deliveries through PgBouncer vs direct, PostgreSQL only);
// BENCH_SECONDS sets each load's duration (default 10); BENCH_MIGRATIONS_SIZE=full exports 600,000
// records instead of 60,000; BENCH_NOTIFICATION_THREADS sets the crowded table's size (1,000,000).
import { readdirSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';

const postgres = process.argv.includes('--postgres') || process.env.BENCH_DATABASE === 'postgres';
if (postgres && !process.env.DATABASE_URL) throw new Error('--postgres (BENCH_DATABASE=postgres) needs DATABASE_URL');
const only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim()).filter(Boolean);
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const env: Record<string, string> = postgres ? { DATABASE_URL: process.env.DATABASE_URL! } : {};
const database = postgres ? 'postgres' : 'sqlite';
// What keeps a run within 10 minutes on a 2-core machine: exports of 60,000 records (not 600,000;
// BENCH_MIGRATIONS_SIZE=full for those) and the notifications list among 1,000,000 threads
// (BENCH_NOTIFICATION_THREADS for another count).
const migrationsSize = process.env.BENCH_MIGRATIONS_SIZE === 'full' ? 'full' : 'small';
const totalThreads = Number(process.env.BENCH_NOTIFICATION_THREADS ?? 1_000_000);

const names = readdirSync(new URL('.', import.meta.url))
  .filter((file) => file.endsWith('.ts') && !['run.ts', 'lib.ts'].includes(file))
  .map((file) => file.replace(/\.ts$/, ''))
  .filter((name) => !only || only.includes(name));

type Results = Record<string, number | string>;
const results: Record<string, Results> = {};
const durations: Record<string, number> = {};
const runStarted = Date.now();
for (const name of names) {
  const module = (await import(`./${name}.ts`)) as { default: (options: Record<string, unknown>) => Promise<Results> };
  console.log(`\n=== ${name}`);
  const started = Date.now();
  try {
    results[name] = await module.default({ seconds, env, size: migrationsSize, totalThreads });
    console.table(results[name]);
  } catch (error) {
    console.error(`${name} failed:`, error);
    process.exitCode = 1;
  }
  durations[name] = Math.round((Date.now() - started) / 1000);
  console.log(`(${durations[name]} s)`);
}

/**
 * A row of the table: where each figure is read (benchmark and result key, by name), its
 * goal on this database, and whether it is met. A figure a benchmark did not report shows as "—".
 */
interface Row {
  path: string;
  bench: string;
  /** The result keys, first found wins (a benchmark may name a figure after its parameters). */
  keys: (string | RegExp)[];
  goal: { sqlite?: Goal; postgres?: Goal };
  /** After the figure; ratios (rows with a goal test) default to ×. */
  unit?: string;
}
/** A goal as the table shows it, and whether a figure meets it (none: judged by the reader). */
interface Goal {
  text: string;
  met?: (value: number) => boolean;
}
const atLeast = (goal: number): Goal => ({ text: `>= ${goal}`, met: (value) => value >= goal });
const atMost = (goal: number, unit = ''): Goal => ({ text: `<= ${goal}${unit}`, met: (value) => value <= goal });
const both = (goal: Goal) => ({ sqlite: goal, postgres: goal });
/** The rows of issue 22's table (its goals), then the figures that explain them. */
const ROWS: Row[] = [
  {
    path: 'Poll: GET /notifications?per_page=50 with If-Modified-Since → 304, req/s vs bare',
    bench: 'notifications',
    keys: ['poll If-Modified-Since req/s ratio codehost/bare'],
    goal: { sqlite: atLeast(0.4), postgres: atLeast(0.25) },
  },
  {
    path: 'Poll with If-None-Match (ETag) → 304, req/s vs bare',
    bench: 'notifications',
    keys: ['poll If-None-Match req/s ratio codehost/bare'],
    goal: { sqlite: atLeast(0.4), postgres: atLeast(0.25) },
  },
  {
    path: 'GET /repos/{o}/{r}/notifications with If-None-Match → 304, req/s vs bare',
    bench: 'notifications',
    keys: ['repository poll If-None-Match req/s ratio codehost/bare'],
    goal: { sqlite: atLeast(0.4), postgres: atLeast(0.25) },
  },
  {
    path: 'Repository list poll: GET /installation/repositories?per_page=30 with If-None-Match → 304, req/s vs bare',
    bench: 'installation-repositories',
    keys: ['installation repositories poll If-None-Match req/s ratio codehost/bare'],
    goal: { sqlite: atLeast(0.4), postgres: atLeast(0.25) },
  },
  {
    path: '… CPU per repository list poll (304): codehost process',
    bench: 'installation-repositories',
    keys: ['installation repositories poll If-None-Match CPU ms per request, codehost process'],
    goal: {},
    unit: ' ms',
  },
  {
    path: '… CPU per poll (If-None-Match): codehost process',
    bench: 'notifications',
    keys: ['poll If-None-Match CPU ms per request, codehost process'],
    goal: {},
    unit: ' ms',
  },
  {
    path: '… CPU per poll (If-None-Match): PostgreSQL backends',
    bench: 'notifications',
    keys: ['poll If-None-Match CPU ms per request, PostgreSQL backends'],
    goal: {},
    unit: ' ms',
  },
  {
    path: 'GET /notifications?per_page=50 → 200 (~260 KB page, 50 full repositories), req/s vs bare',
    bench: 'notifications',
    keys: ['list req/s ratio codehost/bare'],
    goal: { sqlite: atLeast(0.4), postgres: atLeast(0.2) },
  },
  {
    path: '… CPU per list request: codehost process',
    bench: 'notifications',
    keys: ['list CPU ms per request, codehost process'],
    goal: {},
    unit: ' ms',
  },
  {
    path: '… CPU per list request: PostgreSQL backends',
    bench: 'notifications',
    keys: ['list CPU ms per request, PostgreSQL backends'],
    goal: {},
    unit: ' ms',
  },
  {
    path: 'Token check, POST /applications/{client_id}/token, req/s vs bare',
    bench: 'app-tokens',
    keys: ['check token ratio codehost/bare'],
    goal: { sqlite: atLeast(0.4), postgres: atLeast(0.35) },
  },
  {
    path: '… server CPU per token check: codehost process',
    bench: 'app-tokens',
    keys: ['check token server CPU ms/request (codehost)'],
    goal: {},
    unit: ' ms',
  },
  {
    path: 'Floor: Fastify alone (one route, no hook) answering a poll\'s 304, req/s vs bare',
    bench: 'framework',
    keys: ['poll 304: Fastify alone req/s ratio fastify/bare'],
    goal: {},
    unit: '×',
  },
  {
    path: '… CPU per 304: Fastify alone',
    bench: 'framework',
    keys: ['poll 304: Fastify alone CPU ms per request'],
    goal: {},
    unit: ' ms',
  },
  {
    path: '… codehost on the same 304 (empty inbox): CPU per poll',
    bench: 'framework',
    keys: ['poll 304: codehost CPU ms per request'],
    goal: {},
    unit: ' ms',
  },
  {
    path: '… server CPU per 304: codehost / Fastify alone (the same 304)',
    bench: 'framework',
    keys: ['poll 304: server CPU ratio codehost/Fastify alone'],
    goal: { sqlite: atMost(2, '×'), postgres: atMost(2, '×') },
    unit: '×',
  },
  {
    path: 'Floor: Fastify alone answering the token check\'s bytes, req/s vs bare',
    bench: 'framework',
    keys: ['token check: Fastify alone req/s ratio fastify/bare'],
    goal: {},
    unit: '×',
  },
  {
    path: 'Webhook deliveries recorded per second vs a bare signed-post loop',
    bench: 'webhooks',
    keys: ['recorded ratio codehost/bare'],
    goal: { sqlite: atLeast(0.6), postgres: atLeast(0.3) },
  },
  {
    path: '… server CPU per delivery (1 process)',
    bench: 'webhooks',
    keys: ['server CPU ms per delivery (1 process)'],
    goal: {},
    unit: ' ms',
  },
  {
    path: '… CPU per delivery: PostgreSQL backends (1 process)',
    bench: 'webhooks',
    keys: ['PostgreSQL backends CPU ms per delivery (1 process)'],
    goal: {},
    unit: ' ms',
  },
  {
    path: 'CPU per delivery, 2 worker processes vs 1, one PostgreSQL',
    bench: 'webhooks',
    keys: ['CPU per delivery ratio 2 processes/1'],
    goal: { postgres: atMost(1.1) },
  },
  {
    path: 'POST …/issues/{n}/comments (issue 39): answers/s vs a bare insert of the same row',
    bench: 'comments',
    keys: ['create comment ratio codehost/bare insert (answers)'],
    goal: {},
    unit: '×',
  },
  {
    path: '… with its fan-out (20 watchers, a mention) and its webhook delivery done, /s vs the bare insert',
    bench: 'comments',
    keys: ['create comment ratio codehost/bare insert (all done)'],
    goal: {},
    unit: '×',
  },
  {
    path: 'PUT /notifications over 100k unread: all marked (goal at 1,000,000: bench/notifications.ts --unread 1000000)',
    bench: 'notifications',
    keys: [/^mark as read: all read after ms/],
    goal: { sqlite: { text: '<= 15 s at 1M' }, postgres: { text: '<= 30 s at 1M' } },
    unit: ' ms',
  },
  {
    path: 'PUT /notifications over 100k unread: answer',
    bench: 'notifications',
    keys: [/^mark as read: answer ms/],
    goal: both(atMost(50, ' ms')),
    unit: ' ms',
  },
  {
    path: 'Migration export vs tar -czf of the same files (throughput)',
    bench: 'migrations',
    keys: ['export throughput ratio codehost/tar -czf'],
    goal: both(atLeast(0.5)),
  },
  {
    path: 'Notifications list latency, many threads vs 1k (p50 ratio)',
    bench: 'notifications',
    keys: [/^list p50 ratio crowded\/alone/],
    goal: both(atMost(1.3)),
  },
  {
    path: '… threads in the database for that ratio',
    bench: 'notifications',
    keys: ['threads in the database'],
    goal: {},
  },
  {
    path: 'Token check through PgBouncer (transaction pooling) vs direct, req/s',
    bench: 'pgbouncer',
    keys: ['check token ratio PgBouncer/direct'],
    goal: {},
    unit: '×',
  },
  {
    path: 'Webhook deliveries recorded per second through PgBouncer vs direct',
    bench: 'pgbouncer',
    keys: ['deliveries ratio PgBouncer/direct'],
    goal: {},
    unit: '×',
  },
  {
    path: 'Test double: POST /_admin/reset to the demo world (issue 23)',
    bench: 'test-double',
    keys: [/^reset to demo ms/],
    goal: { sqlite: atMost(100, ' ms'), postgres: atMost(500, ' ms') },
    unit: ' ms',
  },
  {
    path: 'Test double: restore of a 1,000-issue snapshot',
    bench: 'test-double',
    keys: [/^restore 1,000-issue snapshot ms/],
    goal: { sqlite: atMost(300, ' ms'), postgres: atMost(1000, ' ms') },
    unit: ' ms',
  },
  {
    path: 'Test double: codehost/testing startCodehost() to a first admin answer',
    bench: 'test-double',
    keys: [/^helper start ms/],
    goal: both(atMost(300, ' ms')),
    unit: ' ms',
  },
  {
    path: 'Test double: codehost/testing stop(), an idle kept-alive connection open (issue 40)',
    bench: 'test-double',
    keys: [/^helper stop ms/],
    goal: { sqlite: atMost(100, ' ms') },
    unit: ' ms',
  },
  {
    path: 'Test double: POST /_admin/reset to empty (issue 40)',
    bench: 'test-double',
    keys: [/^reset to empty ms/],
    goal: { sqlite: atMost(100, ' ms') },
    unit: ' ms',
  },
];

function figure(row: Row): number | string | undefined {
  const found = results[row.bench];
  if (!found) return undefined;
  for (const key of row.keys) {
    const name = typeof key === 'string' ? key : Object.keys(found).find((k) => key.test(k));
    if (name !== undefined && found[name] !== undefined) return found[name];
  }
  return undefined;
}

const lines = [
  `| Hot path | ${database} | goal | met |`,
  '|---|---|---|---|',
  ...ROWS.flatMap((row) => {
    const goal = row.goal[database];
    const value = figure(row);
    if (goal === undefined && value === undefined) return [];
    const unit = row.unit ?? (goal?.met ? '×' : '');
    const shown = value === undefined ? '—' : `${value}${typeof value === 'number' ? unit : ''}`;
    const met = typeof value !== 'number' || !goal?.met ? '' : goal.met(value) ? 'yes' : 'no';
    return [`| ${row.path} | ${shown} | ${goal?.text ?? ''} | ${met} |`];
  }),
];
const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GB, Node ${process.version}`;
console.log(`\n${JSON.stringify({ database, node: process.version, cpus: cpus().length, durations, results }, null, 2)}`);
console.log(`\nIssue 22, ${database}, ${new Date().toISOString().slice(0, 16)}Z, ${machine}, ${Math.round((Date.now() - runStarted) / 1000)} s in all`);
console.log(lines.join('\n'));
