// The typed activity map: every activity a write records (src/activity/outbox.ts), by name, with its
// payload's type, one section per core home, joined at the end. It stands beneath every home and
// imports none: each home binds its recorder to its own section (its activities.ts), and consumers
// (src/core/area.ts `handlers`) declare a handler per name, which narrows the payload; raw events
// (POST /_admin/events) have no name and the operator's payload. Most activities are stored rows,
// dispatched after the write commits; those of `AppliedActivityName` are applied by their handlers
// in the writer's transaction.
import type { Selectable } from 'kysely';
import type { ActivityOf, RawActivity } from '../activity/outbox.ts';
import type { AppsTable } from '../db/tables/apps.ts';

// ---- accounts (src/core/accounts/activities.ts records them) ----
// `user.deleted` is recorded with the deletion (in its transaction), so what holds files of the
// user's outside the database (user-migrations' archives) removes them once the deletion has
// committed, and again when the process died in between (the outbox job runs again).

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

// ---- repositories (src/core/repositories/activities.ts records them) ----
// The platform's `repository` webhook event, `member` (a collaborator's direct access), `team_add`
// and `team` (a team given or losing the repository). Every row has `repository_id`; the payload is
// what the platform's body adds to `repository` and `sender`, or the ids of who the event names
// (`member_id`, `team_id`), rendered when it is delivered. The admin writes say no actor: the sender
// is then the repository's owner (src/areas/app-webhooks/payloads.ts).

/**
 * A `repository` event's subject is the repository as the write left it (rendered in the write's
 * transaction, after all of its changes, as issue activity keeps its subject); absent on rows
 * recorded before rows kept it, which show the repository as it is at dispatch.
 */
type AsLeft = { repository?: Record<string, unknown> };

export type RepositoryActivities = {
  /** A new repository (src/core/repositories/writes.ts createRepository); code security attaches its default configuration. */
  'repository.created': AsLeft;
  /** The operator archived it (PATCH /_admin/repos/{owner}/{repo} `archived: true`); it refuses writes. */
  'repository.archived': AsLeft;
  'repository.unarchived': AsLeft;
  /** PATCH /_admin/repos/{owner}/{repo} changed the description: the platform's `changes`. */
  'repository.edited': AsLeft & { changes: { description: { from: string | null } } };
  /** PATCH /_admin/repos/{owner}/{repo} `visibility`: made public, or taken from public. */
  'repository.publicized': AsLeft;
  'repository.privatized': AsLeft;
  /** The operator renamed it (PATCH /_admin/repos/{owner}/{repo} `name`): the platform's `changes`. */
  'repository.renamed': AsLeft & { changes: { repository: { name: { from: string } } } };
  /** The operator moved it to another account (`owner`): the former owner, as the platform's `changes` names it. */
  'repository.transferred': AsLeft & { changes: { owner: { from: { user: object } | { organization: object } } } };
  /**
   * The operator deleted it (DELETE /_admin/repos/{owner}/{repo}); the row is gone when this is
   * dispatched, so the payload keeps what the event needs: the repository as the platform showed it
   * and the installations that covered it (their selections went with it).
   */
  'repository.deleted': { repository: Record<string, unknown>; installation_ids: number[] };
  /**
   * The platform's `label` event (src/core/issues/label-writes.ts, and a label an issue write makes):
   * the label as the write left it (a deleted one as it was), `changes` what an edit changed.
   */
  'label.created': { label: Record<string, unknown> };
  'label.edited': { label: Record<string, unknown>; changes: { name?: { from: string }; color?: { from: string }; description?: { from: string | null } } };
  'label.deleted': { label: Record<string, unknown> };
};

/** A collaborator's permission in the platform's two names: legacy (`read`, `write`, `admin`) and role. */
export type MemberPermission = 'read' | 'write' | 'admin';

/** PUT / DELETE /_admin/repos/{owner}/{repo}/collaborators/{login}: the user's direct access. */
export type MemberActivities = {
  'member.added': { member_id: number; changes: { permission: { to: MemberPermission }; role_name: { to: string } } };
  'member.edited': { member_id: number; changes: { old_permission: { from: MemberPermission }; permission: { from: MemberPermission; to: MemberPermission } } };
  'member.removed': { member_id: number };
  /** PUT /_admin/orgs/{org}/teams/{team_slug}/repos/{owner}/{repo} (and a new team's repositories): the event has no action. */
  team_add: { team_id: number };
  /** The same write, as the platform also sends it: the `team` event (with `team_add` on adding). */
  'team.added_to_repository': { team_id: number };
  /** DELETE /_admin/orgs/{org}/teams/{team_slug}/repos/{owner}/{repo} taking a repository the team had. */
  'team.removed_from_repository': { team_id: number };
};

