// Who may do what with a repository, as on the platform:
// - its owner, and the owners of its organization, administer it;
// - the members of its organization read and write it (the organization base permission: write);
//   its security managers read it;
// - a direct collaborator has the collaborator's permission, a member of a team the team's
//   permission on the repository: `pull` and `triage` read, `push` and `maintain` write, `admin`
//   administers; the strongest of them counts;
// - anyone reads a public repository; an internal one is read by the members of every organization
//   of the owner's enterprise (not their billing managers): `readsByVisibility` in ./store.ts, the
//   one definition, which the access facts and `readableBy` both use.
// The facts come from one query for any number of repositories (./store.ts); `readableBy` there is
// the same read rule as a SQL condition, for lists that filter and count in their own query.
import type { Selectable } from 'kysely';
import type { Executor } from '../../db/index.ts';
import type { RepositoriesTable, RepositoryPermission } from '../../db/tables/repositories.ts';
import { REPOSITORY_PERMISSIONS, repositoryAccessFacts, type RepositoryAccessFacts } from './store.ts';

type RepositoryRow = Selectable<RepositoriesTable>;

export interface RepositoryPermissions {
  admin: boolean;
  push: boolean;
  pull: boolean;
}

const NONE: RepositoryPermissions = { admin: false, push: false, pull: false };

const rankOf = (permission: RepositoryPermission | null) => (permission ? REPOSITORY_PERMISSIONS.indexOf(permission) + 1 : 0);

/** The strongest permission a user holds on a repository, from its access facts; null: none. */
export function roleFrom(facts: RepositoryAccessFacts, userId: number): RepositoryPermission | null {
  if (facts.owner_id === userId || facts.orgOwner) return 'admin';
  const held: (RepositoryPermission | null)[] = [facts.collaborator, facts.team, facts.orgMember ? 'push' : null, facts.orgSecurityManager ? 'pull' : null];
  if (facts.visibilityReads) held.push('pull');
  const best = Math.max(...held.map(rankOf));
  return best ? REPOSITORY_PERMISSIONS[best - 1]! : null;
}

/** The legacy triple a permission implies (`maintain` writes, `triage` reads). */
export function permissionsOf(permission: RepositoryPermission | null): RepositoryPermissions {
  const rank = rankOf(permission);
  return { admin: rank >= rankOf('admin'), push: rank >= rankOf('push'), pull: rank >= rankOf('pull') };
}

/** The five-level form (`admin`, `maintain`, `push`, `triage`, `pull`) of a permission. */
export function fullPermissionsOf(permission: RepositoryPermission | null): Record<RepositoryPermission, boolean> {
  const rank = rankOf(permission);
  return { admin: rank >= 5, maintain: rank >= 4, push: rank >= 3, triage: rank >= 2, pull: rank >= 1 };
}

/** The platform's names of a permission: `role_name` (`read`, `triage`, `write`, `maintain`, `admin`) and the legacy `permission`. */
export function permissionNames(permission: RepositoryPermission): { permission: 'admin' | 'write' | 'read'; role_name: string } {
  const role_name = permission === 'pull' ? 'read' : permission === 'push' ? 'write' : permission;
  const legacy = permissionsOf(permission);
  return { permission: legacy.admin ? 'admin' : legacy.push ? 'write' : 'read', role_name };
}

/**
 * The strongest permission a user holds on a repository, of the five (`pull` ... `admin`); null:
 * none. Reading a public repository is `pull` for anyone.
 */
export async function userRepositoryRole(
  db: Executor,
  userId: number,
  repository: Pick<RepositoryRow, 'id' | 'owner_id' | 'visibility'>,
): Promise<RepositoryPermission | null> {
  if (repository.owner_id === userId) return 'admin';
  const [facts] = await repositoryAccessFacts(db, userId, [repository.id]);
  return facts ? roleFrom(facts, userId) : repository.visibility === 'public' ? 'pull' : null;
}

/** What a user (null: anonymous) may do with a repository. */
export async function userRepositoryPermissions(
  db: Executor,
  userId: number | null,
  repository: Pick<RepositoryRow, 'id' | 'owner_id' | 'visibility'>,
): Promise<RepositoryPermissions> {
  if (userId === null) return repository.visibility === 'public' ? { admin: false, push: false, pull: true } : NONE;
  return permissionsOf(await userRepositoryRole(db, userId, repository));
}

/** What a user may do with each of several repositories, in one query (absent ones are left out). */
export async function userRepositoriesPermissions(db: Executor, userId: number, repositoryIds: readonly number[]): Promise<Map<number, RepositoryPermissions>> {
  const facts = await repositoryAccessFacts(db, userId, repositoryIds);
  return new Map(facts.map((f) => [f.id, permissionsOf(roleFrom(f, userId))]));
}
