// Access decisions. A route's rule (./rule.ts) gives the decision for the credential kind and scopes,
// and the `X-Accepted-*` headers. Resource-dependent checks (does this
// token reach this organization or repository, does the user hold this role) are the helpers below,
// called by services; what a caller may not see is a 404.
import type { Selectable } from 'kysely';
import type { Executor } from '../../db/index.ts';
import type { RepositoriesTable } from '../../db/tables/repositories.ts';
import { installationCovers, orgRoles, type OrgRole } from './store.ts';
import { userRepositoryPermissions, type RepositoryPermissions } from './repository-permissions.ts';
import { ApiError, forbidden, notFound, requiresAuthentication } from '../../platform/errors.ts';
import type { InstallationPrincipal, Principal, UserPrincipal } from './principal.ts';
import { CLASSIC_TOKENS, type AccessRule } from './rule.ts';
import type { Level, Permissions } from './permissions.ts';
import { note, noteUsed, type Held, type Needed, type RefusalReason } from './explain.ts';

type RepositoryRow = Selectable<RepositoriesTable>;

/** Scopes that a broader scope implies (a Map: a scope named `toString` or `__proto__` implies nothing). */
const IMPLIED_SCOPES: ReadonlyMap<string, readonly string[]> = new Map(Object.entries({
  repo: ['repo:status', 'repo_deployment', 'public_repo', 'repo:invite', 'security_events'],
  'admin:org': ['write:org', 'read:org', 'manage_runners:org'],
  'write:org': ['read:org'],
  'admin:enterprise': ['manage_runners:enterprise', 'manage_billing:enterprise', 'read:enterprise', 'scim:enterprise'],
  'manage_billing:enterprise': ['read:enterprise'],
  user: ['read:user', 'user:email', 'user:follow'],
  'admin:repo_hook': ['write:repo_hook', 'read:repo_hook'],
  'write:repo_hook': ['read:repo_hook'],
  'admin:org_hook': [],
} satisfies Record<string, readonly string[]>));

export function expandScopes(scopes: readonly string[]): Set<string> {
  const out = new Set<string>();
  const visit = (scope: string) => {
    if (out.has(scope)) return;
    out.add(scope);
    for (const implied of IMPLIED_SCOPES.get(scope) ?? []) visit(implied);
  };
  scopes.forEach(visit);
  return out;
}

export function hasScope(principal: Principal, scopes: readonly string[]): boolean {
  return heldScope(principal, scopes) !== undefined;
}

/** The first of `scopes` a classic or OAuth token holds (implied scopes count). */
function heldScope(principal: Principal, scopes: readonly string[]): string | undefined {
  if (principal.type !== 'user' || (principal.kind !== 'classic' && principal.kind !== 'oauth')) return undefined;
  const held = expandScopes(principal.scopes);
  return scopes.find((scope) => held.has(scope));
}

const levelReaches = (held: Level | undefined, needed: Level) => held === 'write' || (held === 'read' && needed === 'read');

/** Whether a fine-grained credential's permissions satisfy one of the acceptable sets. */
export function hasPermissions(permissions: Permissions, sets: readonly Permissions[]): boolean {
  return heldSet(permissions, sets) !== undefined;
}

function heldSet(permissions: Permissions, sets: readonly Permissions[]): Permissions | undefined {
  return sets.find((set) => Object.entries(set).every(([name, level]) => levelReaches(Object.hasOwn(permissions, name) ? permissions[name] : undefined, level)));
}

// Stryker disable all: the journal's explanation (./explain.ts), never in the answer: test/testing/journal-explains.test.ts
/** What a caller held, for an explanation: a classic token's scopes, a fine-grained credential's permissions (`on` an account, where given). */
export function heldBy(principal: Principal, permissions?: Permissions): Held {
  if (principal.type === 'user' && (principal.kind === 'classic' || principal.kind === 'oauth')) return { kind: principal.kind, scopes: principal.scopes };
  if (principal.type === 'user' || principal.type === 'installation') return { kind: principal.kind, permissions: permissions ?? principal.permissions };
  return { kind: principal.kind };
}

