// The delivery engine. Activity becomes one message per app (guid, installation; the event's body is
// stored once for all its apps) and a pending attempt whose job is enqueued in the same
// transaction, so a delivery exists exactly when its activity was consumed. The job posts the
// attempt and records the outcome with a conditional update: a job that runs again after its
// process died mid-request posts again (same guid, so receivers can tell) but the attempt is
// recorded once. Throttling defers the job to the app's next slot; failures may be
// retried automatically as new attempts of the same message.
import { defineJob, type JobRun } from '../../jobs/job.ts';
import { createHash, createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Activity as OutboxActivity, InstallationEvent } from '../../core/activities.ts';
import { coversEvent, deliveredWithoutSubscribing } from '../../core/apps/events.ts';
import type { Executor } from '../../db/index.ts';
import type { Context } from '../../platform/context.ts';
import { perServer } from '../../platform/per-server.ts';
import { BatchLoader, WriteBatcher } from '../../jobs/batch.ts';
import { eventBody, installationBody } from './payloads.ts';
import { postWebhook, type WebhookResult } from './sender.ts';
import * as store from './store.ts';
import { intersectPermissions, parsePermissions } from '../../core/access/index.ts';

/** A throttled attempt whose slot is this close waits in its worker; a later one goes back to the queue. */
const SLEEP_LIMIT_MS = 200;

interface DeliverJob {
  deliveryId: number;
  generation: number;
}

/**
 * What a delivery worker is made of: the server's context and, in test mode only, the test double's
 * delivery fault check (docs/clients.md: the receiver gets the post twice, or it is recorded as timed out).
 */
export interface DeliveryWorker {
  ctx: Context;
  deliveryFault?: ((appId: number) => 'webhook_timeout' | 'webhook_duplicate' | null) | undefined;
}

/** Posts one attempt of a delivery and records its outcome. */
export const DELIVER = defineJob<DeliverJob, DeliveryWorker>({
  name: 'webhooks.deliver',
  handle: ({ ctx, deliveryFault }, job, run) => deliver(ctx, job, run, deliveryFault),
  options: ({ ctx }) => ({ concurrency: ctx.config.webhooks.concurrency }),
});

/** `<Word>-Hookshot/<short id>` (`Vendor-Hookshot/…`, src/platform/vendor.ts): the short id names this codehost release. */
const HOOKSHOT_ID = (() => {
  const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  return createHash('sha1').update(`codehost ${version}`).digest('hex').slice(0, 7);
})();

/** Enqueues the job of an attempt inside the transaction that created (or moved) it. */
async function enqueue(ctx: Context, trx: Executor, job: DeliverJob, startAfterSeconds?: number): Promise<void> {
  await DELIVER.send(ctx.queue, job, { transaction: trx, startAfterSeconds });
}

/** Whether an app's subscription (its `events`, JSON) names the event. */
export const subscribes = (events: string, event: string) => {
  const list: unknown = JSON.parse(events);
  return Array.isArray(list) && list.includes(event);
};

/** What fan-out needs of an activity: a row of the outbox, or a raw event about to be recorded. */
export type Activity = Pick<OutboxActivity, 'event' | 'repository_id' | 'account_id' | 'created_at'> & Partial<Pick<OutboxActivity, 'name' | 'payload'>>;

/**
 * Whether the activity's subject is a pull request: issue activity says so in its facts
 * (`pull_request`, a boolean); a raw event in the platform's shape, by its `issue.pull_request`.
 */
export function onPullRequest(activity: Activity): boolean {
  const facts = activity.payload ?? {};
  if (activity.name) return 'pull_request' in facts && facts.pull_request === true;
  const issue = 'issue' in facts ? facts.issue : undefined;
  if (issue !== null && typeof issue === 'object' && !Array.isArray(issue)) {
    const pull = (issue as Record<string, unknown>).pull_request;
    return pull !== undefined && pull !== null && pull !== false;
  }
  return false;
}

/**
 * How an activity's target apps are found, chosen by its name (each of the area's handlers names
 * its own: src/areas/app-webhooks/index.ts); `recorded`, the installation an installation event
 * keeps, which each message shows as it was.
 */
export interface Targeting {
  targets(trx: Executor, activity: Activity): Promise<store.Target[]>;
  recorded?(activity: Activity): Body;
}

type Body = Record<string, unknown>;

/**
 * Of the apps installed over it, those subscribed to its event (installation events need no
 * subscription), with an active webhook, and whose installation's current grant (granted ∩
 * requested) covers the event. One query for every candidate; the checks run on the set.
 */
