// Commit statuses and check runs made and changed (the public API: ./service.ts says who may). Each
// write and its activity in one transaction: `status`, `check_run` `created` and `completed`, their
// subject rendered as the write left it.
import type { Executor } from '../../db/index.ts';
import { Service } from '../../platform/service.ts';
import { invalidField } from '../../platform/errors.ts';
import { stillWritable } from '../repositories/lookup.ts';
import { branchesAt, type Commit } from '../repositories/git.ts';
import type { RepositoryRow } from '../repositories/representations.ts';
import type { UserRow } from '../accounts/store.ts';
import { shownApp } from '../apps/service.ts';
import type { AppRow } from '../apps/store.ts';
import { recordCommitActivity } from './activities.ts';
import * as store from './store.ts';
import {
  checkRunRepresentation, checkSuiteRepresentation, commitRepresentation, statusRepresentation, suiteState, type StatusState,
} from './representations.ts';

type Repository = RepositoryRow & { owner: UserRow };

/** The platform keeps at most this many statuses per commit and context. */
export const MAX_STATUSES = 1000;

export interface StatusInput {
  state: StatusState;
  target_url?: string | null;
  description?: string | null;
  context?: string;
}

export interface CheckRunOutput {
  title: string;
  summary: string;
  text?: string;
}

export interface CheckRunInput {
  name?: string;
  details_url?: string;
  external_id?: string;
  status?: string;
  started_at?: string;
  conclusion?: string;
  completed_at?: string;
  output?: CheckRunOutput;
}

const iso = (value: string | undefined) => (value === undefined ? undefined : new Date(value).toISOString());

export class CommitWrites extends Service {
  async createStatus(repository: Repository, actor: UserRow, commit: Commit, input: StatusInput) {
    const now = this.now();
    const context = input.context ?? 'default';
    const branches = await branchesAt(this.ctx.config.dataDir, repository, commit.sha);
    return this.transaction(async (trx) => {
      await stillWritable(trx, repository.id, this.ctx.db.dialect === 'postgres');
      if ((await store.countStatuses(trx, repository.id, commit.sha, context)) >= MAX_STATUSES) {
        throw invalidField('Status', 'context', `This SHA and context has reached the maximum number of statuses.`);
      }
      const row = await store.insertStatus(trx, {
        repository_id: repository.id, sha: commit.sha, state: input.state, context,
        target_url: input.target_url ?? null, description: input.description ?? null, creator_id: actor.id, created_at: now, updated_at: now,
      });
      const status = statusRepresentation(this.ctx.urls, { owner: repository.owner, repository }, row, actor);
      const api = `${this.ctx.urls.api}/repos/${repository.owner.login}/${repository.name}`;
      await recordCommitActivity(this.ctx, trx, {
        name: 'status',
        repository_id: repository.id,
        actor_id: actor.id,
        payload: {
          id: row.id,
          sha: commit.sha,
          name: `${repository.owner.login}/${repository.name}`,
          target_url: status.target_url,
          avatar_url: status.avatar_url,
          context,
          description: status.description,
          state: status.state,
          commit: commitRepresentation(this.ctx.urls, { owner: repository.owner, repository }, commit, false),
          branches: branches.map((name) => ({ name, commit: { sha: commit.sha, url: `${api}/commits/${commit.sha}` }, protected: false })),
          created_at: status.created_at,
          updated_at: status.updated_at,
        },
      });
      return { row, status };
    });
  }

