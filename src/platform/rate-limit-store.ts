// SQL of the rate-limit counters: one row per key, a window that opens at its first request.
import { sql } from 'kysely';
import type { Executor } from '../db/index.ts';
import { reusableQuery } from '../db/prepared.ts';

/**
 * Counts `count` requests (a lease of that many numbers, or one failed login): a window that started
 * at or before `expired` starts again at `now`. Returns the count after it and the window's start.
 */
export async function countRequests(db: Executor, key: string, count: number, now: number, expired: number): Promise<{ used: number; window_start: number }> {
  const [row] = await countQuery(db, key, count, now, expired);
  return row!;
}

const countQuery = reusableQuery('rate_limit_count', (db, key: string, count: number, now: number, expired: number) =>
  db
    .insertInto('rate_limits')
    .values({ key, window_start: now, used: count })
    .onConflict((oc) =>
      oc.column('key').doUpdateSet({
        used: sql`case when rate_limits.window_start <= ${expired} then ${count} else rate_limits.used + ${count} end`,
        window_start: sql`case when rate_limits.window_start <= ${expired} then ${now} else rate_limits.window_start end`,
      }),
    )
    .returning(['used', 'window_start']),
);

export async function findCounter(db: Executor, key: string): Promise<{ used: number; window_start: number } | undefined> {
  const [row] = await counterQuery(db, key);
  return row;
}

const counterQuery = reusableQuery('rate_limit_counter', (db, key: string) =>
  db.selectFrom('rate_limits').select(['used', 'window_start']).where('key', '=', key),
);

/** Removes the counters whose window started at or before `expired`; returns how many. */
export async function deleteExpiredCounters(db: Executor, expired: number): Promise<number> {
  const result = await db.deleteFrom('rate_limits').where('window_start', '<=', expired).executeTakeFirst();
  return Number(result.numDeletedRows);
}
