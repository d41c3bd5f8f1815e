// User migrations: a user exports their repositories (metadata and git data) to a tar.gz archive,
// downloads it through a short-lived signed URL, and deletes it (or it expires). Only the owner sees a
// migration. The export is a queued job: pending → exporting → exported, or failed with no archive.
import { randomUUID } from 'node:crypto';
import type { Context } from '../../platform/context.ts';
import { isoSeconds } from '../../platform/clock.ts';
import { forbidden, invalidField, notFound, validationFailed, type ValidationError } from '../../platform/errors.ts';
import { findRepository } from '../../core/repositories/store.ts';
import { lockAccount, type UserRow } from '../../core/accounts/store.ts';
import { loadRepositoryFacts } from '../../core/repositories/facts.ts';
import { FullRepository, fullRepository, type RepositoryRow } from '../../core/repositories/representations.ts';
import { ExportThreads } from './export-worker.ts';
import { perServer } from '../../platform/per-server.ts';
import { exportPlan } from './plan.ts';
import { archiveStorage, type ArchiveStorage } from './storage.ts';
import { migrationBody, type UserMigration } from './representations.ts';
import * as store from './store.ts';
import { Service } from '../../platform/service.ts';
import { defineJob } from '../../jobs/job.ts';
import type { Executor } from '../../db/index.ts';
import type { RepositoryMove } from '../../core/activities.ts';
import { type Principal, requireScopes, userRepositoriesPermissions } from '../../core/access/index.ts';

function withoutMigrationId(bodies: (FullRepository & { migration_id: number })[]): FullRepository[] {
  return bodies.map(({ migration_id: _, ...body }) => body);
}

/** The server's export threads (one kept idle between exports; see export-worker.ts). */
export const exportThreads = perServer((ctx) => new ExportThreads({ databaseUrl: ctx.config.databaseUrl, dataDir: ctx.config.dataDir, databasePooler: ctx.config.databasePooler }));

/** How many times an export job runs again after a failed or cut-short attempt. */
const EXPORT_RETRY_LIMIT = 3;
/** Exports of one user running at once (across processes): the others wait while other users' run. */
const EXPORTS_RUNNING_PER_USER = 1;

/** Exports a migration's archive; a migration whose attempts all failed is settled `failed`. */
export const EXPORT = defineJob<{ migrationId: number }, UserMigrationService>({
  name: 'user-migrations.export',
  retry: { retryLimit: EXPORT_RETRY_LIMIT },
  handle: (service, { migrationId }) => service.exportMigration(migrationId),
  options: (service) => ({
    concurrency: 2,
    groupConcurrency: EXPORTS_RUNNING_PER_USER,
    exhausted: ({ migrationId }) => service.exportExhausted(migrationId),
  }),
});
/**
 * An unfinished archive file this old, not of a run exporting now, is a leftover of a dead process:
 * the sweep removes it. A live export writes to its file all the time, so its age stays near zero.
 */
export const UNFINISHED_MAX_AGE_MS = 60 * 60 * 1000;
/** The attributes the `exclude` parameter may drop from a response. */
export const EXCLUDABLE = ['repositories'] as const;
export type Excludable = (typeof EXCLUDABLE)[number];

export interface StartInput {
  repositories: string[];
  lock_repositories?: boolean;
  exclude_metadata?: boolean;
  exclude_git_data?: boolean;
  exclude_attachments?: boolean;
  exclude_releases?: boolean;
  exclude_owner_projects?: boolean;
  org_metadata_only?: boolean;
  exclude?: Excludable[];
}

type MigrationRepository = RepositoryRow & { owner: UserRow; migration_id: number };

/** The archive's folder in storage: every run's archive (and leftovers of dead runs) live under it. */
const archiveFolder = (migrationId: number) => `${migrationId}/`;
const signedValue = (migrationId: number, expires: number) => `user-migration-archive:${migrationId}:${expires}`;

