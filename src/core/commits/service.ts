// The commits of a repository's git data, their statuses and check runs: who may read and write
// them. Reads are the repository's (a private one: `repo`, or the resource's permission); a status
// asks write access (`statuses: write`, the `repo:status` scope); a check run is an app's alone: an
// installation with `checks: write` makes it, and only its app changes it.
import { Service } from '../../platform/service.ts';
import { ApiError, invalidField, notFound } from '../../platform/errors.ts';
import type { PageParams } from '../../platform/pagination.ts';
import { RepositoryService, type ReadableRepository } from '../repositories/service.ts';
import { minimalRepository } from '../repositories/representations.ts';
import { readCommit, type Commit } from '../repositories/git.ts';
import { usersById } from '../accounts/store.ts';
import { actingAccount } from '../apps/actor.ts';
import { shownApp } from '../apps/service.ts';
import type { App } from '../apps/representations.ts';
import { findAppBy, notAccessible, requireWritableRepository, type Permissions, type Principal } from '../access/index.ts';
import { rowId } from '../issues/service.ts';
import * as store from './store.ts';
import { CommitWrites, type CheckRunInput, type StatusInput } from './writes.ts';
import {
  branchRepresentation, checkRunRepresentation, combinedState, commitRepresentation, statusRepresentation,
  type CheckRun, type Status,
} from './representations.ts';

export const CONTENTS_READ: readonly Permissions[] = [{ contents: 'read' }];
export const STATUSES_READ: readonly Permissions[] = [{ statuses: 'read' }];
export const STATUSES_WRITE: readonly Permissions[] = [{ statuses: 'write' }];
export const CHECKS_READ: readonly Permissions[] = [{ checks: 'read' }];
export const CHECKS_WRITE: readonly Permissions[] = [{ checks: 'write' }];

/** A repository without git data is the platform's empty repository. */
const empty = () => new ApiError(409, 'Git Repository is empty.');
/** A ref that names no commit, as the platform answers it. */
const noCommit = (ref: string) => invalidField('Commit', 'sha', `No commit found for SHA: ${ref}`);

export class CommitService extends Service {
  private readonly repositories = new RepositoryService(this.ctx);
  private readonly writes = new CommitWrites(this.ctx);

  /** The commit `ref` names: 409 for a repository with no git data, 422 for a ref that names none. */
  private async commitOf(repository: ReadableRepository, ref: string): Promise<Commit> {
    if (!repository.git_path) throw empty();
    const commit = await readCommit(this.ctx.config.dataDir, repository, ref);
    if (!commit) throw noCommit(ref);
    return commit;
  }

  private where(repository: ReadableRepository) {
    return { owner: repository.owner, repository };
  }

  async commit(principal: Principal, owner: string, repo: string, ref: string) {
    const repository = await this.repositories.readable(principal, owner, repo);
    return commitRepresentation(this.ctx.urls, this.where(repository), await this.commitOf(repository, ref), true);
  }

  /** A branch and its head; a name that is no branch is the platform's 404 `Branch not found`. */
  async branch(principal: Principal, owner: string, repo: string, name: string) {
    const repository = await this.repositories.readable(principal, owner, repo);
    const head = repository.git_path ? await readCommit(this.ctx.config.dataDir, repository, `refs/heads/${name}`) : null;
    if (!head) throw notFound('Branch not found');
    return branchRepresentation(this.ctx.urls, this.where(repository), name, head);
  }

  // --- Statuses ----------------------------------------------------------------------------------

  /** A status on a commit: who may write to the repository (an installation: `statuses: write`). */
  async createStatus(principal: Principal, owner: string, repo: string, sha: string, input: StatusInput): Promise<Status> {
    const repository = await this.repositories.readable(principal, owner, repo);
    await requireWritableRepository(this.db, principal, repository, { role: 'push', permissions: STATUSES_WRITE });
    const commit = await this.commitOf(repository, sha);
    const actor = await actingAccount(this.db, principal, this.now());
    return (await this.writes.createStatus(repository, actor, commit, input)).status;
  }

  /** The commit's statuses, newest first. */
  async statuses(principal: Principal, owner: string, repo: string, ref: string, page: PageParams): Promise<{ total: number; items: Status[] }> {
    const repository = await this.repositories.readable(principal, owner, repo);
    const commit = await this.commitOf(repository, ref);
    const { total, rows } = await store.statusPage(this.db, repository.id, commit.sha, { offset: page.offset, limit: page.perPage });
    return { total, items: await this.representStatuses(repository, rows) };
  }

