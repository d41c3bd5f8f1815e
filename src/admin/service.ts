// The operator surface's rules: it creates what the public API only reads. Unknown references are
// 404, duplicates 422 `already_exists`. Every create returns the row; routes shape the answer.
import { execFile } from 'node:child_process';
import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Executor } from '../db/index.ts';
import type { RepositoryPermission } from '../db/schema.ts';
import {
  addEnterpriseMember, addOrgMembership, addTeamMember, findAccountById, findEnterprise, findTeam, insertAccount,
  insertEnterprise, insertOrganization, insertTeam, lockAccount, MEMBER_ROLES, orgRoles, removeFromOrganization, removeTeamMember, setOrgRole, teamMemberIds,
  type OrgRole, type UserRow,
} from '../core/accounts/store.ts';
import { requireAccount } from '../core/accounts/writes.ts';
import type { Permissions } from '../core/apps/permissions.ts';
import { uncoveredEvents } from '../core/apps/events.ts';
import { recordInstallationActivity } from '../core/apps/activities.ts';
import { installationRepositories } from '../core/apps/writes.ts';
import {
  deleteApp, findApp, findInstallation, insertApp, insertInstallation, setInstallationRepositories, updateApp, updateInstallationGrant, upsertAuthorization, type AppRow,
} from '../core/apps/store.ts';
import type { AccessChange, Area } from '../core/area.ts';
import { issueToken } from '../core/callers/token-store.ts';
import type { RepositoryRow } from '../core/repositories/representations.ts';
import { recordMemberActivity, recordRepositoryActivity } from '../core/repositories/activities.ts';
import { recordAccountActivity } from '../core/accounts/activities.ts';
import { permissionNames } from '../core/repositories/permissions.ts';
import { repositoriesWithFacts } from '../core/repositories/facts.ts';
import { fullRepository } from '../core/repositories/representations.ts';
import { organizationSimple, orgMembership, simpleUser } from '../core/accounts/representations.ts';
import {
  collaboratorPermission, deleteRepository, detachFromOwner, dropFormerName, findRepository, findRepositoryById, insertRepository, installationsCovering, moveRepository, removeCollaborator,
  removeCollaboratorOfOwner, removeTeamRepository, setCollaborator, setGitPath, setSubscription, setTeamRepository, teamHasRepository, updateRepository,
} from '../core/repositories/store.ts';
import type { Context } from '../platform/context.ts';
import { ApiError, insertUnique, invalidField, notFound, validationFailed } from '../platform/errors.ts';
import { isRowId } from '../platform/schemas.ts';
import { isBranchName, isRepositoryName } from '../core/repositories/names.ts';
import { Service } from '../platform/service.ts';
import { hashSecret, randomBase62, randomHex, tokenKindOf } from '../platform/tokens.ts';

const run = promisify(execFile);

export const LOGIN_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$/;

async function requireUsers(db: Executor, logins: readonly string[] = []): Promise<UserRow[]> {
  const users: UserRow[] = [];
  for (const login of logins) users.push(await requireAccount(db, login, 'user'));
  return users;
}

export class AdminService extends Service {
  private readonly areas: readonly Area[];

  constructor(ctx: Context, areas: readonly Area[]) {
    super(ctx);
    this.areas = areas;
  }

  async createUser(input: { login: string; name?: string; email?: string; type?: 'User' | 'Bot'; site_admin?: boolean }): Promise<UserRow> {
    if (!LOGIN_PATTERN.test(input.login)) throw invalidField('User', 'login', 'login may only contain alphanumeric characters or single hyphens');
    const now = this.now();
    return insertUnique('User', 'login', () =>
      insertAccount(this.db, {
        login: input.login,
        login_lower: input.login.toLowerCase(),
        type: input.type ?? 'User',
        name: input.name ?? null,
        email: input.email ?? null,
        site_admin: input.site_admin ? 1 : 0,
        created_at: now,
        updated_at: now,
      }),
    );
  }

