// App webhooks: the configuration and deliveries API (app JWT), the delivery engine fed by the
// activity outbox, raw events on the operator surface, and the retention sweep.
import { STORED_ACTIVITY_NAMES, type Activity, type StoredActivities } from '../../core/activities.ts';
import type { LifecycleArea } from '../../core/area.ts';
import type { Executor } from '../../db/index.ts';
import type { Context } from '../../platform/context.ts';
import { fanOut, installedOver, toCoveringInstallations, toInstallationApp, toOwnWebhook, type Targeting } from './engine.ts';
import { appWebhookAdminRoutes, appWebhookRoutes } from './routes.ts';
import { AppWebhookService } from './service.ts';
import { deleteExpired, putSealedSecret, sealedSecrets } from './store.ts';

/** The retention sweep (src/workers.ts): deliveries older than CODEHOST_WEBHOOK_RETENTION_DAYS go. */
export async function sweepExpiredDeliveries(ctx: Context): Promise<void> {
  const cutoff = new Date(ctx.clock.nowMs() - ctx.config.webhooks.retentionDays * 86_400_000).toISOString();
  await deleteExpired(ctx.db.kysely, cutoff);
}

/** A handler that delivers an outbox row (a typed activity or a raw event) to the apps `targeting` finds. */
const deliverTo = (targeting: Targeting) => async (ctx: Context, trx: Executor, activity: Activity): Promise<void> => {
  await fanOut(ctx, trx, activity, targeting);
};
const deliver = deliverTo(installedOver);
const toInstallation = deliverTo(toInstallationApp);

export const appWebhooks: LifecycleArea = {
  name: 'app-webhooks',
  lifecycle: {
    'repository.transferred': { handler: '`repository` `transferred` to the apps installed over it at its new place' },
    'repository.renamed': { handler: '`repository` `renamed` to the apps installed over it' },
    'repository.deleted': { handler: '`repository` `deleted` to the installations that covered it (kept in its payload)' },
    'repository.archived': { handler: '`repository` `archived` to the apps installed over it' },
    'user.suspended': { unaffected: 'deliveries go to apps, whose installations on the account stay as they are' },
    'user.deleted': { handled: 'cascade: installations on the account go with it; the activity names no repository or account, so it is delivered to none' },
    'installation.suspend': { handler: 'delivers `installation` `suspend`; deliveries queued before it are dropped unsent, recorded without their payload' },
    'installation.deleted': { handler: 'delivers `installation` `deleted`; deliveries queued before it are dropped unsent, recorded without their payload' },
  },
  routes: appWebhookRoutes,
  admin: appWebhookAdminRoutes,
  async resealSecrets(trx, reseal) {
    const hooks = await sealedSecrets(trx);
    for (const hook of hooks) {
      let sealed: string;
      try {
        sealed = reseal(hook.secret);
      } catch (error) {
        throw new Error(`the webhook secret of hook ${hook.id} cannot be opened with the current key (set it again with PATCH /app/hook/config, or clear it, then rotate)`, { cause: error });
      }
      await putSealedSecret(trx, hook.id, sealed);
    }
    return hooks.length;
  },
  handlers: {
    // Every stored activity is a webhook event, delivered to the apps installed over it; so is a raw one.
    ...Object.fromEntries(STORED_ACTIVITY_NAMES.map((name) => [name, deliver])) as { [K in keyof StoredActivities & string]: typeof deliver },
    raw: deliver,
    // But an installation's events go to its app alone, an app's `ping` to its own webhook, and a
    // deleted repository's to the installations that covered it.
    'installation.created': toInstallation,
    'installation.suspend': toInstallation,
    'installation.unsuspend': toInstallation,
    'installation.deleted': toInstallation,
    'installation_repositories.added': toInstallation,
    'installation_repositories.removed': toInstallation,
    ping: deliverTo(toOwnWebhook),
    'repository.deleted': deliverTo(toCoveringInstallations),
    // Applied in the creating transaction: the webhook's secret never travels in an outbox row.
    'app.created': async (ctx, trx, { payload }) => {
      await new AppWebhookService(ctx).createForApp(trx, payload.app, payload.input.webhook);
    },
  },
};

// For `codehost replay` (src/cli/replay.ts), through src/app.ts.
export { refusedReceiver, replayFixtures, type Fixture, type FixturesFile } from './fixtures.ts';
