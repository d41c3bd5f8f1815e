// The writes of an installation's lifecycle, for the app (its JWT) and the operator alike: suspend,
// unsuspend, delete. Each is one transaction with its `installation` activity, so the app is told
// exactly when the change commits. What stops at once: the installation's tokens (the token lookup
// reads `suspended_at`; deleted tokens cascade), minting, and deliveries (targets exclude it).
import type { Executor } from '../../db/index.ts';
import { notFound } from '../../platform/errors.ts';
import { isRowId } from '../../platform/schemas.ts';
import { Service } from '../../platform/service.ts';
import { recordInstallationActivity, type InstallationActivities } from './activities.ts';
import { deleteInstallation, findInstallation, setInstallationSuspended, type AppRow, type InstallationRow } from './store.ts';

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
      const name = await apply(trx, found.installation);
      if (name === null) return;
      await recordInstallationActivity(this.ctx, trx, {
        name,
        account_id: found.installation.account_id,
        payload: { installation: { id: found.installation.id, app_id: app.id } },
      });
    });
  }
}
