// The activities of installations (the platform's `installation` webhook event). The row has the
// installation's `account_id`; the payload names the installation and its app, so the event reaches
// the app even once the installation is gone. Every app receives its installations' events without
// subscribing (src/areas/app-webhooks/engine.ts).
import { recordActivity, type ActivityRecorder } from '../../activity/outbox.ts';
import type { AppRow } from './store.ts';

/** A repository as installation events list it (the platform's `repositories` member). */
export type InstallationRepository = { id: number; node_id: string; name: string; full_name: string; private: boolean };

/**
 * `repositories`: what the installation covered when the write committed (all of its account's, or
 * its selected ones); absent on rows recorded before rows kept it. A deleted installation's row
 * keeps its whole representation (`installation`), which the tables no longer have at dispatch.
 */
export type InstallationEvent = { installation: { id: number; app_id: number } & Record<string, unknown>; repositories?: InstallationRepository[] };

/**
 * An installation's repositories changed (PATCH /_admin/apps/{app_slug}/installations/{id}
 * `repositories`): the platform's `installation_repositories` body, `requester` null (no one asked
 * the account's owner for it); `added` and `removed` are two activities when a change does both.
 */
export type InstallationRepositoriesEvent = {
  installation: { id: number; app_id: number };
  repository_selection: 'all' | 'selected';
  repositories_added: InstallationRepository[];
  repositories_removed: InstallationRepository[];
  requester: null;
};

export type InstallationActivities = {
  'installation_repositories.added': InstallationRepositoriesEvent;
  'installation_repositories.removed': InstallationRepositoriesEvent;
  /** Installing an app (POST /_admin/apps/{app_slug}/installations); the sender is who installed it. */
  'installation.created': InstallationEvent;
  'installation.suspend': InstallationEvent;
  'installation.unsuspend': InstallationEvent;
  'installation.deleted': InstallationEvent;
  /**
   * The account accepted more than its installation held (PATCH /_admin/apps/{app_slug}/installations/{id}
   * `permissions` adding a permission or raising one to `write`): the installation with its new grant.
   */
  'installation.new_permissions_accepted': InstallationEvent;
};

/**
 * An app's own webhook (its URL first set, or changed: PATCH /app/hook/config): the platform's
 * `ping`, to that app alone, with no installation; the hook is rendered when it is delivered.
 */
export type AppActivities = {
  ping: { app_id: number; hook_id: number };
};

export const recordAppActivity: ActivityRecorder<AppActivities> = recordActivity;

export const recordInstallationActivity: ActivityRecorder<InstallationActivities> = recordActivity;

/**
 * An app created on the operator surface: applied in the creating transaction (a failure undoes the
 * app), with no outbox row, since `input` is the whole create body and its `webhook` secret must
 * never travel in one.
 */
export type AppCreatedActivities = {
  'app.created': { app: AppRow; input: Record<string, unknown> };
};