  async createEnterprise(input: { slug: string; name?: string; owners?: string[] }) {
    if (!LOGIN_PATTERN.test(input.slug)) throw invalidField('Enterprise', 'slug');
    const owners = await requireUsers(this.db, input.owners);
    const now = this.now();
    return this.db.transaction().execute(async (trx) => {
      const enterprise = await insertUnique('Enterprise', 'slug', () =>
        insertEnterprise(trx, { slug: input.slug, slug_lower: input.slug.toLowerCase(), name: input.name ?? input.slug, created_at: now, updated_at: now }),
      );
      for (const owner of owners) await addEnterpriseMember(trx, enterprise.id, owner.id, 'owner');
      return enterprise;
    });
  }

  async createOrganization(input: {
    login: string;
    name?: string;
    enterprise?: string;
    owners?: string[];
    members?: string[];
    security_managers?: string[];
    billing_managers?: string[];
  }): Promise<UserRow> {
    if (!LOGIN_PATTERN.test(input.login)) throw invalidField('Organization', 'login');
    const enterprise = input.enterprise ? await findEnterprise(this.db, input.enterprise) : undefined;
    if (input.enterprise && !enterprise) throw notFound(`Enterprise not found: ${input.enterprise}`);
    const roles: [OrgRole, UserRow[]][] = [
      ['owner', await requireUsers(this.db, input.owners)],
      ['member', await requireUsers(this.db, input.members)],
      ['security_manager', await requireUsers(this.db, input.security_managers)],
      ['billing_manager', await requireUsers(this.db, input.billing_managers)],
    ];
    const now = this.now();
    return this.db.transaction().execute(async (trx) => {
      const org = await insertUnique('Organization', 'login', () =>
        insertOrganization(trx, { login: input.login, login_lower: input.login.toLowerCase(), type: 'Organization', name: input.name ?? null, email: null, site_admin: 0, created_at: now, updated_at: now }, enterprise?.id ?? null),
      );
      for (const [role, users] of roles) {
        for (const user of users) await addOrgMembership(trx, org.id, user.id, role);
      }
      return org;
    });
  }

  async createTeam(orgLogin: string, input: { slug: string; name?: string; members?: string[]; repositories?: { name: string; permission?: RepositoryPermission }[] }) {
    const org = await requireAccount(this.db, orgLogin, 'org');
    const slug = input.slug.toLowerCase();
    if (!/^[a-z0-9][a-z0-9_-]*$/.test(slug)) throw invalidField('Team', 'slug');
    const members = await requireUsers(this.db, input.members);
    const repositories = await this.teamRepositories(org, input.repositories ?? []);
    const now = this.now();
    return this.db.transaction().execute(async (trx) => {
      const team = await insertUnique('Team', 'slug', () =>
        insertTeam(trx, { org_id: org.id, slug, name: input.name ?? input.slug, created_at: now, updated_at: now }),
      );
      for (const member of members) await addTeamMember(trx, team.id, member.id);
      await recordAccountActivity(this.ctx, trx, { name: 'team.created', account_id: org.id, payload: { team_id: team.id } });
      for (const repository of repositories) {
        await setTeamRepository(trx, team.id, repository.id, repository.permission);
        await recordMemberActivity(this.ctx, trx, { name: 'team_add', repository_id: repository.id, payload: { team_id: team.id } });
      }
      if (repositories.length && members.length) await this.accessChanged(trx, { userIds: members.map((m) => m.id) });
      return { team, org };
    });
  }

