// Credentials → principal: who is calling, with which kind of credential, scopes and permissions.
import { createPublicKey, type KeyObject } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import type { Executor } from '../../db/index.ts';
import type { Selectable } from 'kysely';
import type { UsersTable } from '../../db/tables/accounts.ts';
import type { AppsTable } from '../../db/tables/apps.ts';
import { intersectPermissions, parsePermissions, type Permissions } from './permissions.ts';
import { findAppBy, findAppByClientId, findTokenByHash, installationGrantOn } from './store.ts';
import type { AccessRule } from './rule.ts';
import type { Clock } from '../../platform/clock.ts';
import { accountSuspended, ApiError, badCredentials, installationSuspended } from '../../platform/errors.ts';
import { hashSecret, secretMatches, tokenKindOf } from '../../platform/tokens.ts';
import { isRowId, isStorableText } from '../../platform/schemas.ts';
import { explained, type AccessNotes, type RefusalReason } from './explain.ts';



type UserRow = Selectable<UsersTable>;
type AppRow = Selectable<AppsTable>;

interface TokenFacts extends AccessNotes {
  tokenId: number;
  /**
   * What the token may do at most, anywhere. Installation tokens: their effective permissions (the
   * installation's grant ∩ what the app requests ∩ the token's own, narrowed at creation). Fine-grained
   * personal tokens: the token's. App user tokens: what the app requests (∩ a scoped token's own); the
   * grant of the app's installation on each account narrows it further, see `permissionsOn`.
   */
  permissions: Permissions;
  repositorySelection: 'all' | 'selected';
  repositoryIds: number[];
  expiresAt: string | null;
  /**
   * The access rule of the route being served (set by the request hook). A fine-grained credential
   * acting on an account or repository must hold one of its permission sets there; on a private
   * repository, a classic token one of its scopes.
   */
  route: AccessRule | null;
  /** Effective permissions on an account's resources; none on an account the token does not reach. */
  permissionsOn(accountId: number): Promise<Permissions>;
}

/** An app's installation on an account as an app user token sees it: its repositories and the effective permissions there. */
export interface InstallationGrant {
  id: number;
  repositorySelection: 'all' | 'selected';
  /** The installation's grant ∩ what the app requests ∩ the token's own (a scoped token). */
  permissions: Permissions;
}

/** A token acting as a user: classic, fine-grained personal, OAuth, or app user. */
export interface UserPrincipal extends TokenFacts {
  type: 'user';
  kind: 'classic' | 'fine_grained' | 'oauth' | 'app_user';
  user: UserRow;
  scopes: string[];
  appId: number | null;
  /**
   * Fine-grained personal tokens reach only this account's resources; so do app user tokens scoped to
   * a target (POST /applications/{client_id}/token/scoped). Null for other tokens.
   */
  resourceOwnerId: number | null;
  /** App user tokens: the app's installation on an account (null where it is not installed), looked up once per account and request. */
  installationOn(accountId: number): Promise<InstallationGrant | null>;
}

export interface InstallationPrincipal extends TokenFacts {
  type: 'installation';
  kind: 'installation';
  installationId: number;
  appId: number;
  accountId: number;
}

/** An app authenticated by its JWT (`jwt`) or by client id and secret (`basic`). */
export interface AppPrincipal extends AccessNotes {
  type: 'app';
  kind: 'jwt' | 'basic';
  app: AppRow;
}

export interface AnonymousPrincipal extends AccessNotes {
  type: 'anonymous';
  kind: null;
}

export type Principal = UserPrincipal | InstallationPrincipal | AppPrincipal | AnonymousPrincipal;

/** The anonymous caller, shared (frozen): the caller hook gives each anonymous request a copy of its own to carry its notes. */
export const ANONYMOUS: AnonymousPrincipal = Object.freeze({ type: 'anonymous', kind: null });

