// App webhook rules: the configuration (validated, secret sealed at rest and masked in answers), the
// deliveries an app may list, read and redeliver within the retention period, and raw events
// recorded by the operator.
import { isIP } from 'node:net';
import { recordRawEvent } from '../../activity/outbox.ts';
import { recordAppActivity } from '../../core/apps/activities.ts';
import { invalidField, notFound, validationFailed } from '../../platform/errors.ts';
import { isRowId } from '../../platform/schemas.ts';
import { isKnownEvent } from '../../core/apps/events.ts';
import { findIdsByName } from '../../core/repositories/store.ts';
import { decodeCursor, encodeCursor } from '../../platform/pagination.ts';
import type { AppRow } from '../../core/apps/store.ts';
import type { Executor } from '../../db/index.ts';
import { installedOver, newAttempt } from './engine.ts';
import { fixtureOf, type FixturesFile } from './fixtures.ts';
import { blockedReason } from './sender.ts';
import { deliveryDetailBody, deliverySummaryBody, hookConfigBody, type DeliveryDetail, type HookConfig } from './representations.ts';
import * as store from './store.ts';
import { Service } from '../../platform/service.ts';

const MAX_URL_LENGTH = 2048;
const MAX_SECRET_LENGTH = 1024;

export interface HookInput {
  url?: unknown;
  content_type?: unknown;
  secret?: unknown;
  insecure_ssl?: unknown;
  active?: unknown;
}

/** A cursor names a position and a direction: older than an id (`next`) or newer than it (`prev`). */
type Position = { before?: undefined; after?: undefined } | { before: number; after?: undefined } | { after: number; before?: undefined };

function readCursor(cursor: string): Position {
  const match = /^(before|after):(\d{1,15})$/.exec(decodeCursor(cursor, 'cursor'));
  // The position is compared with integer ids: one beyond any row id was never handed out.
  const position = match ? Number(match[2]) : -1;
  if (!match || (position !== 0 && !isRowId(position))) throw invalidField('Pagination', 'cursor', `"${cursor}" is not a valid cursor`);
  return match[1] === 'before' ? { before: position } : { after: position };
}

export class AppWebhookService extends Service {
  /** The oldest delivery time still listed. */
  private cutoff(): string {
    return new Date(this.ctx.clock.nowMs() - this.ctx.config.webhooks.retentionDays * 86_400_000).toISOString();
  }

  /** Checks the fields given and answers the columns they set; a bad value is a 422 naming the field. */
  validate(input: HookInput): { url?: string; content_type?: string; secret?: string | null; insecure_ssl?: string; active?: number } {
    const out: ReturnType<AppWebhookService['validate']> = {};
    if (input.url !== undefined) {
      if (typeof input.url !== 'string') throw invalidField('Hook', 'url', 'url must be a string');
      out.url = this.validUrl(input.url);
    }
    if (input.content_type !== undefined) {
      if (input.content_type !== 'json' && input.content_type !== 'form') throw invalidField('Hook', 'content_type', 'content_type must be "json" or "form"');
      out.content_type = input.content_type;
    }
    if (input.secret !== undefined) {
      if (typeof input.secret !== 'string') throw invalidField('Hook', 'secret', 'secret must be a string');
      if (input.secret.length > MAX_SECRET_LENGTH) throw invalidField('Hook', 'secret', `secret is longer than ${MAX_SECRET_LENGTH} characters`);
      // An empty secret removes it: deliveries are then unsigned.
      out.secret = input.secret === '' ? null : this.ctx.secrets.encrypt(input.secret);
    }
    if (input.insecure_ssl !== undefined) {
      if (!['0', '1', 0, 1].includes(input.insecure_ssl as string | number)) throw invalidField('Hook', 'insecure_ssl', 'insecure_ssl must be "0" or "1"');
      out.insecure_ssl = String(input.insecure_ssl);
    }
    if (input.active !== undefined) {
      if (typeof input.active !== 'boolean') throw invalidField('Hook', 'active', 'active must be a boolean');
      out.active = input.active ? 1 : 0;
    }
    return out;
  }

