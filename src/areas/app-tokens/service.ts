// App token management: an app checks, resets and revokes the tokens its users hold, revokes a
// user's grant, narrows a user token, and mints installation tokens (60 minutes).
import { isoSeconds } from '../../platform/clock.ts';
import { invalidField, notFound, installationSuspended } from '../../platform/errors.ts';
import { authorizationBody, type Authorization } from '../../core/apps/representations.ts';
import { findInstallation, findInstallationOnAccount, type AppRow } from '../../core/apps/store.ts';
import { minimalRepository } from '../../core/repositories/representations.ts';
import { findAccount, findAccountById } from '../../core/accounts/store.ts';
import { generateToken, type TokenKind } from '../../platform/tokens.ts';
import * as store from './store.ts';
import { Service } from '../../platform/service.ts';
import { intersectPermissions, issueToken, parsePermissions, type Permissions } from '../../core/access/index.ts';

export const INSTALLATION_TOKEN_MINUTES = 60;



/**
 * Requested permissions may only narrow what may be held: each name held, at the same or a lower
 * level; anything beyond is a 422. Nothing requested means all that may be held.
 */
function narrowPermissions(held: Permissions, requested: Permissions | undefined, resource: string, whose: string): Permissions {
  if (!requested) return held;
  const beyond = Object.entries(requested).filter(([name, level]) => intersectPermissions(held, { [name]: level })[name] !== level);
  if (beyond.length) {
    throw invalidField(resource, 'permissions', `The permissions requested are not granted to this ${whose}: ${beyond.map(([name, level]) => `${name}=${level}`).join(', ')}`);
  }
  return requested;
}

const grantOf = (row: { permissions: string }) => parsePermissions(row.permissions);

export class AppTokenService extends Service {
  /** The token, if it is a live token of this app's users; an unknown, revoked or expired one is a 404. */
  private async live(app: AppRow, accessToken: string) {
    const found = await store.findAppUserToken(this.db, app.id, accessToken);
    if (!found) throw notFound();
    if (found.token.expires_at && found.token.expires_at <= this.now()) throw notFound();
    return found;
  }

  async check(app: AppRow, accessToken: string): Promise<Authorization> {
    const found = await this.live(app, accessToken);
    return authorizationBody(this.ctx.urls, { ...found, app }, accessToken);
  }

  /** A new value for the same token: the old one stops working at once. */
  async reset(app: AppRow, accessToken: string): Promise<Authorization> {
    const found = await this.live(app, accessToken);
    const value = generateToken(found.token.kind as TokenKind);
    const token = await store.replaceTokenValue(this.db, found.token.id, found.token.hashed_token, value, this.now());
    // Reset or deleted by a concurrent request: the value the caller sent is no longer a token.
    if (!token) throw notFound();
    return authorizationBody(this.ctx.urls, { ...found, token, app }, value);
  }

  async deleteToken(app: AppRow, accessToken: string): Promise<void> {
    const found = await this.live(app, accessToken);
    await store.deleteToken(this.db, found.token.id);
  }

  async deleteGrant(app: AppRow, accessToken: string): Promise<void> {
    const found = await this.live(app, accessToken);
    await this.db.transaction().execute((trx) => store.deleteGrant(trx, app.id, found.user.id));
  }

