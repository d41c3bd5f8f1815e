// Assistant metrics (closed down): daily aggregates of an organization's or a team's assistant use.
// From the closing date (CODEHOST_ASSISTANT_METRICS_SUNSET, `never` keeps them open) both endpoints
// answer 404 naming the date and the replacement. While open: at most 100 days back, nothing after
// yesterday, only days that ended with five or more licensed members, and only when the
// organization's metrics policy is enabled.
import { Value } from 'typebox/value';
import { findAccount, findTeam, isEnterpriseOwner, lockAccount, organizationEnterpriseId, type UserRow } from '../../core/accounts/store.ts';
import { ApiError, invalidField, notFound } from '../../platform/errors.ts';
import { pageParams, type PageParams } from '../../platform/pagination.ts';
import { checkEntries } from '../../platform/seed.ts';
import { DayRecord, OperatorDay } from './representations.ts';
import * as store from './store.ts';
import type { Scope } from './store.ts';
import { Service } from '../../platform/service.ts';
import { actingUser, actsForOrganization, type Principal, reachesAccount, requirePermittedOn, requireAccess } from '../../core/access/index.ts';

export const METRICS_POLICIES = ['enabled', 'disabled'] as const;
export type MetricsPolicy = (typeof METRICS_POLICIES)[number];

/** A day appears only when at least this many members held an active license at its end. */
export const LICENSED_MINIMUM = 5;
export const HISTORY_DAYS = 100;
export const PAGE_DEFAULTS = { perPage: 100, maxPerPage: 100 };

