// Accounts: users and organizations (one id and login space), enterprises, teams and memberships.
import type { Executor } from '../../db/index.ts';
import type { Insertable, Selectable } from 'kysely';
import type { EnterprisesTable, TeamsTable, UsersTable } from '../../db/tables/accounts.ts';
import { orgRoles, type OrgRole } from '../access/index.ts';

export type UserRow = Selectable<UsersTable>;
export type TeamRow = Selectable<TeamsTable>;

export async function findAccount(db: Executor, login: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('login_lower', '=', login.toLowerCase()).executeTakeFirst();
}

export async function findEnterprise(db: Executor, slug: string) {
  return db.selectFrom('enterprises').selectAll().where('slug_lower', '=', slug.toLowerCase()).executeTakeFirst();
}

export type EnterpriseRow = Selectable<EnterprisesTable>;

/** The enterprise of an organization, if it belongs to one. */
export async function findOrganizationEnterprise(db: Executor, orgId: number): Promise<EnterpriseRow | undefined> {
  return db
    .selectFrom('organizations')
    .innerJoin('enterprises', 'enterprises.id', 'organizations.enterprise_id')
    .selectAll('enterprises')
    .where('organizations.id', '=', orgId)
    .executeTakeFirst();
}

export async function findTeam(db: Executor, orgId: number, slug: string) {
  return db.selectFrom('teams').selectAll().where('org_id', '=', orgId).where('slug', '=', slug.toLowerCase()).executeTakeFirst();
}

/** Users by lower-cased login (organizations are not users here). */
export async function usersByLogin(db: Executor, logins: readonly string[]): Promise<UserRow[]> {
  if (!logins.length) return [];
  return db.selectFrom('users').selectAll().where('login_lower', 'in', logins.map((l) => l.toLowerCase())).where('type', '!=', 'Organization').execute();
}

/** Teams named `org/slug`; unknown ones are left out. */
export async function teamsBySlug(db: Executor, names: readonly { org: string; slug: string }[]): Promise<TeamRow[]> {
  const teams: TeamRow[] = [];
  for (const { org, slug } of names) {
    const team = await db
      .selectFrom('teams')
      .innerJoin('users', 'users.id', 'teams.org_id')
      .selectAll('teams')
      .where('users.login_lower', '=', org.toLowerCase())
      .where('teams.slug', '=', slug.toLowerCase())
      .executeTakeFirst();
    if (team) teams.push(team);
  }
  return teams;
}

export async function usersById(db: Executor, ids: readonly number[]): Promise<UserRow[]> {
  if (!ids.length) return [];
  const rows = await db.selectFrom('users').selectAll().where('id', 'in', ids).execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => (byId.has(id) ? [byId.get(id)!] : []));
}

export async function insertAccount(db: Executor, values: Insertable<UsersTable>): Promise<UserRow> {
  return db.insertInto('users').values(values).returningAll().executeTakeFirstOrThrow();
}

/**
 * An app's bot account (`<slug>[bot]`, type `Bot`): who an installation's writes are by, as on the
 * platform. Made on its first write and kept; no user can take the login (logins have no brackets).
 * Two first writes at once make one: the second's insert does nothing and both read the one row.
 */
export async function botAccount(db: Executor, appSlug: string, now: string): Promise<UserRow> {
  const login = `${appSlug}[bot]`;
  await db.insertInto('users')
    .values({ login, login_lower: login.toLowerCase(), type: 'Bot', name: null, email: null, site_admin: 0, created_at: now, updated_at: now })
    .onConflict((c) => c.column('login_lower').doNothing())
    .execute();
  return db.selectFrom('users').selectAll().where('login_lower', '=', login.toLowerCase()).executeTakeFirstOrThrow();
}

/** An organization: its account row and its organization row (the enterprise it belongs to). */
export async function insertOrganization(trx: Executor, values: Insertable<UsersTable>, enterpriseId: number | null): Promise<UserRow> {
  const org = await insertAccount(trx, values);
  await trx.insertInto('organizations').values({ id: org.id, enterprise_id: enterpriseId }).execute();
  return org;
}