// --- The state machine's rules (pure: states.test.ts pins them) -----------------------------------

const DAY_MS = 86_400_000;

/** Archives exported at or before this time (ISO) have expired: `archiveDays` days before `nowMs`. */
export function expiryCutoff(nowMs: number, archiveDays: number): string {
  return new Date(nowMs - archiveDays * DAY_MS).toISOString();
}

/** When an archive exported at `exportedAt` expires, or null before the export. */
export function archiveExpiresAt(exportedAt: string | null, archiveDays: number): Date | null {
  return exportedAt ? new Date(Date.parse(exportedAt) + archiveDays * DAY_MS) : null;
}

/** Whether the archive may be downloaded (or deleted): exported, neither deleted nor expired (exported after `cutoff`). */
export function archiveDownloadable(row: Pick<store.MigrationRow, 'archive_key' | 'exported_at'>, cutoff: string): boolean {
  return row.archive_key !== null && row.exported_at !== null && row.exported_at > cutoff;
}

/** Whether a migration's repositories may be unlocked: once its export has finished (exported, or failed). */
export function unlockable(state: string): boolean {
  return state !== 'pending' && state !== 'exporting';
}

/** Whether `userId` may see the migration: only its owner; an unknown one nobody. */
export function ownedBy(row: Pick<store.MigrationRow, 'owner_id'> | undefined, userId: number): row is store.MigrationRow {
  return row !== undefined && row.owner_id === userId;
}

export class UserMigrationService extends Service {
  readonly storage: ArchiveStorage;

  constructor(ctx: Context) {
    super(ctx);
    this.storage = archiveStorage(ctx.config);
  }

  /** Archives exported at or before this time have expired. */
  private expiryCutoff(): string {
    return expiryCutoff(this.ctx.clock.nowMs(), this.ctx.config.migrations.archiveDays);
  }

  private downloadable(row: store.MigrationRow): boolean {
    return archiveDownloadable(row, this.expiryCutoff());
  }

  /** The caller's migration; anyone else's, or an unknown one, is a 404. */
  private async owned(user: UserRow, migrationId: number): Promise<store.MigrationRow> {
    const row = await store.findMigration(this.db, migrationId);
    if (!ownedBy(row, user.id)) throw notFound();
    return row;
  }

  /**
   * The migration's repositories the user may read now, with their bodies: one moved to another
   * owner since the start shows only to a user who still has access to it (the export leaves it out
   * anyway: `exportPlan`).
   */
  private async repositoryBodies(user: UserRow, repositories: MigrationRepository[]): Promise<(FullRepository & { migration_id: number })[]> {
    const ids = repositories.map((r) => r.id);
    const [facts, permissions] = await Promise.all([loadRepositoryFacts(this.db, ids), userRepositoriesPermissions(this.db, user.id, ids)]);
    return repositories
      .filter((repo) => repo.visibility === 'public' || permissions.get(repo.id)?.pull)
      .map((repo) => ({ ...fullRepository(this.ctx.urls, repo, repo.owner, facts.get(repo.id)!, permissions.get(repo.id)), migration_id: repo.migration_id }));
  }

  private async body(user: UserRow, row: store.MigrationRow, exclude: readonly string[] = []): Promise<UserMigration> {
    if (exclude.includes('repositories')) return migrationBody(this.ctx.urls, row, user, null);
    const repositories = await store.migrationRepositories(this.db, [row.id]);
    return migrationBody(this.ctx.urls, row, user, withoutMigrationId(await this.repositoryBodies(user, repositories)));
  }

  async list(user: UserRow, page: { limit: number; offset: number }): Promise<{ migrations: UserMigration[]; total: number }> {
    const { rows, total } = await store.listMigrations(this.db, user.id, page.limit, page.offset);
    const bodies = await this.repositoryBodies(user, await store.migrationRepositories(this.db, rows.map((r) => r.id)));
    const migrations = rows.map((row) => migrationBody(this.ctx.urls, row, user, withoutMigrationId(bodies.filter((body) => body.migration_id === row.id))));
    return { migrations, total };
  }

