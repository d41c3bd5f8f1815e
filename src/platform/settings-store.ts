// SQL of the server's own settings (the admin token's hash, the generated secret key): key → value.
import type { Executor } from '../db/index.ts';

export async function findSetting(db: Executor, key: string): Promise<string | undefined> {
  return (await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst())?.value;
}

/** Stores `value` unless the key has one, and returns the stored value (another process may have stored first). */
export async function ensureSetting(db: Executor, key: string, value: string): Promise<string> {
  await db.insertInto('settings').values({ key, value }).onConflict((oc) => oc.column('key').doNothing()).execute();
  return (await findSetting(db, key))!;
}

export async function putSetting(db: Executor, key: string, value: string): Promise<void> {
  await db.insertInto('settings').values({ key, value }).onConflict((oc) => oc.column('key').doUpdateSet({ value })).execute();
}
