// The one Database type Kysely sees: the tables of every home, each declared in src/db/tables/
// (the bottom floor: those files import nothing above them). Column conventions: tables/columns.ts.
import type { AccountTables } from './tables/accounts.ts';
import type { ActivityTables } from './tables/activity.ts';
import type { AppWebhookTables } from './tables/app-webhooks.ts';
import type { AppTables } from './tables/apps.ts';
import type { AssistantMetricsTables } from './tables/assistant-metrics.ts';
import type { CodeSecurityTables } from './tables/code-security.ts';
import type { CommitTables } from './tables/commits.ts';
import type { IssueTypeTables } from './tables/issue-types.ts';
import type { IssueTables } from './tables/issues.ts';
import type { JobTables } from './tables/jobs.ts';
import type { NotificationTables } from './tables/notifications.ts';
import type { PlatformTables } from './tables/platform.ts';
import type { RepositoryTables } from './tables/repositories.ts';
import type { UpdaterAccessTables } from './tables/updater-access.ts';
import type { UserMigrationTables } from './tables/user-migrations.ts';

export interface Database
  extends AccountTables,
    RepositoryTables,
    AppTables,
    JobTables,
    PlatformTables,
    ActivityTables,
    IssueTables,
    CommitTables,
    UpdaterAccessTables,
    CodeSecurityTables,
    AssistantMetricsTables,
    IssueTypeTables,
    NotificationTables,
    AppWebhookTables,
    UserMigrationTables {}
