// The one entry to access: who is calling (the principal, resolved once per request), what a route
// accepts (its rule), and whether the caller may do what it asks with a target (`requireAccess` and
// the finer checks it is made of). Everything outside core/access imports access from here (the
// server plugs in its routes, ./routes.ts, as every home's); the principal's resolution and the
// store's SQL stay inside.
export {
  requireAccess, actingUser, actsForOrganization, assertRepositoryWritable, callerRepositoryPermissions, hasPermissions, hasScope,
  isFineGrained, notAccessible, permittedOn, reachesAccount, reachesRepository, requirePermittedOn, requireReadableRepository,
  requireScopes, heldBy, requireWritableRepository, type RepositoryWrite,
} from './access.ts';
export { explanationOfError, type Explanation, type Held, type Needed, type RefusalReason, type Used } from './explain.ts';
export { callingApp, callingInstallation } from './app.ts';
export { callerResolution, rateLimitKey } from './hook.ts';
export { sweepExpiredTokens } from './routes.ts';
export { intersectPermissions, parsePermissions, type Level, type Permissions } from './permissions.ts';
export {
  ANONYMOUS, authenticate, parseAuthorization,
  type AppPrincipal, type InstallationPrincipal, type Principal, type UserPrincipal,
} from './principal.ts';
export {
  fullPermissionsOf, permissionNames, permissionsOf, userRepositoriesPermissions, userRepositoryPermissions, userRepositoryRole,
  type RepositoryPermissions,
} from './repository-permissions.ts';
export { ALL_TOKENS, CLASSIC_TOKENS, USER_TOKENS, type AccessRule, type CredentialKind } from './rule.ts';
export {
  findAppBy, installationGrantOn, issueToken, listTokens, memberAccess, orgRoles, readableBy, readersOf,
  type IssueTokenInput, type ListedToken, type OrgRole,
} from './store.ts';
