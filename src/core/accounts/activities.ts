// The recorder of accounts' activities (their map: `AccountActivities`, src/core/activities.ts).
import { recordActivity, type ActivityRecorder } from '../../activity/outbox.ts';
import type { AccountActivities } from '../activities.ts';

export const recordAccountActivity: ActivityRecorder<AccountActivities> = recordActivity;
