// Code security configurations: who may manage them, what a configuration may say, attaching and
// detaching repositories, the defaults for new repositories, and licenses. No HTTP here.
import type { Selectable } from 'kysely';
import type { Static } from 'typebox';
import type { Executor } from '../../db/index.ts';
import type { EnterprisesTable } from '../../db/tables/accounts.ts';
import { enterpriseOrganizationIds, findAccount, findAccountById, findEnterprise, isEnterpriseMember, isEnterpriseOwner, organizationEnterpriseId, teamIdsOf, type UserRow } from '../../core/accounts/store.ts';
import { ApiError, badRequest, conflict, forbidden, invalidField, isUniqueViolation, notFound, validationFailed, type ValidationCode } from '../../platform/errors.ts';
import { findRepository, findRepositoryById } from '../../core/repositories/store.ts';
import { isRowId } from '../../platform/schemas.ts';
import type { RepositoryRow } from '../../core/repositories/representations.ts';
import { queueApply } from './apply.ts';
import { AttachmentStatus, DefaultForNewRepos as DefaultForNewReposValue, defaultSettings, ENABLEMENT_FIELDS, parseSecurityAndAnalysis, withoutPaidFeatures, type Settings } from './features.ts';
import type { ConfigurationInput } from './schemas.ts';
import { cursorPage, type CursorArgs, type CursorPage } from './cursor.ts';
import * as store from './store.ts';
import { Service } from '../../platform/service.ts';
import { callerRepositoryPermissions, notAccessible, orgRoles, type Principal, reachesAccount, reachesRepository, requireAccess, requirePermittedOn } from '../../core/access/index.ts';

type EnterpriseRow = Selectable<EnterprisesTable>;

/** Where an operation runs: an organization (with its enterprise, if any) or an enterprise. */
export type Scope =
  | { type: 'organization'; org: UserRow; enterpriseId: number | null }
  | { type: 'enterprise'; enterprise: EnterpriseRow };

export type DefaultForNewRepos = Static<typeof DefaultForNewReposValue>;
export type AttachScope = 'all' | 'all_without_configurations' | 'public' | 'private_or_internal' | 'selected';

/** `per_page` of the configuration and repository lists (decisions.md). */

const RESOURCE = 'CodeSecurityConfiguration';

const viewerOf = (scope: Scope): store.Viewer =>
  scope.type === 'organization'
    ? { type: 'organization', orgId: scope.org.id, enterpriseId: scope.enterpriseId }
    : { type: 'enterprise', enterpriseId: scope.enterprise.id };

const ownerOf = (scope: Scope): [store.OwnerType, number] =>
  scope.type === 'organization' ? ['organization', scope.org.id] : ['enterprise', scope.enterprise.id];

/** How a bad configuration body is refused: a 422, or on enterprise create the 400 its status table lists. */
type Refuse = (field: string, message: string, code?: ValidationCode) => ApiError;

const unprocessable: Refuse = (field, message, code = 'custom') => validationFailed([{ resource: RESOURCE, field, code, message }]);
const malformed: Refuse = (field, message, code = 'custom') =>
  new ApiError(400, message, { errors: [{ resource: RESOURCE, field, code, message }] });

export class CodeSecurityService extends Service {
  private get postgres(): boolean {
    return this.ctx.db.dialect === 'postgres';
  }

  // --- Who may call ------------------------------------------------------------------------------

  /**
   * An organization the caller administers: an owner or security manager, through a token that
   * reaches the organization (a fine-grained token owned by it, an app installed on it) with the
   * route's permissions there. Members without those roles are refused (403), and so is a token whose
   * app's installation grants too little; anyone else does not see the organization (404).
   */
  async organizationScope(principal: Principal, login: string): Promise<Scope & { type: 'organization' }> {
    const org = await findAccount(this.db, login);
    if (!org || org.type !== 'Organization') throw notFound();
    if (principal.type === 'installation') {
      if (principal.accountId !== org.id) throw notFound();
    } else if (principal.type === 'user') {
      if (!(await reachesAccount(this.db, principal, org.id))) throw notFound();
      const roles = await orgRoles(this.db, org.id, principal.user.id);
      if (!roles.has('owner') && !roles.has('security_manager')) {
        if (roles.size) throw forbidden('You must be an organization owner or security manager to manage code security configurations.');
        throw notFound();
      }
      // An app user token acts with its app's grant on this organization (a 403 when it falls short).
      await requirePermittedOn(principal, org.id);
    } else {
      throw notFound();
    }
    return { type: 'organization', org, enterpriseId: await organizationEnterpriseId(this.db, org.id) };
  }

