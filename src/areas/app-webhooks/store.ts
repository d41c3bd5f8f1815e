// SQL of app webhooks: hook configurations, messages and their delivery attempts.
import { CompiledQuery, sql, type ExpressionBuilder, type Insertable, type Selectable, type Updateable } from 'kysely';
import { idList, inIdList, isPostgres, reusableQuery, reusableText, type IdList } from '../../db/prepared.ts';
import type { Executor } from '../../db/index.ts';
import type { AppWebhooksTable, WebhookDeliveriesTable, WebhookMessagesTable } from '../../db/tables/app-webhooks.ts';

export type HookRow = Selectable<AppWebhooksTable>;
export type DeliveryRow = Selectable<WebhookDeliveriesTable>;

export async function insertHook(db: Executor, hook: Insertable<AppWebhooksTable>): Promise<HookRow> {
  return db.insertInto('app_webhooks').values(hook).returningAll().executeTakeFirstOrThrow();
}

export async function findHook(db: Executor, appId: number): Promise<HookRow | undefined> {
  return db.selectFrom('app_webhooks').selectAll().where('app_id', '=', appId).executeTakeFirst();
}

export async function updateHook(db: Executor, appId: number, changes: Updateable<AppWebhooksTable>): Promise<HookRow | undefined> {
  return db.updateTable('app_webhooks').set(changes).where('app_id', '=', appId).returningAll().executeTakeFirst();
}

/** The apps' webhook secrets as stored (sealed), for a rotation of the server key. */
export async function sealedSecrets(db: Executor): Promise<{ id: number; secret: string }[]> {
  const rows = await db.selectFrom('app_webhooks').select(['id', 'secret']).where('secret', 'is not', null).orderBy('id').execute();
  return rows.map((row) => ({ id: row.id, secret: row.secret! }));
}

export async function putSealedSecret(db: Executor, hookId: number, secret: string): Promise<void> {
  await db.updateTable('app_webhooks').set({ secret }).where('id', '=', hookId).execute();
}

export interface Target {
  app_id: number;
  events: string;
  /** Null for the app's own `ping`, which goes through no installation. */
  installation_id: number | null;
  /** What the app requests and what the installation was granted (JSON): the grant is both. */
  app_permissions: string;
  installation_permissions: string;
}

/**
 * Apps whose installation covers the repository (on its owner's account) or, for an event without a
 * repository, is on the account, and whose webhook is active with a URL, with what each subscribes
 * to and is granted, in one statement (a repository that is gone has no targets). Subscription and
 * grant are checked by the caller, on the whole set.
 */
/**
 * The app's own target for an event about one of its installations (`installation`): every app gets
 * those without subscribing, suspended or deleted as the installation may be; or, with no
 * installation, for its webhook's own `ping`. None when the app has no active webhook.
 */
export async function installationEventTarget(db: Executor, appId: number, installationId: number | null): Promise<Target | undefined> {
  const row = await db
    .selectFrom('apps')
    .innerJoin('app_webhooks', 'app_webhooks.app_id', 'apps.id')
    .select(['apps.id as app_id', 'apps.events', 'apps.permissions as app_permissions'])
    .where('apps.id', '=', appId)
    .where('app_webhooks.active', '=', 1)
    .where('app_webhooks.url', 'is not', null)
    .executeTakeFirst();
  return row && { ...row, installation_id: installationId, installation_permissions: row.app_permissions };
}

function selectTargets(db: Executor, happenedAt: string) {
  return db
    .selectFrom('installations')
    .innerJoin('apps', 'apps.id', 'installations.app_id')
    .innerJoin('app_webhooks', 'app_webhooks.app_id', 'apps.id')
    .select([
      'apps.id as app_id', 'apps.events', 'apps.permissions as app_permissions',
      'installations.id as installation_id', 'installations.permissions as installation_permissions',
    ])
    .where('app_webhooks.active', '=', 1)
    .where('app_webhooks.url', 'is not', null)
    // Nothing is delivered for a suspended installation.
    .where('installations.suspended_at', 'is', null)
    // Only installations there when it happened: one made after an event, before its fan-out ran (a
    // busy queue), does not get it. Both times are the clock's ISO texts, which order as strings.
    .where('installations.created_at', '<=', happenedAt)
    .orderBy('apps.id');
}

