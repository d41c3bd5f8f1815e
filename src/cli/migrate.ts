// `codehost migrate`: the configured database brought to the latest migration; `--check` only says
// whether any is pending (for deployment pipelines), and changes nothing.
import { existsSync } from 'node:fs';
import { ConfigError, type Config } from '../config.ts';
import { databaseError, fromDatabase, openMigrated, settlePooler } from './startup.ts';

export async function migrate(config: Config, options: { check?: boolean } = {}): Promise<void> {
  if (options.check) return check(await settlePooler(config));
  const { db, applied } = await openMigrated(await settlePooler(config));
  try {
    console.log(applied.length ? `applied: ${applied.join(', ')}` : 'the database is up to date');
  } finally {
    await db.close().catch(() => undefined);
  }
}

/** Exit 0 with `the database is up to date`, or exit 1 with one line naming the pending migrations. */
async function check(config: Config): Promise<void> {
  const [{ openDatabase }, { pendingMigrations }, { migrations }] = await Promise.all([
    import('../db/index.ts'), import('../db/migrate.ts'), import('../db/migrations/index.ts'),
  ]);
  const sqlitePath = `${config.dataDir}/codehost.db`;
  // An embedded database not made yet has every migration pending: nothing is created to say so.
  let pending = Object.keys(migrations);
  if (config.databaseUrl || existsSync(sqlitePath)) {
    const db = openDatabase({ databaseUrl: config.databaseUrl, sqlitePath });
    try {
      pending = await pendingMigrations(db);
    } catch (error) {
      throw fromDatabase(error) ? databaseError(error, config) : error;
    } finally {
      await db.close().catch(() => undefined);
    }
  }
  if (pending.length) {
    throw new ConfigError(`${pending.length} migration${pending.length === 1 ? '' : 's'} pending (${pending.join(', ')}): run \`codehost migrate\``);
  }
  console.log('the database is up to date');
}
