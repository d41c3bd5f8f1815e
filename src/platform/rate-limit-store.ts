// SQL of the rate-limit counters: one row per key, a window that opens at its first request.
import { sql } from 'kysely';
import type { Executor } from '../db/index.ts';

/** Counts one request: a window that started at or before `expired` starts again at `now`. */
export async function countRequest(db: Executor, key: string, now: number, expired: number): Promise<{ used: number; window_start: number }> {
  return db
    .insertInto('rate_limits')
    .values({ key, window_start: now, used: 1 })
    .onConflict((oc) =>
      oc.column('key').doUpdateSet({
        used: sql`case when rate_limits.window_start <= ${expired} then 1 else rate_limits.used + 1 end`,
        window_start: sql`case when rate_limits.window_start <= ${expired} then ${now} else rate_limits.window_start end`,
      }),
    )
    .returning(['used', 'window_start'])
    .executeTakeFirstOrThrow();
}

export async function findCounter(db: Executor, key: string): Promise<{ used: number; window_start: number } | undefined> {
  return db.selectFrom('rate_limits').select(['used', 'window_start']).where('key', '=', key).executeTakeFirst();
}

export async function uncountRequest(db: Executor, key: string): Promise<void> {
  await db.updateTable('rate_limits').set({ used: sql`case when used > 0 then used - 1 else 0 end` }).where('key', '=', key).execute();
}

/** Removes the counters whose window started at or before `expired`; returns how many. */
export async function deleteExpiredCounters(db: Executor, expired: number): Promise<number> {
  const result = await db.deleteFrom('rate_limits').where('window_start', '<=', expired).executeTakeFirst();
  return Number(result.numDeletedRows);
}
