// SQL of app token management.
import type { Executor } from '../../db/index.ts';
import { hashSecret } from '../../platform/tokens.ts';

/** A token of the app's users (OAuth or app user token) by its value, with its user and grant. */
export async function findAppUserToken(db: Executor, appId: number, token: string) {
  const row = await db
    .selectFrom('tokens')
    .selectAll()
    .where('hashed_token', '=', hashSecret(token))
    .where('app_id', '=', appId)
    .where('kind', 'in', ['oauth', 'app_user'])
    .executeTakeFirst();
  if (!row || row.user_id === null) return undefined;
  const user = await db.selectFrom('users').selectAll().where('id', '=', row.user_id).executeTakeFirstOrThrow();
  const authorization =
    row.authorization_id === null
      ? undefined
      : await db.selectFrom('app_authorizations').selectAll().where('id', '=', row.authorization_id).executeTakeFirst();
  return { token: row, user, authorization };
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

/** Revokes the grant: the authorization and every token of that app for that user. */
export async function deleteGrant(db: Executor, appId: number, userId: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('tokens').where('app_id', '=', appId).where('user_id', '=', userId).execute();
    await trx.deleteFrom('app_authorizations').where('app_id', '=', appId).where('user_id', '=', userId).execute();
  });
}

export async function findAccountById(db: Executor, id: number) {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The app's installation on an account. */
export async function findInstallationOn(db: Executor, appId: number, accountId: number) {
  return db.selectFrom('installations').selectAll().where('app_id', '=', appId).where('account_id', '=', accountId).executeTakeFirst();
}

export async function findInstallation(db: Executor, appId: number, installationId: number) {
  return db.selectFrom('installations').selectAll().where('id', '=', installationId).where('app_id', '=', appId).executeTakeFirst();
}

/** The repositories an installation covers, by id (all of the account's when its selection is `all`). */
export async function installationRepositories(db: Executor, installation: { id: number; account_id: number; repository_selection: string }) {
  let query = db.selectFrom('repositories').selectAll().where('owner_id', '=', installation.account_id);
  if (installation.repository_selection === 'selected') {
    query = query.where('id', 'in', db.selectFrom('installation_repositories').select('repository_id').where('installation_id', '=', installation.id));
  }
  return query.orderBy('id').execute();
}
