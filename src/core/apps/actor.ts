// Who a client's write inside a repository is by: the token's user, or an installation's app as its
// bot account (`<slug>[bot]`, type Bot), made on the app's first write. Issues, comments, labels,
// reactions, statuses and check runs are all written by this account.
import type { Executor } from '../../db/index.ts';
import { notFound } from '../../platform/errors.ts';
import { findAppBy, type Principal } from '../access/index.ts';
import { botAccount, findAccount, type UserRow } from '../accounts/store.ts';

export async function actingAccount(db: Executor, principal: Principal, now: string): Promise<UserRow>;
/** `make` false: undefined while the app has written nothing (its bot account not yet made). */
export async function actingAccount(db: Executor, principal: Principal, now: string, make: false): Promise<UserRow | undefined>;
export async function actingAccount(db: Executor, principal: Principal, now: string, make = true): Promise<UserRow | undefined> {
  if (principal.type === 'user') return principal.user;
  if (principal.type !== 'installation') throw new Error(`a ${principal.type} caller writes nothing: its route's rule admits no such caller`);
  const app = await findAppBy(db, { id: principal.appId });
  if (!app) throw notFound();
  return make ? botAccount(db, app.slug, now) : findAccount(db, `${app.slug}[bot]`);
}
