// `codehost seed FILE`: a seed file loaded into the configured database (idempotent).
import { checkDataDir, ConfigError, type Config } from '../config.ts';
import { HELP } from './help.ts';
import { checkSeedFile, createServerOrExplain, loadServer, printSeedReport, readCheckedSeed } from './startup.ts';

export async function seed(config: Config, args: string[]): Promise<void> {
  const [file] = args;
  if (!file) throw new ConfigError(HELP.seed!);
  const data = await readCheckedSeed(checkSeedFile(file, 'seed'));
  checkDataDir(config);
  const server = await createServerOrExplain({ ...config, jobs: { ...config.jobs, worker: false } }, { logger: false });
  try {
    const [{ AREAS }, { loadSeed }] = await loadServer();
    printSeedReport(await loadSeed(server.ctx, AREAS, data));
    // Activity in the seed (issues, comments) is fanned out by a running server's worker.
  } finally {
    await server.close();
  }
}
