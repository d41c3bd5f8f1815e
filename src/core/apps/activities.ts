// The recorders of apps' and installations' activities (their maps: `AppActivities`,
// `InstallationActivities`, src/core/activities.ts).
import { recordActivity, type ActivityRecorder } from '../../activity/outbox.ts';
import type { AppActivities, InstallationActivities } from '../activities.ts';

export const recordAppActivity: ActivityRecorder<AppActivities> = recordActivity;

export const recordInstallationActivity: ActivityRecorder<InstallationActivities> = recordActivity;
