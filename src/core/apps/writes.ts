// The writes of an installation's lifecycle, for the app (its JWT) and the operator alike: suspend,
// unsuspend, delete. Each is one transaction with its `installation` activity, so the app is told
// exactly when the change commits. What stops at once: the installation's tokens (the token lookup
// reads `suspended_at`; deleted tokens cascade), minting, and deliveries (targets exclude it).
import type { Executor } from '../../db/index.ts';
import { notFound } from '../../platform/errors.ts';
import { isRowId } from '../../platform/schemas.ts';
import { Service } from '../../platform/service.ts';
import { nodeId } from '../../platform/urls.ts';
import { installationRepresentation } from './representations.ts';
import { recordInstallationActivity, type InstallationActivities, type InstallationRepository } from './activities.ts';
import {
  deleteInstallation, findInstallation, installationRepositoryPage, setInstallationSuspended,
  type AccountFacts, type AppRow, type InstallationRow,
} from './store.ts';

/** The most repositories an installation event lists. */
const EVENT_REPOSITORIES = 10_000;

/** The repositories an installation covers now, as its events list them (`repositories`). */
export async function installationRepositories(trx: Executor, installation: InstallationRow, account: Pick<AccountFacts, 'login'>): Promise<InstallationRepository[]> {
  const { repositories } = await installationRepositoryPage(trx, { installationId: installation.id, accountId: installation.account_id, repositoryIds: null }, { offset: 0, limit: EVENT_REPOSITORIES });
  return repositories.map((repository) => ({
    id: repository.id,
    node_id: nodeId('Repository', repository.id),
    name: repository.name,
    full_name: `${account.login}/${repository.name}`,
    private: repository.visibility !== 'public',
  }));
}

/** The lifecycle operations, as the app's API and the operator surface both route them (after the installation's path). */
export const INSTALLATION_LIFECYCLE = [
  { method: 'PUT', path: '/suspended', action: 'suspend', summary: 'Suspend an app installation' },
  { method: 'DELETE', path: '/suspended', action: 'unsuspend', summary: 'Unsuspend an app installation' },
  { method: 'DELETE', path: '', action: 'delete', summary: 'Delete an installation for the authenticated app' },
] as const;

export class InstallationWrites extends Service {
  /** Suspends it; suspending a suspended installation changes nothing. */
  async suspend(app: AppRow, installationId: number): Promise<void> {
    await this.change(app, installationId, async (trx, installation) =>
      (await setInstallationSuspended(trx, installation.id, this.now(), this.now())) ? 'installation.suspend' : null);
  }

  async unsuspend(app: AppRow, installationId: number): Promise<void> {
    await this.change(app, installationId, async (trx, installation) =>
      (await setInstallationSuspended(trx, installation.id, null, this.now())) ? 'installation.unsuspend' : null);
  }

  async delete(app: AppRow, installationId: number): Promise<void> {
    // Deleted by another request since it was found: a 404, as it would be a moment later.
    await this.change(app, installationId, async (trx, installation) => {
      if (!(await deleteInstallation(trx, installation.id))) throw notFound();
      return 'installation.deleted';
    });
  }

  /** The app's installation (else 404), changed and its activity recorded in one transaction. */
  private async change(
    app: AppRow,
    installationId: number,
    apply: (trx: Executor, installation: InstallationRow) => Promise<keyof InstallationActivities | null>,
  ): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const found = isRowId(installationId) ? await findInstallation(trx, app.id, installationId) : undefined;
      if (!found) throw notFound();
      // Listed before the change: a deleted installation's were those it covered.
      const repositories = await installationRepositories(trx, found.installation, found.account);
      const whole = installationRepresentation(this.ctx.urls, app, found.installation, found.account);
      const name = await apply(trx, found.installation);
      if (name === null) return;
      await recordInstallationActivity(this.ctx, trx, {
        name,
        account_id: found.installation.account_id,
        // The sender: the account when it is a user (these writes do not say who acted).
        actor_id: found.account.type === 'User' ? found.account.id : null,
        // The whole installation as it was: a dispatch that finds the row gone (deleted since) sends this.
        payload: { installation: whole, repositories },
      });
    });
  }
}