/** Whose repository access changed: some users' (on some repositories), or anyone's on some repositories. */
export type AccessChange = { userIds: readonly number[] } | { repositoryIds: readonly number[] };

/**
 * Repository access changed (memberships, collaborators, team repositories, visibility, a
 * transfer): applied in the writer's transaction, so what hides with lost access (notification
 * threads) is gone the moment the change commits. It has no outbox row.
 */
export type AccessActivities = {
  'access.changed': AccessChange;
};

/** A repository moving (a transfer to another owner, a rename, or both). */
export interface RepositoryMove {
  repositoryId: number;
  /** The account (user or organization) that owns it, and the one it moves to (the same on a rename alone). */
  fromOwnerId: number;
  toOwnerId: number;
  /** Its name after the move. */
  name: string;
  transferred: boolean;
  renamed: boolean;
}

/**
 * A repository moving (PATCH /_admin/repos/{owner}/{repo} `owner` or `name`): applied in the move's
 * transaction once the row has moved, before its `repository.transferred` / `repository.renamed`
 * rows are recorded. A handler may refuse the move (throw an ApiError: nothing changes) or let go
 * of what the former owner gave the repository; one activity for a transfer, a rename or both, so
 * each area's handler runs once. It has no outbox row.
 */
export type MoveActivities = {
  'repository.moving': RepositoryMove;
};

// ---- apps and installations (src/core/apps/activities.ts records them) ----
// The platform's `installation` webhook event. The row has the installation's `account_id`; the
// payload names the installation and its app, so the event reaches the app even once the
// installation is gone. Every app receives its installations' events without subscribing
// (src/areas/app-webhooks/engine.ts).

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

/**
 * An app created on the operator surface: applied in the creating transaction (a failure undoes the
 * app), with no outbox row, since `input` is the whole create body and its `webhook` secret must
 * never travel in one.
 */
export type AppCreatedActivities = {
  'app.created': { app: Selectable<AppsTable>; input: Record<string, unknown> };
};

// ---- issues (src/core/issues/writes.ts records them) ----
// One per webhook event the platform would send, in the order it sends them. The name's event is
// `issues` for an issue and `pull_request` for a pull request, except comments (`issue_comment` for
// both). Every row has `repository_id`, `issue_id` and `actor_id` (who acted); a comment's also
// `comment_id`. Mentions are those of the opened body or the comment body; ids are of existing users
// and teams, whether or not they can read the repository (consumers decide who may see what).

/**
 * The subject as its webhook event names it, rendered by the issues home with its representations
 * (src/core/issues/snapshot.ts, whose `SubjectSnapshot` says each shape): `pull_request` for
 * `pull_request` activity, `issue` for `issues` and `issue_comment`, with the `comment`.
 */
type SubjectSnapshot = { pull_request: object } | { issue: object; comment?: object };

type Kind = 'issues' | 'pull_request';

/** What every issue activity has. */
export type IssueActivityFacts = {
  number: number;
  pull_request: boolean;
  /**
   * The subject as the write left it, rendered in the same transaction once all of the write's
   * changes are applied (the rows of one write show the same subject). Absent on rows recorded
   * before rows kept one.
   */
  snapshot?: SubjectSnapshot;
};

export type Mentions = { mentioned_user_ids: number[]; mentioned_team_ids: number[] };

export type IssueOpened = IssueActivityFacts & Mentions & {
  assignee_ids: number[];
  requested_reviewer_ids: number[];
  requested_team_ids: number[];
};

/** `closed` / `reopened`; pull requests also say `merged` (a merge is `closed` with merged true). */
export type IssueStateChanged = IssueActivityFacts & { state: 'open' | 'closed'; merged?: boolean };

export type IssueAssignment = IssueActivityFacts & { assignee_id: number };

/** One row per requested user or team. */
export type ReviewRequest = IssueActivityFacts & ({ requested_reviewer_id: number } | { requested_team_id: number });

/** An issue's or pull request's actions, each with what its payload adds to `IssueActivityFacts`. */
export type IssueActions = {
  opened: IssueOpened;
  /** The title or body changed (PATCH /repos/{owner}/{repo}/issues/{issue_number}): the platform's `changes`, what they were. */
  edited: IssueActivityFacts & { changes: { title?: { from: string }; body?: { from: string } } };
  closed: IssueStateChanged;
  reopened: IssueStateChanged;
  assigned: IssueAssignment;
  unassigned: IssueAssignment;
  /** A label added to, or taken from, the issue: the label as the write left it. */
  labeled: IssueActivityFacts & { label: Record<string, unknown> };
  unlabeled: IssueActivityFacts & { label: Record<string, unknown> };
  /** The conversation locked (PUT …/issues/{issue_number}/lock) or unlocked (DELETE): the subject shows `locked` and `active_lock_reason`. */
  locked: IssueActivityFacts;
  unlocked: IssueActivityFacts;
  /** Only pull requests have reviewers. */
  review_requested: ReviewRequest;
  review_request_removed: ReviewRequest;
};

