// `codehost migrate`: the configured database brought to the latest migration.
import type { Config } from '../config.ts';
import { openMigrated, settlePooler } from './startup.ts';

export async function migrate(config: Config): Promise<void> {
  const { db, applied } = await openMigrated(await settlePooler(config));
  try {
    console.log(applied.length ? `applied: ${applied.join(', ')}` : 'the database is up to date');
  } finally {
    await db.close().catch(() => undefined);
  }
}
