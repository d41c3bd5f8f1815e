// SQL of who follows a subject: its thread subscriptions, the repository's watches, and the members
// of the teams an activity names.
import { sql } from 'kysely';
import type { Executor } from '../../db/index.ts';
import { chunks, type SubscriptionRow } from './store.ts';

/** The thread subscriptions of a subject, by its key (none when the subject is not recorded yet). */
export async function subscriptionsOfSubject(db: Executor, subjectKey: string): Promise<SubscriptionRow[]> {
  return db
    .selectFrom('thread_subscriptions')
    .innerJoin('notification_subjects', 'notification_subjects.id', 'thread_subscriptions.subject_id')
    .selectAll('thread_subscriptions')
    .where('notification_subjects.subject_key', '=', subjectKey)
    .execute();
}

export async function subscription(db: Executor, userId: number, subjectId: number): Promise<SubscriptionRow | undefined> {
  return db.selectFrom('thread_subscriptions').selectAll().where('user_id', '=', userId).where('subject_id', '=', subjectId).executeTakeFirst();
}

/** Creates or changes subscriptions (state and reason); `created_at` is kept when one exists. */
export async function saveSubscriptions(db: Executor, rows: readonly SubscriptionRow[]): Promise<void> {
  for (const chunk of chunks(rows)) {
    await db
      .insertInto('thread_subscriptions')
      .values(chunk)
      .onConflict((oc) => oc.columns(['user_id', 'subject_id']).doUpdateSet({ state: sql`excluded.state`, reason: sql`excluded.reason` }))
      .execute();
  }
}

/** Watch states of a repository: all of them, or only those of some users. */
export async function watchesOf(db: Executor, repositoryId: number, userIds?: readonly number[]) {
  if (userIds && !userIds.length) return [];
  let query = db.selectFrom('repository_subscriptions').select(['user_id', 'subscribed', 'ignored', 'created_at']).where('repository_id', '=', repositoryId);
  if (userIds) query = query.where('user_id', 'in', userIds);
  return query.execute();
}

export async function watchOf(db: Executor, repositoryId: number, userId: number) {
  return db.selectFrom('repository_subscriptions').selectAll().where('repository_id', '=', repositoryId).where('user_id', '=', userId).executeTakeFirst();
}

export async function teamMembers(db: Executor, teamIds: readonly number[]): Promise<number[]> {
  if (!teamIds.length) return [];
  const rows = await db.selectFrom('team_members').select('user_id').distinct().where('team_id', 'in', teamIds).execute();
  return rows.map((r) => r.user_id);
}