  /**
   * A check run of the app's on the commit, in the app's suite for it (made with its first run); its
   * `details_url` is the app's page and its `external_id` empty unless given, as on the platform.
   */
  async createCheckRun(repository: Repository, app: AppRow, actor: UserRow, commit: Commit, input: CheckRunInput & { name: string }) {
    const now = this.now();
    // The suite's branch: the default branch when the commit is its head, else the first that has it as head.
    const heads = await branchesAt(this.ctx.config.dataDir, repository, commit.sha);
    const branch = heads.includes(repository.default_branch) ? repository.default_branch : (heads[0] ?? null);
    const values = runValues(input, now, true);
    return this.transaction(async (trx) => {
      await stillWritable(trx, repository.id, this.ctx.db.dialect === 'postgres');
      const suite = await store.checkSuiteFor(trx, { repository_id: repository.id, app_id: app.id, head_sha: commit.sha, head_branch: branch, created_at: now, updated_at: now });
      const run = await store.insertCheckRun(trx, {
        check_suite_id: suite.id, repository_id: repository.id, head_sha: commit.sha, name: input.name,
        status: 'queued', conclusion: null, external_id: '', details_url: `${this.ctx.urls.web}/apps/${app.slug}`, started_at: now, completed_at: null,
        output_title: null, output_summary: null, output_text: null, created_at: now, updated_at: now, ...values,
      });
      await store.touchCheckSuite(trx, suite.id, now);
      await this.recordRun(trx, repository, app, actor, run, 'check_run.created');
      return run;
    });
  }

  /** Changes a check run; reaching `completed` is the `check_run` `completed` event. */
  async updateCheckRun(repository: Repository, app: AppRow, actor: UserRow, run: store.CheckRunRow, input: CheckRunInput) {
    const now = this.now();
    const values = runValues(input, now, false);
    return this.transaction(async (trx) => {
      await stillWritable(trx, repository.id, this.ctx.db.dialect === 'postgres');
      const updated = await store.updateCheckRun(trx, run.id, { ...values, updated_at: now });
      await store.touchCheckSuite(trx, run.check_suite_id, now);
      if (updated.status === 'completed' && run.status !== 'completed') await this.recordRun(trx, repository, app, actor, updated, 'check_run.completed');
      return updated;
    });
  }

  private async recordRun(trx: Executor, repository: Repository, app: AppRow, actor: UserRow, run: store.CheckRunRow, name: 'check_run.created' | 'check_run.completed') {
    const where = { owner: repository.owner, repository };
    const shown = await shownApp(trx, this.ctx.urls, app);
    const suite = (await store.findCheckSuite(trx, run.check_suite_id))!;
    const check_run = {
      ...checkRunRepresentation(this.ctx.urls, where, run, shown),
      check_suite: checkSuiteRepresentation(this.ctx.urls, where, suite, suiteState(await store.suiteRunStates(trx, [suite.id])), shown),
    };
    await recordCommitActivity(this.ctx, trx, { name, repository_id: repository.id, actor_id: actor.id, payload: { check_run } });
  }
}

/**
 * The columns a create or an update sets, as the platform's rules have them: a conclusion completes
 * the run (a `completed` status needs one), and completing without `completed_at` is now.
 */
function runValues(input: CheckRunInput, now: string, creating: boolean) {
  const completes = input.conclusion !== undefined || input.status === 'completed' || input.completed_at !== undefined;
  if (completes && input.conclusion === undefined) throw invalidField('CheckRun', 'conclusion', 'Conclusion is required when the check run is completed or has a completed_at.', 'missing_field');
  if (input.conclusion !== undefined && input.status !== undefined && input.status !== 'completed') throw invalidField('CheckRun', 'status', 'A check run with a conclusion is completed.');
  return {
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.details_url !== undefined ? { details_url: input.details_url } : {}),
    ...(input.external_id !== undefined ? { external_id: input.external_id } : {}),
    ...(input.status !== undefined ? { status: input.status } : {}),
    ...(input.started_at !== undefined ? { started_at: iso(input.started_at)! } : creating ? { started_at: now } : {}),
    ...(completes ? { status: 'completed', conclusion: input.conclusion!, completed_at: iso(input.completed_at) ?? now } : {}),
    ...(input.output !== undefined ? { output_title: input.output.title, output_summary: input.output.summary, output_text: input.output.text ?? null } : {}),
  };
}
