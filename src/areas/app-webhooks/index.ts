// App webhooks: the configuration and deliveries API (app JWT), the delivery engine fed by the
// activity outbox, raw events on the operator surface, and the retention sweep.
import type { Area } from '../../core/area.ts';
import { DELIVER, fanOut } from './engine.ts';
import { appWebhookAdminRoutes, appWebhookRoutes } from './routes.ts';
import { AppWebhookService } from './service.ts';
import { deleteExpired, putSealedSecret, sealedSecrets } from './store.ts';

/** How often the retention sweep runs. */
const SWEEP_SECONDS = 600;

export const appWebhooks: Area = {
  name: 'app-webhooks',
  routes: appWebhookRoutes,
  admin: appWebhookAdminRoutes,
  workers(ctx) {
    DELIVER.work(ctx.queue, ctx);
    ctx.periodic.every('webhook-deliveries-retention', SWEEP_SECONDS, async () => {
      const cutoff = new Date(ctx.clock.nowMs() - ctx.config.webhooks.retentionDays * 86_400_000).toISOString();
      await deleteExpired(ctx.db.kysely, cutoff);
    });
  },
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
