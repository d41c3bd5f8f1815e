// Accounts: users and organizations (one id and login space), enterprises, teams and memberships.
import type { Executor } from '../../db/index.ts';
import type { UserRow } from '../callers/principal.ts';

export type OrgRole = 'owner' | 'member' | 'security_manager' | 'billing_manager';

export async function findAccount(db: Executor, login: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('login_lower', '=', login.toLowerCase()).executeTakeFirst();
}

export async function findEnterprise(db: Executor, slug: string) {
  return db.selectFrom('enterprises').selectAll().where('slug_lower', '=', slug.toLowerCase()).executeTakeFirst();
}

export async function findTeam(db: Executor, orgId: number, slug: string) {
  return db.selectFrom('teams').selectAll().where('org_id', '=', orgId).where('slug', '=', slug.toLowerCase()).executeTakeFirst();
}

export async function orgRoles(db: Executor, orgId: number, userId: number): Promise<Set<OrgRole>> {
  const rows = await db.selectFrom('org_memberships').select('role').where('org_id', '=', orgId).where('user_id', '=', userId).execute();
  return new Set(rows.map((r) => r.role as OrgRole));
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

/** Users (`User` and `Bot`) or organizations, oldest first, one page at a time, with the total. */
export async function listAccounts(db: Executor, kind: 'users' | 'orgs', page: { limit: number; offset: number }): Promise<{ rows: UserRow[]; total: number }> {
  const types = kind === 'orgs' ? ['Organization'] : ['User', 'Bot'];
  const rows = await db.selectFrom('users').selectAll().where('type', 'in', types).orderBy('id').limit(page.limit).offset(page.offset).execute();
  const count = await db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).where('type', 'in', types).executeTakeFirstOrThrow();
  return { rows, total: Number(count.n) };
}
