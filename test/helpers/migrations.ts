// Migration test helpers shared by the export tests.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestServer } from './server.ts';

/** Creates `owner/name` with its git data replaced by a plain file: an export of it fails. */
export async function repositoryWithBrokenGitData(server: TestServer, owner: string, name: string): Promise<void> {
  await server.admin('POST', '/repos', { owner, name, init_git: true });
  const repository = await server.server.ctx.db.kysely.selectFrom('repositories').select('git_path').where('name', '=', name).executeTakeFirstOrThrow();
  const gitDir = join(server.server.ctx.config.dataDir, repository.git_path!);
  rmSync(gitDir, { recursive: true });
  writeFileSync(gitDir, 'not git data');
}
