// The activities of installations (the platform's `installation` webhook event). The row has the
// installation's `account_id`; the payload names the installation and its app, so the event reaches
// the app even once the installation is gone. Every app receives its installations' events without
// subscribing (src/areas/app-webhooks/engine.ts).
import { recordActivity, type ActivityRecorder } from '../../activity/outbox.ts';

export type InstallationEvent = { installation: { id: number; app_id: number } };

export type InstallationActivities = {
  'installation.suspend': InstallationEvent;
  'installation.unsuspend': InstallationEvent;
  'installation.deleted': InstallationEvent;
};

export const recordInstallationActivity: ActivityRecorder<InstallationActivities> = recordActivity;
