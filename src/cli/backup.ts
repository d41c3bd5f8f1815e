// `codehost backup DIR`: the database, the git data and the finished migration archives, copied
// into a new directory laid out as a data directory (src/admin/backup.ts).
import { resolve } from 'node:path';
import { ConfigError, type Config } from '../config.ts';
import { HELP } from './help.ts';

export async function backupCommand(config: Config, args: string[]): Promise<void> {
  const [target] = args;
  if (!target || args.length > 1) throw new ConfigError(HELP.backup!);
  const { backup } = await import('../admin/backup.ts');
  const report = await backup({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, target: resolve(target) }).catch((error: Error) => {
    throw new ConfigError(`backup: ${error.message}`, { cause: error });
  });
  console.log(`backup: ${resolve(target)}: ${report.files} files, ${(report.bytes / 1024).toFixed(0)} KiB, in ${report.ms} ms (database: ${report.database})`);
}
