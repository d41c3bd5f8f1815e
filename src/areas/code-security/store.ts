// SQL of code security configurations: configurations, attachments, defaults, licenses and seats.
import type { Selectable } from 'kysely';
import type { Executor } from '../../db/index.ts';
import type { UserRow } from '../../core/accounts/store.ts';
import type { RepositoryRow } from '../../core/repositories/representations.ts';
import type { CodeSecurityAttachmentsTable, CodeSecurityConfigurationsTable } from '../../db/tables/code-security.ts';

export type ConfigurationRow = Selectable<CodeSecurityConfigurationsTable>;
export type AttachmentRow = Selectable<CodeSecurityAttachmentsTable>;

/** Statuses of an attachment still waiting for the apply job. */
export const PENDING_STATUSES = ['attaching', 'updating'] as const;

/** Who a configuration is seen from: an organization (with its enterprise, if any) or an enterprise. */
export type Viewer = { type: 'organization'; orgId: number; enterpriseId: number | null } | { type: 'enterprise'; enterpriseId: number };

/** One window of a cursor-paginated list on an integer key. */
export interface Window {
  gt?: number;
  lt?: number;
  order: 'asc' | 'desc';
  limit: number;
}

// --- Configurations ------------------------------------------------------------------------------

export async function findConfiguration(db: Executor, id: number): Promise<ConfigurationRow | undefined> {
  return db.selectFrom('code_security_configurations').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Configurations a viewer sees: the global ones, its own, and (for an organization) its enterprise's. */
export async function listConfigurations(db: Executor, viewer: Viewer, options: { globalOnly: boolean }, window: Window): Promise<ConfigurationRow[]> {
  let query = db.selectFrom('code_security_configurations').selectAll();
  query = query.where((eb) => {
    const visible = [eb('target_type', '=', 'global')];
    if (!options.globalOnly) {
      if (viewer.type === 'organization') {
        visible.push(eb('org_id', '=', viewer.orgId));
        if (viewer.enterpriseId !== null) visible.push(eb('enterprise_id', '=', viewer.enterpriseId));
      } else {
        visible.push(eb('enterprise_id', '=', viewer.enterpriseId));
      }
    }
    return eb.or(visible);
  });
  if (window.gt !== undefined) query = query.where('id', '>', window.gt);
  if (window.lt !== undefined) query = query.where('id', '<', window.lt);
  return query.orderBy('id', window.order).limit(window.limit).execute();
}

/**
 * A configuration read inside a transaction that writes rows referring to it (attachments, defaults)
 * or deletes it: locked on PostgreSQL so a concurrent delete cannot slip in between (SQLite runs one
 * transaction at a time). Undefined when it is gone.
 */
export async function lockConfiguration(db: Executor, id: number, postgres: boolean): Promise<ConfigurationRow | undefined> {
  let query = db.selectFrom('code_security_configurations').selectAll().where('id', '=', id);
  if (postgres) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function insertConfiguration(db: Executor, values: Omit<ConfigurationRow, 'id'>): Promise<ConfigurationRow> {
  return db.insertInto('code_security_configurations').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function updateConfiguration(
  db: Executor,
  id: number,
  values: Pick<ConfigurationRow, 'name' | 'name_lower' | 'description' | 'settings' | 'enforcement' | 'updated_at'>,
): Promise<ConfigurationRow> {
  return db.updateTable('code_security_configurations').set(values).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

/** Deleting a configuration detaches its repositories (the attachments cascade); their settings stay. */
export async function deleteConfiguration(db: Executor, id: number): Promise<void> {
  await db.deleteFrom('code_security_configurations').where('id', '=', id).execute();
}

// --- Repositories and attachments -----------------------------------------------------------------

/** Whether an owner has a configuration of that name (any case), other than `exceptId`. */
export async function configurationNameTaken(db: Executor, ownerType: OwnerType, ownerId: number, name: string, exceptId: number | null): Promise<boolean> {
  let query = db
    .selectFrom('code_security_configurations')
    .select('id')
    .where(ownerType === 'organization' ? 'org_id' : 'enterprise_id', '=', ownerId)
    .where('name_lower', '=', name.toLowerCase());
  if (exceptId !== null) query = query.where('id', '!=', exceptId);
  return (await query.executeTakeFirst()) !== undefined;
}

/** Repositories of some organizations, narrowed by visibility or by having no configuration yet. */
export async function repositoryIdsOf(
  db: Executor,
  orgIds: readonly number[],
  filter: { visibility?: 'public' | 'private_or_internal'; withoutConfiguration?: boolean; ids?: readonly number[] },
): Promise<number[]> {
  if (!orgIds.length) return [];
  let query = db.selectFrom('repositories').select('repositories.id').where('repositories.owner_id', 'in', orgIds);
  if (filter.visibility === 'public') query = query.where('repositories.visibility', '=', 'public');
  if (filter.visibility === 'private_or_internal') query = query.where('repositories.visibility', '!=', 'public');
  if (filter.ids) query = filter.ids.length ? query.where('repositories.id', 'in', filter.ids) : query.where('repositories.id', '=', -1);
  if (filter.withoutConfiguration) {
    query = query.where((eb) => eb.not(eb.exists(eb.selectFrom('code_security_attachments').select('repository_id').whereRef('code_security_attachments.repository_id', '=', 'repositories.id'))));
  }
  const rows = await query.orderBy('repositories.id').execute();
  return rows.map((r) => r.id);
}

/** Attaches repositories to a configuration, re-attaching those attached elsewhere, with the given status. */
export async function attachRepositories(db: Executor, configurationId: number, repositoryIds: readonly number[], status: string, now: string): Promise<void> {
  // Chunks keep each statement well under both engines' parameter limits.
  for (let i = 0; i < repositoryIds.length; i += 500) {
    const chunk = repositoryIds.slice(i, i + 500);
    await db
      .insertInto('code_security_attachments')
      .values(chunk.map((repository_id) => ({ repository_id, configuration_id: configurationId, status, created_at: now, updated_at: now })))
      .onConflict((oc) => oc.column('repository_id').doUpdateSet((eb) => ({
        configuration_id: eb.ref('excluded.configuration_id'),
        status: eb.ref('excluded.status'),
        created_at: eb.ref('excluded.created_at'),
        updated_at: eb.ref('excluded.updated_at'),
      })))
      .execute();
  }
}

/** Marks every repository of a configuration for the apply job again (after the configuration changed). */
export async function markConfigurationUpdating(db: Executor, configurationId: number, now: string): Promise<number> {
  const result = await db
    .updateTable('code_security_attachments')
    .set({ status: 'updating', updated_at: now })
    .where('configuration_id', '=', configurationId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function detachRepositories(db: Executor, repositoryIds: readonly number[]): Promise<void> {
  if (repositoryIds.length) await db.deleteFrom('code_security_attachments').where('repository_id', 'in', repositoryIds).execute();
}

/** Whether an apply job still has work among the repositories of these organizations. */
export async function enablementInProgress(db: Executor, orgIds: readonly number[]): Promise<boolean> {
  if (!orgIds.length) return false;
  const row = await db
    .selectFrom('code_security_attachments')
    .innerJoin('repositories', 'repositories.id', 'code_security_attachments.repository_id')
    .select('code_security_attachments.repository_id')
    .where('repositories.owner_id', 'in', orgIds)
    .where('code_security_attachments.status', 'in', PENDING_STATUSES)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

export async function attachmentOf(db: Executor, repositoryId: number): Promise<AttachmentRow | undefined> {
  return db.selectFrom('code_security_attachments').selectAll().where('repository_id', '=', repositoryId).executeTakeFirst();
}

/** The next repositories of a configuration waiting for the apply job. */
export async function pendingRepositoryIds(db: Executor, configurationId: number, afterRepositoryId: number, limit: number): Promise<number[]> {
  const rows = await db
    .selectFrom('code_security_attachments')
    .select('repository_id')
    .where('configuration_id', '=', configurationId)
    .where('status', 'in', PENDING_STATUSES)
    .where('repository_id', '>', afterRepositoryId)
    .orderBy('repository_id')
    .limit(limit)
    .execute();
  return rows.map((r) => r.repository_id);
}

/** Configurations with repositories waiting since before `before` (their job was lost). */
export async function staleConfigurationIds(db: Executor, before: string): Promise<number[]> {
  const rows = await db
    .selectFrom('code_security_attachments')
    .select('configuration_id')
    .distinct()
    .where('status', 'in', PENDING_STATUSES)
    .where('updated_at', '<', before)
    .execute();
  return rows.map((r) => r.configuration_id);
}

/** The attachment of a repository, locked for the rest of the transaction on PostgreSQL. */
export async function lockAttachment(db: Executor, repositoryId: number, postgres: boolean): Promise<AttachmentRow | undefined> {
  let query = db.selectFrom('code_security_attachments').selectAll().where('repository_id', '=', repositoryId);
  if (postgres) query = query.forUpdate();
  return query.executeTakeFirst();
}

/** Sets a repository's attachment status, provided it is still attached to that configuration. */
export async function setAttachmentStatus(db: Executor, repositoryId: number, configurationId: number, status: string, now: string): Promise<void> {
  await db
    .updateTable('code_security_attachments')
    .set({ status, updated_at: now })
    .where('repository_id', '=', repositoryId)
    .where('configuration_id', '=', configurationId)
    .execute();
}

/** The repositories of a configuration within some organizations, with their owners, by repository id. */
export async function listAttachedRepositories(
  db: Executor,
  configurationId: number,
  orgIds: readonly number[],
  statuses: readonly string[] | null,
  window: Window,
): Promise<{ attachment: AttachmentRow; repository: RepositoryRow; owner: UserRow }[]> {
  if (!orgIds.length) return [];
  let query = db
    .selectFrom('code_security_attachments')
    .innerJoin('repositories', 'repositories.id', 'code_security_attachments.repository_id')
    .select(['code_security_attachments.repository_id', 'code_security_attachments.status'])
    .where('code_security_attachments.configuration_id', '=', configurationId)
    .where('repositories.owner_id', 'in', orgIds);
  if (statuses) query = query.where('code_security_attachments.status', 'in', statuses);
  if (window.gt !== undefined) query = query.where('code_security_attachments.repository_id', '>', window.gt);
  if (window.lt !== undefined) query = query.where('code_security_attachments.repository_id', '<', window.lt);
  const keys = await query.orderBy('code_security_attachments.repository_id', window.order).limit(window.limit).execute();
  if (!keys.length) return [];
  const ids = keys.map((k) => k.repository_id);
  const [attachments, repositories] = await Promise.all([
    db.selectFrom('code_security_attachments').selectAll().where('repository_id', 'in', ids).execute(),
    db.selectFrom('repositories').selectAll().where('id', 'in', ids).execute(),
  ]);
  const owners = await db.selectFrom('users').selectAll().where('id', 'in', [...new Set(repositories.map((r) => r.owner_id))]).execute();
  return ids.map((id) => {
    const repository = repositories.find((r) => r.id === id)!;
    return {
      attachment: attachments.find((a) => a.repository_id === id)!,
      repository,
      owner: owners.find((o) => o.id === repository.owner_id)!,
    };
  });
}

export async function setRepositorySecurityAndAnalysis(db: Executor, repositoryId: number, value: string): Promise<void> {
  await db.updateTable('repositories').set({ security_and_analysis: value }).where('id', '=', repositoryId).execute();
}

// --- Defaults ------------------------------------------------------------------------------------

export type OwnerType = 'organization' | 'enterprise';
export type RepositoryType = 'public' | 'private_and_internal';

export async function defaultsOf(db: Executor, ownerType: OwnerType, ownerId: number): Promise<{ repository_type: string; configuration_id: number }[]> {
  return db
    .selectFrom('code_security_defaults')
    .select(['repository_type', 'configuration_id'])
    .where('owner_type', '=', ownerType)
    .where('owner_id', '=', ownerId)
    .execute();
}

export async function setDefault(db: Executor, ownerType: OwnerType, ownerId: number, repositoryType: RepositoryType, configurationId: number): Promise<void> {
  await db
    .insertInto('code_security_defaults')
    .values({ owner_type: ownerType, owner_id: ownerId, repository_type: repositoryType, configuration_id: configurationId })
    .onConflict((oc) => oc.columns(['owner_type', 'owner_id', 'repository_type']).doUpdateSet({ configuration_id: configurationId }))
    .execute();
}

/** Removes a configuration from an owner's defaults for some repository types. */
export async function clearDefault(db: Executor, ownerType: OwnerType, ownerId: number, repositoryTypes: readonly RepositoryType[], configurationId: number): Promise<void> {
  if (!repositoryTypes.length) return;
  await db
    .deleteFrom('code_security_defaults')
    .where('owner_type', '=', ownerType)
    .where('owner_id', '=', ownerId)
    .where('repository_type', 'in', repositoryTypes)
    .where('configuration_id', '=', configurationId)
    .execute();
}

export async function isDefaultAnywhere(db: Executor, configurationId: number): Promise<boolean> {
  const row = await db.selectFrom('code_security_defaults').select('owner_id').where('configuration_id', '=', configurationId).limit(1).executeTakeFirst();
  return row !== undefined;
}

// --- Licenses ------------------------------------------------------------------------------------

export async function setLicenses(db: Executor, ownerType: OwnerType, ownerId: number, advancedSecurity: number, now: string): Promise<void> {
  await db
    .insertInto('code_security_licenses')
    .values({ owner_type: ownerType, owner_id: ownerId, advanced_security: advancedSecurity, updated_at: now })
    .onConflict((oc) => oc.columns(['owner_type', 'owner_id']).doUpdateSet({ advanced_security: advancedSecurity, updated_at: now }))
    .execute();
}

/** An owner's license count; `lock` (PostgreSQL) holds it so concurrent apply jobs do not hand out the same license. */
export async function licenseCount(db: Executor, ownerType: OwnerType, ownerId: number, lock: boolean): Promise<number> {
  let query = db.selectFrom('code_security_licenses').select('advanced_security').where('owner_type', '=', ownerType).where('owner_id', '=', ownerId);
  if (lock) query = query.forUpdate();
  return (await query.executeTakeFirst())?.advanced_security ?? 0;
}

export async function seatsUsed(db: Executor, ownerType: OwnerType, ownerId: number): Promise<number> {
  const row = await db
    .selectFrom('code_security_license_seats')
    .select((eb) => eb.fn.countAll<number>().as('used'))
    .where('owner_type', '=', ownerType)
    .where('owner_id', '=', ownerId)
    .executeTakeFirstOrThrow();
  return Number(row.used);
}

export async function seatOf(db: Executor, repositoryId: number) {
  return db.selectFrom('code_security_license_seats').selectAll().where('repository_id', '=', repositoryId).executeTakeFirst();
}

export async function takeSeat(db: Executor, repositoryId: number, ownerType: OwnerType, ownerId: number, now: string): Promise<void> {
  await db.insertInto('code_security_license_seats').values({ repository_id: repositoryId, owner_type: ownerType, owner_id: ownerId, created_at: now }).execute();
}

export async function releaseSeat(db: Executor, repositoryId: number): Promise<void> {
  await db.deleteFrom('code_security_license_seats').where('repository_id', '=', repositoryId).execute();
}