  async get(user: UserRow, migrationId: number, exclude: readonly string[] = []): Promise<UserMigration> {
    return this.body(user, await this.owned(user, migrationId), exclude);
  }

  /** The repositories a start request names: the user's own, by `name` or `owner/name`, each once. */
  private async resolveRepositories(user: UserRow, names: string[], lock: boolean): Promise<RepositoryRow[]> {
    const errors: ValidationError[] = [];
    const chosen: RepositoryRow[] = [];
    const problem = (message: string) => errors.push({ resource: 'Migration', field: 'repositories', code: 'custom', message });
    for (const name of names) {
      const parts = name.split('/');
      const [ownerLogin, repoName] = parts.length === 2 ? parts : [user.login, parts[0]!];
      if (parts.length > 2 || !repoName || ownerLogin!.toLowerCase() !== user.login_lower) {
        problem(`${name} is not a repository owned by ${user.login}`);
        continue;
      }
      const repository = await findRepository(this.db, user.login, repoName);
      if (!repository || repository.owner_id !== user.id) {
        problem(`${name} is not a repository owned by ${user.login}`);
      } else if (chosen.some((r) => r.id === repository.id)) {
        problem(`${name} is named more than once`);
      } else if (lock && repository.locked_by_migration_id !== null) {
        problem(`${name} is already locked by migration ${repository.locked_by_migration_id}`);
      } else {
        chosen.push(repository);
      }
    }
    if (errors.length) throw validationFailed(errors);
    return chosen;
  }

  /** Starts a migration; exporting a private (or internal) repository needs the token's `repo` scope, a public one none. */
  async start(user: UserRow, input: StartInput, principal: Principal): Promise<UserMigration> {
    const orgOnly = input.org_metadata_only ?? false;
    const lock = input.lock_repositories ?? false;
    if (orgOnly && input.repositories.length) {
      throw invalidField('Migration', 'repositories', 'repositories must be empty when org_metadata_only is true');
    }
    if (!orgOnly && !input.repositories.length) {
      throw invalidField('Migration', 'repositories', 'repositories must name at least one repository unless org_metadata_only is true');
    }
    const repositories = await this.resolveRepositories(user, input.repositories, lock);
    if (repositories.some((r) => r.visibility !== 'public')) requireScopes(principal, ['repo']);
    // A thread is started ahead when this process runs the exports: it loads its modules while the
    // job is queued and picked up.
    if (this.ctx.config.jobs.worker) exportThreads.of(this.ctx).warm();
    const now = this.now();
    const row = await this.db.transaction().execute(async (trx) => {
      // One user's exports cannot fill the queue others wait in.
      const allowed = this.ctx.config.migrations.exportsPerUser;
      // The owner's row is locked first (PostgreSQL), so concurrent starts of one user count one
      // after another (SQLite runs one transaction at a time).
      await lockAccount(trx, user.id, this.ctx.db.dialect === 'postgres');
      if ((await store.countExportsInProgress(trx, user.id)) >= allowed) {
        throw validationFailed(
          [{ resource: 'Migration', field: 'state', code: 'custom', message: `You may have at most ${allowed} exports in progress at once; wait for one to finish` }],
          `You may have at most ${allowed} exports in progress at once; wait for one to finish`,
        );
      }
      // Nor fill the disk: finished archives are kept until deleted or expired (CODEHOST_MIGRATION_ARCHIVE_DAYS).
      const { archivesPerUser, archiveBytesPerUser } = this.ctx.config.migrations;
      const kept = await store.keptArchives(trx, user.id);
      if (kept.count >= archivesPerUser || kept.bytes >= archiveBytesPerUser) {
        const message = `You may keep at most ${archivesPerUser} archives and ${archiveBytesPerUser} bytes of archives; delete one (DELETE /user/migrations/{migration_id}/archive) first`;
        throw validationFailed([{ resource: 'Migration', field: 'archive', code: 'custom', message }], message);
      }
      const row = await store.insertMigration(
        trx,
        {
          guid: randomUUID(),
          owner_id: user.id,
          state: 'pending',
          lock_repositories: lock ? 1 : 0,
          exclude_metadata: input.exclude_metadata ? 1 : 0,
          exclude_git_data: input.exclude_git_data ? 1 : 0,
          exclude_attachments: input.exclude_attachments ? 1 : 0,
          exclude_releases: input.exclude_releases ? 1 : 0,
          exclude_owner_projects: input.exclude_owner_projects ? 1 : 0,
          org_metadata_only: orgOnly ? 1 : 0,
          export_run: null,
          archive_key: null,
          archive_size: null,
          records_exported: 0,
          failure: null,
          exported_at: null,
          archive_deleted_at: null,
          created_at: now,
          updated_at: now,
        },
        repositories.map((r) => r.id),
      );
      // Locked at start, in the same transaction; a repository another migration locked meanwhile undoes it all.
      if (lock && (await store.lockRepositories(trx, row.id, user.id, repositories.map((r) => r.id))) !== repositories.length) {
        throw invalidField('Migration', 'repositories', 'a repository was locked by another migration meanwhile');
      }
      // Grouped by owner: the workers run one export per user at a time, so one user's queue of
      // exports does not hold up another user's.
      await EXPORT.send(this.ctx.queue, { migrationId: row.id }, { transaction: trx, singletonKey: `migration-${row.id}`, group: `user-${user.id}` });
      return row;
    });
    return this.body(user, row, input.exclude ?? []);
  }

