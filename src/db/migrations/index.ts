// The migrations, in order. One set for both databases.
import type { Migration } from 'kysely';
import * as core from './0001_core.ts';
import * as activity from './0002_activity.ts';
import * as updaterAccess from './0003_updater_access.ts';
import * as codeSecurity from './0004_code_security.ts';
import * as assistantMetrics from './0005_assistant_metrics.ts';
import * as issueTypes from './0006_issue_types.ts';
import * as notifications from './0007_notifications.ts';
import * as appWebhooks from './0008_app_webhooks.ts';
import * as userMigrations from './0009_user_migrations.ts';
import * as repositoryAccess from './0011_repository_access.ts';
import * as issueNumbers from './0012_issue_numbers.ts';
import * as jobGroups from './0013_job_groups.ts';
import * as versions from './0014_versions.ts';
import * as activityNames from './0015_activity_names.ts';
import * as lifecycle from './0016_lifecycle.ts';
import * as formerNames from './0017_former_names.ts';
import * as unreadThreads from './0018_unread_threads.ts';
import * as gitDataRemovals from './0019_git_data_removals.ts';
import * as webhookEventPayloads from './0020_webhook_event_payloads.ts';
import * as changeNotifications from './0021_change_notifications.ts';
import * as globalSetupOptions from './0022_global_setup_options.ts';
import * as labels from './0023_labels.ts';
import * as reactions from './0024_reactions.ts';
import * as commitChecks from './0025_commit_checks.ts';
import * as issueLocks from './0026_issue_locks.ts';
import * as pullRequestReviews from './0027_pull_request_reviews.ts';

export const migrations: Record<string, Migration> = {
  '0001_core': core,
  '0002_activity': activity,
  '0003_updater_access': updaterAccess,
  '0004_code_security': codeSecurity,
  '0005_assistant_metrics': assistantMetrics,
  '0006_issue_types': issueTypes,
  '0007_notifications': notifications,
  '0008_app_webhooks': appWebhooks,
  '0009_user_migrations': userMigrations,
  '0011_repository_access': repositoryAccess,
  '0012_issue_numbers': issueNumbers,
  '0013_job_groups': jobGroups,
  '0014_versions': versions,
  '0015_activity_names': activityNames,
  '0016_lifecycle': lifecycle,
  '0017_former_names': formerNames,
  '0018_unread_threads': unreadThreads,
  '0019_git_data_removals': gitDataRemovals,
  '0020_webhook_event_payloads': webhookEventPayloads,
  '0021_change_notifications': changeNotifications,
  '0022_global_setup_options': globalSetupOptions,
  '0023_labels': labels,
  '0024_reactions': reactions,
  '0025_commit_checks': commitChecks,
  '0026_issue_locks': issueLocks,
  '0027_pull_request_reviews': pullRequestReviews,
};
