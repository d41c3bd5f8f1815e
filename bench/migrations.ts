// User migration export: 10 repositories × N issues × 5 comments, and ten times that, each on a fresh
// server process. Reports the wall time of each export (start → `exported`), the server's peak RSS
// (VmHWM) for both and their ratio (the export streams, so the goal is ≤ 1.2), and throughput against
// `tar -czf` of the same unpacked files, timed in the same run.
// Sizes: `full` (1,000 and 10,000 issues per repository, the issue's figures) or `small` (100 and
// 1,000), from options.size or BENCH_MIGRATIONS_SIZE. Run directly: node bench/migrations.ts [small] [--postgres]
// (--postgres or BENCH_DATABASE=postgres: on DATABASE_URL; BENCH_CPU_PROF_DIR=dir: CPU profiles).
// On PostgreSQL it also reports the CPU of the database's backends serving the export.
import { execFileSync } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { openDatabase } from '../src/db/index.ts';
import { insertSyntheticActivity } from '../test/fixtures/migration-data.ts';
import { cpuSeconds, ratio, startServerOnOwnDatabase } from './lib.ts';

export interface Options {
  env?: Record<string, string>;
  size?: 'full' | 'small';
}

const REPOSITORIES = 10;
const COMMENTS_PER_ISSUE = 5;
const SIZES = { full: [1000, 10_000], small: [100, 1000] } as const;

const mb = (bytes: number) => Number((bytes / 1024 / 1024).toFixed(1));
const seconds = (ms: number) => Number((ms / 1000).toFixed(2));

function currentRss(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  return kb * 1024;
}

interface ExportFigures {
  records: number;
  exportMs: number;
  rssBeforeExport: number;
  peakRss: number;
  archiveBytes: number;
  unpackedBytes: number;
  tarMs: number;
  /** CPU seconds of the server process from the export's start to `exported` (the export thread, and the polling it answers). */
  exportCpuS: number;
  /** CPU seconds of `tar -czf` and its gzip. */
  tarCpuS: number;
  /** CPU seconds of the PostgreSQL backends of the server's database over the export (null on SQLite). */
  backendCpuS: number | null;
}

/**
 * The CPU of a database's backends (PostgreSQL on this host) while a piece of work runs. The export's
 * own connection opens and closes with its thread, so its backend is gone when the work ends: the
 * backends are sampled every 10 ms, and a backend's CPU is its last reading (the last 10 ms of a
 * backend that exits may be missed).
 */
async function backendCpu(databaseUrl: string): Promise<{ stop(): Promise<number> }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const first = new Map<number, number>();
  const last = new Map<number, number>();
  const sample = async () => {
    const { rows } = await client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
    for (const { pid } of rows) {
      const cpu = cpuSeconds([pid]);
      if (!first.has(pid)) first.set(pid, cpu);
      last.set(pid, cpu);
    }
  };
  await sample();
  const before = new Set(first.keys());
  let running = true;
  const loop = (async () => {
    while (running) {
      await sample();
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      await client.end();
      // A backend that started during the work counts from zero (its start is the work's too).
      let total = 0;
      for (const [pid, cpu] of last) total += cpu - (before.has(pid) ? first.get(pid)! : 0);
      return total;
    },
  };
}

