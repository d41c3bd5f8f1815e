// The typed activity map: every activity a write records (src/activity/outbox.ts), by name, with its
// payload's type, joined from each core home's own map. Consumers (src/core/area.ts `handlers`)
// declare a handler per name, which narrows the payload; raw events (POST /_admin/events) have no
// name and the operator's payload. Most activities are stored rows, dispatched after the write
// commits; those of `AppliedActivityName` are applied by their handlers in the writer's transaction.
import type { ActivityOf, RawActivity } from '../activity/outbox.ts';
import type { AccountActivities } from './accounts/activities.ts';
import type { AppActivities, AppCreatedActivities, InstallationActivities } from './apps/activities.ts';
import type { IssueActivities } from './issues/activities.ts';
import type { AccessActivities, MemberActivities, RepositoryActivities } from './repositories/activities.ts';

/** The activities stored in the outbox: every one is a platform webhook event (`event.action`). */
export type StoredActivities = AccountActivities & IssueActivities & RepositoryActivities & MemberActivities & InstallationActivities & AppActivities;

/** The activities applied in the writer's transaction, with no outbox row. */
export type AppliedActivities = AccessActivities & AppCreatedActivities;

export type AppliedActivityName = keyof AppliedActivities & string;

export type Activities = StoredActivities & AppliedActivities;

/** A row of the outbox as a consumer reads it. */
export type Activity = ActivityOf<StoredActivities> | RawActivity;

/**
 * Every stored activity's name, each once: a name of the map missing here (or one that is not in
 * it) is a type error, so what consumes every activity (webhook deliveries) cannot forget one.
 */
const STORED: { readonly [K in keyof StoredActivities & string]: true } = {
  'user.deleted': true, 'organization.member_added': true, 'organization.member_removed': true, 'team.created': true, 'membership.added': true, 'membership.removed': true,
  'issues.opened': true, 'issues.closed': true, 'issues.reopened': true, 'issues.assigned': true, 'issues.unassigned': true, 'issues.review_requested': true, 'issues.review_request_removed': true,
  'pull_request.opened': true, 'pull_request.closed': true, 'pull_request.reopened': true, 'pull_request.assigned': true, 'pull_request.unassigned': true,
  'pull_request.review_requested': true, 'pull_request.review_request_removed': true, 'issue_comment.created': true,
  'repository.created': true, 'repository.archived': true, 'repository.unarchived': true, 'repository.edited': true, 'repository.publicized': true, 'repository.privatized': true,
  'repository.renamed': true, 'repository.transferred': true, 'repository.deleted': true,
  'member.added': true, 'member.edited': true, 'member.removed': true, team_add: true, 'team.added_to_repository': true, 'team.removed_from_repository': true,
  'installation_repositories.added': true, 'installation_repositories.removed': true, 'installation.created': true, 'installation.suspend': true,
  'installation.unsuspend': true, 'installation.deleted': true, 'installation.new_permissions_accepted': true,
  ping: true,
};

export const STORED_ACTIVITY_NAMES = Object.keys(STORED) as (keyof StoredActivities & string)[];
