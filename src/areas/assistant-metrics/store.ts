// SQL of assistant metrics.
import type { Executor } from '../../db/index.ts';

/** Whose days: an organization's own, or one team's. */
export type Scope = { orgId: number; teamId?: undefined } | { orgId: number; teamId: number };

export interface StoredDay {
  date: string;
  licensed_members: number;
  metrics: string;
}

const CHUNK = 500;

export async function metricsPolicy(db: Executor, orgId: number): Promise<string | undefined> {
  const row = await db.selectFrom('assistant_metrics_policies').select('metrics_policy').where('org_id', '=', orgId).executeTakeFirst();
  return row?.metrics_policy;
}

export async function setMetricsPolicy(db: Executor, orgId: number, policy: string, now: string): Promise<void> {
  await db
    .insertInto('assistant_metrics_policies')
    .values({ org_id: orgId, metrics_policy: policy, updated_at: now })
    .onConflict((oc) => oc.column('org_id').doUpdateSet({ metrics_policy: policy, updated_at: now }))
    .execute();
}

// The days of a scope from `from` to `to` (inclusive) with at least `minimumLicensed` licensed members.
// One query per table: the organization's days and a team's days have the same columns.

export async function countDays(db: Executor, scope: Scope, from: string, to: string, minimumLicensed: number): Promise<number> {
  const row = scope.teamId === undefined
    ? await db
      .selectFrom('assistant_metrics_days')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('org_id', '=', scope.orgId)
      .where('date', '>=', from).where('date', '<=', to).where('licensed_members', '>=', minimumLicensed)
      .executeTakeFirstOrThrow()
    : await db
      .selectFrom('assistant_metrics_team_days')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('team_id', '=', scope.teamId)
      .where('date', '>=', from).where('date', '<=', to).where('licensed_members', '>=', minimumLicensed)
      .executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function pageOfDays(db: Executor, scope: Scope, from: string, to: string, minimumLicensed: number, limit: number, offset: number): Promise<StoredDay[]> {
  return scope.teamId === undefined
    ? db
      .selectFrom('assistant_metrics_days')
      .select(['date', 'licensed_members', 'metrics'])
      .where('org_id', '=', scope.orgId)
      .where('date', '>=', from).where('date', '<=', to).where('licensed_members', '>=', minimumLicensed)
      .orderBy('date').limit(limit).offset(offset)
      .execute()
    : db
      .selectFrom('assistant_metrics_team_days')
      .select(['date', 'licensed_members', 'metrics'])
      .where('team_id', '=', scope.teamId)
      .where('date', '>=', from).where('date', '<=', to).where('licensed_members', '>=', minimumLicensed)
      .orderBy('date').limit(limit).offset(offset)
      .execute();
}

/** Replaces every stored day of the organization and of its teams. */
export async function replaceDays(
  db: Executor,
  orgId: number,
  orgDays: readonly StoredDay[],
  teamDays: readonly (StoredDay & { team_id: number })[],
): Promise<void> {
  await db.deleteFrom('assistant_metrics_days').where('org_id', '=', orgId).execute();
  await db.deleteFrom('assistant_metrics_team_days').where('team_id', 'in', db.selectFrom('teams').select('id').where('org_id', '=', orgId)).execute();
  for (let i = 0; i < orgDays.length; i += CHUNK) {
    await db.insertInto('assistant_metrics_days').values(orgDays.slice(i, i + CHUNK).map((day) => ({ org_id: orgId, ...day }))).execute();
  }
  for (let i = 0; i < teamDays.length; i += CHUNK) {
    await db.insertInto('assistant_metrics_team_days').values(teamDays.slice(i, i + CHUNK)).execute();
  }
}

/** How many days the organization and its teams hold. */
export async function countStoredDays(db: Executor, orgId: number): Promise<number> {
  const own = await db.selectFrom('assistant_metrics_days').select((eb) => eb.fn.countAll<number>().as('count')).where('org_id', '=', orgId).executeTakeFirstOrThrow();
  const teams = await db
    .selectFrom('assistant_metrics_team_days')
    .innerJoin('teams', 'teams.id', 'assistant_metrics_team_days.team_id')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('teams.org_id', '=', orgId)
    .executeTakeFirstOrThrow();
  return Number(own.count) + Number(teams.count);
}