export function subscribedAndCovered(activity: Activity, targets: store.Target[]): store.Target[] {
  const unsubscribed = deliveredWithoutSubscribing(activity.event);
  const subscribed = targets.filter((target) => unsubscribed || subscribes(target.events, activity.event));
  if (subscribed.length === 0) return [];
  const pull = onPullRequest(activity);
  return subscribed.filter((target) =>
    coversEvent(intersectPermissions(parsePermissions(target.installation_permissions), parsePermissions(target.app_permissions)), activity.event, pull));
}

/** The apps installed over it: its repository (on the repository's owner), or its account. Every activity's but those below; a raw event's. */
export const installedOver: Targeting = {
  async targets(trx, activity) {
    if (activity.repository_id !== null) return subscribedAndCovered(activity, await store.deliveryTargets(trx, { repositoryId: activity.repository_id }, activity.created_at));
    if (activity.account_id !== null) return subscribedAndCovered(activity, await store.deliveryTargets(trx, { accountId: activity.account_id }, activity.created_at));
    return [];
  },
};

/** An event about one of an app's installations (a typed activity, never a raw event): for that app alone. */
export const toInstallationApp: Targeting = {
  async targets(trx, activity) {
    const { installation } = activity.payload as Pick<InstallationEvent, 'installation'>;
    const target = await store.installationEventTarget(trx, installation.app_id, installation.id);
    return target ? [target] : [];
  },
  recorded: (activity) => (activity.payload as Pick<InstallationEvent, 'installation'>).installation,
};

/** `ping`: an app's own webhook, through no installation. */
export const toOwnWebhook: Targeting = {
  async targets(trx, activity) {
    const target = await store.installationEventTarget(trx, (activity.payload as { app_id: number }).app_id, null);
    return target ? [target] : [];
  },
};

/** A deleted repository's selections went with it: the installations that covered it are in its payload. */
export const toCoveringInstallations: Targeting = {
  async targets(trx, activity) {
    if (activity.account_id === null) return installedOver.targets(trx, activity);
    const covered = new Set((activity.payload as { installation_ids: number[] }).installation_ids);
    return subscribedAndCovered(activity, (await store.deliveryTargets(trx, { accountId: activity.account_id }, activity.created_at)).filter((target) => covered.has(target.installation_id!)));
  },
};

/**
 * How the payloads of an event's messages are stored: `{ ...body, ...installations[i] }` for the
 * i-th. The body once, each message's `installation` member apart (store.messagePayload puts it last,
 * where the spread puts a member the body does not have). A body with an `installation` member of its
 * own (an installation event's, a raw event's) has it replaced in place by the spread: then each
 * message with an installation stores its whole payload as its body.
 */
export function storedPayloads(body: Record<string, unknown>, installations: ({ installation: Record<string, unknown> } | null)[]): {
  bodies: string[];
  messages: { body: number; installation: string | null }[];
} {
  const bodies: string[] = [];
  let shared: number | undefined;
  // Stored when a message sends it (or sends it with its installation), once.
  const sharedBody = () => (shared ??= bodies.push(JSON.stringify(body)) - 1);
  const own = Object.hasOwn(body, 'installation');
  const messages = installations.map((member) => {
    if (member === null) return { body: sharedBody(), installation: null };
    if (!own) return { body: sharedBody(), installation: JSON.stringify(member.installation) };
    return { body: bodies.push(JSON.stringify({ ...body, ...member })) - 1, installation: null };
  });
  return { bodies, messages };
}

/** The outbox consumer: one message, one pending attempt and its job per target app (found as `targeting` says). */
export async function fanOut(ctx: Context, trx: Executor, activity: OutboxActivity, targeting: Targeting): Promise<number> {
  const targets = await targeting.targets(trx, activity);
  if (targets.length === 0) return 0;
  const body = await eventBody(trx, { urls: ctx.urls, dataDir: ctx.config.dataDir }, activity);
  if (!body) return 0;
  const now = ctx.clock.now().toISOString();
  const installations: ({ installation: Record<string, unknown> } | null)[] = [];
  const recorded = targeting.recorded?.(activity);
  for (const { app_id, installation_id } of targets) {
    installations.push(installation_id === null ? null : { installation: await installationBody(trx, ctx.urls, activity.event, { app_id, installation_id }, recorded) });
  }
  const stored = storedPayloads(body, installations);
  const bodyIds: number[] = [];
  for (const text of stored.bodies) bodyIds.push(await store.insertEventPayload(trx, text, now));
  const messages = await store.insertMessages(trx, targets.map((target, i) => ({
    app_id: target.app_id,
    guid: randomUUID(),
    event: activity.event,
    action: activity.action,
    installation_id: target.installation_id,
    repository_id: activity.repository_id,
    event_payload_id: bodyIds[stored.messages[i]!.body]!,
    installation: stored.messages[i]!.installation,
    created_at: now,
  })));
  const attempts = await store.insertAttempts(trx, messages.map((message) => ({ message_id: message.id, app_id: message.app_id, redelivery: false, retry_count: 0, created_at: now })));
  // Every app's job in one statement.
  await DELIVER.sendMany(ctx.queue, attempts.map((deliveryId): DeliverJob => ({ deliveryId, generation: 0 })), { transaction: trx });
  return targets.length;
}