// Every event reads its targets twice (the API's answer, then the fan-out): built once per database
// and, on PostgreSQL, a named statement (planned once per connection; planning was most of its cost).
const targetsOfRepository = reusableQuery('webhook_targets_of_repository', (db, repositoryId: number, happenedAt: string) =>
  selectTargets(db, happenedAt)
    .where('installations.account_id', '=', (eb) => eb.selectFrom('repositories').select('repositories.owner_id').where('repositories.id', '=', repositoryId))
    .where((eb) =>
      eb.or([
        eb('installations.repository_selection', '=', 'all'),
        eb.exists(
          eb
            .selectFrom('installation_repositories')
            .select('installation_repositories.repository_id')
            .whereRef('installation_repositories.installation_id', '=', 'installations.id')
            .where('installation_repositories.repository_id', '=', repositoryId),
        ),
      ]),
    ));
const targetsOfAccount = reusableQuery('webhook_targets_of_account', (db, accountId: number, happenedAt: string) =>
  selectTargets(db, happenedAt).where('installations.account_id', '=', accountId));

/** The targets of an event that happened at `happenedAt` (its outbox row's time). */
export async function deliveryTargets(db: Executor, where: { repositoryId: number } | { accountId: number }, happenedAt: string): Promise<Target[]> {
  return 'repositoryId' in where ? targetsOfRepository(db, where.repositoryId, happenedAt) : targetsOfAccount(db, where.accountId, happenedAt);
}

/** Rows per multi-row insert: far below both databases' limits on bound parameters. */
const INSERT_CHUNK = 500;

function chunks<T>(items: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += INSERT_CHUNK) out.push(items.slice(i, i + INSERT_CHUNK));
  return out;
}

