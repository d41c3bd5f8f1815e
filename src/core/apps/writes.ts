// The writes of apps (create, change what they request, users' authorizations) and installations
// (install, change the grant or the repositories covered) on the operator surface, and an
// installation's lifecycle, for the app (its JWT) and the operator alike: suspend, unsuspend,
// delete. Each is one transaction with its `installation` activity, so the app is told exactly
// when the change commits. What stops at once: the installation's tokens (the token lookup
// reads `suspended_at`; deleted tokens cascade), minting, and deliveries (targets exclude it).
import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import type { Executor } from '../../db/index.ts';
import { insertUnique, invalidField, notFound, validationFailed } from '../../platform/errors.ts';
import { isRowId } from '../../platform/schemas.ts';
import { Service } from '../../platform/service.ts';
import { hashSecret, randomBase62, randomHex, tokenKindOf } from '../../platform/tokens.ts';
import { nodeId } from '../../platform/urls.ts';
import { requireAccount } from '../accounts/lookup.ts';
import { findAccountById } from '../accounts/store.ts';
import { AreaWrites } from '../area.ts';
import { accountRepositoryIds } from '../repositories/lookup.ts';
import { installationRepresentation } from './representations.ts';
import type { InstallationActivities, InstallationRepository } from '../activities.ts';
import { recordInstallationActivity } from './activities.ts';
import { uncoveredEvents } from './events.ts';
import {
  deleteInstallation, findApp, findInstallation, insertApp, insertInstallation, installationRepositoryPage, setInstallationRepositories, setInstallationSuspended,
  updateApp, updateInstallationGrant, upsertAuthorization, type AccountFacts, type AppRow, type InstallationRow,
} from './store.ts';
import { issueToken, type Permissions } from '../access/index.ts';

/** The most repositories an installation event lists. */
const EVENT_REPOSITORIES = 10_000;

/** The repositories an installation covers now, as its events list them (`repositories`). */
export async function installationRepositories(trx: Executor, installation: InstallationRow, account: Pick<AccountFacts, 'login'>): Promise<InstallationRepository[]> {
  const { repositories } = await installationRepositoryPage(trx, { installationId: installation.id, accountId: installation.account_id, repositoryIds: null }, { offset: 0, limit: EVENT_REPOSITORIES });
  return repositories.map((repository) => ({
    id: repository.id,
    node_id: nodeId('Repository', repository.id),
    name: repository.name,
    full_name: `${account.login}/${repository.name}`,
    private: repository.visibility !== 'public',
  }));
}

/** The lifecycle operations, as the app's API and the operator surface both route them (after the installation's path). */
export const INSTALLATION_LIFECYCLE = [
  { method: 'PUT', path: '/suspended', action: 'suspend', summary: 'Suspend an app installation' },
  { method: 'DELETE', path: '/suspended', action: 'unsuspend', summary: 'Unsuspend an app installation' },
  { method: 'DELETE', path: '', action: 'delete', summary: 'Delete an installation for the authenticated app' },
] as const;

/** The app of this slug, or a 404 naming it. */
export async function requireApp(db: Executor, slug: string): Promise<AppRow> {
  const app = await findApp(db, slug);
  if (!app) throw notFound(`App not found: ${slug}`);
  return app;
}