  /** An enterprise the caller owns. Its other members (and members of its organizations) are refused (403); others see 404. */
  async enterpriseScope(principal: Principal, slug: string): Promise<Scope & { type: 'enterprise' }> {
    const enterprise = await findEnterprise(this.db, slug);
    if (!enterprise || principal.type !== 'user') throw notFound();
    const userId = principal.user.id;
    if (!(await isEnterpriseOwner(this.db, enterprise.id, userId))) {
      if (await isEnterpriseMember(this.db, enterprise.id, userId)) throw forbidden('You must be an enterprise owner to manage code security configurations.');
      throw notFound();
    }
    return { type: 'enterprise', enterprise };
  }

  /**
   * A repository whose configuration the caller may read: one it can see (else 404), reached by the
   * token, and administered by the caller (repository admin, or the organization's security manager,
   * who sees every repository of the organization).
   */
  async administeredRepository(principal: Principal, owner: string, name: string): Promise<RepositoryRow & { owner: UserRow }> {
    const repository = await findRepository(this.db, owner, name);
    if (!repository) throw notFound();
    const securityManager = principal.type === 'user' && (await orgRoles(this.db, repository.owner_id, principal.user.id)).has('security_manager');
    if (!securityManager) await requireAccess(this.db, principal, 'read', { repository });
    if (!(await reachesRepository(this.db, principal, repository))) throw notAccessible(principal);
    await requirePermittedOn(principal, repository.owner_id);
    if (principal.type === 'user' && !securityManager && !(await callerRepositoryPermissions(this.db, principal, repository)).admin) {
      throw forbidden('You must be a repository administrator or a security manager to read its code security configuration.');
    }
    return repository;
  }

  // --- Configurations ----------------------------------------------------------------------------

  /** A configuration visible from the scope (global, the scope's own, an organization's enterprise's), else 404. */
  async visibleConfiguration(scope: Scope, id: number): Promise<store.ConfigurationRow> {
    const row = isRowId(id) ? await store.findConfiguration(this.db, id) : undefined;
    const visible =
      row !== undefined &&
      (row.target_type === 'global' ||
        (scope.type === 'organization'
          ? row.org_id === scope.org.id || (row.enterprise_id !== null && row.enterprise_id === scope.enterpriseId)
          : row.enterprise_id === scope.enterprise.id));
    if (!visible) throw notFound();
    return row;
  }

  async list(scope: Scope, query: CursorArgs & { target_type?: 'global' | 'all' }): Promise<CursorPage<store.ConfigurationRow>> {
    const globalOnly = query.target_type === 'global';
    return cursorPage(query, (window) => store.listConfigurations(this.db, viewerOf(scope), { globalOnly }, window), (row) => row.id);
  }