// Stryker disable all: the journal's explanation (./explain.ts), never in the answer: test/testing/journal-explains.test.ts
/** A refusal with its reason beside it (./explain.ts): the answer is the platform's `error`. */
function refused<E extends Error>(error: E, reason: RefusalReason, message: string, token: string | null, kind: string | null = null, expiredAt: string | null = null): E {
  return explained(error, {
    reason, message,
    credential: { kind, token_last_eight: token === null ? null : token.slice(-8), ...(expiredAt === null ? {} : { expired_at: expiredAt }) },
  });
}
const UNKNOWN = 'no live token has this value: it was never issued here, or it was revoked or swept after it expired (codehost deletes both)';
// Stryker restore all

const json = <T>(text: string): T => JSON.parse(text) as T;

// Keyed by the PEM itself, not the app id: several servers in one process (tests) may number their apps alike.
const publicKeys = new Map<string, KeyObject>();
function publicKeyOf(app: AppRow): KeyObject {
  let key = publicKeys.get(app.public_key_pem);
  if (!key) {
    key = createPublicKey(app.public_key_pem);
    publicKeys.set(app.public_key_pem, key);
  }
  return key;
}


/** Looks a token up by its hash. Unknown, revoked (deleted) and expired tokens are all `Bad credentials`. */
export async function principalFromToken(db: Executor, clock: Clock, token: string): Promise<UserPrincipal | InstallationPrincipal> {
  const kind = tokenKindOf(token);
  // Stryker disable next-line StringLiteral,ObjectLiteral: the journal's explanation (./explain.ts), never in the answer: test/testing/journal-explains.test.ts
  if (!kind) throw refused(badCredentials(), 'unknown_credential', 'this is not a well-formed token of any kind codehost issues (its prefix or checksum is wrong)', token);
  // One round trip: the token, its installation (account and grant), its app's requested permissions,
  // and its user; kept between requests while nothing changed (findTokenByHash, src/db/changes.ts).
  const row = await findTokenByHash(db, hashSecret(token));
  // Stryker disable next-line StringLiteral,ObjectLiteral: the journal's explanation (./explain.ts), never in the answer: test/testing/journal-explains.test.ts
  if (!row || row.kind !== kind) throw refused(badCredentials(), 'unknown_credential', UNKNOWN, token, kind);
  if (row.expires_at && row.expires_at <= clock.now().toISOString()) {
    // Stryker disable next-line StringLiteral,ObjectLiteral: the journal's explanation (./explain.ts), never in the answer: test/testing/journal-explains.test.ts
    throw refused(badCredentials(), 'expired_credential', `the ${kind} token expired at ${row.expires_at}`, token, kind, row.expires_at);
  }
  const own = parsePermissions(row.permissions);
  const facts = {
    tokenId: row.id,
    repositorySelection: row.repository_selection as 'all' | 'selected',
    repositoryIds: json<number[]>(row.repository_ids),
    expiresAt: row.expires_at,
    route: null,
  };
  if (kind === 'installation') {
    if (row.installation_id === null || row.app_id === null || row.account_id === null || row.app_permissions === null) throw badCredentials();
    if (row.installation_suspended_at !== null) {
      // Stryker disable next-line StringLiteral,ObjectLiteral: the journal's explanation (./explain.ts), never in the answer: test/testing/journal-explains.test.ts
      throw refused(installationSuspended(), 'suspended_installation', `installation ${row.installation_id} was suspended at ${row.installation_suspended_at}`, token, kind);
    }
    const accountId = row.account_id;
    const permissions = intersectPermissions(parsePermissions(row.installation_permissions), parsePermissions(row.app_permissions), own);
    return {
      type: 'installation', kind, installationId: row.installation_id, appId: row.app_id, accountId, ...facts, permissions,
      permissionsOn: async (id) => (id === accountId ? permissions : {}),
    };
  }
  if (row.user_id === null || row.login === null) throw badCredentials();
  // Checked before the token is resolved further: a suspended user's credentials stop at once.
  // Stryker disable next-line StringLiteral,ObjectLiteral: the journal's explanation (./explain.ts), never in the answer: test/testing/journal-explains.test.ts
  if (row.suspended_at !== null) throw refused(accountSuspended(), 'suspended_user', `the token's user ${row.login} was suspended at ${row.suspended_at}`, token, kind);
  const user: UserRow = {
    id: row.user_id,
    login: row.login,
    login_lower: row.login_lower!,
    type: row.type!,
    name: row.name,
    email: row.email,
    site_admin: row.site_admin!,
    created_at: row.created_at!,
    updated_at: row.updated_at!,
    suspended_at: null,
    suspended_reason: null,
  };
  const resourceOwnerId = row.resource_owner_id;
  const base = { type: 'user' as const, kind, user, scopes: json<string[]>(row.scopes), appId: row.app_id, resourceOwnerId, ...facts };
  if (kind === 'app_user') {
    if (row.app_id === null || row.app_permissions === null) throw badCredentials();
    // A token scoped to a target keeps the permissions it was narrowed to; an unscoped one acts with
    // whatever the app requests now (what it stored at creation is only the app's request then).
    const narrowed = resourceOwnerId === null ? null : own;
    const permissions = intersectPermissions(parsePermissions(row.app_permissions), narrowed);
    const installationOn = appInstallationLookup(db, row.app_id, permissions, resourceOwnerId);
    return {
      ...base, kind, permissions, installationOn,
      permissionsOn: async (accountId) => (await installationOn(accountId))?.permissions ?? {},
    };
  }
  const permissions = kind === 'fine_grained' ? own : {};
  return {
    ...base, kind, permissions,
    installationOn: async () => null,
    permissionsOn: async (accountId) => (kind === 'fine_grained' && accountId === resourceOwnerId ? permissions : {}),
  };
}

