// Access rules, declared once beside each route. The same declaration produces the decision for the
// credential kind and scopes, and the `X-Accepted-*` headers. Resource-dependent checks (does this
// token reach this organization or repository, does the user hold this role) are the helpers below,
// called by services; what a caller may not see is a 404.
import type { Executor } from '../../db/index.ts';
import type { RepositoryRow } from '../repositories/representations.ts';
import { orgRoles, type OrgRole } from '../accounts/store.ts';
import { userRepositoryPermissions } from '../repositories/permissions.ts';
import { ApiError, forbidden, notFound, requiresAuthentication } from '../../platform/errors.ts';
import type { CredentialKind, Level, Permissions, Principal, UserPrincipal } from './principal.ts';

export interface AccessRule {
  /** Credential kinds the endpoint accepts. */
  credentials: readonly CredentialKind[];
  /** Answer without credentials too (public resources). */
  anonymous?: boolean;
  /** Classic and OAuth scopes, any one of which suffices (implied scopes count). */
  scopes?: readonly string[];
  /** Fine-grained permission sets, any one of which suffices. */
  permissions?: readonly Permissions[];
}

export const USER_TOKENS = ['classic', 'oauth', 'fine_grained', 'app_user'] as const satisfies readonly CredentialKind[];
export const ALL_TOKENS = [...USER_TOKENS, 'installation'] as const satisfies readonly CredentialKind[];
export const CLASSIC_TOKENS = ['classic', 'oauth'] as const satisfies readonly CredentialKind[];

/** Scopes that a broader scope implies. */
const IMPLIED_SCOPES: Record<string, readonly string[]> = {
  repo: ['repo:status', 'repo_deployment', 'public_repo', 'repo:invite', 'security_events'],
  'admin:org': ['write:org', 'read:org', 'manage_runners:org'],
  'write:org': ['read:org'],
  'admin:enterprise': ['manage_runners:enterprise', 'manage_billing:enterprise', 'read:enterprise', 'scim:enterprise'],
  'manage_billing:enterprise': ['read:enterprise'],
  user: ['read:user', 'user:email', 'user:follow'],
  'admin:repo_hook': ['write:repo_hook', 'read:repo_hook'],
  'write:repo_hook': ['read:repo_hook'],
  'admin:org_hook': [],
};

export function expandScopes(scopes: readonly string[]): Set<string> {
  const out = new Set<string>();
  const visit = (scope: string) => {
    if (out.has(scope)) return;
    out.add(scope);
    for (const implied of IMPLIED_SCOPES[scope] ?? []) visit(implied);
  };
  scopes.forEach(visit);
  return out;
}

export function hasScope(principal: Principal, scopes: readonly string[]): boolean {
  if (principal.type !== 'user' || (principal.kind !== 'classic' && principal.kind !== 'oauth')) return false;
  const held = expandScopes(principal.scopes);
  return scopes.some((scope) => held.has(scope));
}

const levelReaches = (held: Level | undefined, needed: Level) => held === 'write' || (held === 'read' && needed === 'read');

/** Whether a fine-grained credential's permissions satisfy one of the acceptable sets. */
export function hasPermissions(permissions: Permissions, sets: readonly Permissions[]): boolean {
  return sets.some((set) => Object.entries(set).every(([name, level]) => levelReaches(permissions[name], level)));
}

export function isFineGrained(principal: Principal): boolean {
  return principal.kind === 'fine_grained' || principal.kind === 'app_user' || principal.kind === 'installation';
}

/** The response headers that tell a client what the endpoint accepts. */
export function acceptedHeaders(rule: AccessRule): Record<string, string> {
  return {
    'x-accepted-oauth-scopes': (rule.scopes ?? []).join(', '),
    'x-accepted-vendor-permissions': (rule.permissions ?? [])
      .map((set) => Object.entries(set).map(([name, level]) => `${name}=${level}`).join(','))
      .join('; '),
  };
}

/** The 403 for a credential that may not be used here (its kind, scopes or permissions fall short). */
export function notAccessible(principal: Principal): ApiError {
  return forbidden(
    principal.kind === 'classic' || principal.kind === 'fine_grained'
      ? 'Resource not accessible by personal access token'
      : 'Resource not accessible by integration',
  );
}

/** The endpoint-level decision: credential kind, scopes, and whether the token holds a permission set at all. */
export function checkRule(rule: AccessRule, principal: Principal): void {
  if (principal.type === 'anonymous') {
    if (rule.anonymous) return;
    throw requiresAuthentication();
  }
  if (!rule.credentials.includes(principal.kind)) throw notAccessible(principal);
  if ((principal.kind === 'classic' || principal.kind === 'oauth') && rule.scopes?.length) {
    if (!hasScope(principal, rule.scopes)) throw notAccessible(principal);
  }
  if (principal.type !== 'app' && isFineGrained(principal) && rule.permissions?.length) {
    if (!hasPermissions(principal.permissions, rule.permissions)) throw notAccessible(principal);
  }
}