  async create(scope: Scope, input: ConfigurationInput & { name: string }): Promise<store.ConfigurationRow> {
    const refuse = scope.type === 'enterprise' ? malformed : unprocessable;
    const name = this.checkName(input.name, refuse);
    const settings = await this.settingsFrom(this.db, scope, defaultSettings(), input, refuse);
    const [ownerType, ownerId] = ownerOf(scope);
    const duplicate = () =>
      scope.type === 'enterprise' ? malformed('name', 'Name has already been taken', 'already_exists') : validationFailed([{ resource: RESOURCE, field: 'name', code: 'already_exists' }]);
    if (await store.configurationNameTaken(this.db, ownerType, ownerId, name, null)) throw duplicate();
    const now = this.now();
    try {
      return await store.insertConfiguration(this.db, {
        target_type: ownerType,
        org_id: ownerType === 'organization' ? ownerId : null,
        enterprise_id: ownerType === 'enterprise' ? ownerId : null,
        name,
        name_lower: name.toLowerCase(),
        description: input.description ?? '',
        settings: JSON.stringify(settings),
        enforcement: input.enforcement ?? 'enforced',
        created_at: now,
        updated_at: now,
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw duplicate();
      throw error;
    }
  }

  /**
   * Updates a configuration. `changed` is false when the body changes nothing (nothing is written).
   * A change of features or enforcement re-applies the configuration to its repositories. The body is
   * merged into the configuration as it is once locked, so concurrent updates do not undo each other.
   */
  async update(scope: Scope, id: number, input: ConfigurationInput): Promise<{ row: store.ConfigurationRow; changed: boolean }> {
    const found = await this.visibleConfiguration(scope, id);
    if (found.target_type === 'global') throw conflict('Global configurations are read-only and cannot be updated.');
    if (scope.type === 'organization' && found.target_type !== 'organization') {
      throw badRequest('Enterprise configurations can only be updated through the enterprise.');
    }
    if (scope.type === 'enterprise' && (await this.inProgress(scope))) {
      throw conflict('Another enablement is in progress. Updating this configuration is not available until it has finished.');
    }
    const [ownerType, ownerId] = ownerOf(scope);
    const duplicate = () =>
      scope.type === 'enterprise' ? conflict('Name has already been taken') : validationFailed([{ resource: RESOURCE, field: 'name', code: 'already_exists' }]);
    try {
      return await this.db.transaction().execute(async (trx) => {
        const row = await store.lockConfiguration(trx, found.id, this.postgres);
        if (!row) throw notFound();
        const name = input.name === undefined ? row.name : this.checkName(input.name, unprocessable);
        const current = JSON.parse(row.settings) as Settings;
        const settings = await this.settingsFrom(trx, scope, current, input, unprocessable);
        const enforcement = input.enforcement ?? row.enforcement;
        const description = input.description ?? row.description;
        const featuresChanged = JSON.stringify(settings) !== JSON.stringify(current) || enforcement !== row.enforcement;
        if (!featuresChanged && name === row.name && description === row.description) return { row, changed: false };
        if (name.toLowerCase() !== row.name_lower && (await store.configurationNameTaken(trx, ownerType, ownerId, name, row.id))) throw duplicate();
        const now = this.now();
        const saved = await store.updateConfiguration(trx, row.id, {
          name,
          name_lower: name.toLowerCase(),
          description,
          settings: JSON.stringify(settings),
          enforcement,
          updated_at: now,
        });
        if (featuresChanged && (await store.markConfigurationUpdating(trx, row.id, now)) > 0) await queueApply(this.ctx, trx, row.id);
        return { row: saved, changed: true };
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw duplicate();
      throw error;
    }
  }

  /** Deletes a configuration; its repositories are detached and keep their settings. */
  async delete(scope: Scope, id: number): Promise<void> {
    const row = await this.visibleConfiguration(scope, id);
    if (row.target_type === 'global') throw conflict('Global configurations are read-only and cannot be deleted.');
    if (scope.type === 'organization' && row.target_type !== 'organization') {
      throw badRequest('Only organization configurations can be deleted through the organization.');
    }
    if (await this.inProgress(scope)) {
      throw conflict('Another enablement is in progress. Deleting this configuration is not available until it has finished.');
    }
    await this.db.transaction().execute(async (trx) => {
      if (!(await store.lockConfiguration(trx, row.id, this.postgres))) throw notFound();
      if (await store.isDefaultAnywhere(trx, row.id)) {
        throw conflict('The configuration is a default for new repositories. Remove it as a default before deleting it.');
      }
      await store.deleteConfiguration(trx, row.id);
    });
  }

  // --- Attachments -------------------------------------------------------------------------------

  /**
   * Attaches a configuration to the repositories the scope names: they turn `attaching` at once, and
   * the apply job brings them to `attached`, `enforced` or `failed`. Repositories attached to another
   * configuration are re-attached.
   */
  async attach(scope: Scope, id: number, input: { scope: AttachScope; selected_repository_ids?: number[] }): Promise<void> {
    const row = await this.visibleConfiguration(scope, id);
    if (scope.type === 'enterprise' && (await this.inProgress(scope))) {
      throw conflict('Another enablement is in progress. Attaching this configuration is not available until it has finished.');
    }
    const ids = input.selected_repository_ids;
    if (input.scope === 'selected' && !ids?.length) throw invalidField(RESOURCE, 'selected_repository_ids', undefined, 'missing_field');
    if (input.scope !== 'selected' && ids !== undefined) {
      throw invalidField(RESOURCE, 'selected_repository_ids', 'selected_repository_ids is allowed only with the scope selected');
    }
    const orgIds = await this.organizationsOf(scope);
    let repositoryIds: number[];
    if (input.scope === 'selected') {
      const unique = [...new Set(ids)];
      repositoryIds = await store.repositoryIdsOf(this.db, orgIds, { ids: unique.filter(isRowId) });
      if (repositoryIds.length !== unique.length) {
        const missing = unique.filter((repositoryId) => !repositoryIds.includes(repositoryId));
        throw invalidField(RESOURCE, 'selected_repository_ids', `Repositories not found in the organization: ${missing.join(', ')}`);
      }
    } else {
      repositoryIds = await store.repositoryIdsOf(this.db, orgIds, {
        visibility: input.scope === 'public' || input.scope === 'private_or_internal' ? input.scope : undefined,
        withoutConfiguration: input.scope === 'all_without_configurations',
      });
    }
    if (!repositoryIds.length) return;
    await this.db.transaction().execute(async (trx) => {
      if (!(await store.lockConfiguration(trx, row.id, this.postgres))) throw notFound();
      await store.attachRepositories(trx, row.id, repositoryIds, 'attaching', this.now());
      await queueApply(this.ctx, trx, row.id);
    });
  }

  /** Detaches repositories of the organization from whatever configuration they have; their settings stay. */
  async detach(scope: Scope & { type: 'organization' }, ids: number[]): Promise<void> {
    const unique = [...new Set(ids)];
    const found = await store.repositoryIdsOf(this.db, [scope.org.id], { ids: unique.filter(isRowId) });
    if (found.length !== unique.length) {
      const missing = unique.filter((repositoryId) => !found.includes(repositoryId));
      throw invalidField(RESOURCE, 'selected_repository_ids', `Repositories not found in the organization: ${missing.join(', ')}`);
    }
    await store.detachRepositories(this.db, found);
  }

  async repositories(scope: Scope, id: number, query: CursorArgs & { status?: string }) {
    const row = await this.visibleConfiguration(scope, id);
    const statuses = parseStatusFilter(query.status);
    const orgIds = await this.organizationsOf(scope);
    return cursorPage(query, (window) => store.listAttachedRepositories(this.db, row.id, orgIds, statuses, window), (item) => item.repository.id);
  }

  /** The configuration attached to a repository, with the attachment's status; null when there is none. */
  async repositoryConfiguration(repository: RepositoryRow & { owner: UserRow }) {
    const attachment = await store.attachmentOf(this.db, repository.id);
    if (!attachment) return null;
    const configuration = await store.findConfiguration(this.db, attachment.configuration_id);
    if (!configuration) return null;
    const scope: Scope = { type: 'organization', org: repository.owner, enterpriseId: null };
    return { attachment, configuration, scope };
  }

  // --- Defaults ----------------------------------------------------------------------------------

  /**
   * The defaults for new repositories, one record per configuration. An organization's list also
   * shows its enterprise's default for the repository types it has no default of its own for: those
   * are the ones its new repositories get.
   */
  async defaults(scope: Scope): Promise<{ default_for_new_repos: DefaultForNewRepos; configuration: store.ConfigurationRow }[]> {
    const slots = await this.effectiveDefaults(scope);
    const byConfiguration = new Map<number, Set<store.RepositoryType>>();
    for (const [repositoryType, configurationId] of slots) {
      byConfiguration.set(configurationId, (byConfiguration.get(configurationId) ?? new Set()).add(repositoryType));
    }
    const records = [];
    for (const [configurationId, types] of byConfiguration) {
      const configuration = await store.findConfiguration(this.db, configurationId);
      if (!configuration) continue;
      const value: DefaultForNewRepos = types.size === 2 ? 'all' : types.has('public') ? 'public' : 'private_and_internal';
      records.push({ default_for_new_repos: value, configuration });
    }
    return records.sort((a, b) => a.configuration.id - b.configuration.id);
  }

  /** Makes a configuration the default of the scope for some repository types (`none`: for none). */
  async setDefault(scope: Scope, id: number, value: DefaultForNewRepos) {
    const row = await this.visibleConfiguration(scope, id);
    const [ownerType, ownerId] = ownerOf(scope);
    const wanted: store.RepositoryType[] = value === 'all' ? ['public', 'private_and_internal'] : value === 'none' ? [] : [value];
    const unwanted = (['public', 'private_and_internal'] as const).filter((type) => !wanted.includes(type));
    await this.db.transaction().execute(async (trx) => {
      if (!(await store.lockConfiguration(trx, row.id, this.postgres))) throw notFound();
      for (const type of wanted) await store.setDefault(trx, ownerType, ownerId, type, row.id);
      await store.clearDefault(trx, ownerType, ownerId, unwanted, row.id);
    });
    return { default_for_new_repos: value, configuration: row };
  }

  /**
   * A repository created in an organization gets the default configuration for its visibility:
   * the organization's own, otherwise its enterprise's.
   */
  async attachDefault(trx: Executor, repositoryId: number): Promise<void> {
    const repository = await findRepositoryById(trx, repositoryId);
    if (!repository) return;
    const owner = await findAccountById(trx, repository.owner_id);
    if (owner?.type !== 'Organization') return;
    const repositoryType: store.RepositoryType = repository.visibility === 'public' ? 'public' : 'private_and_internal';
    const scope = { type: 'organization', org: { id: owner.id }, enterpriseId: await organizationEnterpriseId(trx, owner.id) } as const;
    const configurationId = (await this.effectiveDefaults(scope, trx)).get(repositoryType);
    if (configurationId === undefined) return;
    if (!(await store.lockConfiguration(trx, configurationId, this.postgres))) return;
    await store.attachRepositories(trx, configurationId, [repository.id], 'attaching', this.now());
    await queueApply(this.ctx, trx, configurationId);
  }

  /**
   * A repository moved to another owner (inside the transfer's transaction, the row moved): the old
   * owner's configuration lets go of it, and of the license it counted, whose paid features go with
   * it (the other settings stay, as on a detach); the new owner's default applies, as for a new
   * repository, with the new owner's licenses.
   */
  async onTransferred(trx: Executor, repositoryId: number): Promise<void> {
    await store.detachRepositories(trx, [repositoryId]);
    const repository = await findRepositoryById(trx, repositoryId);
    if (repository && (await store.seatOf(trx, repositoryId))) {
      await store.setRepositorySecurityAndAnalysis(trx, repositoryId, JSON.stringify(withoutPaidFeatures(parseSecurityAndAnalysis(repository.security_and_analysis))));
      await store.releaseSeat(trx, repositoryId);
    }
    await this.attachDefault(trx, repositoryId);
  }

  private async effectiveDefaults(
    scope: { type: 'organization'; org: { id: number }; enterpriseId: number | null } | (Scope & { type: 'enterprise' }),
    db: Executor = this.db,
  ): Promise<Map<store.RepositoryType, number>> {
    const slots = new Map<store.RepositoryType, number>();
    const fill = (rows: { repository_type: string; configuration_id: number }[]) => {
      for (const row of rows) {
        const type = row.repository_type as store.RepositoryType;
        if (!slots.has(type)) slots.set(type, row.configuration_id);
      }
    };
    if (scope.type === 'enterprise') {
      fill(await store.defaultsOf(db, 'enterprise', scope.enterprise.id));
      return slots;
    }
    fill(await store.defaultsOf(db, 'organization', scope.org.id));
    if (scope.enterpriseId !== null) fill(await store.defaultsOf(db, 'enterprise', scope.enterpriseId));
    return slots;
  }

  // --- Licenses ----------------------------------------------------------------------------------

  async setLicenses(ownerType: store.OwnerType, ownerId: number, advancedSecurity: number) {
    await store.setLicenses(this.db, ownerType, ownerId, advancedSecurity, this.now());
    return this.licenses(ownerType, ownerId);
  }

  async licenses(ownerType: store.OwnerType, ownerId: number) {
    return {
      advanced_security: await store.licenseCount(this.db, ownerType, ownerId, false),
      used: await store.seatsUsed(this.db, ownerType, ownerId),
    };
  }

  // --- Helpers -----------------------------------------------------------------------------------

  private async organizationsOf(scope: Scope): Promise<number[]> {
    return scope.type === 'organization' ? [scope.org.id] : enterpriseOrganizationIds(this.db, scope.enterprise.id);
  }

  private async inProgress(scope: Scope): Promise<boolean> {
    return store.enablementInProgress(this.db, await this.organizationsOf(scope));
  }

  private checkName(name: string, refuse: Refuse): string {
    const trimmed = name.trim();
    if (!trimmed) throw refuse('name', 'name must not be blank', 'invalid');
    return trimmed;
  }

  /** The settings a body asks for on top of `current`, checked as a whole. */
  private async settingsFrom(db: Executor, scope: Scope, current: Settings, input: ConfigurationInput, refuse: Refuse): Promise<Settings> {
    const next: Settings = structuredClone(current);
    for (const field of ENABLEMENT_FIELDS) {
      const value = input[field];
      if (value !== undefined) (next as Record<string, unknown>)[field] = value;
    }
    // The legacy `advanced_security` values name the product they turn on.
    if (input.advanced_security === 'code_security' && input.code_security === undefined) next.code_security = 'enabled';
    if (input.advanced_security === 'secret_protection' && input.secret_protection === undefined) next.secret_protection = 'enabled';

    if (input.dependency_graph_autosubmit_action_options !== undefined) {
      next.dependency_graph_autosubmit_action_options = { labeled_runners: input.dependency_graph_autosubmit_action_options.labeled_runners ?? false };
    }
    if (input.code_scanning_default_setup_options !== undefined) {
      const options = input.code_scanning_default_setup_options;
      if (options === null) next.code_scanning_default_setup_options = null;
      else {
        const runnerType = options.runner_type ?? 'not_set';
        const runnerLabel = options.runner_label ?? null;
        if (runnerType === 'labeled' && runnerLabel === null) {
          throw refuse('code_scanning_default_setup_options.runner_label', 'runner_label is required when runner_type is labeled', 'missing_field');
        }
        if (runnerType !== 'labeled' && runnerLabel !== null) {
          throw refuse('code_scanning_default_setup_options.runner_label', 'runner_label is allowed only when runner_type is labeled');
        }
        next.code_scanning_default_setup_options = { runner_type: runnerType, runner_label: runnerLabel };
      }
    }
    if (input.code_scanning_options !== undefined) {
      next.code_scanning_options = input.code_scanning_options === null ? null : { allow_advanced: input.code_scanning_options.allow_advanced ?? null };
    }

    const reviewers = input.secret_scanning_delegated_bypass_options?.reviewers;
    if (reviewers !== undefined) {
      if (next.secret_scanning_delegated_bypass !== 'enabled') {
        throw refuse('secret_scanning_delegated_bypass_options', 'Bypass reviewers can be set only when secret_scanning_delegated_bypass is enabled');
      }
      if (scope.type === 'organization') await this.checkTeams(db, scope.org.id, reviewers.filter((r) => r.reviewer_type === 'TEAM').map((r) => r.reviewer_id), refuse);
      const unique = new Map(reviewers.map((r) => [`${r.reviewer_type}:${r.reviewer_id}`, { reviewer_id: r.reviewer_id, reviewer_type: r.reviewer_type, mode: r.mode ?? 'ALWAYS' }]));
      next.secret_scanning_delegated_bypass_options = { reviewers: [...unique.values()] };
    } else if (next.secret_scanning_delegated_bypass !== 'enabled') {
      next.secret_scanning_delegated_bypass_options = { reviewers: [] };
    }

    if (next.updater_delegated_alert_dismissal === 'enabled' && next.updater_alerts !== 'enabled') {
      throw refuse('updater_delegated_alert_dismissal', 'updater_delegated_alert_dismissal can be enabled only when updater_alerts is enabled');
    }
    return next;
  }

  private async checkTeams(db: Executor, orgId: number, teamIds: number[], refuse: Refuse): Promise<void> {
    if (!teamIds.length) return;
    const found = await teamIdsOf(db, orgId, teamIds.filter(isRowId));
    const missing = teamIds.filter((teamId) => !found.has(teamId));
    if (missing.length) throw refuse('secret_scanning_delegated_bypass_options.reviewers', `Teams not found in the organization: ${missing.join(', ')}`);
  }
}

/** The `status` filter: comma-separated attachment statuses; absent or containing `all`, no filter. */
function parseStatusFilter(value: string | undefined): string[] | null {
  if (value === undefined) return null;
  const statuses = value.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
  if (!statuses.length || statuses.includes('all')) return null;
  const unknown = statuses.filter((s) => !(AttachmentStatus.enum as readonly string[]).includes(s));
  if (unknown.length) throw invalidField(RESOURCE, 'status', `Unsupported status: ${unknown.join(', ')}`);
  return statuses;
}
