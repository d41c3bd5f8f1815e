// The sweep of orphaned git data. A repository's bare git data is `{dataDir}/git/{id}.git`; deleting
// a repository (writes.ts) or its owner (accounts/writes.ts) removes the rows in a transaction and the
// directory after the commit, so a process killed in between leaves a directory no row names. So does
// a creation killed (or failed) after its git data was written and before its row committed. The sweep
// removes every `git/{id}.git` whose id has no repository row once it is older than ORPHAN_AGE_MS:
// a creation writes the directory inside its transaction, before its row is visible to others.
// It runs in every worker process at start and every SWEEP_SECONDS (ctx.periodic: idempotent; a
// directory another process removed first is no error).
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Context } from '../../platform/context.ts';
import { existingRepositoryIds } from './store.ts';

/** How old (its mtime) a directory with no row must be before the sweep removes it. */
export const ORPHAN_AGE_MS = 10 * 60_000;
/** How often the sweep runs in a worker process (and once at its start). */
const SWEEP_SECONDS = 600;
/** Ids compared with the repositories table per query. */
const BATCH = 500;
const GIT_DATA = /^(\d{1,15})\.git$/;

/**
 * Removes the orphaned git data directories older than `ORPHAN_AGE_MS` (by the server's clock) and
 * logs their ids; answers the ids removed. On SQLite the comparison and the removal are one
 * transaction, which holds the one connection: no creation (which writes the directory inside its own
 * transaction, and may take an id a rolled-back creation had) runs in between. On PostgreSQL ids are
 * never given twice, and a creation in progress is younger than the age.
 */
export async function sweepOrphanedGitData(ctx: Context): Promise<number[]> {
  const root = join(ctx.config.dataDir, 'git');
  const names = await readdir(root).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  const cutoff = ctx.clock.now().getTime() - ORPHAN_AGE_MS;
  const old: number[] = [];
  for (const name of names) {
    const id = GIT_DATA.exec(name)?.[1];
    if (!id) continue;
    const info = await stat(join(root, name)).catch(() => null);
    if (info?.isDirectory() && info.mtimeMs < cutoff) old.push(Number(id));
  }
  const removed: number[] = [];
  for (let i = 0; i < old.length; i += BATCH) {
    const batch = old.slice(i, i + BATCH);
    await ctx.db.kysely.transaction().execute(async (trx) => {
      const existing = await existingRepositoryIds(trx, batch);
      for (const id of batch.filter((id) => !existing.has(id))) {
        await rm(join(root, `${id}.git`), { recursive: true, force: true });
        removed.push(id);
      }
    });
  }
  if (removed.length) ctx.log.info({ removed: removed.length, repository_ids: removed }, 'removed the git data of repositories that no longer exist');
  return removed;
}

/** Registers the sweep with the worker's periodic tasks (`workers` of the repositories area). */
export function scheduleGitDataSweep(ctx: Context): void {
  ctx.periodic.every('repositories.sweep-orphaned-git-data', SWEEP_SECONDS, async () => {
    await sweepOrphanedGitData(ctx);
  }, { atStart: true });
}