/** CPU seconds (user + system) of this process's waited-for children so far (cutime + cstime). */
function childrenCpuSeconds(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').replace(/^.*\) /s, '').split(' ');
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

async function exportOnce(issuesPerRepository: number, env: Record<string, string>): Promise<ExportFigures> {
  // On PostgreSQL each size gets a database of its own, like the test suite.
  const server = await startServerOnOwnDatabase({ ...env, CODEHOST_JOB_POLL_MS: '50' });
  const work = mkdtempSync(join(tmpdir(), 'codehost-bench-migration-'));
  try {
    const user = await server.admin('POST', '/users', { login: 'mona' });
    const { token } = await server.admin('POST', '/tokens', { login: 'mona', kind: 'classic', scopes: [] });
    const db = openDatabase({ databaseUrl: server.databaseUrl, sqlitePath: `${server.dataDir}/codehost.db`, poolSize: 1 });
    try {
      for (let i = 1; i <= REPOSITORIES; i++) {
        const repository = await server.admin('POST', '/repos', { owner: 'mona', name: `repo-${i}`, init_git: true });
        await insertSyntheticActivity(db.kysely, { repositoryId: repository.id, authorId: user.id, issues: issuesPerRepository, commentsPerIssue: COMMENTS_PER_ISSUE });
      }
    } finally {
      await db.close();
    }
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const rssBeforeExport = currentRss(server.pid);

    const backends = server.databaseUrl ? await backendCpu(server.databaseUrl) : null;
    const cpuBefore = cpuSeconds([server.pid]);
    const started = Date.now();
    const response = await fetch(`${server.apiUrl}/user/migrations`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ repositories: Array.from({ length: REPOSITORIES }, (_, i) => `repo-${i + 1}`) }),
    });
    if (response.status !== 201) throw new Error(`start answered ${response.status}: ${await response.text()}`);
    const { id } = (await response.json()) as { id: number };
    let view: { state: string; records_exported: number; failure: string | null };
    for (;;) {
      view = await server.admin('GET', `/migrations/${id}`);
      if (view.state === 'exported' || view.state === 'failed') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const exportMs = Date.now() - started;
    const exportCpuS = cpuSeconds([server.pid]) - cpuBefore;
    const backendCpuS = backends ? await backends.stop() : null;
    if (view.state === 'failed') throw new Error(`the export failed: ${view.failure}`);
    const peakRss = server.peakRss();

    const redirect = await fetch(`${server.apiUrl}/user/migrations/${id}/archive`, { headers, redirect: 'manual' });
    const archive = await fetch(redirect.headers.get('location')!);
    const archiveFile = join(work, 'export.tar.gz');
    await pipeline(Readable.fromWeb(archive.body as import('node:stream/web').ReadableStream), createWriteStream(archiveFile));
    const unpacked = join(work, 'unpacked');
    mkdirSync(unpacked);
    execFileSync('tar', ['-xzf', archiveFile, '-C', unpacked]);
    const unpackedBytes = Number(execFileSync('du', ['-sb', unpacked]).toString().split('\t')[0]);
    const tarCpuBefore = childrenCpuSeconds();
    const tarStarted = Date.now();
    execFileSync('tar', ['-czf', join(work, 'baseline.tar.gz'), '-C', unpacked, '.']);
    const tarMs = Date.now() - tarStarted;
    const tarCpuS = childrenCpuSeconds() - tarCpuBefore;
    return {
      records: view.records_exported,
      exportMs,
      rssBeforeExport,
      peakRss,
      archiveBytes: Number(execFileSync('stat', ['-c', '%s', archiveFile]).toString()),
      unpackedBytes,
      tarMs,
      exportCpuS,
      tarCpuS,
      backendCpuS,
    };
  } finally {
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

export default async function migrations(options: Options = {}): Promise<Record<string, number | string>> {
  const size = options.size ?? (process.env.BENCH_MIGRATIONS_SIZE === 'small' ? 'small' : 'full');
  const [smaller, larger] = SIZES[size];
  const results: Record<string, number | string> = { size, database: options.env?.DATABASE_URL ? 'postgres' : 'sqlite' };
  const runs: ExportFigures[] = [];
  for (const [label, issues] of [['small', smaller], ['large', larger]] as const) {
    const figures = await exportOnce(issues, options.env ?? {});
    runs.push(figures);
    results[`${label}_shape`] = `${REPOSITORIES} repos x ${issues} issues x ${COMMENTS_PER_ISSUE} comments`;
    results[`${label}_records`] = figures.records;
    results[`${label}_export_s`] = seconds(figures.exportMs);
    results[`${label}_records_per_s`] = Math.round(figures.records / (figures.exportMs / 1000));
    results[`${label}_rss_before_export_mb`] = mb(figures.rssBeforeExport);
    results[`${label}_peak_rss_mb`] = mb(figures.peakRss);
    results[`${label}_unpacked_mb`] = mb(figures.unpackedBytes);
    results[`${label}_archive_mb`] = mb(figures.archiveBytes);
    results[`${label}_export_mb_per_s`] = Number((mb(figures.unpackedBytes) / (figures.exportMs / 1000)).toFixed(1));
    results[`${label}_tar_czf_s`] = seconds(figures.tarMs);
    results[`${label}_tar_czf_mb_per_s`] = Number((mb(figures.unpackedBytes) / (figures.tarMs / 1000)).toFixed(1));
    results[`${label}_export_vs_tar_czf_time`] = ratio(figures.exportMs, figures.tarMs);
    results[`${label}_export_cpu_s`] = Number(figures.exportCpuS.toFixed(2));
    if (figures.backendCpuS !== null) results[`${label}_export_postgres_backends_cpu_s`] = Number(figures.backendCpuS.toFixed(2));
    results[`${label}_tar_czf_cpu_s`] = Number(figures.tarCpuS.toFixed(2));
    results[`${label}_export_vs_tar_czf_cpu`] = ratio(figures.exportCpuS, figures.tarCpuS);
  }
  // Issue 13's figure: the larger export's throughput against tar -czf of the same files (1 = as fast).
  results['export throughput ratio codehost/tar -czf'] = ratio(runs[1]!.tarMs, runs[1]!.exportMs);
  results.peak_rss_ratio_large_to_small = ratio(runs[1]!.peakRss, runs[0]!.peakRss);
  results.peak_rss_goal = '<= 1.2';
  return results;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const postgres = process.argv.includes('--postgres') || process.env.BENCH_DATABASE === 'postgres';
  if (postgres && !process.env.DATABASE_URL) throw new Error('--postgres (BENCH_DATABASE=postgres) needs DATABASE_URL');
  const env: Record<string, string> = postgres ? { DATABASE_URL: process.env.DATABASE_URL! } : {};
  console.table(await migrations({ size: process.argv.includes('small') ? 'small' : undefined, env }));
}
