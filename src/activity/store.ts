// SQL of the outbox: its rows and which consumer has applied which row.
import type { Executor } from '../db/index.ts';
import type { ActivityRow, NewActivity } from './types.ts';

export type { NewActivity } from './types.ts';

export async function insertActivity(trx: Executor, input: NewActivity, now: string): Promise<ActivityRow> {
  return trx
    .insertInto('activity_outbox')
    .values({
      name: input.name,
      event: input.event,
      action: input.action ?? null,
      repository_id: input.repository_id ?? null,
      account_id: input.account_id ?? null,
      actor_id: input.actor_id ?? null,
      issue_id: input.issue_id ?? null,
      comment_id: input.comment_id ?? null,
      payload: JSON.stringify(input.payload),
      created_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The rows of these ids that exist, in id order (the order they were recorded in). */
export async function findActivities(db: Executor, ids: number[]): Promise<ActivityRow[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('activity_outbox').selectAll().where('id', 'in', ids).orderBy('id').execute();
}

/** Records that `consumer` applies these rows, in one statement; answers the ids it had not applied before. */
export async function markConsumed(trx: Executor, outboxIds: number[], consumer: string, now: string): Promise<Set<number>> {
  if (outboxIds.length === 0) return new Set();
  const marked = await trx
    .insertInto('activity_consumptions')
    .values(outboxIds.map((outboxId) => ({ outbox_id: outboxId, consumer, created_at: now })))
    .onConflict((oc) => oc.columns(['consumer', 'outbox_id']).doNothing())
    .returning('outbox_id')
    .execute();
  return new Set(marked.map((row) => Number(row.outbox_id)));
}
