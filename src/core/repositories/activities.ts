// The activities of repositories (the platform's `repository` webhook event). Every row has
// `repository_id`; the payload is what the platform's body adds to `repository` and `sender`.
import { recordActivity, type ActivityRecorder } from '../../activity/outbox.ts';

export type RepositoryActivities = {
  /** A new repository (src/admin/service.ts createRepository); code security attaches its default configuration. */
  'repository.created': Record<string, never>;
  /** The operator archived it (PATCH /_admin/repos/{owner}/{repo} `archived: true`); it refuses writes. */
  'repository.archived': Record<string, never>;
  'repository.unarchived': Record<string, never>;
};

export const recordRepositoryActivity: ActivityRecorder<RepositoryActivities> = recordActivity;