  /** The combined status: the latest of each context, and their combined state. */
  async combinedStatus(principal: Principal, owner: string, repo: string, ref: string, page: PageParams) {
    const repository = await this.repositories.readable(principal, owner, repo);
    const commit = await this.commitOf(repository, ref);
    const latest = await store.latestStatuses(this.db, repository.id, commit.sha);
    const shown = await this.representStatuses(repository, latest.slice(page.offset, page.offset + page.perPage));
    const api = `${this.ctx.urls.api}/repos/${repository.owner.login}/${repository.name}`;
    const body = {
      state: combinedState(latest.map((s) => s.state)),
      statuses: shown.map(({ creator: _creator, ...status }) => status),
      sha: commit.sha,
      total_count: latest.length,
      repository: minimalRepository(this.ctx.urls, repository, repository.owner),
      commit_url: `${api}/commits/${commit.sha}`,
      url: `${api}/commits/${commit.sha}/status`,
    };
    return { total: latest.length, body };
  }

  private async representStatuses(repository: ReadableRepository, rows: store.StatusRow[]): Promise<Status[]> {
    const creators = new Map((await usersById(this.db, [...new Set(rows.map((row) => row.creator_id))])).map((user) => [user.id, user]));
    return rows.map((row) => statusRepresentation(this.ctx.urls, this.where(repository), row, creators.get(row.creator_id)));
  }

  // --- Check runs --------------------------------------------------------------------------------

  /** The installation's app, and the repository it may change the checks of. */
  private async checkWriter(principal: Principal, owner: string, repo: string) {
    const repository = await this.repositories.readable(principal, owner, repo);
    await requireWritableRepository(this.db, principal, repository, { role: 'push', permissions: CHECKS_WRITE });
    if (principal.type !== 'installation') throw notAccessible(principal);
    const app = await findAppBy(this.db, { id: principal.appId });
    if (!app) throw notFound();
    return { repository, app, actor: await actingAccount(this.db, principal, this.now()) };
  }

  async createCheckRun(principal: Principal, owner: string, repo: string, input: CheckRunInput & { name: string; head_sha: string }): Promise<CheckRun> {
    const { repository, app, actor } = await this.checkWriter(principal, owner, repo);
    if (!repository.git_path) throw empty();
    const commit = await readCommit(this.ctx.config.dataDir, repository, input.head_sha);
    if (!commit) throw noCommit(input.head_sha);
    const { head_sha: _sha, ...rest } = input;
    const run = await this.writes.createCheckRun(repository, app, actor, commit, rest);
    return this.representRun(repository, { ...run, app_id: app.id });
  }

  /** Changes a check run: only the app that made it (any other caller who sees it: 403). */
  async updateCheckRun(principal: Principal, owner: string, repo: string, id: string, input: CheckRunInput): Promise<CheckRun> {
    const { repository, app, actor } = await this.checkWriter(principal, owner, repo);
    const run = await store.findCheckRun(this.db, repository.id, rowId(id));
    if (!run) throw notFound();
    if (run.app_id !== app.id) throw notAccessible(principal);
    const updated = await this.writes.updateCheckRun(repository, app, actor, run, input);
    return this.representRun(repository, { ...updated, app_id: app.id });
  }

  async checkRun(principal: Principal, owner: string, repo: string, id: string): Promise<CheckRun> {
    const repository = await this.repositories.readable(principal, owner, repo);
    const run = await store.findCheckRun(this.db, repository.id, rowId(id));
    if (!run) throw notFound();
    return this.representRun(repository, run);
  }

  async checkRuns(principal: Principal, owner: string, repo: string, ref: string, filter: store.CheckRunFilter, page: PageParams) {
    const repository = await this.repositories.readable(principal, owner, repo);
    const commit = await this.commitOf(repository, ref);
    const { total, rows } = await store.checkRunPage(this.db, repository.id, commit.sha, filter, { offset: page.offset, limit: page.perPage });
    const apps = new Map<number, App | null>();
    const items: CheckRun[] = [];
    for (const row of rows) {
      if (!apps.has(row.app_id)) apps.set(row.app_id, await this.appOf(row.app_id));
      items.push(checkRunRepresentation(this.ctx.urls, this.where(repository), row, apps.get(row.app_id)!));
    }
    return { total, items };
  }

  private async appOf(appId: number) {
    const app = await findAppBy(this.db, { id: appId });
    return app ? shownApp(this.db, this.ctx.urls, app) : null;
  }

  private async representRun(repository: ReadableRepository, run: store.CheckRunRow & { app_id: number }): Promise<CheckRun> {
    return checkRunRepresentation(this.ctx.urls, this.where(repository), run, await this.appOf(run.app_id));
  }
}