/**
 * An app user token's view of its app's installations: the one on an account, with the grant there
 * narrowed to what the token may do at most. A token scoped to a target sees only the target's.
 * Each account is looked up once (the principal lives for one request).
 */
function appInstallationLookup(db: Executor, appId: number, most: Permissions, target: number | null) {
  const seen = new Map<number, Promise<InstallationGrant | null>>();
  return (accountId: number): Promise<InstallationGrant | null> => {
    if (target !== null && accountId !== target) return Promise.resolve(null);
    let found = seen.get(accountId);
    if (!found) {
      found = installationGrantOn(db, appId, accountId).then((row) => row
          ? { id: row.id, repositorySelection: row.repository_selection as 'all' | 'selected', permissions: intersectPermissions(parsePermissions(row.permissions), most) }
          : null);
      seen.set(accountId, found);
    }
    return found;
  };
}

const JWT_MAX_LIFETIME_SECONDS = 600;
const JWT_IAT_LEEWAY_SECONDS = 60;

/** An app JWT: RS256 with the app's key, `iss` its id or client id, `iat` at most 60 s ahead, `exp` at most 10 minutes after `iat`. */
export async function principalFromJwt(db: Executor, clock: Clock, jwt: string): Promise<AppPrincipal> {
  const invalid = (message = 'A JSON web token could not be decoded') => refused(new ApiError(401, message), 'invalid_jwt', `the app JWT was refused: ${message}`, null, 'jwt');
  let claims: ReturnType<typeof decodeJwt>;
  try {
    if (decodeProtectedHeader(jwt).alg !== 'RS256') throw invalid();
    claims = decodeJwt(jwt);
  } catch {
    throw invalid();
  }
  // `iss` is the app's id (an integer, or its digits) or its client id; an id no row can have or a
  // client id no app can have (a NUL) names no app.
  const iss: unknown = (claims as { iss?: unknown }).iss;
  if ((typeof iss !== 'string' && typeof iss !== 'number') || iss === '') throw invalid("'Issuer' claim ('iss') must be an Integer or the app's client ID");
  const id = typeof iss === 'number' ? iss : /^\d+$/.test(iss) ? Number(iss) : null;
  const app = id !== null
    ? (isRowId(id) ? await findAppBy(db, { id }) : undefined)
    : (isStorableText(iss as string) ? await findAppBy(db, { clientId: iss as string }) : undefined);
  if (!app) throw invalid('Integration not found');
  const now = Math.floor(clock.nowMs() / 1000);
  try {
    await jwtVerify(jwt, publicKeyOf(app), { algorithms: ['RS256'], currentDate: clock.now() });
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'ERR_JWT_EXPIRED') throw invalid("'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires");
    throw invalid();
  }
  const { iat, exp } = claims;
  if (typeof iat !== 'number' || typeof exp !== 'number') throw invalid("Missing 'issued at' ('iat') or 'expiration time' ('exp') claim");
  if (iat > now + JWT_IAT_LEEWAY_SECONDS) throw invalid("'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued");
  if (exp - iat > JWT_MAX_LIFETIME_SECONDS) throw invalid("'Expiration time' claim ('exp') is too far in the future");
  return { type: 'app', kind: 'jwt', app };
}

