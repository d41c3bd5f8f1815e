// Tables of the app webhooks area: each app's webhook configuration, the event payloads (an event's
// body, once), the messages (one event for one app, with its guid and installation) and the
// delivery attempts of each message (the API's deliveries).
import type { Generated } from 'kysely';
import type { Bool } from './columns.ts';

/** An app's webhook: one row per app, created with the app. */
export interface AppWebhooksTable {
  /** The hook id (`X-Vendor-Hook-ID`). */
  id: Generated<number>;
  app_id: number;
  /** http(s) delivery target; null until one is set. */
  url: string | null;
  /** `json` or `form` */
  content_type: string;
  /** The secret sealed with the server key (ctx.secrets); null when there is none. */
  secret: string | null;
  /** `0` (verify TLS) or `1` */
  insecure_ssl: string;
  active: Bool;
  /**
   * Throttling: when the app's next delivery slot opens, in epoch milliseconds of wall time. Slots
   * are 1/rate seconds apart; every process moves this in one atomic update per delivery.
   */
  throttle_next_at: number;
  created_at: string;
  updated_at: string;
}

/**
 * An event's body, stored once for every app it is delivered to (each app's message adds its own
 * `installation` member). Deleted with its last message (a trigger: src/db/migrations/0020_webhook_event_payloads.ts).
 */
export interface WebhookEventPayloadsTable {
  id: Generated<number>;
  /** The body as JSON text (an object). */
  body: string;
  created_at: string;
}

/**
 * One event for one app: what every attempt of the delivery sends (same guid, same payload). The
 * payload sent is its event payload's body with the message's `installation` member put last
 * (store.ts, `messagePayload`): the bytes of `JSON.stringify({ ...body, installation })`.
 */
export interface WebhookMessagesTable {
  id: Generated<number>;
  app_id: number;
  /** `X-Vendor-Delivery`: the same for every attempt of the message. */
  guid: string;
  event: string;
  action: string | null;
  installation_id: number | null;
  repository_id: number | null;
  /** The event's body, shared with the other apps' messages of the event. */
  event_payload_id: number;
  /** This app's `installation` member as JSON text; null: the body is the payload as it is. */
  installation: string | null;
  created_at: string;
}

/**
 * One attempt to deliver a message: what the deliveries API lists. It is created pending (no
 * `delivered_at`) together with its job, and completed exactly once by a conditional update.
 */
export interface WebhookDeliveriesTable {
  id: Generated<number>;
  message_id: number;
  app_id: number;
  /** 1 for every attempt after the first of a guid (redeliveries and automatic retries). */
  redelivery: Bool;
  /** Automatic retries so far in this chain of attempts. */
  retry_count: number;
  /**
   * Which job may act on the attempt: a job carries the generation it was sent with, and throttling
   * re-sends with the next one, so a stale job (a duplicate after a crash) does nothing.
   */
  generation: number;
  throttled_at: string | null;
  /**
   * The slot a throttled attempt holds, in epoch milliseconds of wall time (as `throttle_next_at`):
   * its job posts no earlier, whenever the queue happens to start it.
   */
  throttle_slot_at: number | null;
  delivered_at: string | null;
  /** `OK`, `Invalid HTTP Response: <code>` or a transport description. */
  status: string | null;
  status_code: number | null;
  /** Seconds. */
  duration: number | null;
  url: string | null;
  /** JSON map of the request headers sent. */
  request_headers: string | null;
  /** JSON map of the response headers, when a response came. */
  response_headers: string | null;
  /** The response body, capped at CODEHOST_WEBHOOK_RESPONSE_BODY_LIMIT bytes. */
  response_body: string | null;
  created_at: string;
}

export interface AppWebhookTables {
  app_webhooks: AppWebhooksTable;
  webhook_event_payloads: WebhookEventPayloadsTable;
  webhook_messages: WebhookMessagesTable;
  webhook_deliveries: WebhookDeliveriesTable;
}
