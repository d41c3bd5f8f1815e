// The writes of accounts' lifecycle (spec/admin-api.md "Lifecycle"): suspend, unsuspend and delete a user.
// A suspended user's every credential is refused on its next request (src/core/callers/principal.ts
// reads the flag with the token, in the same round trip), with the platform's 403.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Executor } from '../../db/index.ts';
import { invalidField, notFound } from '../../platform/errors.ts';
import { Service } from '../../platform/service.ts';
import { recordAccountActivity } from './activities.ts';
import { deleteAccount, findAccount, ghostAccount, lockAccount, ownedGitPaths, reassignAuthorship, setSuspended, solelyOwnedOrganizations, type UserRow } from './store.ts';

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

  /**
   * Deletes the user in one transaction: the row, and with it (foreign keys cascade) their
   * repositories and everything in them, org and team memberships, collaborator grants, tokens of
   * every kind, installations on their account, notification threads and subscriptions, migrations.
   * What they wrote on others' repositories stays, written by `ghost` (as on the platform). The sole
   * owner of an organization is refused (422), as the platform refuses. Files go after the commit:
   * git data here, migration archives by user-migrations on the `user.deleted` activity.
   */
  async delete(login: string): Promise<void> {
    const user = await requireAccount(this.db, login, 'user');
    const gitPaths = await this.db.transaction().execute(async (trx) => {
      await lockAccount(trx, user.id, this.ctx.db.dialect === 'postgres');
      if (!(await findAccount(trx, login))) throw notFound(`User not found: ${login}`);
      const owned = await solelyOwnedOrganizations(trx, user.id);
      if (owned.length) {
        throw invalidField('User', 'login', `${user.login} is the only owner of ${owned.join(', ')}: add another owner or delete the organization first`);
      }
      const ghost = await ghostAccount(trx, this.now());
      if (ghost.id === user.id) throw invalidField('User', 'login', 'the ghost user cannot be deleted');
      await reassignAuthorship(trx, user.id, ghost.id);
      const paths = await ownedGitPaths(trx, user.id);
      await deleteAccount(trx, user.id);
      await recordAccountActivity(this.ctx, trx, { name: 'user.deleted', payload: { user: { id: user.id, login: user.login } } });
      return paths;
    });
    for (const path of gitPaths) {
      await rm(join(this.ctx.config.dataDir, path), { recursive: true, force: true }).catch((err: unknown) =>
        this.ctx.log.error({ err, path }, 'could not remove the git data of a deleted user'),
      );
    }
  }
}
