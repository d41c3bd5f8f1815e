// The activities of repositories: the platform's `repository` webhook event, `member` (a
// collaborator's direct access), `team_add` and `team` (a team given or losing the repository). Every row has
// `repository_id`; the payload is what the platform's body adds to `repository` and `sender`, or
// the ids of who the event names (`member_id`, `team_id`), rendered when it is delivered. The admin
// writes say no actor: the sender is then the repository's owner (src/areas/app-webhooks/payloads.ts).
import { recordActivity, type ActivityRecorder } from '../../activity/outbox.ts';

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

export const recordMemberActivity: ActivityRecorder<MemberActivities> = recordActivity;

export const recordRepositoryActivity: ActivityRecorder<RepositoryActivities> = recordActivity;

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