  async createRepository(input: {
    owner: string;
    name: string;
    visibility?: 'public' | 'private' | 'internal';
    description?: string;
    language?: string;
    topics?: string[];
    default_branch?: string;
    init_git?: boolean;
  }): Promise<RepositoryRow & { owner: UserRow }> {
    const owner = await requireAccount(this.db, input.owner);
    if (!isRepositoryName(input.name)) throw invalidField('Repository', 'name');
    if (input.visibility === 'internal' && owner.type !== 'Organization') {
      throw invalidField('Repository', 'visibility', 'internal repositories belong to organizations');
    }
    const branch = input.default_branch ?? 'main';
    if (!isBranchName(branch)) throw invalidField('Repository', 'default_branch');
    const now = this.now();
    // The row, its git data and its activity in one transaction: a failure (or a crash) leaves
    // nothing half-made, and what consumes `repository.created` (code security's default
    // configuration) is sure to see it.
    const repository = await this.db.transaction().execute(async (trx) => {
      const row = await insertUnique('Repository', 'name', () =>
        insertRepository(trx, {
          owner_id: owner.id,
          name: input.name,
          name_lower: input.name.toLowerCase(),
          description: input.description ?? null,
          visibility: input.visibility ?? 'public',
          language: input.language ?? null,
          topics: JSON.stringify(input.topics ?? []),
          default_branch: branch,
          git_path: null,
          locked_by_migration_id: null,
          security_and_analysis: '{}',
          created_at: now,
          updated_at: now,
          pushed_at: input.init_git ? now : null,
        }),
      );
      if (input.init_git) {
        const gitPath = join('git', `${row.id}.git`);
        try {
          await initBareRepository(join(this.ctx.config.dataDir, gitPath), input.name, branch);
        } catch (error) {
          await rm(join(this.ctx.config.dataDir, gitPath), { recursive: true, force: true });
          this.ctx.log.error({ err: error, repository: row.id }, 'could not create the git data');
          throw new ApiError(500, 'Could not create the git data of the repository');
        }
        await setGitPath(trx, row.id, gitPath);
      }
      // The name is this repository's now: no longer a former name redirecting elsewhere.
      await dropFormerName(trx, owner.login, input.name);
      await recordRepositoryActivity(this.ctx, trx, { name: 'repository.created', repository_id: row.id, payload: { repository: await this.asLeft(trx, row.id) } });
      return row;
    });
    const current = await findRepositoryById(this.db, repository.id);
    return { ...current!, owner };
  }

  async setWatch(owner: string, name: string, input: { login: string; subscribed?: boolean; ignored?: boolean }) {
    const repository = await findRepository(this.db, owner, name);
    if (!repository) throw notFound('Repository not found');
    const user = await requireAccount(this.db, input.login, 'user');
    const ignored = input.ignored ?? false;
    const subscribed = ignored ? false : (input.subscribed ?? true);
    const now = this.now();
    const row = await setSubscription(this.db, repository.id, user.id, { subscribed, ignored }, now);
    return { repository, user, row };
  }

