// App webhooks: the configuration and deliveries API (app JWT), the delivery engine fed by the
// activity outbox, raw events on the operator surface, and the retention sweep.
import type { Area } from '../../core/area.ts';
import { DELIVER, fanOut } from './engine.ts';
import { appWebhookAdminRoutes, appWebhookRoutes } from './routes.ts';
import { AppWebhookService } from './service.ts';
import { deleteExpired } from './store.ts';

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
  async onAppCreated(ctx, app, input) {
    await new AppWebhookService(ctx).createForApp(app, input.webhook);
  },
  async onActivity(ctx, trx, activity) {
    await fanOut(ctx, trx, activity);
  },
};
