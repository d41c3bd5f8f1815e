// App webhooks: the configuration and deliveries API (app JWT), the delivery engine fed by the
// activity outbox, raw events on the operator surface, and the retention sweep.
import type { LifecycleArea } from '../../core/area.ts';
import type { Context } from '../../platform/context.ts';
import { fanOut } from './engine.ts';
import { appWebhookAdminRoutes, appWebhookRoutes } from './routes.ts';
import { AppWebhookService } from './service.ts';
import { deleteExpired, putSealedSecret, sealedSecrets } from './store.ts';

/** The retention sweep (src/workers.ts): deliveries older than CODEHOST_WEBHOOK_RETENTION_DAYS go. */
export async function sweepExpiredDeliveries(ctx: Context): Promise<void> {
  const cutoff = new Date(ctx.clock.nowMs() - ctx.config.webhooks.retentionDays * 86_400_000).toISOString();
  await deleteExpired(ctx.db.kysely, cutoff);
}

export const appWebhooks: LifecycleArea = {
  name: 'app-webhooks',
  lifecycle: {
    'repository.transferred': { handled: 'onActivity: `repository` `transferred` to the apps installed over it at its new place' },
    'repository.renamed': { handled: 'onActivity: `repository` `renamed` to the apps installed over it' },
    'repository.deleted': { handled: 'onActivity: `repository` `deleted` to the installations that covered it (kept in its payload)' },
    'repository.archived': { handled: 'onActivity: `repository` `archived` to the apps installed over it' },
    'user.suspended': { unaffected: 'deliveries go to apps, whose installations on the account stay as they are' },
    'user.deleted': { handled: 'cascade: installations on the account go with it; the activity names no repository or account, so it is delivered to none' },
    'installation.suspend': { handled: 'onActivity delivers `installation` `suspend`; deliveries queued before it are dropped unsent, recorded without their payload' },
    'installation.deleted': { handled: 'onActivity delivers `installation` `deleted`; deliveries queued before it are dropped unsent, recorded without their payload' },
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
  async onAppCreated(ctx, trx, app, input) {
    await new AppWebhookService(ctx).createForApp(trx, app, input.webhook);
  },
  async onActivity(ctx, trx, activity) {
    await fanOut(ctx, trx, activity);
  },
};
