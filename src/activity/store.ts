// SQL of the outbox: its rows and which consumer has applied which row.
import type { Executor } from '../db/index.ts';
import type { ActivityInput, ActivityRow } from './outbox.ts';

export async function insertActivity(trx: Executor, input: ActivityInput, now: string): Promise<ActivityRow> {
  return trx
    .insertInto('activity_outbox')
    .values({
      event: input.event,
      action: input.action ?? null,
      repository_id: input.repository_id ?? null,
      account_id: input.account_id ?? null,
      actor_id: input.actor_id ?? null,
      issue_id: input.issue_id ?? null,
      comment_id: input.comment_id ?? null,
      payload: JSON.stringify(input.payload ?? {}),
      created_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findActivity(db: Executor, id: number): Promise<ActivityRow | undefined> {
  return db.selectFrom('activity_outbox').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Records that `consumer` applies row `outboxId`; false when it already had. */
export async function markConsumed(trx: Executor, outboxId: number, consumer: string, now: string): Promise<boolean> {
  const marked = await trx
    .insertInto('activity_consumptions')
    .values({ outbox_id: outboxId, consumer, created_at: now })
    .onConflict((oc) => oc.columns(['consumer', 'outbox_id']).doNothing())
    .returning('outbox_id')
    .executeTakeFirst();
  return marked !== undefined;
}
