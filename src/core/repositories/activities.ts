// The activities of repositories (the platform's `repository` webhook event). Every row has
// `repository_id`; the payload is what the platform's body adds to `repository` and `sender`.
import { recordActivity, type ActivityRecorder } from '../../activity/outbox.ts';

export type RepositoryActivities = {
  /** A new repository (src/admin/service.ts createRepository); code security attaches its default configuration. */
  'repository.created': Record<string, never>;
  /** The operator archived it (PATCH /_admin/repos/{owner}/{repo} `archived: true`); it refuses writes. */
  'repository.archived': Record<string, never>;
  'repository.unarchived': Record<string, never>;
  /** The operator renamed it (PATCH /_admin/repos/{owner}/{repo} `name`): the platform's `changes`. */
  'repository.renamed': { changes: { repository: { name: { from: string } } } };
  /** The operator moved it to another account (`owner`): the former owner, as the platform's `changes` names it. */
  'repository.transferred': { changes: { owner: { from: { user: object } | { organization: object } } } };
  /**
   * The operator deleted it (DELETE /_admin/repos/{owner}/{repo}); the row is gone when this is
   * dispatched, so the payload keeps what the event needs: the repository as the platform showed it
   * and the installations that covered it (their selections went with it).
   */
  'repository.deleted': { repository: Record<string, unknown>; installation_ids: number[] };
};

export const recordRepositoryActivity: ActivityRecorder<RepositoryActivities> = recordActivity;
