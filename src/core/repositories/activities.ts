// The recorders of repositories' activities (their maps: `RepositoryActivities`, `MemberActivities`,
// src/core/activities.ts).
import { recordActivity, type ActivityRecorder } from '../../activity/outbox.ts';
import type { MemberActivities, RepositoryActivities } from '../activities.ts';

export const recordMemberActivity: ActivityRecorder<MemberActivities> = recordActivity;

export const recordRepositoryActivity: ActivityRecorder<RepositoryActivities> = recordActivity;
