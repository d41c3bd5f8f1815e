// `codehost secret-key rotate` (`secret-key generate` is in generate.ts).
import { ConfigError, secretKeyWeakness, type Config } from '../config.ts';
import { openMigrated } from './startup.ts';

/**
 * `codehost secret-key rotate`: the configured database moves from the key in force to
 * CODEHOST_NEW_SECRET_KEY (src/platform/secrets.ts); the key is read from the environment, never
 * from the command line (which `ps` and shell history show), and neither key is printed.
 */
export async function rotateKey(config: Config): Promise<void> {
  const next = process.env.CODEHOST_NEW_SECRET_KEY;
  if (!next) throw new ConfigError('secret-key rotate: CODEHOST_NEW_SECRET_KEY is not set: set it to the new key (make one with `codehost secret-key generate`); CODEHOST_SECRET_KEY is the key in force');
  const weakness = secretKeyWeakness(next);
  if (weakness) throw new ConfigError(`secret-key rotate: CODEHOST_NEW_SECRET_KEY ${weakness}; make one with \`codehost secret-key generate\``);
  const { db } = await openMigrated(config);
  try {
    const [{ AREAS }, { rotateSecretKey }] = await Promise.all([import('../app.ts'), import('../platform/secrets.ts')]);
    const report = await rotateSecretKey(db.kysely, config.secretKey, next, async (trx, reseal) => {
      let count = 0;
      for (const area of AREAS) count += (await area.resealSecrets?.(trx, reseal)) ?? 0;
      return count;
    }).catch((error: unknown) => {
      if (error instanceof ConfigError) throw error;
      throw new ConfigError(`secret-key rotate: nothing changed: ${(error as Error).message}`, { cause: error });
    });
    console.log(`secret-key rotate: ${report.resealed} sealed secret${report.resealed === 1 ? '' : 's'} sealed again; the database's key is now fingerprint ${report.to} (was ${report.from})`);
    console.log('start every process with CODEHOST_SECRET_KEY set to the new key (the value of CODEHOST_NEW_SECRET_KEY); a process with the old key refuses to start, and URLs signed before no longer verify');
  } finally {
    await db.close().catch(() => undefined);
  }
}
