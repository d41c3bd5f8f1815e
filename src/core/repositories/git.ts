// What codehost reads of a repository's git data (the bare repository written by POST /_admin/repos
// with `init_git`): the commit a branch points at, from its ref file or packed-refs, without git.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RepositoryRow } from './representations.ts';

const SHA = /^[0-9a-f]{40}$/;

/** The commit `branch` points at, or null when the repository has no git data or no such branch. */
export async function branchHead(dataDir: string, repository: Pick<RepositoryRow, 'git_path'>, branch: string): Promise<string | null> {
  if (!repository.git_path) return null;
  const gitDir = join(dataDir, repository.git_path);
  const loose = await readFile(join(gitDir, 'refs', 'heads', branch), 'utf8').catch(() => null);
  if (loose !== null && SHA.test(loose.trim())) return loose.trim();
  const packed = await readFile(join(gitDir, 'packed-refs'), 'utf8').catch(() => '');
  for (const line of packed.split('\n')) {
    const [sha, ref] = line.split(' ');
    if (ref === `refs/heads/${branch}` && sha && SHA.test(sha)) return sha;
  }
  return null;
}