/** A new attempt of a message (redelivery or retry), pending with its job. */
export async function newAttempt(
  ctx: Context,
  trx: Executor,
  attempt: { messageId: number; appId: number; retryCount: number; startAfterSeconds?: number },
): Promise<void> {
  const [deliveryId] = await store.insertAttempts(trx, [{
    message_id: attempt.messageId,
    app_id: attempt.appId,
    redelivery: true,
    retry_count: attempt.retryCount,
    created_at: ctx.clock.now().toISOString(),
  }]);
  await enqueue(ctx, trx, { deliveryId: deliveryId!, generation: 0 }, attempt.startAfterSeconds);
}

export const isFailure = (statusCode: number) => statusCode < 200 || statusCode >= 400;

/**
 * Whether a posted attempt is retried, and when: a failure whose attempt has retries left, after the
 * base delay doubled per retry made before it; null when it is not retried.
 */
export function retryDelay(statusCode: number, retryCount: number, { retries, retryBaseSeconds }: { retries: number; retryBaseSeconds: number }): number | null {
  if (!isFailure(statusCode) || retryCount >= retries) return null;
  return retryBaseSeconds * 2 ** retryCount;
}

/**
 * Webhook secrets, unsealed, by their sealed form, per server (its key unseals them): every delivery
 * of a busy app would otherwise decrypt the same secret again. A changed secret is a new sealed form;
 * the oldest entries go first.
 */
const unsealedSecrets = perServer(() => new Map<string, string>());
const UNSEALED_MAX = 1000;

/** What of a server's context signing needs: its key, and where its caches live. */
type SigningContext = Pick<Context, 'secrets' | 'perServer' | 'vendor'>;

function unseal(ctx: SigningContext, sealed: string): string {
  // `of` reads only the context's `perServer` (the cache is made from nothing of it).
  const unsealed = unsealedSecrets.of(ctx as Context);
  let secret = unsealed.get(sealed);
  if (secret === undefined) {
    secret = ctx.secrets.decrypt(sealed);
    if (unsealed.size >= UNSEALED_MAX) unsealed.delete(unsealed.keys().next().value!);
    unsealed.set(sealed, secret);
  }
  return secret;
}

/** The sealed secret does not open with this server's key: CODEHOST_SECRET_KEY changed since it was set. */
class UnreadableSecret extends Error {
  constructor() {
    super('not signed: the webhook secret cannot be decrypted (was CODEHOST_SECRET_KEY changed?)');
  }
}

/** What of an attempt its request is made of. */
export type AttemptRequestFacts = Pick<store.AttemptToSend, 'content_type' | 'payload' | 'guid' | 'event' | 'hook_id' | 'app_id' | 'secret' | 'insecure_ssl'>;

/** The exact bytes a delivery posts: its payload, or for a `form` hook `payload=<the payload, encoded>`. */
export function requestBody(form: boolean, payload: string): Buffer {
  return Buffer.from(form ? `payload=${encodeURIComponent(payload)}` : payload);
}

/** Both signature headers of the exact body bytes, made with the secret: the one way codehost signs. */
export function signatureHeaders(secret: string, body: Buffer): { 'x-hub-signature': string; 'x-hub-signature-256': string } {
  return {
    'x-hub-signature': `sha1=${createHmac('sha1', secret).update(body).digest('hex')}`,
    'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
  };
}

