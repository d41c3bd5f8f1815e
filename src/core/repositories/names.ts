// The rules the platform applies to repository and branch names, checked before a name is stored
// or handed to git (so git never sees a name it would refuse or read as an option).

const REPO_NAME_PATTERN = /^[A-Za-z0-9._-]{1,100}$/;

/** A repository name: letters, digits, `.`, `_`, `-`; not `.` or `..` (path segments) and no `.git` suffix. */
export function isRepositoryName(name: string): boolean {
  return REPO_NAME_PATTERN.test(name) && name !== '.' && name !== '..' && !name.toLowerCase().endsWith('.git');
}

/**
 * A branch name as `git check-ref-format --branch` accepts it, within the characters the admin API
 * allows (letters, digits, `.`, `_`, `/`, `-`: no space, control character, `~^:?*[\@{`): no
 * component starting with `.` or ending with `.lock`, no `..` or `//`, no leading or trailing `/`,
 * no trailing `.`, not `HEAD`, and no leading `-` (git would read an option).
 */
export function isBranchName(name: string): boolean {
  if (!/^[A-Za-z0-9._/-]{1,100}$/.test(name)) return false;
  if (name.startsWith('-') || name === 'HEAD') return false;
  if (name.includes('..') || name.includes('//')) return false;
  if (name.startsWith('/') || name.endsWith('/') || name.endsWith('.')) return false;
  return name.split('/').every((component) => !component.startsWith('.') && !component.endsWith('.lock'));
}
