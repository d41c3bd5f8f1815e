// The activities of accounts. `user.deleted` is recorded with the deletion (in its transaction), so
// what holds files of the user's outside the database (user-migrations' archives) removes them once
// the deletion has committed, and again when the process died in between (the outbox job runs again).
import { recordActivity, type ActivityRecorder } from '../../activity/outbox.ts';

export type AccountActivities = {
  'user.deleted': { user: { id: number; login: string } };
};

export const recordAccountActivity: ActivityRecorder<AccountActivities> = recordActivity;
