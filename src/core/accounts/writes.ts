// The writes of accounts' lifecycle (spec/admin-api.md "Lifecycle"): suspend and unsuspend a user.
// A suspended user's every credential is refused on its next request (src/core/callers/principal.ts
// reads the flag with the token, in the same round trip), with the platform's 403.
import type { Executor } from '../../db/index.ts';
import { notFound } from '../../platform/errors.ts';
import { Service } from '../../platform/service.ts';
import { findAccount, setSuspended, type UserRow } from './store.ts';

/** The account of `login` (a user or an organization, or either): 404 naming it when there is none. */
export async function requireAccount(db: Executor, login: string, type?: 'user' | 'org'): Promise<UserRow> {
  const account = await findAccount(db, login);
  if (!account || (type === 'org' && account.type !== 'Organization') || (type === 'user' && account.type === 'Organization')) {
    throw notFound(`${type === 'org' ? 'Organization' : 'User'} not found: ${login}`);
  }
  return account;
}

export class AccountWrites extends Service {
  /** Suspends the user (again: the time and reason are the new ones). */
  async suspend(login: string, reason: string | null): Promise<void> {
    const user = await requireAccount(this.db, login, 'user');
    await setSuspended(this.db, user.id, { suspended_at: this.now(), suspended_reason: reason, updated_at: this.now() });
  }

  async unsuspend(login: string): Promise<void> {
    const user = await requireAccount(this.db, login, 'user');
    await setSuspended(this.db, user.id, { suspended_at: null, suspended_reason: null, updated_at: this.now() });
  }
}
