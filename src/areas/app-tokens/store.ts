// SQL of app token management.
import type { Executor } from '../../db/index.ts';
import { cachedRow } from '../../db/changes.ts';
import { reusableQuery } from '../../db/prepared.ts';
import { hashSecret } from '../../platform/tokens.ts';

/**
 * A token of the app's users (OAuth or app user token) by its value, with its user and grant: one
 * round trip (every token check pays for it).
 */
export async function findAppUserToken(db: Executor, appId: number, token: string) {
  const hashed = hashSecret(token);
  const row = await appUserTokens(db, `${appId}:${hashed}`, hashed, appId);
  return row ? appUserToken(row) : undefined;
}

const appUserTokenQuery = reusableQuery('app_user_token', (db, hashedToken: string, appId: number) =>
  db
    .selectFrom('tokens')
    .innerJoin('users', 'users.id', 'tokens.user_id')
    .leftJoin('app_authorizations as grant', 'grant.id', 'tokens.authorization_id')
    // Named columns, not tokens.*: PostgreSQL refuses a prepared statement whose result columns
    // changed (a column added by a newer version's migration during a rolling upgrade).
    .select([
      'tokens.id', 'tokens.kind', 'tokens.hashed_token', 'tokens.token_last_eight', 'tokens.user_id', 'tokens.app_id',
      'tokens.installation_id', 'tokens.authorization_id', 'tokens.scopes', 'tokens.permissions', 'tokens.resource_owner_id',
      'tokens.repository_selection', 'tokens.repository_ids', 'tokens.note', 'tokens.note_url', 'tokens.fingerprint',
      'tokens.expires_at', 'tokens.created_at', 'tokens.updated_at',
      'users.login', 'users.login_lower', 'users.type', 'users.name', 'users.email', 'users.site_admin',
      'users.created_at as user_created_at', 'users.updated_at as user_updated_at', 'users.suspended_at', 'users.suspended_reason',
      'grant.id as grant_id', 'grant.app_id as grant_app_id', 'grant.user_id as grant_user_id', 'grant.scopes as grant_scopes',
      'grant.note as grant_note', 'grant.note_url as grant_note_url', 'grant.created_at as grant_created_at', 'grant.updated_at as grant_updated_at',
    ])
    .where('tokens.hashed_token', '=', hashedToken)
    .where('tokens.app_id', '=', appId)
    .where('tokens.kind', 'in', ['oauth', 'app_user']),
);

// The row, kept between requests while nothing changed (src/db/changes.ts); each answer is made anew from it.
const appUserTokens = cachedRow('app_user_token', appUserTokenQuery);

// Field by field (an object rest of the row cost more than the query on SQLite).
function appUserToken(row: Awaited<ReturnType<typeof appUserTokenQuery>>[number]) {
  const token = {
    id: row.id, kind: row.kind, hashed_token: row.hashed_token, token_last_eight: row.token_last_eight, user_id: row.user_id,
    app_id: row.app_id, installation_id: row.installation_id, authorization_id: row.authorization_id, scopes: row.scopes,
    permissions: row.permissions, resource_owner_id: row.resource_owner_id, repository_selection: row.repository_selection,
    repository_ids: row.repository_ids, note: row.note, note_url: row.note_url, fingerprint: row.fingerprint,
    expires_at: row.expires_at, created_at: row.created_at, updated_at: row.updated_at,
  };
  const user = {
    id: row.user_id!, login: row.login, login_lower: row.login_lower, type: row.type, name: row.name, email: row.email,
    site_admin: row.site_admin, created_at: row.user_created_at, updated_at: row.user_updated_at,
    suspended_at: row.suspended_at, suspended_reason: row.suspended_reason,
  };
  const authorization =
    row.grant_id === null
      ? undefined
      : {
          id: row.grant_id, app_id: row.grant_app_id!, user_id: row.grant_user_id!, scopes: row.grant_scopes!, note: row.grant_note,
          note_url: row.grant_note_url, created_at: row.grant_created_at!, updated_at: row.grant_updated_at!,
        };
  return { token, user, authorization };
}

/**
 * Gives the token a new value, if it still has the one the caller found (`hashedToken`): of two
 * concurrent resets only one changes it, and a token deleted meanwhile is not revived. Undefined when
 * the token changed or went.
 */
export async function replaceTokenValue(db: Executor, tokenId: number, hashedToken: string, token: string, now: string) {
  return db
    .updateTable('tokens')
    .set({ hashed_token: hashSecret(token), token_last_eight: token.slice(-8), updated_at: now })
    .where('id', '=', tokenId)
    .where('hashed_token', '=', hashedToken)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteToken(db: Executor, tokenId: number): Promise<void> {
  await db.deleteFrom('tokens').where('id', '=', tokenId).execute();
}

/** Revokes the grant: the authorization and every token of that app for that user (run in one transaction, the caller's). */
export async function deleteGrant(trx: Executor, appId: number, userId: number): Promise<void> {
  await trx.deleteFrom('tokens').where('app_id', '=', appId).where('user_id', '=', userId).execute();
  await trx.deleteFrom('app_authorizations').where('app_id', '=', appId).where('user_id', '=', userId).execute();
}

/** The repositories an installation covers, by id (all of the account's when its selection is `all`). */
export async function installationRepositories(db: Executor, installation: { id: number; account_id: number; repository_selection: string }) {
  let query = db.selectFrom('repositories').selectAll().where('owner_id', '=', installation.account_id);
  if (installation.repository_selection === 'selected') {
    query = query.where('id', 'in', db.selectFrom('installation_repositories').select('repository_id').where('installation_id', '=', installation.id));
  }
  return query.orderBy('id').execute();
}
