// The recorder of commits' activities (their map: `CommitActivities`, src/core/activities.ts).
import { recordActivity, type ActivityRecorder } from '../../activity/outbox.ts';
import type { CommitActivities } from '../activities.ts';

export const recordCommitActivity: ActivityRecorder<CommitActivities> = recordActivity;
