// Every background job and periodic sweep, in one list (as supabase/storage's workers): what a
// process with the worker on (CODEHOST_WORKER) runs. The jobs are defined in their areas
// (`defineJob`); the list names each one with the worker that runs it, and each sweep with its
// interval. Sweeps run in this order when /_admin/jobs/drain runs them all.
import { dispatcher, DISPATCH } from './activity/outbox.ts';
import { DELIVER } from './areas/app-webhooks/engine.ts';
import { sweepExpiredDeliveries } from './areas/app-webhooks/index.ts';
import { APPLY, resumeStaleApplies } from './areas/code-security/apply.ts';
import { MARK_READ, NotificationService } from './areas/notifications/service.ts';
import { EXPORT, UserMigrationService } from './areas/user-migrations/service.ts';
import type { LifecycleArea } from './core/area.ts';
import { sweepExpiredTokens } from './core/access/index.ts';
import { LISTING_SECONDS, REMOVAL_SECONDS, removeRecordedGitData, sweepOrphanedGitData } from './core/repositories/git-sweep.ts';
import { jobWorker, type Workers } from './jobs/registry.ts';
import type { Context } from './platform/context.ts';
import { SWEEP_SECONDS as RATE_LIMIT_SWEEP_SECONDS } from './platform/rate-limit.ts';
import { deliveryFault } from './testing/fault-store.ts';

/** How often expired tokens are swept. */
const TOKEN_SWEEP_SECONDS = 600;
/** How often the sweep looks for repositories whose configuration's apply job was lost. */
const APPLY_RESUME_SECONDS = 60;
/** How often the sweep looks for expired archives. */
const ARCHIVE_EXPIRY_SECONDS = 3600;
/** How often the sweep looks for unfinished archive files of dead runs. */
const UNFINISHED_ARCHIVE_SECONDS = 600;
/** How often the webhook deliveries' retention sweep runs. */
const DELIVERY_RETENTION_SECONDS = 600;

/** The jobs and sweeps of this server; `areas` are the activity's consumers. */
export function workers(ctx: Context, areas: readonly LifecycleArea[]): Workers {
  const migrations = new UserMigrationService(ctx);
  return {
    jobs: [
      jobWorker(DISPATCH, dispatcher(ctx, areas)),
      jobWorker(APPLY, ctx),
      jobWorker(MARK_READ, new NotificationService(ctx)),
      jobWorker(EXPORT, migrations),
      // In test mode, the test double's delivery faults (docs/clients.md); never in production.
      jobWorker(DELIVER, { ctx, deliveryFault: deliveryFault(ctx) }),
    ],
    sweeps: [
      { name: 'rate-limits.sweep', seconds: RATE_LIMIT_SWEEP_SECONDS, everyProcess: true, run: () => ctx.rateLimiter.sweep().then(() => undefined) },
      { name: 'repositories.remove-git-data', seconds: REMOVAL_SECONDS, atStart: true, run: () => removeRecordedGitData(ctx).then(() => undefined) },
      { name: 'repositories.sweep-orphaned-git-data', seconds: LISTING_SECONDS, run: () => sweepOrphanedGitData(ctx).then(() => undefined) },
      { name: 'tokens.sweep-expired', seconds: TOKEN_SWEEP_SECONDS, run: () => sweepExpiredTokens(ctx) },
      { name: 'code-security.resume', seconds: APPLY_RESUME_SECONDS, run: () => resumeStaleApplies(ctx) },
      { name: 'user-migrations.expire-archives', seconds: ARCHIVE_EXPIRY_SECONDS, run: () => migrations.expireArchives().then(() => undefined) },
      {
        name: 'user-migrations.sweep-unfinished',
        seconds: UNFINISHED_ARCHIVE_SECONDS,
        run: async () => {
          await migrations.sweepUnfinished();
          await migrations.sweepOrphanArchives();
        },
      },
      { name: 'webhook-deliveries-retention', seconds: DELIVERY_RETENTION_SECONDS, run: () => sweepExpiredDeliveries(ctx) },
    ],
  };
}
