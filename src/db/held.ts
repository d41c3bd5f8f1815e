// Rows a transaction is about to refer to, held so that a concurrent deletion cannot make its inserts
// fail on a foreign key. Background work (an outbox consumer) decides from rows it read a moment ago
// or from ids recorded in an activity's payload: by the time it inserts, a user, a repository or an
// app it names may be gone. Asking which still exist and holding them in the same statement makes the
// inserts that follow safe by construction: what is gone is skipped, what is held stays until the
// transaction ends (a deletion waits for it, then its cascade removes what was inserted).
import { sql, type RawBuilder } from 'kysely';
import type { Executor } from './index.ts';
import { idList, inIdList, isPostgres } from './prepared.ts';

/** The tables whose rows background work refers to by id. */
export type HeldTable = 'users' | 'repositories' | 'issues' | 'apps' | 'notification_subjects';

/**
 * `key share` (the default) keeps the rows from being deleted; `share` also from being changed: it
 * waits for (and makes wait) a writer that locks the row first to read what hangs off it, as a
 * deletion does (`lockAccount`, FOR NO KEY UPDATE), so that writer then sees what this one inserted.
 */
export type HoldMode = 'key share' | 'share';

/**
 * Of `ids`, those whose rows in `table` exist now, held until the transaction ends: on PostgreSQL
 * FOR KEY SHARE (what an insert that refers to a row takes anyway, so it blocks no other reader or
 * referrer, only a deletion or a change of the key), in id order so that concurrent holders never
 * deadlock; a row deleted by a transaction that commits meanwhile is not returned. SQLite runs one
 * transaction at a time: what it reads stays until it ends.
 */
export async function heldRows(trx: Executor, table: HeldTable, ids: readonly number[], mode: HoldMode = 'key share'): Promise<Set<number>> {
  return held(trx, table, ids, mode, sql``);
}

/**
 * `heldRows` of users who are people: an app's bot account (type `Bot`) is left out, as the
 * platform notifies people only (the notification fan-out's recipients).
 */
export async function heldPeople(trx: Executor, ids: readonly number[]): Promise<Set<number>> {
  return held(trx, 'users', ids, 'key share', sql`and type <> 'Bot'`);
}

async function held(trx: Executor, table: HeldTable, ids: readonly number[], mode: HoldMode, also: RawBuilder<unknown>): Promise<Set<number>> {
  const wanted = [...new Set(ids)];
  if (!wanted.length) return new Set();
  const postgres = isPostgres(trx);
  const lock = postgres ? sql`for ${sql.raw(mode)}` : sql``;
  const { rows } = await sql<{ id: number }>`select id from ${sql.table(table)} where ${inIdList(postgres, 'id', idList(trx, wanted))} ${also} order by id ${lock}`.execute(trx);
  return new Set(rows.map((row) => Number(row.id)));
}