  /** A page of the migration's repositories the user may read (a migration names at most 1000). */
  async repositories(user: UserRow, migrationId: number, page: { limit: number; offset: number }): Promise<{ repositories: FullRepository[]; total: number }> {
    await this.owned(user, migrationId);
    const readable = withoutMigrationId(await this.repositoryBodies(user, await store.migrationRepositories(this.db, [migrationId])));
    return { repositories: readable.slice(page.offset, page.offset + page.limit), total: readable.length };
  }

  /** The signed, short-lived URL of the archive; 404 unless it is exported and neither deleted nor expired. */
  async archiveLocation(user: UserRow, migrationId: number): Promise<string> {
    const row = await this.owned(user, migrationId);
    if (!this.downloadable(row)) throw notFound();
    const expires = Math.floor(this.ctx.clock.nowMs() / 1000) + this.ctx.config.migrations.downloadUrlSeconds;
    const signature = this.ctx.secrets.sign(signedValue(row.id, expires));
    return `${this.ctx.urls.api}/_storage/user-migrations/${row.id}/archive.tar.gz?expires=${expires}&signature=${signature}`;
  }

  /**
   * The archive behind a signed URL: a tampered or expired URL is a 403, an archive that is gone a 404.
   * The signature is checked before anything is looked up, so an unsigned caller learns nothing.
   */
  async signedArchive(migrationId: number, expires: string | undefined, signature: string | undefined): Promise<{ key: string; size: number; guid: string }> {
    if (!expires || !signature || !/^\d{1,12}$/.test(expires) || !this.ctx.secrets.verify(signedValue(migrationId, Number(expires)), signature)) {
      throw forbidden('Request signature does not match');
    }
    if (Number(expires) * 1000 < this.ctx.clock.nowMs()) throw forbidden('Request has expired');
    const row = await store.findMigration(this.db, migrationId);
    if (!row || !this.downloadable(row)) throw notFound();
    const size = await this.storage.size(row.archive_key!);
    if (size === null) throw notFound();
    return { key: row.archive_key!, size, guid: row.guid };
  }

  async deleteArchive(user: UserRow, migrationId: number): Promise<void> {
    const row = await this.owned(user, migrationId);
    if (!this.downloadable(row)) throw notFound();
    if (!(await this.dropArchive(row.id))) throw notFound();
    await this.storage.clear(archiveFolder(row.id));
  }

