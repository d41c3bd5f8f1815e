// Issuing tokens: every kind is created here, so the format and the stored hash have one source.
import type { Executor } from '../../db/index.ts';
import { cachedRow } from '../../db/changes.ts';
import { reusableQuery } from '../../db/prepared.ts';
import type { Clock } from '../../platform/clock.ts';
import { insertUnique, invalidField } from '../../platform/errors.ts';
import type { Permissions } from '../apps/permissions.ts';
import { generateToken, hashSecret, type TokenKind } from '../../platform/tokens.ts';

export interface IssueTokenInput {
  kind: TokenKind;
  value?: string;
  user_id?: number | null;
  app_id?: number | null;
  installation_id?: number | null;
  authorization_id?: number | null;
  scopes?: string[];
  permissions?: Permissions;
  resource_owner_id?: number | null;
  repository_selection?: 'all' | 'selected';
  repository_ids?: number[];
  expires_at?: string | null;
  note?: string | null;
  note_url?: string | null;
}

/** Stores a new token's hash (the only form kept) and returns the token, shown once. */
export async function issueToken(db: Executor, clock: Clock, input: IssueTokenInput) {
  const token = input.value ?? generateToken(input.kind);
  if (input.expires_at !== undefined && input.expires_at !== null && Number.isNaN(Date.parse(input.expires_at))) {
    throw invalidField('Token', 'expires_at');
  }
  const now = clock.now().toISOString();
  const row = await insertUnique('Token', 'value', () =>
    db
      .insertInto('tokens')
      .values({
        kind: input.kind,
        hashed_token: hashSecret(token),
        token_last_eight: token.slice(-8),
        user_id: input.user_id ?? null,
        app_id: input.app_id ?? null,
        installation_id: input.installation_id ?? null,
        authorization_id: input.authorization_id ?? null,
        scopes: JSON.stringify(input.scopes ?? []),
        permissions: JSON.stringify(input.permissions ?? {}),
        resource_owner_id: input.resource_owner_id ?? null,
        repository_selection: input.repository_selection ?? 'all',
        repository_ids: JSON.stringify(input.repository_ids ?? []),
        note: input.note ?? null,
        note_url: input.note_url ?? null,
        fingerprint: null,
        expires_at: input.expires_at ? new Date(input.expires_at).toISOString() : null,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow(),
  );
  return { row, token };
}

/**
 * A token by the hash of its value, with what resolving it needs in the same round trip (every
 * request pays for this): its installation's account and grant, its app's requested permissions,
 * and its user.
 */
export async function findTokenByHash(db: Executor, hashedToken: string) {
  return tokensByHash(db, hashedToken, hashedToken);
}

const tokenByHashQuery = reusableQuery('token_by_hash', (db, hashedToken: string) =>
  db
    .selectFrom('tokens')
    .leftJoin('installations', 'installations.id', 'tokens.installation_id')
    .leftJoin('apps', 'apps.id', 'tokens.app_id')
    .leftJoin('users', 'users.id', 'tokens.user_id')
    .select([
      'tokens.id', 'tokens.kind', 'tokens.user_id', 'tokens.app_id', 'tokens.installation_id', 'tokens.scopes',
      'tokens.permissions', 'tokens.resource_owner_id', 'tokens.repository_selection', 'tokens.repository_ids',
      'tokens.expires_at', 'installations.account_id', 'installations.permissions as installation_permissions',
      'installations.suspended_at as installation_suspended_at',
      'apps.permissions as app_permissions',
      'users.login', 'users.login_lower', 'users.type', 'users.name', 'users.email', 'users.site_admin',
      'users.created_at', 'users.updated_at', 'users.suspended_at', 'users.suspended_reason',
    ])
    .where('tokens.hashed_token', '=', hashedToken),
);

// Kept between requests while nothing changed (src/db/changes.ts): a revoked token stops at once here, within the window elsewhere.
const tokensByHash = cachedRow('token_by_hash', tokenByHashQuery);

/** What an operator may see of a token: never its hash. */
export interface ListedToken {
  id: number;
  kind: string;
  token_last_eight: string;
  user_id: number | null;
  login: string | null;
  app_slug: string | null;
  scopes: string;
  permissions: string;
  note: string | null;
  expires_at: string | null;
  created_at: string;
}

/** Tokens, oldest first, of one user when `userId` is given, one page at a time, with the total. */
export async function listTokens(db: Executor, filter: { userId?: number }, page: { limit: number; offset: number }): Promise<{ rows: ListedToken[]; total: number }> {
  let query = db.selectFrom('tokens');
  if (filter.userId !== undefined) query = query.where('tokens.user_id', '=', filter.userId);
  const rows = await query
    .leftJoin('apps', 'apps.id', 'tokens.app_id')
    .leftJoin('users', 'users.id', 'tokens.user_id')
    .select([
      'tokens.id', 'tokens.kind', 'tokens.token_last_eight', 'tokens.user_id', 'users.login', 'apps.slug as app_slug', 'tokens.scopes',
      'tokens.permissions', 'tokens.note', 'tokens.expires_at', 'tokens.created_at',
    ])
    .orderBy('tokens.id')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  const count = await query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return { rows, total: Number(count.n) };
}

/**
 * Removes the tokens that have expired (the sweep: an app can mint 5,000 installation tokens an
 * hour, each good for one). An expired token answers 401 as an unknown one does, so nothing a
 * client sees changes. Revoked tokens are deleted when revoked. Returns how many went.
 */
export async function deleteExpiredTokens(db: Executor, now: string): Promise<number> {
  const result = await db.deleteFrom('tokens').where('expires_at', 'is not', null).where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}
