// SQL of the server's own settings (the admin token's hash, the generated secret key): key → value.
import type { Executor } from '../db/index.ts';

/** The SHA-256 of the stored admin token (the rule of which token is in force: src/admin/token.ts). */
export const ADMIN_TOKEN_HASH = 'admin_token_hash';

export async function findSetting(db: Executor, key: string): Promise<string | undefined> {
  return (await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst())?.value;
}

/**
 * The stored value of a key; when it has none, stores `value` and returns what is stored then
 * (another process may have stored first). A start with the key set writes nothing.
 */
export async function ensureSetting(db: Executor, key: string, value: string): Promise<string> {
  const stored = await findSetting(db, key);
  if (stored !== undefined) return stored;
  await db.insertInto('settings').values({ key, value }).onConflict((oc) => oc.column('key').doNothing()).execute();
  return (await findSetting(db, key))!;
}

export async function deleteSetting(db: Executor, key: string): Promise<void> {
  await db.deleteFrom('settings').where('key', '=', key).execute();
}

export async function putSetting(db: Executor, key: string, value: string): Promise<void> {
  await db.insertInto('settings').values({ key, value }).onConflict((oc) => oc.column('key').doUpdateSet({ value })).execute();
}

/**
 * A write the database must accept for the server to be ready (/readyz): SQLite on a full or
 * read-only disk, or a PostgreSQL standby after a failover, still answers reads.
 */
export async function probeWrite(db: Executor): Promise<void> {
  await putSetting(db, 'readiness_probe', new Date().toISOString());
}