  /**
   * A repository a migration locked does not move (a transfer or a rename, inside the move's
   * transaction): 403 with the message every write to a locked repository gets (assertRepositoryWritable).
   */
  async refuseLockedMove(trx: Executor, move: RepositoryMove): Promise<void> {
    if ((await store.repositoryLock(trx, move.repositoryId, this.ctx.db.dialect === 'postgres')) !== null) throw forbidden('Repository is locked for migration');
  }

  /** Unlocks one of the migration's repositories, by name, once the export has finished. */
  async unlock(user: UserRow, migrationId: number, repoName: string): Promise<void> {
    const row = await this.owned(user, migrationId);
    const repository = await findRepository(this.db, user.login, repoName);
    if (!repository || repository.locked_by_migration_id !== row.id) throw notFound();
    if (!unlockable(row.state)) {
      throw invalidField('Migration', 'state', 'Repositories can be unlocked once the migration has been exported');
    }
    if (!(await store.unlockRepository(this.db, row.id, repository.id))) throw notFound();
  }

  /**
   * The export job. Each run takes the migration over with a run id of its own, starts from scratch
   * (a run cut short by a dead process leaves at most an unfinished file, cleared here), and writes to
   * a key of its own; only the run that still owns the migration may publish its archive or fail it.
   */
  async exportMigration(migrationId: number): Promise<void> {
    const run = randomUUID();
    const migration = await store.beginExport(this.db, migrationId, run, this.now());
    if (!migration) return;
    const key = `${archiveFolder(migrationId)}${run}.tar.gz`;
    // Taken first: a new thread loads its modules while the folder is cleared and the plan made.
    const thread = exportThreads.of(this.ctx).take();
    try {
      await this.storage.clear(archiveFolder(migrationId));
      const plan = await exportPlan(this.db, this.ctx.urls, migration);
      const size = await thread.run({ urls: this.ctx.urls, now: this.now(), run, key, plan });
      if (!(await store.finishExport(this.db, migrationId, run, { key, size }, this.now()))) await this.storage.remove(key);
    } catch (error) {
      await thread.stop();
      const failure = error instanceof Error ? error.message : String(error);
      this.ctx.log.warn({ migrationId, failure }, 'user migration export failed');
      // What this run wrote goes; failing to remove it is only logged, so the migration is still marked failed.
      await this.storage.remove(key).catch((err: unknown) => this.ctx.log.error({ err, migrationId }, 'could not remove a failed archive'));
      await this.failExport(migrationId, run, failure);
      return;
    }
    // The job ends once the thread is idle again (its compile cache written) or gone: a drained queue
    // (`POST /_admin/jobs/drain`) or a stopped one leaves no export thread writing to the data directory.
    await thread.release();
  }

  /**
   * The export job ran out of attempts (its handler failed on each, or its process died on each): the
   * migration ends `failed`, its repositories are released, and whatever its runs wrote goes.
   */
  async exportExhausted(migrationId: number): Promise<void> {
    const failure = `the export did not finish in ${EXPORT_RETRY_LIMIT + 1} attempts`;
    if (await this.failExport(migrationId, null, failure)) {
      this.ctx.log.warn({ migrationId, failure }, 'user migration export failed');
    }
    const migration = await store.findMigration(this.db, migrationId);
    // A failed migration has no archive: its folder holds only what dead runs left.
    if (migration?.state === 'failed') await this.storage.clear(archiveFolder(migrationId));
  }

