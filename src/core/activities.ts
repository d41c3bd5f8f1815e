// The typed activity map: every activity a write records (src/activity/outbox.ts), by name, with its
// payload's type, joined from each core home's own map. Consumers (src/core/area.ts `onActivity`)
// receive `Activity`: switching on `name` narrows `payload`; raw events (POST /_admin/events) have
// no name and the operator's payload.
import type { ActivityOf, RawActivity } from '../activity/outbox.ts';
import type { AccountActivities } from './accounts/activities.ts';
import type { AppActivities, InstallationActivities } from './apps/activities.ts';
import type { IssueActivities } from './issues/activities.ts';
import type { MemberActivities, RepositoryActivities } from './repositories/activities.ts';

export type Activities = AccountActivities & IssueActivities & RepositoryActivities & MemberActivities & InstallationActivities & AppActivities;

export type Activity = ActivityOf<Activities> | RawActivity;
