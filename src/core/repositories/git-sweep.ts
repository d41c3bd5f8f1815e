// The removal of deleted repositories' git data, and the sweep of orphaned git data. A repository's
// bare git data is `{dataDir}/git/{id}.git`. Deleting a repository (writes.ts) or its owner
// (owner-writes.ts) removes the rows and records the git data's paths (`git_data_removals`) in one
// transaction, then removes the directories and forgets their paths once it has committed
// (`removeGitData`). A process killed in between leaves the recorded paths: every worker process
// removes them at its start and every REMOVAL_SECONDS (`removeRecordedGitData`), reading only that
// table, so a start costs what deletions left, not what exists; it never lists the directory.
//
// What no record names is left by a creation killed (or failed) after its git data was written and
// before its row committed. A failed creation removes it itself; on SQLite the id of a creation that
// never committed is given again, and that creation clears the directory first (writes.ts). The rest
// (a creation killed on PostgreSQL) is for the full listing, `sweepOrphanedGitData`: a rare fallback
// that runs once a day (never at start) and with `POST /_admin/jobs/drain`. It removes every
// `git/{id}.git` whose id has no repository row once it is older than ORPHAN_AGE_MS (a creation
// writes its directory inside its transaction, before its row is visible to others).
// Both are idempotent (ctx.periodic; a directory another process removed first is no error) and do
// their file-system work outside any transaction.
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Context } from '../../platform/context.ts';
import { existingRepositoryIds, forgetGitDataRemovals, pendingGitDataRemovals } from './store.ts';

/** How old (its mtime) a directory with no row must be before the full listing removes it. */
export const ORPHAN_AGE_MS = 10 * 60_000;
/** How often a worker process removes the git data deletions left (and once at its start). */
export const REMOVAL_SECONDS = 600;
/** How often a worker process lists every git data directory (never at its start). */
export const LISTING_SECONDS = 24 * 3600;
/** Paths (or ids) read and compared per query. */
const BATCH = 500;
const GIT_DATA = /^(\d{1,15})\.git$/;

/**
 * Removes git data directories (paths under the data directory) whose rows a committed deletion
 * removed, then forgets the paths removed in one statement; a path that could not be removed is
 * logged and stays recorded for the next run. Answers the paths removed.
 */
export async function removeGitData(ctx: Context, paths: string[]): Promise<string[]> {
  const removed: string[] = [];
  for (const path of paths) {
    try {
      await rm(join(ctx.config.dataDir, path), { recursive: true, force: true, maxRetries: 2 });
      removed.push(path);
    } catch (err) {
      ctx.log.error({ err, path }, 'could not remove the git data of a deleted repository');
    }
  }
  // The deletion has committed: a failure here leaves the paths recorded for the next run.
  await forgetGitDataRemovals(ctx.db.kysely, removed).catch((err: unknown) => ctx.log.error({ err, paths: removed }, 'could not forget removed git data paths'));
  return removed;
}

/** Removes the git data that deletions recorded and a killed process left behind; answers the paths. */
export async function removeRecordedGitData(ctx: Context): Promise<string[]> {
  const removed: string[] = [];
  for (;;) {
    const pending = await pendingGitDataRemovals(ctx.db.kysely, BATCH);
    const done = await removeGitData(ctx, pending);
    removed.push(...done);
    if (pending.length < BATCH || done.length < pending.length) break;
  }
  if (removed.length) ctx.log.info({ removed: removed.length, paths: removed }, 'removed the git data deleted repositories left');
  return removed;
}

/**
 * The full listing: removes the git data directories older than `ORPHAN_AGE_MS` (by real time, as
 * the file system's mtime is) whose id has no repository row, and logs their ids; answers the ids removed. No transaction
 * is held: ids are compared in batches, and each directory is looked at again just before its removal
 * (on SQLite a creation may take the id of one that never committed, and clears its directory: then
 * it is young, and stays).
 */
export async function sweepOrphanedGitData(ctx: Context): Promise<number[]> {
  const root = join(ctx.config.dataDir, 'git');
  const names = await readdir(root).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  // Real time, never the test clock: a clock moved forward would make the directory a creation is
  // writing now (its row not yet committed) look old, and the sweep would delete it under it.
  const cutoff = Date.now() - ORPHAN_AGE_MS;
  const old = async (id: number) => {
    const info = await stat(join(root, `${id}.git`)).catch(() => null);
    return Boolean(info?.isDirectory() && info.mtimeMs < cutoff);
  };
  const candidates: number[] = [];
  for (const name of names) {
    const id = GIT_DATA.exec(name)?.[1];
    if (id && (await old(Number(id)))) candidates.push(Number(id));
  }
  const removed: number[] = [];
  for (let i = 0; i < candidates.length; i += BATCH) {
    const batch = candidates.slice(i, i + BATCH);
    const existing = await existingRepositoryIds(ctx.db.kysely, batch);
    for (const id of batch) {
      if (existing.has(id) || !(await old(id))) continue;
      await rm(join(root, `${id}.git`), { recursive: true, force: true, maxRetries: 2 });
      removed.push(id);
    }
  }
  if (removed.length) ctx.log.info({ removed: removed.length, repository_ids: removed }, 'removed the git data of repositories that no longer exist');
  return removed;
}