  /**
   * The sweep of unfinished archive files: those not written to for UNFINISHED_MAX_AGE_MS that no
   * exporting run owns (a run that died while exporting is taken over, and its folder cleared, by the
   * job's next attempt or its exhausted hook; this catches what those missed).
   */
  async sweepUnfinished(): Promise<number> {
    const found = await this.storage.unfinished(new Date(Date.now() - UNFINISHED_MAX_AGE_MS));
    // Keys are `<migration id>/<run>.tar.gz` (see exportMigration).
    const owners = found.map(({ key }) => /^(\d{1,9})\/([^/]+)\.tar\.gz$/.exec(key));
    const running = await store.exportingRuns(this.db, [...new Set(owners.flatMap((m) => (m ? [Number(m[1])] : [])))]);
    let removed = 0;
    for (const [i, upload] of found.entries()) {
      const owner = owners[i];
      if (owner && running.get(Number(owner[1])) === owner[2]) continue;
      await this.storage.removeUnfinished(upload);
      removed += 1;
    }
    if (removed) this.ctx.log.info({ removed }, 'removed unfinished migration archive files');
    return removed;
  }

  /**
   * The sweep of archive folders whose migration is gone (its user was deleted): run when a user is
   * deleted (the `user.deleted` activity, after the deletion committed) and with the unfinished sweep,
   * which catches a folder left by a process that died in between (`db`: the dispatch's transaction,
   * which holds SQLite's one connection). A folder is only written once its
   * migration exists, so a folder without one is never a new export's.
   */
  async sweepOrphanArchives(db: Executor = this.db): Promise<number> {
    const ids = (await this.storage.folders()).flatMap((folder) => (/^\d{1,9}\/$/.test(folder) ? [Number.parseInt(folder, 10)] : []));
    const existing = await store.existingMigrations(db, ids);
    const orphans = ids.filter((id) => !existing.has(id));
    for (const id of orphans) await this.storage.clear(archiveFolder(id));
    if (orphans.length) this.ctx.log.info({ removed: orphans.length }, 'removed the archives of deleted migrations');
    return orphans.length;
  }

  /** The expiry sweep: archives older than the configured days are deleted; the migrations stay. */
  async expireArchives(): Promise<number> {
    let removed = 0;
    for (;;) {
      const ids = await store.expiredArchives(this.db, this.expiryCutoff(), 100);
      for (const id of ids) {
        if (await this.dropArchive(id)) {
          await this.storage.clear(archiveFolder(id));
          removed += 1;
        }
      }
      if (ids.length < 100) return removed;
    }
  }

  /** The operator's view of a migration: state, progress, archive, failure, locks. */
  async adminView(migrationId: number) {
    const row = await store.findMigration(this.db, migrationId);
    if (!row) throw notFound('Migration not found');
    const owner = (await store.usersById(this.db, [row.owner_id])).get(row.owner_id)!;
    const locked = await store.lockedRepositories(this.db, row.id);
    const expiresAt = archiveExpiresAt(row.exported_at, this.ctx.config.migrations.archiveDays);
    return {
      id: row.id,
      guid: row.guid,
      owner: owner.login,
      state: row.state,
      records_exported: row.records_exported,
      failure: row.failure,
      archive: row.archive_key && expiresAt
        ? { size: Number(row.archive_size), exported_at: isoSeconds(row.exported_at!), expires_at: isoSeconds(expiresAt) }
        : null,
      archive_deleted_at: row.archive_deleted_at ? isoSeconds(row.archive_deleted_at) : null,
      locked_repositories: locked.map((r) => `${owner.login}/${r.name}`),
      created_at: isoSeconds(row.created_at),
      updated_at: isoSeconds(row.updated_at),
    };
  }

  /** Fails a migration and releases its repositories, in one transaction (store.failExport). */
  private async failExport(migrationId: number, run: string | null, failure: string): Promise<boolean> {
    const now = this.now();
    return this.db.transaction().execute((trx) => store.failExport(trx, migrationId, run, failure, now));
  }

  /** Forgets a migration's archive, read and updated in one transaction (store.dropArchive). */
  private async dropArchive(migrationId: number): Promise<string | null> {
    const now = this.now();
    return this.db.transaction().execute((trx) => store.dropArchive(trx, migrationId, now));
  }
}