/** The request of an attempt: the spec's headers, both signatures of the exact body bytes when there is a secret. */
export function buildRequest(ctx: SigningContext, attempt: AttemptRequestFacts, url: string) {
  const form = attempt.content_type === 'form';
  const body = requestBody(form, attempt.payload);
  const { hookshot, delivery } = ctx.vendor;
  const headers: Record<string, string> = {
    'user-agent': `${hookshot}/${HOOKSHOT_ID}`,
    accept: '*/*',
    'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json',
    [delivery.guid]: attempt.guid,
    [delivery.event]: attempt.event,
    [delivery.hookId]: String(attempt.hook_id),
    [delivery.targetId]: String(attempt.app_id),
    [delivery.targetType]: 'integration',
  };
  if (attempt.secret) {
    let secret: string;
    try {
      secret = unseal(ctx, attempt.secret);
    } catch {
      throw new UnreadableSecret();
    }
    Object.assign(headers, signatureHeaders(secret, body));
  }
  return { url, headers, body, insecureSsl: attempt.insecure_ssl === '1' };
}

/**
 * The reads and writes a process's delivery jobs share: the jobs of one claim start together, so they
 * read their attempts in one statement, and outcomes recorded while a write is in flight go out in
 * the next one, with the completion of their jobs (one commit per batch, not per delivery, and not
 * one for the outcomes and another for the jobs).
 */
interface Batches {
  attempts: BatchLoader<number, store.AttemptToSend>;
  outcomes: WriteBatcher<PendingOutcome>;
}

interface PendingOutcome {
  id: number;
  outcome: store.Outcome;
  /** The job's run: completed in the transaction that records the outcome. */
  run: JobRun;
  /** Set when this outcome could not be written on its own (see `batches`). */
  error?: unknown;
}

/** The attempts to send and the outcomes to write of this server's delivery jobs, batched. */
const batches = perServer((ctx): Batches => {
  const postgres = ctx.db.dialect === 'postgres';
  return {
    attempts: new BatchLoader(async (ids) => new Map((await store.attemptsToSend(ctx.db.kysely, ids)).map((row) => [row.id, row]))),
    outcomes: new WriteBatcher(async (outcomes) => {
      try {
        await ctx.db.kysely.transaction().execute(async (trx) => {
          await store.completeAttempts(trx, outcomes, postgres);
          await ctx.queue.completeWithin(trx, outcomes.map((pending) => pending.run));
        });
      } catch (err) {
        if (outcomes.length === 1) throw err;
        // One row the database refuses must not fail the batch's other jobs (each would post its
        // delivery again): written one by one, only the ones that fail fail their jobs.
        for (const pending of outcomes) {
          await ctx.db.kysely.transaction().execute(async (trx) => {
            await store.completeAttempt(trx, pending.id, pending.outcome);
            await ctx.queue.completeWithin(trx, [pending.run]);
          }).catch((error: unknown) => (pending.error = error));
        }
      }
    }),
  };
});

/** What a delivery that was not posted records besides its time, status and URL. */
const NOT_POSTED = { throttled_at: null, status_code: 0, duration: 0, request_headers: '{}', response_headers: null, response_body: null } as const;

/** The status of a delivery dropped unsent (`droppedBecause`) starts so: it was never made, so it shows no payload. */
export const DROPPED = 'dropped: ';

/** Whether a recorded delivery was dropped unsent. */
export const wasDropped = (status: string | null): boolean => status?.startsWith(DROPPED) === true;

/**
 * Why a queued delivery is dropped when its job runs: its installation was deleted or suspended
 * since it was queued. The `installation` events themselves (`deleted`, `suspend`) are delivered.
 */
export function droppedBecause(attempt: Pick<store.AttemptToSend, 'installation_id' | 'event' | 'installation_found' | 'installation_suspended_at'>): string | null {
  if (attempt.installation_id === null || attempt.event === 'installation') return null;
  if (attempt.installation_found === null) return `${DROPPED}installation deleted`;
  if (attempt.installation_suspended_at !== null) return `${DROPPED}installation suspended`;
  return null;
}

/**
 * The job: throttle, post, record once, maybe schedule a retry. The outcome and the job's completion
 * commit together: a process that dies before that commit leaves a job that runs again (posts again,
 * same guid) and records the attempt; after it, nothing is left to run.
 */