/** Stores an event's body (JSON text of an object) once for its messages; answers its id. */
export async function insertEventPayload(db: Executor, body: string, createdAt: string): Promise<number> {
  const row = await db.insertInto('webhook_event_payloads').values({ body, created_at: createdAt }).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

/**
 * The payload a message sends: its event's body with its `installation` member put last, in
 * exactly the bytes of `JSON.stringify({ ...body, installation })` for a body without an
 * `installation` member of its own (fan-out stores a body with one in full, per message, with no
 * `installation` of the message's own: src/areas/app-webhooks/engine.ts). No member: the body as it is.
 */
export function messagePayload(body: string, installation: string | null): string {
  if (installation === null) return body;
  // `{}` has no member to follow; any other object's text ends in its last member and `}`.
  return `${body.slice(0, -1)}${body.length > 2 ? ',' : ''}"installation":${installation}}`;
}

/** Inserts messages, many per statement; answers their ids with their apps, in the order given. */
export async function insertMessages(db: Executor, messages: Insertable<WebhookMessagesTable>[]): Promise<{ id: number; app_id: number }[]> {
  const byGuid = new Map<string, { id: number; app_id: number }>();
  for (const chunk of chunks(messages)) {
    // RETURNING's order is not promised: match by guid.
    for (const row of await db.insertInto('webhook_messages').values(chunk).returning(['id', 'guid', 'app_id']).execute()) byGuid.set(row.guid, row);
  }
  return messages.map((message) => byGuid.get(message.guid)!);
}

/** Inserts pending attempts (no outcome until their jobs record one); answers their ids in the order given. */
export async function insertAttempts(
  db: Executor,
  attempts: { message_id: number; app_id: number; redelivery: boolean; retry_count: number; created_at: string }[],
): Promise<number[]> {
  const byMessage = new Map<number, number>();
  for (const chunk of chunks(attempts)) {
    const rows = await db
      .insertInto('webhook_deliveries')
      .values(chunk.map((attempt) => ({ ...attempt, redelivery: attempt.redelivery ? 1 : 0, generation: 0 })))
      .returning(['id', 'message_id'])
      .execute();
    for (const row of rows) byMessage.set(row.message_id, row.id);
  }
  return attempts.map((attempt) => byMessage.get(attempt.message_id)!);
}

function selectAttemptsToSend(db: Executor, ids: unknown) {
  return db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_messages as m', 'm.id', 'd.message_id')
    .innerJoin('webhook_event_payloads as p', 'p.id', 'm.event_payload_id')
    .innerJoin('app_webhooks as h', 'h.app_id', 'd.app_id')
    // The message's installation as it is now: gone (deleted) or suspended drops the delivery.
    .leftJoin('installations as i', 'i.id', 'm.installation_id')
    .select([
      'd.id', 'd.app_id', 'd.message_id', 'd.retry_count', 'd.generation', 'd.throttled_at', 'd.throttle_slot_at', 'd.delivered_at',
      'm.guid', 'm.event', 'p.body', 'm.installation', 'm.installation_id', 'i.id as installation_found', 'i.suspended_at as installation_suspended_at',
      'h.id as hook_id', 'h.url', 'h.content_type', 'h.secret', 'h.insecure_ssl', 'h.active',
    ])
    // One statement text for any number of ids: an array on PostgreSQL, a JSON array on SQLite.
    .where(inIdList(isPostgres(db), 'd.id', ids, 'int8'));
}

// Every delivery runs these (a read per claim's batch): built once per database (src/db/prepared.ts).
const attemptsToSendQuery = reusableQuery('webhook_attempts_to_send', (db, ids: IdList) => selectAttemptsToSend(db, ids));

type AttemptRow = Awaited<ReturnType<ReturnType<typeof selectAttemptsToSend>['execute']>>[number];

/** An attempt with its message (and the payload it sends) and the app's current webhook: everything its job needs. */
export type AttemptToSend = Omit<AttemptRow, 'body' | 'installation'> & { payload: string };

/** The attempts of many jobs in one statement (those that exist: gone ones are left out). */
export async function attemptsToSend(db: Executor, ids: number[]): Promise<AttemptToSend[]> {
  const rows = await attemptsToSendQuery(db, idList(db, ids));
  return rows.map(({ body, installation, ...row }) => ({ ...row, payload: messagePayload(body, installation) }));
}

/**
 * Reserves the app's next delivery slot, `intervalMs` after the one before (one atomic update shared
 * by every process): answers when the slot opens, now or later, in epoch milliseconds.
 */
export async function reserveSlot(db: Executor, appId: number, nowMs: number, intervalMs: number): Promise<number> {
  const row = await db
    .updateTable('app_webhooks')
    .set({ throttle_next_at: sql<number>`(case when throttle_next_at > ${nowMs} then throttle_next_at else ${nowMs} end) + ${intervalMs}` })
    .where('app_id', '=', appId)
    .returning('throttle_next_at')
    .executeTakeFirst();
  return row ? Number(row.throttle_next_at) - intervalMs : nowMs;
}

/** Hands a pending attempt to its next job generation; false when another job already moved it on. */
export async function advanceGeneration(db: Executor, deliveryId: number, generation: number, changes: Updateable<WebhookDeliveriesTable> = {}): Promise<boolean> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set({ ...changes, generation: generation + 1 })
    .where('id', '=', deliveryId)
    .where('generation', '=', generation)
    .where('delivered_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** What a finished attempt records. */
export interface Outcome {
  delivered_at: string;
  throttled_at: string | null;
  status: string;
  status_code: number;
  duration: number;
  url: string;
  request_headers: string;
  response_headers: string | null;
  response_body: string | null;
}

const OUTCOME_COLUMNS = ['delivered_at', 'throttled_at', 'status', 'status_code', 'duration', 'url', 'request_headers', 'response_headers', 'response_body'] as const;

/** The outcome of one attempt, its columns in OUTCOME_COLUMNS' order after the id. */
const completeAttemptQuery = reusableQuery('webhook_complete_attempt', (db, deliveryId: number, ...values: Array<string | number | null>) =>
  db
    .updateTable('webhook_deliveries')
    .set(Object.fromEntries(OUTCOME_COLUMNS.map((column, i) => [column, values[i]])) as unknown as Outcome)
    .where('id', '=', deliveryId)
    .where('delivered_at', 'is', null)
    .returning('id'));

/** Records the outcome once: only the first job to finish a pending attempt writes it. */
export async function completeAttempt(db: Executor, deliveryId: number, outcome: Outcome): Promise<boolean> {
  const rows = await completeAttemptQuery(db, deliveryId, ...OUTCOME_COLUMNS.map((column) => outcome[column]));
  return rows.length === 1;
}

export async function deleteAttempt(db: Executor, deliveryId: number): Promise<void> {
  await db.deleteFrom('webhook_deliveries').where('id', '=', deliveryId).where('delivered_at', 'is', null).execute();
}

// Many outcomes in one statement, each written only if its attempt is still pending (the same
// condition as completeAttempt): the rows as JSON, in OUTCOME_COLUMNS' order after the id. On
// SQLite the unary + keeps the planner off the delivered_at index: with it, every pending attempt
// was scanned against the whole batch; without it, each row of the batch is one primary-key lookup.
// On PostgreSQL a named statement: planned once per connection (src/db/prepared.ts).
const COMPLETE_MANY_POSTGRES = reusableText('webhook_complete_attempts', `update webhook_deliveries as d
  set ${OUTCOME_COLUMNS.map((column) => `${column} = v.${column}`).join(', ')}
  from json_to_recordset($1::text::json) as v(id int8, delivered_at text, throttled_at text, status text, status_code int4, duration float8, url text, request_headers text, response_headers text, response_body text)
  where d.id = v.id and d.delivered_at is null`);
const COMPLETE_MANY_SQLITE = `update webhook_deliveries
  set ${OUTCOME_COLUMNS.map((column, i) => `${column} = v.value ->> ${i + 1}`).join(', ')}
  from json_each(?) as v
  where webhook_deliveries.id = v.value ->> 0 and +webhook_deliveries.delivered_at is null`;

/**
 * Records many outcomes in one statement (one commit): an attempt already recorded keeps its first
 * outcome, as with completeAttempt.
 */
export async function completeAttempts(db: Executor, outcomes: { id: number; outcome: Outcome }[], postgres: boolean): Promise<void> {
  if (outcomes.length === 0) return;
  const parameter = postgres
    ? JSON.stringify(outcomes.map(({ id, outcome }) => ({ id, ...Object.fromEntries(OUTCOME_COLUMNS.map((column) => [column, outcome[column]])) })))
    : JSON.stringify(outcomes.map(({ id, outcome }) => [id, ...OUTCOME_COLUMNS.map((column) => outcome[column])]));
  await db.executeQuery(CompiledQuery.raw(postgres ? COMPLETE_MANY_POSTGRES : COMPLETE_MANY_SQLITE, [parameter]));
}

const summaryColumns = [
  'd.id', 'd.redelivery', 'd.throttled_at', 'd.delivered_at', 'd.status', 'd.status_code', 'd.duration',
  'm.guid', 'm.event', 'm.action', 'm.installation_id', 'm.repository_id',
] as const;

export type DeliveryFilter = 'success' | 'failure';

/** Delivered attempts of an app since `cutoff`; `before`/`after` are ids (cursor positions). */
export async function listDeliveries(
  db: Executor,
  appId: number,
  options: { cutoff: string; status?: DeliveryFilter; before?: number; after?: number; limit: number },
) {
  let query = db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_messages as m', 'm.id', 'd.message_id')
    .select(summaryColumns)
    .where('d.app_id', '=', appId)
    .where('d.delivered_at', '>=', options.cutoff);
  // success: 200-399; failure: everything else, including no response at all (status_code 0).
  if (options.status === 'success') query = query.where('d.status_code', '>=', 200).where('d.status_code', '<', 400);
  if (options.status === 'failure') query = query.where((eb) => eb.or([eb('d.status_code', '<', 200), eb('d.status_code', '>=', 400)]));
  if (options.before !== undefined) query = query.where('d.id', '<', options.before);
  if (options.after !== undefined) query = query.where('d.id', '>', options.after);
  const rows = await query.orderBy('d.id', options.after !== undefined ? 'asc' : 'desc').limit(options.limit).execute();
  return options.after !== undefined ? rows.reverse() : rows;
}

export type DeliverySummaryRow = Awaited<ReturnType<typeof listDeliveries>>[number];

/** One delivered attempt of an app since `cutoff`, with request and response. */
export async function findDelivery(db: Executor, appId: number, deliveryId: number, cutoff: string) {
  const row = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_messages as m', 'm.id', 'd.message_id')
    .innerJoin('webhook_event_payloads as p', 'p.id', 'm.event_payload_id')
    .select([...summaryColumns, 'd.message_id', 'd.url', 'd.request_headers', 'd.response_headers', 'd.response_body', 'p.body', 'm.installation'])
    .where('d.app_id', '=', appId)
    .where('d.id', '=', deliveryId)
    .where('d.delivered_at', '>=', cutoff)
    .executeTakeFirst();
  if (!row) return undefined;
  const { body, installation, ...rest } = row;
  return { ...rest, payload: messagePayload(body, installation) };
}

/** Deletes batch after batch until one comes back short; answers the rows deleted. */
async function deleteInBatches(batch: number, deleteBatch: () => Promise<bigint | undefined>): Promise<number> {
  let deleted = 0;
  for (;;) {
    const count = Number((await deleteBatch()) ?? 0);
    deleted += count;
    if (count < batch) return deleted;
  }
}

/** The rows of `table` created before `cutoff` that no row of `referrer` names by `column`, in batches. */
function deleteUnreferenced(
  db: Executor,
  cutoff: string,
  batch: number,
  [table, referrer, column]: ['webhook_messages', 'webhook_deliveries', 'message_id'] | ['webhook_event_payloads', 'webhook_messages', 'event_payload_id'],
): Promise<number> {
  return deleteInBatches(batch, async () => (await sql`delete from ${sql.table(table)} where id in (
    select t.id from ${sql.table(table)} as t
    where t.created_at < ${cutoff} and not exists (select 1 from ${sql.table(referrer)} as r where ${sql.ref(`r.${column}`)} = t.id)
    limit ${batch})`.execute(db)).numAffectedRows);
}

/**
 * The retention sweep: attempts delivered (or, if stuck, created) before `cutoff`, then messages
 * left without attempts, then event payloads left without messages. In batches, so neither
 * database holds a long lock. Answers the attempts deleted.
 */
export async function deleteExpired(db: Executor, cutoff: string, batch = 1000): Promise<number> {
  const deleted = await deleteInBatches(batch, async () =>
    (await db
      .deleteFrom('webhook_deliveries')
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('webhook_deliveries')
          .select('id')
          .where((w) => w.or([w('delivered_at', '<', cutoff), w.and([w('delivered_at', 'is', null), w('created_at', '<', cutoff)])]))
          .limit(batch),
      )
      .executeTakeFirst()).numDeletedRows);
  await deleteUnreferenced(db, cutoff, batch, ['webhook_messages', 'webhook_deliveries', 'message_id']);
  // A message's deletion deletes its event payload when it was the last (a trigger). On PostgreSQL
  // two transactions deleting an event's last two messages at once (two apps deleted) each still
  // see the other's message, and leave the payload: those are removed here.
  await deleteUnreferenced(db, cutoff, batch, ['webhook_event_payloads', 'webhook_messages', 'event_payload_id']);
  return deleted;
}

/** An attempt that went out (its request was recorded): not one dropped unsent, nor one whose secret could not be opened. */
const posted = (eb: ExpressionBuilder<DeliveriesJoined, 'd'>) => eb.and([eb('d.request_headers', '!=', '{}'), eb('d.status', 'not like', 'dropped: %')]);
type DeliveriesJoined = { d: WebhookDeliveriesTable };

/**
 * The attempts of an app posted since `since` (recorded then), with the request each made (for
 * fixtures), in the order they were sent: by when each post began (its outcome's time less its
 * duration; posts made at once finish in any order), then by id.
 */
export async function postedDeliveries(db: Executor, appId: number, since: string) {
  const rows = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_messages as m', 'm.id', 'd.message_id')
    .innerJoin('webhook_event_payloads as p', 'p.id', 'm.event_payload_id')
    .select(['d.id', 'd.redelivery', 'd.delivered_at', 'd.duration', 'd.status', 'd.status_code', 'd.request_headers', 'm.guid', 'm.event', 'm.action', 'm.installation_id', 'm.repository_id', 'p.body', 'm.installation'])
    .where('d.app_id', '=', appId)
    .where('d.delivered_at', '>=', since)
    .where(posted)
    .execute();
  // Ordered here, by when each post began (the database knows only when each ended).
  return rows
    .map(({ body, installation, ...row }) => ({ ...row, began: Date.parse(row.delivered_at!) - Number(row.duration ?? 0) * 1000, payload: messagePayload(body, installation) }))
    .sort((a, b) => a.began - b.began || a.id - b.id);
}

/**
 * The messages of an app whose attempts since `since` failed (no response, or a status outside
 * 200-399; not dropped unsent) and that no attempt delivered, nor one still pending (a retry on its
 * way): each one's newest attempt, to redeliver.
 */
export async function failedMessages(db: Executor, appId: number, since: string): Promise<{ message_id: number; id: number }[]> {
  return db
    .selectFrom('webhook_deliveries as d')
    .select(['d.message_id', (eb) => eb.fn.max('d.id').as('id')])
    .where('d.app_id', '=', appId)
    .where('d.delivered_at', '>=', since)
    .where(posted)
    .where((eb) => eb.or([eb('d.status_code', '<', 200), eb('d.status_code', '>=', 400)]))
    .where((eb) => eb.not(eb.exists(eb
      .selectFrom('webhook_deliveries as o')
      .select('o.id')
      .whereRef('o.message_id', '=', 'd.message_id')
      .where((o) => o.or([o('o.delivered_at', 'is', null), o.and([o('o.status_code', '>=', 200), o('o.status_code', '<', 400)])])))))
    .groupBy('d.message_id')
    .orderBy('d.message_id')
    .execute();
}