// --- Resource-dependent checks -------------------------------------------------------------------

/** The user behind a principal, if any. */
export function actingUser(principal: Principal): UserPrincipal['user'] | null {
  return principal.type === 'user' ? principal.user : null;
}

/**
 * Whether a fine-grained credential reaches an account's resources: a fine-grained personal token
 * must be owned by that account, an installation token must belong to an installation on it, and an
 * app user token needs its app installed on it.
 */
export async function reachesAccount(db: Executor, principal: Principal, accountId: number): Promise<boolean> {
  if (principal.type === 'installation') return principal.accountId === accountId;
  if (principal.type !== 'user') return false;
  if (principal.kind === 'fine_grained') return principal.resourceOwnerId === accountId;
  if (principal.kind === 'app_user') {
    const installation = await db
      .selectFrom('installations')
      .select('id')
      .where('app_id', '=', principal.appId ?? -1)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return installation !== undefined;
  }
  return true;
}

/** Whether a fine-grained credential's repository selection includes a repository. */
export async function reachesRepository(db: Executor, principal: Principal, repository: Pick<RepositoryRow, 'id' | 'owner_id'>): Promise<boolean> {
  if (!isFineGrained(principal) || (principal.type !== 'installation' && principal.type !== 'user')) return true;
  if (principal.repositorySelection === 'selected' && !principal.repositoryIds.includes(repository.id)) return false;
  if (principal.type === 'user' && principal.kind === 'fine_grained') return principal.resourceOwnerId === repository.owner_id;
  // Installation and app user tokens: an installation on the owner must cover the repository (one query).
  let query = db
    .selectFrom('installations as i')
    .leftJoin('installation_repositories as r', (join) => join.onRef('r.installation_id', '=', 'i.id').on('r.repository_id', '=', repository.id))
    .select(['i.repository_selection', 'r.repository_id'])
    .where('i.account_id', '=', repository.owner_id);
  query = principal.type === 'installation' ? query.where('i.id', '=', principal.installationId) : query.where('i.app_id', '=', principal.appId ?? -1);
  const installation = await query.executeTakeFirst();
  return installation !== undefined && (installation.repository_selection === 'all' || installation.repository_id !== null);
}

// What a user may do with a repository (owner, organization roles, collaborators, teams, visibility).
export { userRepositoryPermissions, type RepositoryPermissions } from '../repositories/permissions.ts';

/**
 * Whether the principal may read a repository: the user's own access, narrowed by a fine-grained
 * token's reach. Used to answer 404 for what the caller may not see.
 */
export async function canReadRepository(db: Executor, principal: Principal, repository: RepositoryRow): Promise<boolean> {
  if (principal.type === 'installation') return reachesRepository(db, principal, repository);
  if (principal.type === 'app') return false;
  const userId = principal.type === 'user' ? principal.user.id : null;
  const permissions = await userRepositoryPermissions(db, userId, repository);
  if (!permissions.pull) return false;
  if (repository.visibility === 'public') return true;
  return reachesRepository(db, principal, repository);
}

/** A repository locked by a user migration refuses writes until it is unlocked. */
export function assertRepositoryWritable(repository: Pick<RepositoryRow, 'locked_by_migration_id'>): void {
  if (repository.locked_by_migration_id !== null) throw forbidden('Repository is locked for migration');
}

/** Throws the platform's 404 unless the principal may read the repository. */
export async function requireReadableRepository(db: Executor, principal: Principal, repository: RepositoryRow | undefined): Promise<RepositoryRow> {
  if (!repository || !(await canReadRepository(db, principal, repository))) throw notFound();
  return repository;
}

/**
 * Whether the principal acts for an organization in one of `roles`: a user who holds one of them,
 * through a token that reaches the organization, or an installation on the organization (an app acts
 * through its permissions, which the route's rule has checked). Callers answer 404 when it does not.
 */
export async function actsForOrganization(db: Executor, principal: Principal, orgId: number, roles: readonly OrgRole[]): Promise<boolean> {
  if (principal.type === 'installation') return principal.accountId === orgId;
  if (principal.type !== 'user') return false;
  const held = await orgRoles(db, orgId, principal.user.id);
  if (!roles.some((role) => held.has(role))) return false;
  return reachesAccount(db, principal, orgId);
}