  /**
   * A new app user token narrowed to a target account (the only one it then reaches), some of the
   * repositories the app's installation there covers, and some of the permissions it may hold there
   * (the installation's grant ∩ what the app requests ∩ the token's own, if it is itself scoped).
   */
  async scoped(
    app: AppRow,
    input: { access_token: string; target?: string; target_id?: number; repositories?: string[]; repository_ids?: number[]; permissions?: Permissions },
  ): Promise<Authorization> {
    const found = await this.live(app, input.access_token);
    if (found.token.kind !== 'app_user') throw invalidField('Authorization', 'access_token', 'Only app user tokens can be scoped');
    if (input.target === undefined && input.target_id === undefined) throw invalidField('Authorization', 'target', undefined, 'missing_field');
    const target =
      input.target_id !== undefined
        ? await findAccountById(this.db, input.target_id)
        : await findAccount(this.db, input.target!);
    const installation = target ? (await findInstallationOnAccount(this.db, app.id, target.id))?.installation : undefined;
    if (!target || !installation) throw invalidField('Authorization', 'target', 'The app is not installed on the target');
    // A token already scoped stays on its target, its repositories and its permissions.
    const source = found.token;
    const alreadyScoped = source.resource_owner_id !== null;
    if (alreadyScoped && source.resource_owner_id !== target.id) throw invalidField('Authorization', 'target', 'The token is scoped to another target');
    const sourceIds = source.repository_selection === 'selected' ? (JSON.parse(source.repository_ids) as number[]) : null;
    let repositories = await this.selectRepositories(installation, input.repositories, input.repository_ids, 'Authorization');
    if (sourceIds) {
      const outside = repositories?.find((r) => !sourceIds.includes(r.id));
      if (outside) throw invalidField('Authorization', 'repositories', `There is at least one repository that is not accessible to the token: ${outside.name}`);
      repositories ??= (await store.installationRepositories(this.db, installation)).filter((r) => sourceIds.includes(r.id));
    }
    const held = intersectPermissions(grantOf(installation), grantOf(app), alreadyScoped ? grantOf(source) : null);
    const permissions = narrowPermissions(held, input.permissions, 'Authorization', 'token on the target');
    const issued = await issueToken(this.db, this.ctx.clock, {
      kind: 'app_user',
      user_id: found.user.id,
      app_id: app.id,
      authorization_id: source.authorization_id,
      permissions,
      resource_owner_id: target.id,
      repository_selection: repositories ? 'selected' : 'all',
      repository_ids: repositories?.map((r) => r.id) ?? [],
      expires_at: source.expires_at,
    });
    return authorizationBody(this.ctx.urls, { token: issued.row, app, user: found.user, authorization: found.authorization }, issued.token);
  }

  /**
   * An installation token: 60 minutes, what the installation grants ∩ what the app requests, on the
   * repositories it covers; `repositories`, `repository_ids` and `permissions` may only narrow (a 422
   * beyond). A token limited to some repositories lists them.
   */
  async createInstallationToken(
    app: AppRow,
    installationId: number,
    input: { repositories?: string[]; repository_ids?: number[]; permissions?: Permissions },
  ) {
    const found = await findInstallation(this.db, app.id, installationId);
    if (!found) throw notFound();
    const { installation, account } = found;
    if (installation.suspended_at !== null) throw installationSuspended();
    const repositories = await this.selectRepositories(installation, input.repositories, input.repository_ids, 'Installation');
    const permissions = narrowPermissions(intersectPermissions(grantOf(installation), grantOf(app)), input.permissions, 'Installation', 'installation');
    const expiresAt = new Date(this.ctx.clock.nowMs() + INSTALLATION_TOKEN_MINUTES * 60_000).toISOString();
    const selection = repositories || installation.repository_selection === 'selected' ? 'selected' : 'all';
    const covered = repositories ?? (selection === 'selected' ? await store.installationRepositories(this.db, installation) : null);
    const issued = await issueToken(this.db, this.ctx.clock, {
      kind: 'installation',
      app_id: app.id,
      installation_id: installation.id,
      permissions,
      repository_selection: selection,
      repository_ids: covered?.map((r) => r.id) ?? [],
      expires_at: expiresAt,
    });
    return {
      token: issued.token,
      expires_at: isoSeconds(expiresAt),
      permissions,
      repository_selection: selection,
      ...(covered ? { repositories: covered.map((r) => minimalRepository(this.ctx.urls, r, account)) } : {}),
    };
  }

  /** Requested repositories (names or ids) must be covered by the installation; none requested means all it covers. */
  private async selectRepositories(
    installation: { id: number; account_id: number; repository_selection: string },
    names: string[] | undefined,
    ids: number[] | undefined,
    resource: string,
  ) {
    if (!names?.length && !ids?.length) return null;
    const covered = await store.installationRepositories(this.db, installation);
    const chosen = [];
    for (const name of names ?? []) {
      const repository = covered.find((r) => r.name_lower === name.toLowerCase());
      if (!repository) throw invalidField(resource, 'repositories', `There is at least one repository that does not exist or is not accessible to the parent installation: ${name}`);
      chosen.push(repository);
    }
    for (const id of ids ?? []) {
      const repository = covered.find((r) => r.id === id);
      if (!repository) throw invalidField(resource, 'repository_ids', `There is at least one repository that does not exist or is not accessible to the parent installation: ${id}`);
      if (!chosen.includes(repository)) chosen.push(repository);
    }
    return chosen;
  }
}
