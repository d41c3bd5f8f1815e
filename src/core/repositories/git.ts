// What codehost reads of a repository's git data (the bare repository written by POST /_admin/repos
// with `init_git`): the commit a branch points at, from its ref file or packed-refs, without git;
// and a commit a ref names (a branch, a tag or a sha), its author, committer, message and files, with
// git's plumbing (`rev-parse`, `cat-file`, `diff-tree`), the binary that wrote the data.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { RepositoryRow } from './representations.ts';

const SHA = /^[0-9a-f]{40}$/;
const exec = promisify(execFile);

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

/** Who made a commit, and when (ISO 8601 in UTC). */
export interface Signature {
  name: string;
  email: string;
  date: string;
}

/** A file a commit changed, against its first parent (every file, for a root commit). */
export interface ChangedFile {
  filename: string;
  /** The blob of the file as the commit left it (a removed file's as it was). */
  sha: string;
  status: 'added' | 'removed' | 'modified' | 'renamed' | 'copied' | 'changed';
  additions: number;
  deletions: number;
}

export interface Commit {
  sha: string;
  tree: string;
  parents: string[];
  author: Signature;
  committer: Signature;
  message: string;
  files: ChangedFile[];
}

/**
 * A ref as a client may write one: a sha (or its prefix), a branch or a tag name. Nothing that git
 * would read as an option or a revision expression (`-x`, `a..b`, `HEAD~1`, `@{...}`, `:path`).
 */
export function isRefName(ref: string): boolean {
  return ref.length <= 255 && /^[A-Za-z0-9_][A-Za-z0-9._/-]*$/.test(ref) && !ref.includes('..') && !ref.includes('//') && !ref.endsWith('.lock') && !ref.endsWith('/');
}

/** git's answer, with the environment the data was written with; `null` when git says no such object. */
async function git(gitDir: string, args: string[]): Promise<string | null> {
  try {
    const { stdout } = await exec('git', ['--git-dir', gitDir, ...args], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', LC_ALL: 'C' },
      timeout: 10_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    return stdout;
  } catch (error) {
    // git exits 128 (or 1) for what it cannot resolve; anything else (no binary, a timeout) is a fault.
    const code = (error as { code?: unknown }).code;
    if (code === 128 || code === 1) return null;
    throw error;
  }
}

/** `Name <email> 1700000000 +0000` of a commit header. */
function signature(line: string): Signature {
  const match = /^(.*) <([^>]*)> (\d+) ([+-]\d{4})$/.exec(line);
  if (!match) return { name: line, email: '', date: new Date(0).toISOString() };
  return { name: match[1]!, email: match[2]!, date: new Date(Number(match[3]) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z') };
}

const STATUS: Record<string, ChangedFile['status']> = { A: 'added', D: 'removed', M: 'modified', R: 'renamed', C: 'copied', T: 'changed' };

/**
 * The commit `ref` names in the repository's git data, or null when it names none (or the
 * repository has no git data; `isRefName` has been checked by the caller's schema or here).
 */
export async function readCommit(dataDir: string, repository: Pick<RepositoryRow, 'git_path'>, ref: string): Promise<Commit | null> {
  if (!repository.git_path || !isRefName(ref)) return null;
  const gitDir = join(dataDir, repository.git_path);
  const resolved = (await git(gitDir, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`]))?.trim();
  if (!resolved || !SHA.test(resolved)) return null;
  const raw = await git(gitDir, ['cat-file', 'commit', resolved]);
  if (raw === null) return null;
  const split = raw.indexOf('\n\n');
  const headers = (split < 0 ? raw : raw.slice(0, split)).split('\n');
  const message = split < 0 ? '' : raw.slice(split + 2).replace(/\n$/, '');
  const header = (name: string) => headers.filter((line) => line.startsWith(`${name} `)).map((line) => line.slice(name.length + 1));
  const parents = header('parent');
  const changes = await git(gitDir, ['diff-tree', '-r', '--root', '--no-commit-id', '--no-renames', '-z', '--raw', '--numstat', resolved]);
  return {
    sha: resolved,
    tree: header('tree')[0] ?? '',
    parents,
    author: signature(header('author')[0] ?? ''),
    committer: signature(header('committer')[0] ?? ''),
    message,
    files: changedFiles(changes ?? ''),
  };
}

/** `diff-tree -z --raw --numstat`: the raw records (`:mode mode sha sha S\0path\0`), then `add\tdel\tpath\0` each. */
function changedFiles(out: string): ChangedFile[] {
  const parts = out.split('\0');
  const files: ChangedFile[] = [];
  let i = 0;
  while (i < parts.length && parts[i]!.startsWith(':')) {
    const [, , before, after, letter] = parts[i]!.slice(1).split(' ');
    const status = STATUS[letter?.[0] ?? ''] ?? 'changed';
    files.push({ filename: parts[i + 1] ?? '', sha: status === 'removed' ? before! : after!, status, additions: 0, deletions: 0 });
    i += 2;
  }
  for (; i < parts.length; i++) {
    const [added, deleted, path] = parts[i]!.split('\t');
    const file = files.find((f) => f.filename === path);
    if (file) Object.assign(file, { additions: Number(added) || 0, deletions: Number(deleted) || 0 });
  }
  return files;
}

/** The branches whose head is `sha`, by name. */
export async function branchesAt(dataDir: string, repository: Pick<RepositoryRow, 'git_path'>, sha: string): Promise<string[]> {
  if (!repository.git_path || !SHA.test(sha)) return [];
  const out = await git(join(dataDir, repository.git_path), ['for-each-ref', '--format=%(refname:lstrip=2)', `--points-at=${sha}`, 'refs/heads/']);
  return (out ?? '').split('\n').filter(Boolean).sort();
}