export class AppWrites extends AreaWrites {
  async createApp(input: {
    slug: string;
    name?: string;
    owner?: string;
    permissions?: Permissions;
    events?: string[];
    webhook?: Record<string, unknown>;
    /** Fixed credentials, so seed files and examples can name them; generated when absent. */
    client_id?: string;
    client_secret?: string;
    private_key?: string;
  }) {
    if (!/^[a-z0-9][a-z0-9-]{0,33}$/.test(input.slug)) throw invalidField('App', 'slug', 'slug must be lowercase letters, digits and hyphens');
    checkEvents(input.permissions ?? {}, input.events ?? []);
    const owner = input.owner ? await requireAccount(this.db, input.owner) : null;
    const { privateKey, publicKey } = input.private_key ? keyPairFrom(input.private_key) : generateKeyPairSync('rsa', {
      modulusLength: 2048,
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    });
    const clientSecret = input.client_secret ?? randomHex(20);
    if (input.client_id !== undefined && !/^[A-Za-z0-9._-]{8,64}$/.test(input.client_id)) throw invalidField('App', 'client_id');
    const now = this.now();
    // The app and what the areas keep of it (its webhook configuration) in one transaction: a
    // failure (or a crash) leaves no app without them.
    const app = await this.transaction(async (trx) => {
      const row = await insertUnique('App', 'slug', () =>
        insertApp(trx, {
          slug: input.slug,
          name: input.name ?? input.slug,
          owner_id: owner?.id ?? null,
          client_id: input.client_id ?? `Iv1.${randomBase62(16)}`,
          client_secret_hash: hashSecret(clientSecret),
          public_key_pem: publicKey,
          permissions: JSON.stringify(input.permissions ?? {}),
          events: JSON.stringify(input.events ?? []),
          created_at: now,
          updated_at: now,
        }),
      );
      await this.record(trx, { name: 'app.created', payload: { app: row, input } });
      return row;
    });
    return { app, clientSecret, privateKey };
  }

  /**
   * Changes what an app requests and subscribes to (each as given replaces the old). Its events
   * must stay covered by its permissions (422 naming the event). Installations keep their grant:
   * what an installation may do is its grant ∩ what the app requests now, so a narrowed request
   * narrows them at once, and a widened one adds nothing until an installation is granted more.
   */
  async updateApp(appSlug: string, input: { permissions?: Permissions; events?: string[] }): Promise<AppRow> {
    const app = await requireApp(this.db, appSlug);
    const permissions = input.permissions ?? (JSON.parse(app.permissions) as Permissions);
    const events = input.events ?? (JSON.parse(app.events) as string[]);
    checkEvents(permissions, events);
    return updateApp(this.db, app.id, { permissions: JSON.stringify(permissions), events: JSON.stringify(events), updated_at: this.now() });
  }

  /**
   * A user's authorization of an app and a token under it: an OAuth token (classic scopes) by
   * default, or an app user token (`kind: app_user`) that acts with the app's permissions.
   */
  async createAuthorization(appSlug: string, input: { login: string; scopes?: string[]; note?: string; note_url?: string; expires_at?: string; kind?: 'oauth' | 'app_user'; value?: string }) {
    const app = await requireApp(this.db, appSlug);
    const user = await requireAccount(this.db, input.login, 'user');
    const kind = input.kind ?? 'oauth';
    if (input.value !== undefined && tokenKindOf(input.value) !== kind) throw invalidField('Authorization', 'value', `value must be a well-formed ${kind} token`);
    const now = this.now();
    return this.transaction(async (trx) => {
      const authorization = await upsertAuthorization(trx, { app_id: app.id, user_id: user.id, scopes: JSON.stringify(input.scopes ?? []), note: input.note ?? null, note_url: input.note_url ?? null, created_at: now, updated_at: now });
      const issued = await issueToken(
        trx,
        this.ctx.clock,
        {
          kind,
          value: input.value,
          user_id: user.id,
          app_id: app.id,
          authorization_id: authorization.id,
          scopes: kind === 'oauth' ? (input.scopes ?? []) : [],
          permissions: kind === 'app_user' ? (JSON.parse(app.permissions) as Permissions) : {},
          expires_at: input.expires_at ?? null,
          note: input.note ?? null,
          note_url: input.note_url ?? null,
        },
      );
      return { authorization, app, user, ...issued };
    });
  }
}