  private validUrl(value: string): string {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw invalidField('Hook', 'url', 'url must be an http or https URL');
    }
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname) throw invalidField('Hook', 'url', 'url must be an http or https URL');
    if (value.length > MAX_URL_LENGTH) throw invalidField('Hook', 'url', `url is longer than ${MAX_URL_LENGTH} characters`);
    // A literal address that deliveries would refuse is refused now; host names are checked at each delivery, after DNS.
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const reason = isIP(host) ? blockedReason(host, this.ctx.config.webhooks) : null;
    if (reason) throw invalidField('Hook', 'url', `url must not point to a ${reason} address`);
    return value;
  }

  /** The app's webhook, from the operator's create body (`webhook`); an app without one gets an empty configuration. */
  async createForApp(trx: Executor, app: AppRow, webhook: unknown): Promise<void> {
    if (webhook !== undefined && (webhook === null || typeof webhook !== 'object' || Array.isArray(webhook))) throw invalidField('App', 'webhook', 'webhook must be an object');
    const fields = this.validate((webhook ?? {}) as HookInput);
    const now = this.now();
    const hook = await store.insertHook(trx, {
      app_id: app.id,
      url: fields.url ?? null,
      content_type: fields.content_type ?? 'json',
      secret: fields.secret ?? null,
      insecure_ssl: fields.insecure_ssl ?? '0',
      active: fields.active ?? 1,
      throttle_next_at: 0,
      created_at: now,
      updated_at: now,
    });
    // An app registered with a webhook URL is pinged at it, as the platform pings a new app's webhook; in the
    // app's transaction, so the ping goes exactly when the app exists.
    if (hook.url) await recordAppActivity(this.ctx, trx, { name: 'ping', payload: { app_id: app.id, hook_id: hook.id } });
  }

  private async hook(app: AppRow): Promise<store.HookRow> {
    const hook = await store.findHook(this.db, app.id);
    if (!hook) throw notFound();
    return hook;
  }

  async getConfig(app: AppRow): Promise<HookConfig> {
    return hookConfigBody(await this.hook(app));
  }

  async updateConfig(app: AppRow, input: HookInput): Promise<HookConfig> {
    // `active` belongs to the operator surface; the public API changes the four fields it documents.
    const changes = this.validate({ url: input.url, content_type: input.content_type, secret: input.secret, insecure_ssl: input.insecure_ssl });
    const hook = await this.db.transaction().execute(async (trx) => {
      const before = await store.findHook(trx, app.id);
      const after = before && (await store.updateHook(trx, app.id, { ...changes, updated_at: this.now() }));
      // A URL first set or changed is pinged, as the platform does; in this transaction, so it is sent exactly when the change commits.
      if (after?.url && after.url !== before!.url) {
        await recordAppActivity(this.ctx, trx, { name: 'ping', payload: { app_id: app.id, hook_id: after.id } });
      }
      return after;
    });
    if (!hook) throw notFound();
    return hookConfigBody(hook);
  }

  async listDeliveries(app: AppRow, query: { per_page?: number; cursor?: string; status?: store.DeliveryFilter }, perPage: number) {
    const position: Position = query.cursor === undefined ? {} : readCursor(query.cursor);
    const cutoff = this.cutoff();
    const rows = await store.listDeliveries(this.db, app.id, { cutoff, status: query.status, ...position, limit: perPage + 1 });
    // One row more than the page tells whether the list goes on in the direction read.
    const more = rows.length > perPage;
    const cursor = (direction: 'before' | 'after', id: number) => encodeCursor(`${direction}:${id}`);
    if (position.after !== undefined) {
      // Read upwards from the position: the extra row is the newest one.
      const page = more ? rows.slice(1) : rows;
      return {
        deliveries: page.map(deliverySummaryBody),
        next: cursor('before', page.at(-1)?.id ?? position.after + 1),
        prev: more ? cursor('after', page[0]!.id) : undefined,
      };
    }
    const page = rows.slice(0, perPage);
    return {
      deliveries: page.map(deliverySummaryBody),
      next: more ? cursor('before', page.at(-1)!.id) : undefined,
      prev: position.before !== undefined ? cursor('after', page[0]?.id ?? position.before - 1) : undefined,
    };
  }

  async getDelivery(app: AppRow, deliveryId: number): Promise<DeliveryDetail> {
    const row = await store.findDelivery(this.db, app.id, deliveryId, this.cutoff());
    if (!row) throw notFound();
    return deliveryDetailBody(row);
  }

  /** A new attempt of a delivery still within retention: same guid, new id, `redelivery` true. */
  async redeliver(app: AppRow, deliveryId: number): Promise<void> {
    const row = await store.findDelivery(this.db, app.id, deliveryId, this.cutoff());
    if (!row) throw invalidField('Delivery', 'delivery_id', 'The delivery does not exist or is older than the retention period');
    await this.redeliverMessages(app, [row.message_id]);
  }

  /** New attempts of messages (each as `redeliver` makes one), in one transaction: the webhook must be active with a URL. */
  private async redeliverMessages(app: AppRow, messageIds: number[]): Promise<void> {
    const hook = await this.hook(app);
    if (!hook.active || !hook.url) throw invalidField('Hook', 'url', 'The webhook is not active or has no URL');
    if (messageIds.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      for (const messageId of messageIds) await newAttempt(this.ctx, trx, { messageId, appId: app.id, retryCount: 0 });
    });
  }

  /** A time given as `since` (ISO 8601), no earlier than the retention cutoff; a 422 naming the field when it is not a time. */
  private since(since: string | undefined): string {
    const cutoff = this.cutoff();
    if (since === undefined) return cutoff;
    const at = /^\d{4}-\d{2}-\d{2}/.test(since) ? Date.parse(since) : Number.NaN;
    if (Number.isNaN(at)) throw invalidField('Delivery', 'since', `since must be an ISO 8601 time, like 2026-01-31T12:00:00Z, got "${since}"`);
    const iso = new Date(at).toISOString();
    return iso > cutoff ? iso : cutoff;
  }

  /** The app's deliveries posted since a time (within retention), in the order sent, as a fixtures file. */
  async fixtures(app: AppRow, since: string | undefined): Promise<FixturesFile> {
    const from = this.since(since);
    const rows = await store.postedDeliveries(this.db, app.id, from);
    return { app: app.slug, since: since === undefined ? null : from, exported_at: this.now(), fixtures: rows.map(fixtureOf) };
  }

  /**
   * Redelivers, as `redeliver` does, every message whose attempts since `since` failed and that
   * none delivered or is delivering; answers how many were queued.
   */
  async redeliverFailed(app: AppRow, input: { since: string; status?: string }): Promise<number> {
    if (input.status !== undefined && input.status !== 'failed') throw invalidField('Delivery', 'status', 'status must be "failed" (the only deliveries redelivered in bulk)');
    const failed = await store.failedMessages(this.db, app.id, this.since(input.since));
    await this.redeliverMessages(app, failed.map((row) => Number(row.message_id)));
    return failed.length;
  }

  /**
   * A raw event from the operator: an outbox row like any platform activity, answered with the number
   * of deliveries it produces (the apps it reaches now; the dispatcher creates them).
   */
  async recordEvent(input: { event: string; action?: string; repository?: string; account?: string; sender?: string; payload?: Record<string, unknown> }): Promise<number> {
    // Only the platform's events: no app could subscribe to another (src/core/apps/events.ts).
    if (!isKnownEvent(input.event)) throw invalidField('Event', 'event', `${input.event} is not a webhook event`, 'invalid');
    let named: { owner: string; name: string } | undefined;
    if (input.repository !== undefined) {
      const [owner, name, extra] = input.repository.split('/');
      if (!owner || !name || extra !== undefined) throw invalidField('Event', 'repository', 'repository must be "owner/name"');
      named = { owner, name };
    }
    // The names in one statement; each that is not found is a 404, the repository's first.
    const found = await findIdsByName(this.db, { repository: named, sender: input.sender, account: input.account });
    const repository = found.repository ?? undefined;
    if (input.repository !== undefined && !repository) throw notFound(`Repository not found: ${input.repository}`);
    const sender = found.sender_id === null ? undefined : { id: found.sender_id };
    if (input.sender !== undefined && !sender) throw notFound(`User not found: ${input.sender}`);
    const account = found.account_id === null ? undefined : { id: found.account_id };
    if (input.account !== undefined && !account) throw notFound(`Account not found: ${input.account}`);
    const accountId = repository?.owner_id ?? account?.id ?? sender?.id;
    if (accountId === undefined) throw validationFailed([{ resource: 'Event', field: 'repository', code: 'missing_field', message: 'an event needs a repository, an account or a sender' }]);
    return this.db.transaction().execute(async (trx) => {
      const activity = {
        event: input.event,
        action: input.action ?? null,
        repository_id: repository?.id ?? null,
        // As the outbox has it: an account only for an event without a repository.
        account_id: repository ? null : accountId,
        actor_id: sender?.id ?? null,
        payload: input.payload ?? {},
      };
      const recorded = await recordRawEvent(this.ctx, trx, activity);
      return (await installedOver.targets(trx, { ...activity, created_at: recorded.created_at })).length;
    });
  }
}