const DAY_MS = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** `YYYY-MM-DD` that names a real calendar day. */
export function isCalendarDate(text: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return false;
  const [year, month, day] = match.slice(1).map(Number) as [number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

const TIMESTAMP = /^(\d{4}-\d{2}-\d{2})(T(?:[01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d{1,9})?)?)?(Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)?$/i;

/**
 * An ISO 8601 timestamp as epoch milliseconds; a bare date means its start, and a time without a
 * zone is UTC. Anything else is a 422.
 */
function timestamp(text: string, field: string): number {
  const match = TIMESTAMP.exec(text);
  if (match && isCalendarDate(match[1]!) && (match[2] !== undefined || match[3] === undefined)) {
    const ms = Date.parse(`${match[1]}${match[2] ?? 'T00:00:00'}${match[3] ?? 'Z'}`);
    if (!Number.isNaN(ms)) return ms;
  }
  throw invalidField('AssistantMetrics', field, `${field} must be an ISO 8601 timestamp (YYYY-MM-DDTHH:MM:SSZ)`);
}

export class AssistantMetricsService extends Service {
  /** The closing instant (start of the sunset day, UTC), or null when the endpoints stay open. */
  private sunsetMs(): number | null {
    const sunset = this.ctx.config.assistantMetricsSunset;
    return sunset === 'never' ? null : Date.parse(`${sunset}T00:00:00Z`);
  }

  /** The `Sunset` header (HTTP-date) while a closing date is set. */
  sunsetHeaders(): Record<string, string> {
    const at = this.sunsetMs();
    return at === null ? {} : { sunset: new Date(at).toUTCString() };
  }

  /** Throws the closed-down 404 once the clock has reached the closing date. */
  assertOpen(): void {
    const at = this.sunsetMs();
    if (at === null || this.ctx.clock.nowMs() < at) return;
    throw new ApiError(
      404,
      `The assistant metrics API was closed down on ${this.ctx.config.assistantMetricsSunset}. Use the assistant usage metrics API instead.`,
      { headers: this.sunsetHeaders() },
    );
  }

  /**
   * The organization's metrics: for its owners and billing managers, owners of its enterprise, and
   * installations on it. Anyone else sees a 404.
   */
  async organization(principal: Principal, login: string): Promise<Scope> {
    const org = await this.requireOrganization(login);
    if (await actsForOrganization(this.db, principal, org.id, ['owner', 'billing_manager'])) return { orgId: org.id };
    const user = actingUser(principal);
    const enterpriseId = await organizationEnterpriseId(this.db, org.id);
    if (user && enterpriseId !== null && (await isEnterpriseOwner(this.db, enterpriseId, user.id))) {
      if (await reachesAccount(this.db, principal, org.id)) {
        await requirePermittedOn(principal, org.id);
        return { orgId: org.id };
      }
    }
    throw notFound();
  }

  /** A team's metrics: for the owners of the organization holding the team, and installations on it. */
  async team(principal: Principal, login: string, slug: string): Promise<Scope> {
    const org = await this.requireOrganization(login);
    await requireAccess(this.db, principal, ['owner'], { organization: org.id });
    const team = await findTeam(this.db, org.id, slug);
    if (!team) throw notFound();
    return { orgId: org.id, teamId: team.id };
  }

  private async requireOrganization(login: string): Promise<UserRow> {
    const org = await findAccount(this.db, login);
    if (!org || org.type !== 'Organization') throw notFound();
    return org;
  }

  async metrics(
    scope: Scope,
    query: { since?: string; until?: string; page?: number; per_page?: number },
  ): Promise<{ days: DayRecord[]; page: PageParams; total: number }> {
    if ((await store.metricsPolicy(this.db, scope.orgId)) === 'disabled') {
      throw new ApiError(422, 'Assistant usage metrics API setting is disabled at the organization or enterprise level.');
    }
    const todayMs = Math.floor(this.ctx.clock.nowMs() / DAY_MS) * DAY_MS;
    const earliest = dayOf(todayMs - HISTORY_DAYS * DAY_MS);
    const yesterday = dayOf(todayMs - DAY_MS);
    const since = query.since === undefined ? undefined : timestamp(query.since, 'since');
    const until = query.until === undefined ? undefined : timestamp(query.until, 'until');
    if (since !== undefined && dayOf(since) < earliest) {
      throw invalidField('AssistantMetrics', 'since', `since can be at most ${HISTORY_DAYS} days ago (${earliest} or later)`);
    }
    if (since !== undefined && until !== undefined && until < since) {
      throw invalidField('AssistantMetrics', 'until', 'until cannot be before since');
    }
    const from = since === undefined ? earliest : dayOf(since);
    const to = until === undefined || dayOf(until) > yesterday ? yesterday : dayOf(until);
    const page = pageParams(query, PAGE_DEFAULTS);
    const [total, rows] = await Promise.all([
      store.countDays(this.db, scope, from, to, LICENSED_MINIMUM),
      store.pageOfDays(this.db, scope, from, to, LICENSED_MINIMUM, page.perPage, page.offset),
    ]);
    return { days: rows.map((row) => ({ date: row.date, ...JSON.parse(row.metrics) }) as DayRecord), page, total };
  }

  /**
   * Operator surface: the organization's metrics policy and, when `days` is given, all of its day
   * records (the organization's, and its teams' where a record names a team), replacing what was stored.
   */
  async setOperatorData(orgLogin: string, input: { metrics_policy?: MetricsPolicy; days?: unknown[] }): Promise<{ metrics_policy: MetricsPolicy; days: number }> {
    const org = await findAccount(this.db, orgLogin);
    if (!org || org.type !== 'Organization') throw notFound(`Organization not found: ${orgLogin}`);
    const days = input.days === undefined ? undefined : await this.operatorDays(org.id, input.days);
    const now = this.now();
    return this.transaction(async (trx) => {
      // A replacement deletes the stored days and inserts the new ones: two at once would collide.
      await lockAccount(trx, org.id, this.ctx.db.dialect === 'postgres');
      if (input.metrics_policy) await store.setMetricsPolicy(trx, org.id, input.metrics_policy, now);
      if (days) await store.replaceDays(trx, org.id, days.orgDays, days.teamDays);
      return {
        metrics_policy: ((await store.metricsPolicy(trx, org.id)) ?? 'enabled') as MetricsPolicy,
        days: await store.countStoredDays(trx, org.id),
      };
    });
  }

  private async operatorDays(orgId: number, entries: unknown[]) {
    const orgDays: store.StoredDay[] = [];
    const teamDays: (store.StoredDay & { team_id: number })[] = [];
    const seen = new Set<string>();
    const teams = new Map<string, number>();
    for (const [index, day] of checkEntries(OperatorDay, 'days', entries, 'AssistantMetrics').entries()) {
      if (!isCalendarDate(day.date)) throw invalidField('AssistantMetrics', `days[${index}].date`, `days[${index}].date is not a calendar date`);
      const slug = day.team?.toLowerCase();
      if (seen.has(`${slug ?? ''}:${day.date}`)) {
        throw invalidField('AssistantMetrics', `days[${index}].date`, `days[${index}]: ${day.date} appears twice${slug ? ` for team ${slug}` : ''}`);
      }
      seen.add(`${slug ?? ''}:${day.date}`);
      // The stored metrics are the record without its date and without the operator's fields.
      const { date, total_active_users, total_engaged_users, assistant_ide_code_completions, assistant_ide_chat, assistant_dotcom_chat, assistant_dotcom_pull_requests } =
        Value.Clean(DayRecord, Value.Clone(day)) as DayRecord;
      const metrics = { total_active_users, total_engaged_users, assistant_ide_code_completions, assistant_ide_chat, assistant_dotcom_chat, assistant_dotcom_pull_requests };
      const stored = { date, licensed_members: day.licensed_members, metrics: JSON.stringify(metrics) };
      if (slug === undefined) {
        orgDays.push(stored);
        continue;
      }
      if (!teams.has(slug)) {
        const team = await findTeam(this.db, orgId, slug);
        if (!team) throw notFound(`Team not found: ${slug}`);
        teams.set(slug, team.id);
      }
      teamDays.push({ ...stored, team_id: teams.get(slug)! });
    }
    return { orgDays, teamDays };
  }
}
