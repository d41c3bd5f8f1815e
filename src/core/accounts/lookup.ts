// What every writer and operator route looks up before it acts: an account, some users, a team,
// each by name, or a 404 naming what is missing. Below the writes (any resource's writes may use them).
import type { Executor } from '../../db/index.ts';
import { notFound } from '../../platform/errors.ts';
import { findAccount, findTeam, type UserRow } from './store.ts';

/** The account of `login` (a user or an organization, or either): 404 naming it when there is none. */
export async function requireAccount(db: Executor, login: string, type?: 'user' | 'org'): Promise<UserRow> {
  const account = await findAccount(db, login);
  if (!account || (type === 'org' && account.type !== 'Organization') || (type === 'user' && account.type === 'Organization')) {
    throw notFound(`${type === 'org' ? 'Organization' : 'User'} not found: ${login}`);
  }
  return account;
}

/** The users of these logins, in order (404 for the first that is not one). */
export async function requireUsers(db: Executor, logins: readonly string[] = []): Promise<UserRow[]> {
  const users: UserRow[] = [];
  for (const login of logins) users.push(await requireAccount(db, login, 'user'));
  return users;
}

/** An organization's team by its slug, with the organization. */
export async function requireTeam(db: Executor, orgLogin: string, slug: string) {
  const org = await requireAccount(db, orgLogin, 'org');
  const team = await findTeam(db, org.id, slug);
  if (!team) throw notFound(`Team not found: ${orgLogin}/${slug}`);
  return { org, team };
}
