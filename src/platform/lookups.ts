// Lookups by name that every area needs: accounts (users and organizations), repositories, apps, teams.
import type { Executor } from '../db/index.ts';
import type { RepositoryRow } from './representations.ts';
import type { AppRow, UserRow } from './principal.ts';

export async function findAccount(db: Executor, login: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('login_lower', '=', login.toLowerCase()).executeTakeFirst();
}

export async function findRepository(db: Executor, owner: string, name: string): Promise<(RepositoryRow & { owner: UserRow }) | undefined> {
  const account = await findAccount(db, owner);
  if (!account) return undefined;
  const repository = await db
    .selectFrom('repositories')
    .selectAll()
    .where('owner_id', '=', account.id)
    .where('name_lower', '=', name.replace(/\.git$/i, '').toLowerCase())
    .executeTakeFirst();
  return repository ? { ...repository, owner: account } : undefined;
}

export async function findApp(db: Executor, slug: string): Promise<AppRow | undefined> {
  return db.selectFrom('apps').selectAll().where('slug', '=', slug).executeTakeFirst();
}

export async function findEnterprise(db: Executor, slug: string) {
  return db.selectFrom('enterprises').selectAll().where('slug_lower', '=', slug.toLowerCase()).executeTakeFirst();
}

export async function findTeam(db: Executor, orgId: number, slug: string) {
  return db.selectFrom('teams').selectAll().where('org_id', '=', orgId).where('slug', '=', slug.toLowerCase()).executeTakeFirst();
}

/** Whether an integer can be a row id at all (ids are int4 on both engines; PostgreSQL refuses larger values). */
export function isRowId(id: number): boolean {
  return Number.isInteger(id) && id >= 1 && id <= 2 ** 31 - 1;
}