/** Notes on the principal why the request is refused (the answer is `error`, unchanged) and returns `error`. */
function refusal<E extends Error>(error: E, principal: Principal, reason: RefusalReason, message: string, needed?: Needed, held: Held = heldBy(principal)): E {
  // Stryker disable next-line all: the journal's explanation (./explain.ts), never in the answer: test/testing/journal-explains.test.ts
  note(principal, { reason, message, ...(needed ? { needed } : {}), held });
  return error;
}

const neededOf = (rule: Pick<AccessRule, 'scopes' | 'permissions'> | null | undefined, principal: Principal): Needed =>
  principal.kind === 'classic' || principal.kind === 'oauth' ? { scopes: [...(rule?.scopes ?? [])] } : { permissions: [...(rule?.permissions ?? [])] };

// Stryker restore all
export function isFineGrained(principal: Principal): boolean {
  return principal.kind === 'fine_grained' || principal.kind === 'app_user' || principal.kind === 'installation';
}

const accepted = new WeakMap<AccessRule, { permissionsHeader: string; headers: Record<string, string> }>();

/**
 * The response headers that tell a client what the endpoint accepts (worked out once per rule):
 * `X-Accepted-OAuth-Scopes` and the permissions' header, whose name carries the vendor word
 * (`x-accepted-vendor-permissions`, src/platform/vendor.ts).
 */
export function acceptedHeaders(rule: AccessRule, permissionsHeader = 'x-accepted-vendor-permissions'): Record<string, string> {
  let known = accepted.get(rule);
  if (known?.permissionsHeader !== permissionsHeader) accepted.set(rule, (known = { permissionsHeader, headers: acceptedHeadersOf(rule, permissionsHeader) }));
  return known.headers;
}

/**
 * `X-Accepted-OAuth-Scopes`: every scope that includes one of those asked for (the scope itself, or
 * one that implies it), in the platform's order (`admin:org, write:org` for `write:org`).
 */
export function acceptedScopes(scopes: readonly string[]): string {
  const candidates = new Set([...IMPLIED_SCOPES.keys(), ...scopes]);
  return [...candidates].filter((scope) => scopes.some((asked) => expandScopes([scope]).has(asked))).sort().join(', ');
}