export class InstallationWrites extends Service {
  /** Installs an app; `sender` (who installed it) defaults to the account when it is a user. */
  async createInstallation(appSlug: string, input: { account: string; repositories?: 'all' | string[]; permissions?: Permissions; sender?: string }) {
    const app = await requireApp(this.db, appSlug);
    const account = await requireAccount(this.db, input.account);
    const sender = input.sender !== undefined ? await requireAccount(this.db, input.sender, 'user') : account.type === 'User' ? account : undefined;
    const repositoryIds = Array.isArray(input.repositories) ? await accountRepositoryIds(this.db, account, input.repositories) : [];
    const appPermissions = JSON.parse(app.permissions) as Permissions;
    const permissions = input.permissions ?? appPermissions;
    checkGrant(appPermissions, permissions);
    const now = this.now();
    return this.transaction(async (trx) => {
      const installation = await insertUnique('Installation', 'account', () =>
        insertInstallation(trx, {
          app_id: app.id,
          account_id: account.id,
          repository_selection: Array.isArray(input.repositories) ? 'selected' : 'all',
          permissions: JSON.stringify(permissions),
          created_at: now,
          updated_at: now,
        }, repositoryIds),
      );
      await recordInstallationActivity(this.ctx, trx, {
        name: 'installation.created',
        account_id: account.id,
        actor_id: sender?.id ?? null,
        payload: { installation: { id: installation.id, app_id: app.id }, repositories: await installationRepositories(trx, installation, account) },
      });
      return { installation, account, app };
    });
  }

  /**
   * Changes an installation's grant (replaced by `permissions`, within what the app requests) and/or
   * what it covers (`repositories`: `all`, or its account's repositories by name). A narrowed grant
   * takes effect at once: tokens and webhook deliveries follow the current grant. Repositories that
   * came or went are `installation_repositories` `added` / `removed`, in the same transaction.
   */
  async updateInstallation(appSlug: string, installationId: number, input: { permissions?: Permissions; repositories?: 'all' | string[]; sender?: string }) {
    const app = await requireApp(this.db, appSlug);
    const found = isRowId(installationId) ? await findInstallation(this.db, app.id, installationId) : undefined;
    if (!found) throw notFound(`Installation not found: ${installationId}`);
    if (input.permissions === undefined && input.repositories === undefined) throw invalidField('Installation', 'permissions', 'permissions or repositories is required');
    if (input.permissions) checkGrant(JSON.parse(app.permissions) as Permissions, input.permissions);
    const account = (await findAccountById(this.db, found.installation.account_id))!;
    const sender = input.sender !== undefined ? await requireAccount(this.db, input.sender, 'user') : undefined;
    const selection = Array.isArray(input.repositories) ? await accountRepositoryIds(this.db, account, input.repositories) : input.repositories;
    const installation = await this.transaction(async (trx) => {
      let row = found.installation;
      if (input.permissions) {
        row = await updateInstallationGrant(trx, row.id, JSON.stringify(input.permissions), this.now());
        if (widens(JSON.parse(found.installation.permissions) as Permissions, input.permissions)) {
          await recordInstallationActivity(this.ctx, trx, {
            name: 'installation.new_permissions_accepted',
            account_id: account.id,
            actor_id: sender?.id ?? null,
            payload: { installation: { id: row.id, app_id: app.id }, repositories: await installationRepositories(trx, row, account) },
          });
        }
      }
      if (selection === undefined) return row;
      const before = await installationRepositories(trx, row, account);
      row = await setInstallationRepositories(trx, row.id, selection, this.now());
      const after = await installationRepositories(trx, row, account);
      const added = after.filter((repository) => !before.some((r) => r.id === repository.id));
      const removed = before.filter((repository) => !after.some((r) => r.id === repository.id));
      for (const [action, changed] of [['added', added], ['removed', removed]] as const) {
        if (changed.length === 0) continue;
        await recordInstallationActivity(this.ctx, trx, {
          name: `installation_repositories.${action}`,
          account_id: account.id,
          actor_id: sender?.id ?? null,
          payload: {
            installation: { id: row.id, app_id: app.id },
            repository_selection: row.repository_selection as 'all' | 'selected',
            repositories_added: action === 'added' ? changed : [],
            repositories_removed: action === 'removed' ? changed : [],
            requester: null,
          },
        });
      }
      return row;
    });
    return { installation, account, app };
  }