async function deliver(ctx: Context, job: DeliverJob, run: JobRun, deliveryFault: DeliveryWorker['deliveryFault']): Promise<void> {
  const db = ctx.db.kysely;
  const attempt = await batches.of(ctx).attempts.load(job.deliveryId);
  // Gone (retention, app deleted), already recorded, or a stale duplicate of a job that was moved on.
  if (!attempt || attempt.delivered_at !== null || attempt.generation !== job.generation) return;
  const url = attempt.url;
  if (!attempt.active || !url) {
    // The webhook was switched off or has no target any more: nothing to attempt.
    await store.deleteAttempt(db, attempt.id);
    return;
  }

  const dropped = droppedBecause(attempt);
  if (dropped) {
    // Queued before its installation was suspended or deleted: recorded, never posted.
    const pending: PendingOutcome = { id: attempt.id, outcome: { ...NOT_POSTED, delivered_at: ctx.clock.now().toISOString(), status: dropped, url }, run };
    await batches.of(ctx).outcomes.add(pending);
    if (pending.error !== undefined) throw pending.error;
    return;
  }

  const { ratePerSecond } = ctx.config.webhooks;
  let throttledAt = attempt.throttled_at;
  if (ratePerSecond > 0) {
    const intervalMs = Math.ceil(1000 / ratePerSecond);
    // A throttled attempt holds its slot (persisted, so a job started early waits for it again). A
    // slot missed by more than a quarter interval is given up for a new one: posting that late would
    // crowd the slots reserved after it, and the app would get a burst over its rate. That holds for
    // a slot just reserved too: the reservation may have waited for the database (SQLite's one
    // connection, held by another transaction) until its slot had passed. A third miss in a row
    // keeps its slot, late, rather than reserve without end.
    let slot = attempt.throttle_slot_at === null ? null : Number(attempt.throttle_slot_at);
    for (let reservations = 0; slot === null || (Date.now() - slot > intervalMs / 4 && reservations < 3); reservations++) {
      slot = await store.reserveSlot(db, attempt.app_id, Date.now(), intervalMs);
    }
    const waitMs = slot - Date.now();
    if (waitMs > 0) {
      throttledAt ??= ctx.clock.now().toISOString();
      if (waitMs > SLEEP_LIMIT_MS) {
        // A long wait is spent in the queue, not in a worker slot. The job is due a little before the
        // slot and sleeps the rest: a queue may start a delayed job somewhat after its time.
        await db.transaction().execute(async (trx) => {
          const moved = await store.advanceGeneration(trx, attempt.id, attempt.generation, { throttled_at: throttledAt, throttle_slot_at: slot });
          if (moved) await enqueue(ctx, trx, { deliveryId: attempt.id, generation: attempt.generation + 1 }, (waitMs - SLEEP_LIMIT_MS / 2) / 1000);
        });
        return;
      }
      await sleep(waitMs);
    }
  }

  let request: ReturnType<typeof buildRequest>;
  let result: WebhookResult;
  try {
    request = buildRequest(ctx, attempt, url);
    result = await postWebhook(request, ctx.config.webhooks);
    // Test mode's delivery faults (docs/clients.md): the receiver gets the post again (same guid),
    // or it got it but the delivery is recorded as timed out, as when a receiver answers too late.
    const fault = deliveryFault?.(attempt.app_id) ?? null;
    if (fault === 'webhook_duplicate') await postWebhook(request, ctx.config.webhooks);
    if (fault === 'webhook_timeout') result = { status: 'timed out', statusCode: 0, durationSeconds: ctx.config.webhooks.timeoutMs / 1000, responseHeaders: null, responseBody: null };
  } catch (error) {
    if (!(error instanceof UnreadableSecret)) throw error;
    // Recorded as a failed delivery, so the operator sees it in the list rather than only in the log.
    request = { url, headers: {}, body: Buffer.alloc(0), insecureSsl: false };
    result = { status: error.message, statusCode: 0, durationSeconds: 0, responseHeaders: null, responseBody: null };
  }
  const outcome: store.Outcome = {
    delivered_at: ctx.clock.now().toISOString(),
    throttled_at: throttledAt,
    status: result.status,
    status_code: result.statusCode,
    duration: result.durationSeconds,
    url: request.url,
    request_headers: JSON.stringify(request.headers),
    response_headers: result.responseHeaders ? JSON.stringify(result.responseHeaders) : null,
    response_body: result.responseBody,
  };
  const retryAfterSeconds = retryDelay(result.statusCode, attempt.retry_count, ctx.config.webhooks);
  if (retryAfterSeconds === null) {
    const pending: PendingOutcome = { id: attempt.id, outcome, run };
    await batches.of(ctx).outcomes.add(pending);
    if (pending.error !== undefined) throw pending.error;
    return;
  }
  // The failure, its retry and the job's completion commit together: a retry exists exactly when the
  // failure is recorded.
  await db.transaction().execute(async (trx) => {
    await ctx.queue.completeWithin(trx, [run]);
    if (!(await store.completeAttempt(trx, attempt.id, outcome))) return;
    await newAttempt(ctx, trx, {
      messageId: attempt.message_id,
      appId: attempt.app_id,
      retryCount: attempt.retry_count + 1,
      startAfterSeconds: retryAfterSeconds,
    });
  });
}