/**
 * A comment's actions (`issue_comment`, on an issue or a pull request): `edited` keeps the old body
 * in the platform's `changes`; `deleted` the comment as it was (its snapshot), the row being gone.
 */
export type CommentActions = {
  created: IssueActivityFacts & Mentions;
  edited: IssueActivityFacts & { changes: { body: { from: string } } };
  deleted: IssueActivityFacts;
};

/**
 * A pull request review's actions (`pull_request_review`, src/core/issues/review-writes.ts):
 * `submitted` (a review made with an `event`, not PENDING), the review as the write left it (the
 * event's `review`), the pull request in `snapshot`.
 */
export type ReviewActions = {
  submitted: IssueActivityFacts & { review: Record<string, unknown> };
};

export type IssueActivities =
  & { [K in `${Kind}.${keyof IssueActions & string}`]: K extends `${Kind}.${infer A extends keyof IssueActions}` ? IssueActions[A] : never }
  & { [A in keyof CommentActions & string as `issue_comment.${A}`]: CommentActions[A] }
  & { [A in keyof ReviewActions & string as `pull_request_review.${A}`]: ReviewActions[A] };

// ---- commits (src/core/commits/writes.ts records them) ----
// The platform's `status` (no action) and `check_run` events for the commits of a repository's git
// data. Every row has `repository_id` and `actor_id` (who made the status; a check run's app's bot);
// the payload is the event's subject as the write left it, rendered in the write's transaction.

export type CommitActivities = {
  /** A commit status made (POST /repos/{owner}/{repo}/statuses/{sha}): the platform's `status` body but its envelope. */
  status: Record<string, unknown>;
  /** A check run made (POST /repos/{owner}/{repo}/check-runs), and one reaching `completed` (on creation or an update). */
  'check_run.created': { check_run: Record<string, unknown> };
  'check_run.completed': { check_run: Record<string, unknown> };
};

// ---- the joined map ----

/** The activities stored in the outbox: every one is a platform webhook event (`event.action`). */
export type StoredActivities = AccountActivities & IssueActivities & RepositoryActivities & MemberActivities & InstallationActivities & AppActivities & CommitActivities;

/** The activities applied in the writer's transaction, with no outbox row. */
export type AppliedActivities = AccessActivities & MoveActivities & AppCreatedActivities;

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
  'issues.opened': true, 'issues.edited': true, 'issues.closed': true, 'issues.reopened': true, 'issues.assigned': true, 'issues.unassigned': true, 'issues.labeled': true, 'issues.unlabeled': true, 'issues.locked': true, 'issues.unlocked': true, 'issues.review_requested': true, 'issues.review_request_removed': true,
  'pull_request.opened': true, 'pull_request.edited': true, 'pull_request.closed': true, 'pull_request.reopened': true, 'pull_request.assigned': true, 'pull_request.unassigned': true, 'pull_request.labeled': true, 'pull_request.unlabeled': true, 'pull_request.locked': true, 'pull_request.unlocked': true,
  'pull_request.review_requested': true, 'pull_request.review_request_removed': true,
  'issue_comment.created': true, 'issue_comment.edited': true, 'issue_comment.deleted': true,
  'pull_request_review.submitted': true,
  'repository.created': true, 'repository.archived': true, 'repository.unarchived': true, 'repository.edited': true, 'repository.publicized': true, 'repository.privatized': true,
  'repository.renamed': true, 'repository.transferred': true, 'repository.deleted': true, 'label.created': true, 'label.edited': true, 'label.deleted': true,
  'member.added': true, 'member.edited': true, 'member.removed': true, team_add: true, 'team.added_to_repository': true, 'team.removed_from_repository': true,
  'installation_repositories.added': true, 'installation_repositories.removed': true, 'installation.created': true, 'installation.suspend': true,
  'installation.unsuspend': true, 'installation.deleted': true, 'installation.new_permissions_accepted': true,
  ping: true,
  status: true, 'check_run.created': true, 'check_run.completed': true,
};

export const STORED_ACTIVITY_NAMES = Object.keys(STORED) as (keyof StoredActivities & string)[];