export async function insertEnterprise(db: Executor, values: Insertable<EnterprisesTable>) {
  return db.insertInto('enterprises').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function addEnterpriseMember(db: Executor, enterpriseId: number, userId: number, role: 'owner' | 'member'): Promise<void> {
  await db.insertInto('enterprise_members').values({ enterprise_id: enterpriseId, user_id: userId, role }).onConflict((oc) => oc.doNothing()).execute();
}

/** Adds one role to a user's membership of an organization (roles already held stay). */
export async function addOrgMembership(db: Executor, orgId: number, userId: number, role: OrgRole): Promise<void> {
  await db.insertInto('org_memberships').values({ org_id: orgId, user_id: userId, role }).onConflict((oc) => oc.doNothing()).execute();
}

export async function insertTeam(db: Executor, values: Insertable<TeamsTable>): Promise<TeamRow> {
  return db.insertInto('teams').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function findAccountById(db: Executor, id: number): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findTeamById(db: Executor, id: number): Promise<TeamRow | undefined> {
  return db.selectFrom('teams').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Of some team ids, those of teams of the organization. */
export async function teamIdsOf(db: Executor, orgId: number, teamIds: readonly number[]): Promise<Set<number>> {
  if (!teamIds.length) return new Set();
  const rows = await db.selectFrom('teams').select('id').where('org_id', '=', orgId).where('id', 'in', [...teamIds]).execute();
  return new Set(rows.map((row) => row.id));
}

/** The enterprise an organization belongs to, if any. */
export async function organizationEnterpriseId(db: Executor, orgId: number): Promise<number | null> {
  const row = await db.selectFrom('organizations').select('enterprise_id').where('id', '=', orgId).executeTakeFirst();
  return row?.enterprise_id ?? null;
}

export async function enterpriseOrganizationIds(db: Executor, enterpriseId: number): Promise<number[]> {
  return (await db.selectFrom('organizations').select('id').where('enterprise_id', '=', enterpriseId).execute()).map((row) => row.id);
}

/** Whether a user belongs to an enterprise: as one of its members, or as a member of one of its organizations. */
export async function isEnterpriseMember(db: Executor, enterpriseId: number, userId: number): Promise<boolean> {
  const direct = await db.selectFrom('enterprise_members').select('user_id').where('enterprise_id', '=', enterpriseId).where('user_id', '=', userId).executeTakeFirst();
  if (direct) return true;
  const throughOrganization = await db
    .selectFrom('org_memberships')
    .innerJoin('organizations', 'organizations.id', 'org_memberships.org_id')
    .select('org_memberships.user_id')
    .where('organizations.enterprise_id', '=', enterpriseId)
    .where('org_memberships.user_id', '=', userId)
    .executeTakeFirst();
  return throughOrganization !== undefined;
}

export async function isEnterpriseOwner(db: Executor, enterpriseId: number, userId: number): Promise<boolean> {
  const row = await db
    .selectFrom('enterprise_members')
    .select('user_id')
    .where('enterprise_id', '=', enterpriseId)
    .where('user_id', '=', userId)
    .where('role', '=', 'owner')
    .executeTakeFirst();
  return row !== undefined;
}

/** An account's repositories counted by visibility (one query). */
export async function repositoryCountsOf(db: Executor, accountId: number): Promise<{ public_repos: number; private_repos: number }> {
  const rows = await db
    .selectFrom('repositories')
    .select(['visibility', (eb) => eb.fn.countAll<number>().as('n')])
    .where('owner_id', '=', accountId)
    .groupBy('visibility')
    .execute();
  const count = (pick: (visibility: string) => boolean) => rows.filter((r) => pick(r.visibility)).reduce((sum, r) => sum + Number(r.n), 0);
  return { public_repos: count((v) => v === 'public'), private_repos: count((v) => v !== 'public') };
}

export async function teamMemberCount(db: Executor, teamId: number): Promise<number> {
  const row = await db.selectFrom('team_members').select((eb) => eb.fn.countAll<number>().as('n')).where('team_id', '=', teamId).executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Locks an account's row until the transaction ends (PostgreSQL; SQLite runs one transaction at a
 * time): changes that read and then write what hangs off the account apply one after the other.
 * FOR NO KEY UPDATE, so rows that only refer to the account can still be inserted meanwhile.
 */
export async function lockAccount(trx: Executor, accountId: number, postgres: boolean): Promise<void> {
  if (postgres) await trx.selectFrom('users').select('id').where('id', '=', accountId).forNoKeyUpdate().execute();
}

/** The roles a user's organization membership is made of: `owner` or `member`, which replace each other. */
export const BASE_ORG_ROLES = ['owner', 'member'] as const satisfies readonly OrgRole[];

/**
 * Gives a user a role in an organization. `owner` and `member` replace each other; the manager roles
 * are held beside them. Returns the roles the user then holds.
 */
export async function setOrgRole(db: Executor, orgId: number, userId: number, role: OrgRole): Promise<Set<OrgRole>> {
  if ((BASE_ORG_ROLES as readonly string[]).includes(role)) {
    await db.deleteFrom('org_memberships').where('org_id', '=', orgId).where('user_id', '=', userId).where('role', 'in', BASE_ORG_ROLES).where('role', '<>', role).execute();
  }
  await db.insertInto('org_memberships').values({ org_id: orgId, user_id: userId, role }).onConflict((oc) => oc.doNothing()).execute();
  return orgRoles(db, orgId, userId);
}

/** Takes a user out of an organization: every role, and every team of the organization; returns those teams' ids. */
export async function removeFromOrganization(db: Executor, orgId: number, userId: number): Promise<number[]> {
  await db.deleteFrom('org_memberships').where('org_id', '=', orgId).where('user_id', '=', userId).execute();
  const teams = await db
    .deleteFrom('team_members')
    .where('user_id', '=', userId)
    .where('team_id', 'in', (eb) => eb.selectFrom('teams').select('id').where('org_id', '=', orgId))
    .returning('team_id')
    .execute();
  return teams.map((row) => row.team_id);
}

/** Whether the user was added (false: already a member). */
export async function addTeamMember(db: Executor, teamId: number, userId: number): Promise<boolean> {
  const added = await db.insertInto('team_members').values({ team_id: teamId, user_id: userId }).onConflict((oc) => oc.doNothing()).returning('user_id').executeTakeFirst();
  return added !== undefined;
}

/** Whether the user was a member. */
export async function removeTeamMember(db: Executor, teamId: number, userId: number): Promise<boolean> {
  const removed = await db.deleteFrom('team_members').where('team_id', '=', teamId).where('user_id', '=', userId).returning('user_id').executeTakeFirst();
  return removed !== undefined;
}

export async function teamMemberIds(db: Executor, teamId: number): Promise<number[]> {
  return (await db.selectFrom('team_members').select('user_id').where('team_id', '=', teamId).execute()).map((r) => r.user_id);
}

/** Users (`User` and `Bot`) or organizations, oldest first, one page at a time, with the total. */
export async function listAccounts(db: Executor, kind: 'users' | 'orgs', page: { limit: number; offset: number }): Promise<{ rows: UserRow[]; total: number }> {
  const types = kind === 'orgs' ? ['Organization'] : ['User', 'Bot'];
  const rows = await db.selectFrom('users').selectAll().where('type', 'in', types).orderBy('id').limit(page.limit).offset(page.offset).execute();
  const count = await db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).where('type', 'in', types).executeTakeFirstOrThrow();
  return { rows, total: Number(count.n) };
}

/** Teams by id (one query); unknown ids are left out. */
export async function teamsById(db: Executor, ids: readonly number[]): Promise<TeamRow[]> {
  if (!ids.length) return [];
  return db.selectFrom('teams').selectAll().where('id', 'in', [...new Set(ids)]).execute();
}

/** The roles that make a user a member of an organization (billing managers are not members). */
export const MEMBER_ROLES = ['owner', 'member', 'security_manager'] as const satisfies readonly OrgRole[];

/** The organizations a user is a member of (any of MEMBER_ROLES), by login (one query). */
export async function organizationsOfMember(db: Executor, userId: number): Promise<UserRow[]> {
  return db
    .selectFrom('users')
    .selectAll()
    .where('type', '=', 'Organization')
    .where('id', 'in', (eb) => eb.selectFrom('org_memberships').select('org_id').where('user_id', '=', userId).where('role', 'in', MEMBER_ROLES))
    .orderBy('login_lower')
    .execute();
}

/** Of some organizations, those a user is a member of (one query). */
export async function memberOrganizationIds(db: Executor, userId: number, orgIds: readonly number[]): Promise<Set<number>> {
  if (!orgIds.length) return new Set();
  const rows = await db
    .selectFrom('org_memberships')
    .select('org_id')
    .where('user_id', '=', userId)
    .where('role', 'in', MEMBER_ROLES)
    .where('org_id', 'in', [...new Set(orgIds)])
    .execute();
  return new Set(rows.map((r) => r.org_id));
}

/** Sets or clears a user's suspension. */
export async function setSuspended(db: Executor, userId: number, values: { suspended_at: string | null; suspended_reason: string | null; updated_at: string }): Promise<void> {
  await db.updateTable('users').set(values).where('id', '=', userId).execute();
}

/** The organizations whose only owner is `userId` (deleting them would leave the organization without one). */
export async function solelyOwnedOrganizations(db: Executor, userId: number): Promise<string[]> {
  const rows = await db
    .selectFrom('org_memberships as mine')
    .innerJoin('users as org', 'org.id', 'mine.org_id')
    .select('org.login')
    .where('mine.user_id', '=', userId)
    .where('mine.role', '=', 'owner')
    .where((eb) => eb.not(eb.exists(
      eb.selectFrom('org_memberships as other').select('other.user_id')
        .whereRef('other.org_id', '=', 'mine.org_id')
        .where('other.role', '=', 'owner')
        .where('other.user_id', '!=', userId),
    )))
    .orderBy('org.login')
    .execute();
  return rows.map((row) => row.login);
}

/** The login shown, as on the platform, for what a deleted user wrote. */
export const GHOST_LOGIN = 'ghost';

/** The `ghost` account (made on first use): what deleted users wrote is theirs. */
export async function ghostAccount(db: Executor, now: string): Promise<UserRow> {
  await db
    .insertInto('users')
    .values({ login: GHOST_LOGIN, login_lower: GHOST_LOGIN, type: 'User', name: 'Deleted user', email: null, site_admin: 0, created_at: now, updated_at: now })
    .onConflict((oc) => oc.column('login_lower').doNothing())
    .execute();
  return (await findAccount(db, GHOST_LOGIN))!;
}

/** Deletes an account row; its repositories, memberships, tokens, threads and migrations go with it (foreign keys cascade). */
export async function deleteAccount(db: Executor, accountId: number): Promise<void> {
  await db.deleteFrom('users').where('id', '=', accountId).execute();
}

/** What `fromId` wrote (issues, comments, timeline events, reactions) becomes `toId`'s: a deleted user's writing is the ghost's. */
export async function reassignAuthorship(db: Executor, fromId: number, toId: number): Promise<void> {
  await db.updateTable('issues').set({ author_id: toId }).where('author_id', '=', fromId).execute();
  await db.updateTable('issue_comments').set({ author_id: toId }).where('author_id', '=', fromId).execute();
  await db.updateTable('issue_events').set({ actor_id: toId }).where('actor_id', '=', fromId).execute();
  await db.updateTable('commit_statuses').set({ creator_id: toId }).where('creator_id', '=', fromId).execute();
  await db.updateTable('pull_request_reviews').set({ user_id: toId }).where('user_id', '=', fromId).execute();
  await reassignReactions(db, fromId, toId);
}

/**
 * `fromId`'s reactions become `toId`'s. Where `toId` already has that reaction on that subject (a
 * user deleted before reacted the same), the one it has stands for both: a user reacts once with each content.
 */
async function reassignReactions(db: Executor, fromId: number, toId: number): Promise<void> {
  await db.deleteFrom('reactions')
    .where('user_id', '=', fromId)
    .where((eb) => eb.exists(eb.selectFrom('reactions as held')
      .select('held.id')
      .where('held.user_id', '=', toId)
      .whereRef('held.content', '=', 'reactions.content')
      .where((inner) => inner.or([inner('held.issue_id', '=', inner.ref('reactions.issue_id')), inner('held.comment_id', '=', inner.ref('reactions.comment_id'))]))))
    .execute();
  await db.updateTable('reactions').set({ user_id: toId }).where('user_id', '=', fromId).execute();
}

/** One page of an organization's teams, oldest first, with the total. */
export async function listTeams(db: Executor, orgId: number, page: { limit: number; offset: number }): Promise<{ rows: TeamRow[]; total: number }> {
  const [rows, count] = await Promise.all([
    db.selectFrom('teams').selectAll().where('org_id', '=', orgId).orderBy('id').limit(page.limit).offset(page.offset).execute(),
    db.selectFrom('teams').select((eb) => eb.fn.countAll<number>().as('n')).where('org_id', '=', orgId).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}