function acceptedHeadersOf(rule: AccessRule, permissionsHeader: string): Record<string, string> {
  // An endpoint no classic or OAuth token may call (Basic, JWT) takes no OAuth scope: no header at all.
  const takesScopes = rule.credentials.some((kind) => (CLASSIC_TOKENS as readonly string[]).includes(kind));
  return {
    ...(takesScopes ? { 'x-accepted-oauth-scopes': acceptedScopes(rule.scopes ?? []) } : {}),
    [permissionsHeader]: (rule.permissions ?? [])
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

/**
 * The 403 of a classic or OAuth token that lacks a scope this request needs (one that depends on the
 * resource, e.g. `repo` for private repositories), naming the scopes in `X-Accepted-OAuth-Scopes`.
 */
export function requireScopes(principal: Principal, scopes: readonly string[]): void {
  const scope = heldScope(principal, scopes);
  if (scope !== undefined) return noteUsed(principal, { scope });
  // Stryker disable next-line StringLiteral,ObjectLiteral,ArrayDeclaration: the journal's explanation (./explain.ts), never in the answer: test/testing/journal-explains.test.ts
  throw refusal(new ApiError(403, notAccessible(principal).message, { headers: { 'x-accepted-oauth-scopes': acceptedScopes(scopes) } }),
    principal, 'scope_missing', `this request needs one of the scopes ${scopes.join(', ')}`, { scopes: [...scopes] });
}

/** The endpoint-level decision: credential kind, scopes, and whether the token holds a permission set at all. */
export function checkRule(rule: AccessRule, principal: Principal): void {
  if (principal.type === 'anonymous') {
    if (rule.anonymous) return noteUsed(principal, null);
    // Stryker disable next-line StringLiteral,ObjectLiteral,ArrayDeclaration: the journal's explanation (./explain.ts), never in the answer: test/testing/journal-explains.test.ts
    throw refusal(requiresAuthentication(), principal, 'authentication_required', 'this operation needs a credential and the request had none', { credentials: [...rule.credentials] });
  }
  if (!rule.credentials.includes(principal.kind)) {
    // Stryker disable next-line StringLiteral,ObjectLiteral,ArrayDeclaration: the journal's explanation (./explain.ts), never in the answer: test/testing/journal-explains.test.ts
    throw refusal(notAccessible(principal), principal, 'credential_not_accepted', `this operation accepts ${rule.credentials.join(', ')} credentials, not ${principal.kind}`, { credentials: [...rule.credentials] });
  }
  // Needed on a private repository only: what was used is noted once the repository is known.
  if (rule.privateOnly) return;
  if ((principal.kind === 'classic' || principal.kind === 'oauth') && rule.scopes?.length) {
    const scope = heldScope(principal, rule.scopes);
    // Stryker disable next-line StringLiteral,ObjectLiteral,ArrayDeclaration: the journal's explanation (./explain.ts), never in the answer: test/testing/journal-explains.test.ts
    if (scope === undefined) throw refusal(notAccessible(principal), principal, 'scope_missing', `this operation needs one of the scopes ${rule.scopes.join(', ')}`, { scopes: [...rule.scopes] });
    return noteUsed(principal, { scope });
  }
  if (principal.type !== 'app' && isFineGrained(principal) && rule.permissions?.length) {
    const set = heldSet(principal.permissions, rule.permissions);
    // Stryker disable next-line StringLiteral,ObjectLiteral,ArrayDeclaration: the journal's explanation (./explain.ts), never in the answer: test/testing/journal-explains.test.ts
    if (!set) throw refusal(notAccessible(principal), principal, 'permission_missing', 'this operation needs one of the permission sets given in needed', { permissions: [...rule.permissions] });
    return noteUsed(principal, { permissions: set });
  }
  noteUsed(principal, null);
}

// --- Resource-dependent checks -------------------------------------------------------------------

/** The user behind a principal, if any. */
export function actingUser(principal: Principal): UserPrincipal['user'] | null {
  return principal.type === 'user' ? principal.user : null;
}

/** A token whose permissions are fine-grained (fine-grained personal, app user, installation), or null. */
function fineGrainedToken(principal: Principal): UserPrincipal | InstallationPrincipal | null {
  if (principal.type === 'installation') return principal;
  if (principal.type === 'user' && (principal.kind === 'fine_grained' || principal.kind === 'app_user')) return principal;
  return null;
}

/**
 * Whether a fine-grained credential reaches an account's resources: a fine-grained personal token
 * must be owned by that account, an installation token must belong to an installation on it, and an
 * app user token needs its app installed on it (and, scoped to a target, the account to be the target).
 */
export async function reachesAccount(_db: Executor, principal: Principal, accountId: number): Promise<boolean> {
  if (principal.type === 'installation') return principal.accountId === accountId;
  if (principal.type !== 'user') return false;
  if (principal.kind === 'fine_grained') return principal.resourceOwnerId === accountId;
  if (principal.kind === 'app_user') return (await principal.installationOn(accountId)) !== null;
  return true;
}

/**
 * Whether a fine-grained credential's effective permissions on an account satisfy one of the sets
 * the route accepts. For an app user token they are the grant of its app's installation there ∩
 * what the app requests (∩ a scoped token's own); other kinds hold the same everywhere they reach,
 * which the route's rule has checked already. Classic and OAuth tokens answer to scopes instead.
 */
export async function permittedOn(principal: Principal, accountId: number): Promise<boolean> {
  const token = fineGrainedToken(principal);
  const sets = token?.route?.permissions;
  if (!token || !sets?.length) return true;
  const held = await token.permissionsOn(accountId);
  const set = heldSet(held, sets);
  // Stryker disable next-line all: the journal's explanation (./explain.ts), never in the answer: test/testing/journal-explains.test.ts
  if (set) noteUsed(principal, { permissions: set });
  // Stryker disable next-line all: the journal's explanation (./explain.ts), never in the answer: test/testing/journal-explains.test.ts
  else note(principal, { reason: 'permission_missing', message: `on account ${accountId}, the credential holds none of the permission sets this operation needs`, needed: { permissions: [...sets] }, held: heldBy(principal, held) });
  return set !== undefined;
}

/** The 403 of a credential that reaches an account but lacks the route's permissions there. */
export async function requirePermittedOn(principal: Principal, accountId: number): Promise<void> {
  if (!(await permittedOn(principal, accountId))) throw notAccessible(principal);
}

/** Whether a fine-grained credential's repository selection includes a repository. */
export async function reachesRepository(db: Executor, principal: Principal, repository: Pick<RepositoryRow, 'id' | 'owner_id'>): Promise<boolean> {
  const token = fineGrainedToken(principal);
  if (!token) return true;
  if (token.repositorySelection === 'selected' && !token.repositoryIds.includes(repository.id)) return false;
  if (token.type === 'user' && token.kind === 'fine_grained') return token.resourceOwnerId === repository.owner_id;
  if (token.type === 'user') {
    // App user tokens: the app's installation on the owner (looked up once per request) must cover it.
    const installation = await token.installationOn(repository.owner_id);
    if (!installation) return false;
    if (installation.repositorySelection === 'all') return true;
    return installationCovers(db, installation.id, repository.id);
  }
  // Installation tokens: their installation, on the owner, must cover the repository (one query).
  if (token.accountId !== repository.owner_id) return false;
  return installationCovers(db, token.installationId, repository.id);
}

/** Per request (a principal lives as long as its request): the calling user's permissions by repository id. */
const callerPermissions = new WeakMap<UserPrincipal, Map<number, Promise<RepositoryPermissions>>>();

/**
 * What the calling user (none for other callers) may do with a repository, looked up once per
 * request: the read check and the representation's `permissions` share one query.
 */
export function callerRepositoryPermissions(db: Executor, principal: Principal, repository: Pick<RepositoryRow, 'id' | 'owner_id' | 'visibility'>): Promise<RepositoryPermissions> {
  if (principal.type !== 'user') return userRepositoryPermissions(db, null, repository);
  let known = callerPermissions.get(principal);
  if (!known) callerPermissions.set(principal, (known = new Map()));
  let permissions = known.get(repository.id);
  if (!permissions) known.set(repository.id, (permissions = userRepositoryPermissions(db, principal.user.id, repository)));
  return permissions;
}

/**
 * Whether the principal may read a repository: the user's own access, narrowed by a fine-grained
 * token's reach. Used to answer 404 for what the caller may not see.
 */
export async function canReadRepository(db: Executor, principal: Principal, repository: RepositoryRow): Promise<boolean> {
  if (principal.type === 'app') return false;
  if (principal.type === 'installation') return repository.visibility === 'public' || reachesRepository(db, principal, repository);
  // Anyone may read a public repository: no access facts to look up.
  if (repository.visibility === 'public') return true;
  if (!(await callerRepositoryPermissions(db, principal, repository)).pull) return false;
  return reachesRepository(db, principal, repository);
}

/**
 * An archived repository is read-only until it is unarchived, and one locked by a user migration
 * refuses writes until it is unlocked: both answer the platform's 403.
 */
export function assertRepositoryWritable(repository: Pick<RepositoryRow, 'archived' | 'locked_by_migration_id'>): void {
  if (repository.archived) throw forbidden('Repository was archived so is read-only.');
  if (repository.locked_by_migration_id !== null) throw forbidden('Repository is locked for migration');
}

/**
 * Throws the platform's 404 unless the principal may read the repository. On a private (or internal)
 * one, a classic or OAuth token needs the route's scopes (without them the repository is not there
 * for it: 404), and a fine-grained token the route's permissions on its owner (an app user token
 * whose app's installation there grants too little is refused with a 403).
 */
export async function requireReadableRepository<R extends RepositoryRow>(db: Executor, principal: Principal, repository: R | undefined): Promise<R> {
  if (!repository) throw notFound();
  if (!(await canReadRepository(db, principal, repository))) throw await unreadable(db, principal, repository);
  if (repository.visibility === 'public') return repository;
  const scopes = principal.type === 'user' ? principal.route?.scopes : undefined;
  if ((principal.kind === 'classic' || principal.kind === 'oauth') && scopes?.length) {
    const scope = heldScope(principal, scopes);
    // Stryker disable next-line StringLiteral,ObjectLiteral,ArrayDeclaration: the journal's explanation (./explain.ts), never in the answer: test/testing/journal-explains.test.ts
    if (scope === undefined) throw refusal(notFound(), principal, 'scope_missing', `${repository.visibility} repository: reading it needs one of the scopes ${scopes.join(', ')} (without it the repository is not there: 404)`, { scopes: [...scopes] });
    noteUsed(principal, { scope });
  }
  await requirePermittedOn(principal, repository.owner_id);
  return repository;
}

/** What a write inside a repository asks of the caller beyond seeing it. */
export interface RepositoryWrite {
  /** The role a user needs there: `pull` (anyone who reads it: commenting) or `push` (changing what others made). */
  role: 'pull' | 'push';
  /** The fine-grained permission sets, any one of which suffices (an installation's, a fine-grained or app user token's). */
  permissions: readonly Permissions[];
}

/**
 * Throws unless the principal may write inside a repository: what it may not see is the 404 of
 * `requireReadableRepository` (a classic or OAuth token needs `repo` on a private one: `public_repo`
 * reaches public repositories only); an archived or migration-locked repository is the platform's
 * 403; what it sees but may not change is the 403 of `notAccessible`: a user without `role` there, a
 * fine-grained credential whose reach leaves the repository out (a public one of another account) or
 * whose effective permissions on its owner hold none of `permissions`.
 */
export async function requireWritableRepository<R extends RepositoryRow>(db: Executor, principal: Principal, repository: R | undefined, write: RepositoryWrite): Promise<R> {
  const found = await requireReadableRepository(db, principal, repository);
  if (found.visibility !== 'public' && (principal.kind === 'classic' || principal.kind === 'oauth')) {
    const scope = heldScope(principal, ['repo']);
    // Stryker disable next-line StringLiteral,ObjectLiteral,ArrayDeclaration: the journal's explanation (./explain.ts), never in the answer: test/testing/journal-explains.test.ts
    if (scope === undefined) throw refusal(notFound(), principal, 'scope_missing', `${found.visibility} repository: writing in it needs the scope repo (public_repo reaches public repositories only)`, { scopes: ['repo'] });
  }
  assertRepositoryWritable(found);
  if (principal.type === 'user' && !(await callerRepositoryPermissions(db, principal, found))[write.role]) {
    // Stryker disable next-line all: the journal's explanation (./explain.ts), never in the answer: test/testing/journal-explains.test.ts
    throw refusal(notAccessible(principal), principal, 'role_missing', `${principal.user.login} lacks ${write.role === 'push' ? 'write' : 'read'} access to repository ${found.id}`, { roles: write.role === 'push' ? ['admin', 'maintain', 'write'] : [...ROLE_ORDER] });
  }
  const token = fineGrainedToken(principal);
  if (!token) return found;
  if (!(await reachesRepository(db, principal, found))) {
    // Stryker disable next-line StringLiteral,ObjectLiteral: the journal's explanation (./explain.ts), never in the answer: test/testing/journal-explains.test.ts
    throw refusal(notAccessible(principal), principal, 'repository_not_reached', `repository ${found.id} is not among the credential's repositories: it sees it (public) but may not change it`);
  }
  const held = await token.permissionsOn(found.owner_id);
  const set = heldSet(held, write.permissions);
  // Stryker disable next-line StringLiteral,ObjectLiteral,ArrayDeclaration: the journal's explanation (./explain.ts), never in the answer: test/testing/journal-explains.test.ts
  if (!set) throw refusal(notAccessible(principal), principal, 'permission_missing', `on repository ${found.id}, the credential holds none of the permission sets this write needs`, { permissions: [...write.permissions] }, heldBy(principal, held));
  // Stryker disable next-line all: the journal's explanation (./explain.ts), never in the answer: test/testing/journal-explains.test.ts
  noteUsed(principal, { permissions: set });
  return found;
}

// Stryker disable all: the journal's explanation (./explain.ts), never in the answer: test/testing/journal-explains.test.ts
const ROLE_ORDER = ['admin', 'maintain', 'write', 'triage', 'read'] as const;

/** The 404 of a repository the caller may not see, with why beside it (looked up on this failure path only). */
async function unreadable(db: Executor, principal: Principal, repository: RepositoryRow): Promise<ApiError> {
  const needed = neededOf(principal.type === 'user' || principal.type === 'installation' ? principal.route : null, principal);
  if (principal.type === 'app') return refusal(notFound(), principal, 'not_readable', 'an app (JWT) reads no repository: use an installation token', needed);
  if (principal.type === 'installation') return refusal(notFound(), principal, 'repository_not_reached', `${repository.visibility} repository ${repository.id} is not among installation ${principal.installationId}'s repositories`, needed);
  if (principal.type === 'anonymous') return refusal(notFound(), principal, 'authentication_required', `${repository.visibility} repository: only a caller with access sees it (the request had no credential)`, { roles: ['read'] });
  const permissions = await callerRepositoryPermissions(db, principal, repository);
  const role = permissions.admin ? 'admin' : permissions.push ? 'write' : permissions.pull ? 'read' : null;
  if (!permissions.pull) return refusal(notFound(), principal, 'role_missing', `${principal.user.login} holds no role on ${repository.visibility} repository ${repository.id}`, { roles: [...ROLE_ORDER] }, { ...heldBy(principal), role });
  return refusal(notFound(), principal, 'repository_not_reached', `the ${principal.kind} token does not reach repository ${repository.id} (its owner or repository selection leaves it out)`, needed, { ...heldBy(principal), role });
}
// Stryker restore all

/**
 * Whether the principal acts for an organization in one of `roles`: a user who holds one of them,
 * through a token that reaches the organization, or an installation on the organization (an app acts
 * through its permissions, which the route's rule has checked). Callers answer 404 when it does not.
 * An app user token that gets that far without the route's permissions on the organization (its
 * app's installation there grants less) is refused with a 403.
 */
export async function actsForOrganization(db: Executor, principal: Principal, orgId: number, roles: readonly OrgRole[]): Promise<boolean> {
  if (principal.type === 'installation') {
    // Stryker disable next-line all: the journal's explanation (./explain.ts), never in the answer: test/testing/journal-explains.test.ts
    if (principal.accountId !== orgId) note(principal, { reason: 'account_not_reached', message: `installation ${principal.installationId} is not on organization ${orgId}`, held: heldBy(principal) });
    return principal.accountId === orgId;
  }
  if (principal.type !== 'user') return false;
  const held = await orgRoles(db, orgId, principal.user.id);
  if (!roles.some((role) => held.has(role))) {
    // Stryker disable next-line all: the journal's explanation (./explain.ts), never in the answer: test/testing/journal-explains.test.ts
    note(principal, { reason: 'role_missing', message: `${principal.user.login} is not ${roles.join(' or ')} of organization ${orgId}`, needed: { roles: [...roles] }, held: { ...heldBy(principal), roles: [...held] } });
    return false;
  }
  if (!(await reachesAccount(db, principal, orgId))) {
    // Stryker disable next-line all: the journal's explanation (./explain.ts), never in the answer: test/testing/journal-explains.test.ts
    note(principal, { reason: 'account_not_reached', message: `the ${principal.kind} token does not reach organization ${orgId}`, held: heldBy(principal) });
    return false;
  }
  await requirePermittedOn(principal, orgId);
  return true;
}

/**
 * The one access decision of a service: may the caller do `permission` with `target`? Reading a
 * repository answers the repository, or the platform's 404 when the caller may not see it (and a 403
 * to a token that sees it but lacks the route's permissions on its owner: `requireReadableRepository`).
 * Acting for an organization in one of some roles answers a 404 to a caller who does not
 * (`actsForOrganization`, with its 403 for an app user token granted too little there).
 */
export function requireAccess<R extends RepositoryRow>(db: Executor, caller: Principal, permission: 'read', target: { repository: R | undefined }): Promise<R>;
export function requireAccess(db: Executor, caller: Principal, permission: readonly OrgRole[], target: { organization: number }): Promise<void>;
export async function requireAccess<R extends RepositoryRow>(
  db: Executor,
  caller: Principal,
  permission: 'read' | readonly OrgRole[],
  target: { repository: R | undefined } | { organization: number },
): Promise<R | void> {
  if ('repository' in target) return requireReadableRepository(db, caller, target.repository);
  if (!(await actsForOrganization(db, caller, target.organization, permission as readonly OrgRole[]))) throw notFound();
}
