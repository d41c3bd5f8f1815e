// The activities of accounts. `user.deleted` is recorded with the deletion (in its transaction), so
// what holds files of the user's outside the database (user-migrations' archives) removes them once
// the deletion has committed, and again when the process died in between (the outbox job runs again).
import { recordActivity, type ActivityRecorder } from '../../activity/outbox.ts';

/** An organization membership as the platform's `organization` events show it (`membership`). */
export type OrgMembership = { url: string; state: 'active'; role: 'admin' | 'member' | 'billing_manager'; organization_url: string; user: object };

/**
 * Organization and team activity (rows have the organization's `account_id`): the platform's
 * `organization` (`member_added`, `member_removed`: the membership kept as it was, since a removed
 * one is gone at dispatch), `team` (`created`) and `membership` (a team's members: `scope` team),
 * who and which team named by id and rendered when delivered.
 */
export type AccountActivities = {
  'user.deleted': { user: { id: number; login: string } };
  'organization.member_added': { membership: OrgMembership };
  'organization.member_removed': { membership: OrgMembership };
  'team.created': { team_id: number };
  'membership.added': { member_id: number; team_id: number };
  'membership.removed': { member_id: number; team_id: number };
};

export const recordAccountActivity: ActivityRecorder<AccountActivities> = recordActivity;
