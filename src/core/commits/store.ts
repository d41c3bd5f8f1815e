// The SQL of commit statuses, check suites and check runs (tables: src/db/tables/commits.ts).
import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Executor } from '../../db/index.ts';
import type { CheckRunsTable, CheckSuitesTable, CommitStatusesTable } from '../../db/tables/commits.ts';

export type StatusRow = Selectable<CommitStatusesTable>;
export type CheckSuiteRow = Selectable<CheckSuitesTable>;
export type CheckRunRow = Selectable<CheckRunsTable>;

export async function insertStatus(trx: Executor, values: Insertable<CommitStatusesTable>): Promise<StatusRow> {
  return trx.insertInto('commit_statuses').values(values).returningAll().executeTakeFirstOrThrow();
}

/** How many statuses of that context the commit has (the platform keeps at most 1,000 per sha and context). */
export async function countStatuses(db: Executor, repositoryId: number, sha: string, context: string): Promise<number> {
  const row = await db.selectFrom('commit_statuses').select((eb) => eb.fn.countAll<number>().as('n'))
    .where('repository_id', '=', repositoryId).where('sha', '=', sha).where('context', '=', context).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** A page of the commit's statuses, newest first, with the total. */
export async function statusPage(db: Executor, repositoryId: number, sha: string, page: { offset: number; limit: number }): Promise<{ total: number; rows: StatusRow[] }> {
  const base = db.selectFrom('commit_statuses').where('repository_id', '=', repositoryId).where('sha', '=', sha);
  const [count, rows] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    base.selectAll().orderBy('id', 'desc').offset(page.offset).limit(page.limit).execute(),
  ]);
  return { total: Number(count.n), rows };
}

/** The latest status of each context of the commit, by context. */
export async function latestStatuses(db: Executor, repositoryId: number, sha: string): Promise<StatusRow[]> {
  const latest = db.selectFrom('commit_statuses').select((eb) => eb.fn.max('id').as('id'))
    .where('repository_id', '=', repositoryId).where('sha', '=', sha).groupBy('context');
  return db.selectFrom('commit_statuses').selectAll().where('id', 'in', latest).orderBy('context').execute();
}

/** The app's check suite for the commit, made on its first check run (the unique key makes a race one suite). */
export async function checkSuiteFor(trx: Executor, values: Insertable<CheckSuitesTable>): Promise<CheckSuiteRow> {
  await trx.insertInto('check_suites').values(values).onConflict((oc) => oc.columns(['repository_id', 'app_id', 'head_sha']).doNothing()).execute();
  return trx.selectFrom('check_suites').selectAll()
    .where('repository_id', '=', values.repository_id).where('app_id', '=', values.app_id).where('head_sha', '=', values.head_sha)
    .executeTakeFirstOrThrow();
}

export async function findCheckSuite(db: Executor, id: number): Promise<CheckSuiteRow | undefined> {
  return db.selectFrom('check_suites').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The suites' runs, for their roll-up status. */
export async function suiteRunStates(db: Executor, suiteIds: readonly number[]): Promise<Pick<CheckRunRow, 'check_suite_id' | 'status' | 'conclusion'>[]> {
  if (!suiteIds.length) return [];
  return db.selectFrom('check_runs').select(['check_suite_id', 'status', 'conclusion']).where('check_suite_id', 'in', [...suiteIds]).execute();
}

export async function touchCheckSuite(trx: Executor, id: number, now: string): Promise<void> {
  await trx.updateTable('check_suites').set({ updated_at: now }).where('id', '=', id).execute();
}

export async function insertCheckRun(trx: Executor, values: Insertable<CheckRunsTable>): Promise<CheckRunRow> {
  return trx.insertInto('check_runs').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function updateCheckRun(trx: Executor, id: number, values: Updateable<CheckRunsTable>): Promise<CheckRunRow> {
  return trx.updateTable('check_runs').set(values).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

/** A check run of the repository, with its suite's app. */
export async function findCheckRun(db: Executor, repositoryId: number, id: number): Promise<(CheckRunRow & { app_id: number }) | undefined> {
  return db.selectFrom('check_runs').innerJoin('check_suites', 'check_suites.id', 'check_runs.check_suite_id')
    .selectAll('check_runs').select('check_suites.app_id')
    .where('check_runs.repository_id', '=', repositoryId).where('check_runs.id', '=', id).executeTakeFirst();
}

export interface CheckRunFilter {
  name?: string;
  status?: string;
  appId?: number;
  /** Only the newest run of each name (and app), as the platform's `filter=latest`. */
  latest: boolean;
}

/** A page of the commit's check runs, newest first, with the total. */
export async function checkRunPage(db: Executor, repositoryId: number, sha: string, filter: CheckRunFilter, page: { offset: number; limit: number }): Promise<{ total: number; rows: (CheckRunRow & { app_id: number })[] }> {
  let base = db.selectFrom('check_runs').innerJoin('check_suites', 'check_suites.id', 'check_runs.check_suite_id')
    .where('check_runs.repository_id', '=', repositoryId).where('check_runs.head_sha', '=', sha);
  if (filter.name !== undefined) base = base.where('check_runs.name', '=', filter.name);
  if (filter.status !== undefined) base = base.where('check_runs.status', '=', filter.status);
  if (filter.appId !== undefined) base = base.where('check_suites.app_id', '=', filter.appId);
  if (filter.latest) {
    const newest = db.selectFrom('check_runs as r').innerJoin('check_suites as s', 's.id', 'r.check_suite_id')
      .select((eb) => eb.fn.max('r.id').as('id'))
      .where('r.repository_id', '=', repositoryId).where('r.head_sha', '=', sha).groupBy(['s.app_id', 'r.name']);
    base = base.where('check_runs.id', 'in', newest);
  }
  const [count, rows] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    base.selectAll('check_runs').select('check_suites.app_id').orderBy('check_runs.id', 'desc').offset(page.offset).limit(page.limit).execute(),
  ]);
  return { total: Number(count.n), rows };
}