  /** Suspends it; suspending a suspended installation changes nothing. */
  async suspend(app: AppRow, installationId: number): Promise<void> {
    await this.change(app, installationId, async (trx, installation) =>
      (await setInstallationSuspended(trx, installation.id, this.now(), this.now())) ? 'installation.suspend' : null);
  }

  async unsuspend(app: AppRow, installationId: number): Promise<void> {
    await this.change(app, installationId, async (trx, installation) =>
      (await setInstallationSuspended(trx, installation.id, null, this.now())) ? 'installation.unsuspend' : null);
  }

  async delete(app: AppRow, installationId: number): Promise<void> {
    // Deleted by another request since it was found: a 404, as it would be a moment later.
    await this.change(app, installationId, async (trx, installation) => {
      if (!(await deleteInstallation(trx, installation.id))) throw notFound();
      return 'installation.deleted';
    });
  }

  /** The app's installation (else 404), changed and its activity recorded in one transaction. */
  private async change(
    app: AppRow,
    installationId: number,
    apply: (trx: Executor, installation: InstallationRow) => Promise<keyof InstallationActivities | null>,
  ): Promise<void> {
    await this.transaction(async (trx) => {
      const found = isRowId(installationId) ? await findInstallation(trx, app.id, installationId) : undefined;
      if (!found) throw notFound();
      // Listed before the change: a deleted installation's were those it covered.
      const repositories = await installationRepositories(trx, found.installation, found.account);
      const whole = installationRepresentation(this.ctx.urls, app, found.installation, found.account);
      const name = await apply(trx, found.installation);
      if (name === null) return;
      await recordInstallationActivity(this.ctx, trx, {
        name,
        account_id: found.installation.account_id,
        // The sender: the account when it is a user (these writes do not say who acted).
        actor_id: found.account.type === 'User' ? found.account.id : null,
        // The whole installation as it was: a dispatch that finds the row gone (deleted since) sends this.
        payload: { installation: whole, repositories },
      });
    });
  }
}

/** An app subscribes only to events its permissions cover: a 422 naming each one that is not. */
function checkEvents(permissions: Permissions, events: readonly string[]): void {
  const uncovered = uncoveredEvents(permissions, events);
  if (uncovered.length > 0) {
    throw validationFailed(uncovered.map(({ event, message }) => ({ resource: 'App', field: 'events', code: 'invalid' as const, value: event, message })));
  }
}

/** Whether `after` grants something `before` did not: a new permission, or `write` where it was `read`. */
function widens(before: Permissions, after: Permissions): boolean {
  return Object.entries(after).some(([name, level]) => before[name] === undefined || (level === 'write' && before[name] !== 'write'));
}

/** An installation is granted at most what its app requests. */
function checkGrant(appPermissions: Permissions, permissions: Permissions): void {
  for (const [name, level] of Object.entries(permissions)) {
    const granted = appPermissions[name];
    if (!granted || (level === 'write' && granted !== 'write')) {
      throw invalidField('Installation', 'permissions', `the app does not request ${name}=${level}`);
    }
  }
}

function keyPairFrom(privateKeyPem: string): { privateKey: string; publicKey: string } {
  try {
    const key = createPrivateKey(privateKeyPem);
    if (key.asymmetricKeyType !== 'rsa') throw new Error('not RSA');
    return { privateKey: privateKeyPem, publicKey: createPublicKey(key).export({ type: 'spki', format: 'pem' }).toString() };
  } catch {
    throw invalidField('App', 'private_key', 'private_key must be an RSA private key in PEM form');
  }
}
