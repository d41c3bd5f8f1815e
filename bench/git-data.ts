// The git data sweep at a worker's start (issue 22): what the start ran before, the full listing of
// `git/` (`sweepOrphanedGitData`: a readdir, a stat per repository, the ids compared in batches),
// against what it runs now, the removal of what deletions recorded (`removeRecordedGitData`: one
// statement). N repositories (BENCH_GIT_REPOSITORIES, default 20,000), each with an empty
// `git/{id}.git` an hour old, nothing to remove; both called in-process on the same server, in
// alternating rounds. Run directly: node bench/git-data.ts (DATABASE_URL=... for PostgreSQL).
import { mkdirSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Options {
  env?: Record<string, string>;
}

const ROUNDS = 3;

export default async function run(options: Options = {}): Promise<Record<string, number | string>> {
  // The test server picks its database from DATABASE_URL when its module loads.
  if (options.env?.DATABASE_URL) process.env.DATABASE_URL = options.env.DATABASE_URL;
  else if (options.env) delete process.env.DATABASE_URL;
  const { startServer } = await import('../test/helpers/server.ts');
  const { removeRecordedGitData, sweepOrphanedGitData } = await import('../src/core/repositories/git-sweep.ts');
  const repositories = Number(process.env.BENCH_GIT_REPOSITORIES ?? 20_000);
  const server = await startServer();
  try {
    const { ctx } = server.server;
    const owner = await server.admin('POST', '/users', { login: 'owner' });
    const now = new Date().toISOString();
    const anHourAgo = new Date(Date.now() - 3_600_000);
    for (let i = 0; i < repositories; i += 500) {
      const rows = Array.from({ length: Math.min(500, repositories - i) }, (_, j) => ({
        owner_id: owner.id, name: `r${i + j}`, name_lower: `r${i + j}`, description: null, visibility: 'public' as const, language: null,
        topics: '[]', default_branch: 'main', git_path: null, locked_by_migration_id: null, security_and_analysis: '{}',
        created_at: now, updated_at: now, pushed_at: null,
      }));
      for (const { id } of await ctx.db.kysely.insertInto('repositories').values(rows).returning('id').execute()) {
        const dir = join(ctx.config.dataDir, 'git', `${id}.git`);
        mkdirSync(dir, { recursive: true });
        utimesSync(dir, anHourAgo, anHourAgo);
      }
    }
    const time = async (fn: () => Promise<unknown>) => {
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      await fn();
      const cpu = process.cpuUsage(cpu0);
      return { wall: performance.now() - t0, cpu: (cpu.user + cpu.system) / 1000 };
    };
    const listing: { wall: number; cpu: number }[] = [];
    const recorded: { wall: number; cpu: number }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      listing.push(await time(() => sweepOrphanedGitData(ctx)));
      recorded.push(await time(() => removeRecordedGitData(ctx)));
    }
    const range = (figures: number[]) => `${Math.min(...figures).toFixed(1)}–${Math.max(...figures).toFixed(1)}`;
    return {
      repositories,
      'full listing (before) wall ms': range(listing.map((f) => f.wall)),
      'full listing (before) CPU ms': range(listing.map((f) => f.cpu)),
      'recorded removals (now) wall ms': range(recorded.map((f) => f.wall)),
      'recorded removals (now) CPU ms': range(recorded.map((f) => f.cpu)),
    };
  } finally {
    await server.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.table(await run());