export interface ParsedAuthorization {
  scheme: 'bearer' | 'token' | 'basic';
  credential: string;
  username?: string;
}

/** Splits an Authorization header; a header that is present but unreadable is `Bad credentials`. */
export function parseAuthorization(header: string | undefined): ParsedAuthorization | null {
  if (header === undefined || header.trim() === '') return null;
  const match = /^(\S+)\s+(\S+)\s*$/.exec(header);
  if (!match) throw badCredentials();
  const scheme = match[1]!.toLowerCase();
  const value = match[2]!;
  if (scheme === 'bearer' || scheme === 'token') return { scheme, credential: value };
  if (scheme === 'basic') {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw badCredentials();
    return { scheme, username: decoded.slice(0, colon), credential: decoded.slice(colon + 1) };
  }
  throw badCredentials();
}

/** A wrong client id or secret: a 404, as the platform answers it, and a failed login all the same. */
export class ClientCredentialsRejected extends ApiError {
  constructor() {
    super(404, 'Not Found');
  }
}

/** Credentials that were presented and refused: they count toward the failed-login limit. */
export function isFailedLogin(error: unknown): boolean {
  return error instanceof ClientCredentialsRejected || (error instanceof ApiError && error.status === 401);
}

const looksLikeJwt = (value: string) => /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*$/.test(value);

/**
 * The principal of a request. Basic credentials are an app's client id and secret on the routes that
 * take them (`basicApp`), elsewhere a username and token pair as the platform accepts.
 */
export async function authenticate(
  db: Executor,
  clock: Clock,
  header: string | undefined,
  options: { basicApp: boolean },
): Promise<Principal> {
  const parsed = parseAuthorization(header);
  if (!parsed) return ANONYMOUS;
  if (parsed.scheme === 'basic') {
    if (options.basicApp) {
      const app = isStorableText(parsed.username!) ? await findAppByClientId(db, parsed.username!) : undefined;
      if (!app || !secretMatches(parsed.credential, app.client_secret_hash)) {
        // Stryker disable next-line StringLiteral,ObjectLiteral: the journal's explanation (./explain.ts), never in the answer: test/testing/journal-explains.test.ts
        throw refused(new ClientCredentialsRejected(), 'unknown_credential', app ? `the client secret is not one of app ${app.slug}'s` : 'no app has this client id', null, 'basic');
      }
      return { type: 'app', kind: 'basic', app };
    }
    return principalFromToken(db, clock, parsed.credential);
  }
  if (looksLikeJwt(parsed.credential)) {
    if (parsed.scheme !== 'bearer') throw badCredentials();
    return principalFromJwt(db, clock, parsed.credential);
  }
  return principalFromToken(db, clock, parsed.credential);
}