  async createToken(input: {
    login: string;
    kind: 'classic' | 'fine_grained';
    scopes?: string[];
    resource_owner?: string;
    repositories?: 'all' | string[];
    permissions?: Permissions;
    expires_at?: string;
    value?: string;
    note?: string;
  }) {
    const user = await requireAccount(this.db, input.login, 'user');
    if (input.value !== undefined && tokenKindOf(input.value) !== input.kind) {
      throw invalidField('Token', 'value', `value must be a well-formed ${input.kind} token`);
    }
    let resourceOwnerId: number | null = null;
    let repositoryIds: number[] = [];
    let selection: 'all' | 'selected' = 'all';
    if (input.kind === 'fine_grained') {
      const owner = input.resource_owner ? await requireAccount(this.db, input.resource_owner) : user;
      resourceOwnerId = owner.id;
      if (Array.isArray(input.repositories)) {
        selection = 'selected';
        for (const name of input.repositories) {
          const repository = await findRepository(this.db, owner.login, name.includes('/') ? name.split('/')[1]! : name);
          if (!repository) throw notFound(`Repository not found: ${name}`);
          repositoryIds.push(repository.id);
        }
      }
    } else if (input.permissions || input.resource_owner || input.repositories) {
      throw invalidField('Token', 'kind', 'permissions, resource_owner and repositories belong to fine-grained tokens');
    }
    return issueToken(this.db, this.ctx.clock, {
      kind: input.kind,
      value: input.value,
      user_id: user.id,
      scopes: input.kind === 'classic' ? (input.scopes ?? []) : [],
      permissions: input.kind === 'fine_grained' ? (input.permissions ?? {}) : {},
      resource_owner_id: resourceOwnerId,
      repository_selection: selection,
      repository_ids: repositoryIds,
      expires_at: input.expires_at ?? null,
      note: input.note ?? null,
    });
  }

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
    const app = await insertUnique('App', 'slug', () =>
      insertApp(this.db, {
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
    try {
      for (const area of this.areas) await area.onAppCreated?.(this.ctx, app, input);
    } catch (error) {
      await deleteApp(this.db, app.id);
      throw error;
    }
    return { app, clientSecret, privateKey };
  }

  /** Installs an app; `sender` (who installed it) defaults to the account when it is a user. */
  async createInstallation(appSlug: string, input: { account: string; repositories?: 'all' | string[]; permissions?: Permissions; sender?: string }) {
    const app = await this.requireApp(appSlug);
    const account = await requireAccount(this.db, input.account);
    const sender = input.sender !== undefined ? await requireAccount(this.db, input.sender, 'user') : account.type === 'User' ? account : undefined;
    const repositoryIds = Array.isArray(input.repositories) ? await this.accountRepositoryIds(account, input.repositories) : [];
    const appPermissions = JSON.parse(app.permissions) as Permissions;
    const permissions = input.permissions ?? appPermissions;
    checkGrant(appPermissions, permissions);
    const now = this.now();
    return this.db.transaction().execute(async (trx) => {
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
   * Changes what an app requests and subscribes to (each as given replaces the old). Its events
   * must stay covered by its permissions (422 naming the event). Installations keep their grant:
   * what an installation may do is its grant ∩ what the app requests now, so a narrowed request
   * narrows them at once, and a widened one adds nothing until an installation is granted more.
   */
  async updateApp(appSlug: string, input: { permissions?: Permissions; events?: string[] }): Promise<AppRow> {
    const app = await this.requireApp(appSlug);
    const permissions = input.permissions ?? (JSON.parse(app.permissions) as Permissions);
    const events = input.events ?? (JSON.parse(app.events) as string[]);
    checkEvents(permissions, events);
    return updateApp(this.db, app.id, { permissions: JSON.stringify(permissions), events: JSON.stringify(events), updated_at: this.now() });
  }

  /**
   * Changes an installation's grant (replaced by `permissions`, within what the app requests) and/or
   * what it covers (`repositories`: `all`, or its account's repositories by name). A narrowed grant
   * takes effect at once: tokens and webhook deliveries follow the current grant. Repositories that
   * came or went are `installation_repositories` `added` / `removed`, in the same transaction.
   */
  async updateInstallation(appSlug: string, installationId: number, input: { permissions?: Permissions; repositories?: 'all' | string[]; sender?: string }) {
    const app = await this.requireApp(appSlug);
    const found = isRowId(installationId) ? await findInstallation(this.db, app.id, installationId) : undefined;
    if (!found) throw notFound(`Installation not found: ${installationId}`);
    if (input.permissions === undefined && input.repositories === undefined) throw invalidField('Installation', 'permissions', 'permissions or repositories is required');
    if (input.permissions) checkGrant(JSON.parse(app.permissions) as Permissions, input.permissions);
    const account = (await findAccountById(this.db, found.installation.account_id))!;
    const sender = input.sender !== undefined ? await requireAccount(this.db, input.sender, 'user') : undefined;
    const selection = Array.isArray(input.repositories) ? await this.accountRepositoryIds(account, input.repositories) : input.repositories;
    const installation = await this.db.transaction().execute(async (trx) => {
      let row = found.installation;
      if (input.permissions) row = await updateInstallationGrant(trx, row.id, JSON.stringify(input.permissions), this.now());
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

  /** The ids of an account's repositories named `name` or `owner/name` (404 for one it does not have). */
  private async accountRepositoryIds(account: Pick<UserRow, 'login'>, names: readonly string[]): Promise<number[]> {
    const ids: number[] = [];
    for (const name of names) {
      const repository = await findRepository(this.db, account.login, name.includes('/') ? name.split('/')[1]! : name);
      if (!repository) throw notFound(`Repository not found: ${name}`);
      ids.push(repository.id);
    }
    return ids;
  }

  /**
   * A user's authorization of an app and a token under it: an OAuth token (classic scopes) by
   * default, or an app user token (`kind: app_user`) that acts with the app's permissions.
   */
  async createAuthorization(appSlug: string, input: { login: string; scopes?: string[]; note?: string; note_url?: string; expires_at?: string; kind?: 'oauth' | 'app_user'; value?: string }) {
    const app = await this.requireApp(appSlug);
    const user = await requireAccount(this.db, input.login, 'user');
    const kind = input.kind ?? 'oauth';
    if (input.value !== undefined && tokenKindOf(input.value) !== kind) throw invalidField('Authorization', 'value', `value must be a well-formed ${kind} token`);
    const now = this.now();
    return this.db.transaction().execute(async (trx) => {
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

  private async requireApp(slug: string): Promise<AppRow> {
    const app = await findApp(this.db, slug);
    if (!app) throw notFound(`App not found: ${slug}`);
    return app;
  }

  async requireTeam(orgLogin: string, slug: string) {
    const org = await requireAccount(this.db, orgLogin, 'org');
    const team = await findTeam(this.db, org.id, slug);
    if (!team) throw notFound(`Team not found: ${orgLogin}/${slug}`);
    return { org, team };
  }

  // --- Repository access: memberships, teams, collaborators, visibility ----------------------------
  // Every change tells the areas (notifications hide or show threads and move Last-Modified).

  private async accessChanged(trx: Executor, change: AccessChange): Promise<void> {
    for (const area of this.areas) await area.onAccessChanged?.(this.ctx, trx, change);
  }

  /** A repository as `repository` events show it, read inside the write's transaction. */
  private async asLeft(trx: Executor, repositoryId: number): Promise<ReturnType<typeof fullRepository>> {
    const [found] = await repositoriesWithFacts(trx, [repositoryId]);
    if (!found) throw notFound('Repository not found');
    return fullRepository(this.ctx.urls, found.repository, found.owner, found.facts);
  }

  private async requireRepository(owner: string, name: string): Promise<RepositoryRow & { owner: UserRow }> {
    const repository = await findRepository(this.db, owner, name);
    if (!repository) throw notFound(`Repository not found: ${owner}/${name}`);
    return repository;
  }

  /** The repositories a new team gets: the organization's own (`name` or `org/name`). */
  private async teamRepositories(org: UserRow, entries: readonly { name: string; permission?: RepositoryPermission }[]) {
    const out: { id: number; permission: RepositoryPermission }[] = [];
    for (const entry of entries) {
      const [owner, name] = entry.name.includes('/') ? (entry.name.split('/', 2) as [string, string]) : [org.login, entry.name];
      const repository = await this.requireRepository(owner, name);
      if (repository.owner_id !== org.id) throw invalidField('Team', 'repositories', `${entry.name} does not belong to ${org.login}`);
      out.push({ id: repository.id, permission: entry.permission ?? 'push' });
    }
    return out;
  }

  /** Adds a user to an organization or changes their role (`owner` and `member` replace each other). */
  async setOrgMembership(orgLogin: string, login: string, role: OrgRole) {
    const org = await requireAccount(this.db, orgLogin, 'org');
    const user = await requireAccount(this.db, login, 'user');
    return this.db.transaction().execute(async (trx) => {
      // `owner` replaces `member` and the reverse (a delete, then an insert): two changes at once
      // would leave both.
      await lockAccount(trx, org.id, this.ctx.db.dialect === 'postgres');
      const before = await orgRoles(trx, org.id, user.id);
      const roles = await setOrgRole(trx, org.id, user.id, role);
      await this.accessChanged(trx, { userIds: [user.id] });
      // A new member, not a changed role: the platform's `organization` `member_added`.
      if (!isMember(before) && isMember(roles)) {
        await recordAccountActivity(this.ctx, trx, { name: 'organization.member_added', account_id: org.id, payload: { membership: orgMembership(this.ctx.urls, org, user, roles) } });
      }
      return { org, user, roles };
    });
  }

  /** The user leaves the organization, its teams, and the direct access to its repositories. */
  async removeOrgMembership(orgLogin: string, login: string): Promise<void> {
    const org = await requireAccount(this.db, orgLogin, 'org');
    const user = await requireAccount(this.db, login, 'user');
    await this.db.transaction().execute(async (trx) => {
      const roles = await orgRoles(trx, org.id, user.id);
      const teamIds = await removeFromOrganization(trx, org.id, user.id);
      const repositoryIds = await removeCollaboratorOfOwner(trx, org.id, user.id);
      await this.accessChanged(trx, { userIds: [user.id] });
      for (const teamId of teamIds) {
        await recordAccountActivity(this.ctx, trx, { name: 'membership.removed', account_id: org.id, payload: { member_id: user.id, team_id: teamId } });
      }
      for (const repositoryId of repositoryIds) {
        await recordMemberActivity(this.ctx, trx, { name: 'member.removed', repository_id: repositoryId, payload: { member_id: user.id } });
      }
      if (roles.size > 0) {
        await recordAccountActivity(this.ctx, trx, { name: 'organization.member_removed', account_id: org.id, payload: { membership: orgMembership(this.ctx.urls, org, user, roles) } });
      }
    });
  }

  async setTeamMembership(orgLogin: string, slug: string, login: string) {
    const { org, team } = await this.requireTeam(orgLogin, slug);
    const user = await requireAccount(this.db, login, 'user');
    await this.db.transaction().execute(async (trx) => {
      if (await addTeamMember(trx, team.id, user.id)) {
        await recordAccountActivity(this.ctx, trx, { name: 'membership.added', account_id: org.id, payload: { member_id: user.id, team_id: team.id } });
      }
      await this.accessChanged(trx, { userIds: [user.id] });
    });
    return { org, team, user };
  }

  async removeTeamMembership(orgLogin: string, slug: string, login: string): Promise<void> {
    const { org, team } = await this.requireTeam(orgLogin, slug);
    const user = await requireAccount(this.db, login, 'user');
    await this.db.transaction().execute(async (trx) => {
      if (await removeTeamMember(trx, team.id, user.id)) {
        await recordAccountActivity(this.ctx, trx, { name: 'membership.removed', account_id: org.id, payload: { member_id: user.id, team_id: team.id } });
      }
      await this.accessChanged(trx, { userIds: [user.id] });
    });
  }

  /** Gives a team access to a repository of its organization (or changes the permission). */
  async setTeamRepository(orgLogin: string, slug: string, owner: string, name: string, permission: RepositoryPermission = 'push') {
    const { org, team } = await this.requireTeam(orgLogin, slug);
    const repository = await this.requireRepository(owner, name);
    if (repository.owner_id !== org.id) throw invalidField('Team', 'repository', `${owner}/${name} does not belong to ${org.login}`);
    await this.db.transaction().execute(async (trx) => {
      const added = !(await teamHasRepository(trx, team.id, repository.id));
      await setTeamRepository(trx, team.id, repository.id, permission);
      await this.accessChanged(trx, { userIds: await teamMemberIds(trx, team.id) });
      if (added) await recordMemberActivity(this.ctx, trx, { name: 'team_add', repository_id: repository.id, payload: { team_id: team.id } });
    });
    return { repository, permission };
  }

  async removeTeamRepository(orgLogin: string, slug: string, owner: string, name: string): Promise<void> {
    const { team } = await this.requireTeam(orgLogin, slug);
    const repository = await this.requireRepository(owner, name);
    await this.db.transaction().execute(async (trx) => {
      await removeTeamRepository(trx, team.id, repository.id);
      await this.accessChanged(trx, { userIds: await teamMemberIds(trx, team.id) });
    });
  }

  /** Direct access to one repository; its owner cannot be a collaborator. */
  async setCollaborator(owner: string, name: string, login: string, permission: RepositoryPermission = 'push') {
    const repository = await this.requireRepository(owner, name);
    const user = await requireAccount(this.db, login, 'user');
    if (user.id === repository.owner_id) throw invalidField('Repository', 'collaborator', 'the owner of a repository cannot be its collaborator');
    await this.db.transaction().execute(async (trx) => {
      const before = await collaboratorPermission(trx, repository.id, user.id);
      await setCollaborator(trx, repository.id, user.id, permission, this.now());
      await this.accessChanged(trx, { userIds: [user.id] });
      const to = permissionNames(permission);
      if (before === undefined) {
        await recordMemberActivity(this.ctx, trx, {
          name: 'member.added', repository_id: repository.id, payload: { member_id: user.id, changes: { permission: { to: to.permission }, role_name: { to: to.role_name } } },
        });
      } else if (before !== permission) {
        const from = permissionNames(before).permission;
        await recordMemberActivity(this.ctx, trx, {
          name: 'member.edited', repository_id: repository.id, payload: { member_id: user.id, changes: { old_permission: { from }, permission: { from, to: to.permission } } },
        });
      }
    });
    return { repository, user, permission };
  }

  async removeCollaborator(owner: string, name: string, login: string): Promise<void> {
    const repository = await this.requireRepository(owner, name);
    const user = await requireAccount(this.db, login, 'user');
    await this.db.transaction().execute(async (trx) => {
      if (await removeCollaborator(trx, repository.id, user.id)) {
        await recordMemberActivity(this.ctx, trx, { name: 'member.removed', repository_id: repository.id, payload: { member_id: user.id } });
      }
      await this.accessChanged(trx, { userIds: [user.id] });
    });
  }

  /**
   * Changes a repository's visibility, description or archived flag, renames it (`name`) or transfers
   * it (`owner`, a user or organization login); what is not given stays. A rename or transfer keeps
   * the former name (the old /repos/{owner}/{repo} redirects to /repositories/{id}); a transfer takes
   * away the old organization's team grants and its installations' selections of the repository
   * (collaborators stay). All in one transaction with the activities.
   */
  async updateRepository(owner: string, name: string, input: {
    visibility?: 'public' | 'private' | 'internal'; description?: string | null; archived?: boolean; name?: string; owner?: string;
  }) {
    const repository = await this.requireRepository(owner, name);
    const destination = input.owner !== undefined ? await requireAccount(this.db, input.owner) : repository.owner;
    const newName = input.name ?? repository.name;
    if (!isRepositoryName(newName)) throw invalidField('Repository', 'name');
    const transferred = destination.id !== repository.owner_id;
    const renamed = newName !== repository.name;
    if ((input.visibility ?? repository.visibility) === 'internal' && destination.type !== 'Organization') {
      throw invalidField('Repository', 'visibility', 'internal repositories belong to organizations');
    }
    const taken = await findRepository(this.db, destination.login, newName);
    if ((transferred || renamed) && taken && taken.id !== repository.id) {
      throw validationFailed([{ resource: 'Repository', field: 'name', code: 'already_exists', message: `${destination.login}/${newName} already exists` }]);
    }
    const updated = await this.db.transaction().execute(async (trx) => {
      if (transferred || renamed) {
        await insertUnique('Repository', 'name', () => moveRepository(trx, repository, { owner_id: destination.id, owner_login: destination.login, name: newName }, this.now()));
      }
      if (transferred) {
        await detachFromOwner(trx, repository.id, repository.owner_id);
        // Its new owner cannot be its collaborator.
        await removeCollaborator(trx, repository.id, destination.id);
      }
      const row = await updateRepository(trx, repository.id, input, this.now());
      if (transferred || (input.visibility !== undefined && input.visibility !== repository.visibility)) await this.accessChanged(trx, { repositoryIds: [repository.id] });
      // Every event of the write shows the repository after all of it.
      const asLeft = { repository: await this.asLeft(trx, repository.id) };
      if (renamed) {
        await recordRepositoryActivity(this.ctx, trx, { name: 'repository.renamed', repository_id: repository.id, payload: { ...asLeft, changes: { repository: { name: { from: repository.name } } } } });
      }
      if (transferred) {
        const from = repository.owner.type === 'Organization'
          ? { organization: organizationSimple(this.ctx.urls, repository.owner) }
          : { user: simpleUser(this.ctx.urls, repository.owner) };
        await recordRepositoryActivity(this.ctx, trx, { name: 'repository.transferred', repository_id: repository.id, payload: { ...asLeft, changes: { owner: { from } } } });
      }
      if (input.archived !== undefined && input.archived !== Boolean(repository.archived)) {
        await recordRepositoryActivity(this.ctx, trx, { name: input.archived ? 'repository.archived' : 'repository.unarchived', repository_id: repository.id, payload: asLeft });
      }
      if (input.description !== undefined && input.description !== repository.description) {
        await recordRepositoryActivity(this.ctx, trx, { name: 'repository.edited', repository_id: repository.id, payload: { ...asLeft, changes: { description: { from: repository.description } } } });
      }
      // Public or not is what the platform announces; private and internal are both not public.
      if (input.visibility !== undefined && (input.visibility === 'public') !== (repository.visibility === 'public')) {
        await recordRepositoryActivity(this.ctx, trx, { name: input.visibility === 'public' ? 'repository.publicized' : 'repository.privatized', repository_id: repository.id, payload: asLeft });
      }
      return row;
    });
    return { ...updated, owner: destination };
  }

  /**
   * Deletes a repository and everything in it (its rows go by the foreign keys' cascades: issues,
   * notification threads, subscriptions, collaborators, team grants, installation selections, code
   * security attachments) in one transaction with its `repository.deleted` activity, whose payload
   * is built while the row still exists; its git data goes once that has committed.
   */
  async deleteRepository(owner: string, name: string): Promise<void> {
    const repository = await this.requireRepository(owner, name);
    await this.db.transaction().execute(async (trx) => {
      const payload = { repository: await this.asLeft(trx, repository.id), installation_ids: await installationsCovering(trx, repository) };
      await recordRepositoryActivity(this.ctx, trx, { name: 'repository.deleted', repository_id: repository.id, account_id: repository.owner_id, payload });
      await this.accessChanged(trx, { repositoryIds: [repository.id] });
      await deleteRepository(trx, repository.id);
    });
    if (repository.git_path) await rm(join(this.ctx.config.dataDir, repository.git_path), { recursive: true, force: true });
  }
}

/** Whether these organization roles make the user a member (owner, member, security manager). */
const isMember = (roles: ReadonlySet<OrgRole>) => MEMBER_ROLES.some((role) => roles.has(role));

/** An app subscribes only to events its permissions cover: a 422 naming each one that is not. */
function checkEvents(permissions: Permissions, events: readonly string[]): void {
  const uncovered = uncoveredEvents(permissions, events);
  if (uncovered.length > 0) {
    throw validationFailed(uncovered.map(({ event, message }) => ({ resource: 'App', field: 'events', code: 'invalid' as const, value: event, message })));
  }
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

/** Bare git data with one commit holding a README, written with git's plumbing (no work tree). */
async function initBareRepository(path: string, name: string, branch: string): Promise<void> {
  await mkdir(path, { recursive: true });
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: 'codehost',
    GIT_AUTHOR_EMAIL: 'codehost@localhost',
    GIT_COMMITTER_NAME: 'codehost',
    GIT_COMMITTER_EMAIL: 'codehost@localhost',
  };
  const git = async (args: string[], input?: string) => {
    const child = run('git', ['--git-dir', path, ...args], { env });
    if (input !== undefined) {
      child.child.stdin!.end(input);
    }
    return (await child).stdout.trim();
  };
  await git(['init', '--bare', '--quiet', `--initial-branch=${branch}`]);
  const blob = await git(['hash-object', '-w', '--stdin'], `# ${name}\n`);
  const tree = await git(['mktree'], `100644 blob ${blob}\tREADME.md\n`);
  const commit = await git(['commit-tree', tree, '-m', 'Initial commit']);
  await git(['update-ref', `refs/heads/${branch}`, commit]);
}
