// Issue types: an organization's types (managed by its owners), and a repository's view of them,
// where the repository may disable a type (set on the operator surface). A repository owned by a
// user has no issue types.
import { Type, type Static } from 'typebox';
import { insertUnique, invalidField, notFound } from '../../platform/errors.ts';
import { findAccount, type UserRow } from '../../core/accounts/store.ts';
import { findRepository } from '../../core/repositories/store.ts';
import { isRowId } from '../../platform/schemas.ts';
import { Color, issueTypeBody, Nullable, type IssueType, type IssueTypeRow } from './representations.ts';
import * as store from './store.ts';
import { Service } from '../../platform/service.ts';
import { type Principal, requireAccess } from '../../core/access/index.ts';

export const NAME_MAX = 255;
export const DESCRIPTION_MAX = 1024;

/** The body of create and update: `name` and `is_enabled` required. */
export const IssueTypeInput = Type.Object({
  name: Type.String({ minLength: 1, maxLength: NAME_MAX, description: 'Unique within the organization, whatever its case' }),
  is_enabled: Type.Boolean({ description: 'Whether issues of the organization may use the type' }),
  description: Type.Optional(Nullable(Type.String({ maxLength: DESCRIPTION_MAX }))),
  color: Type.Optional(Nullable(Color)),
});
export type IssueTypeInput = Static<typeof IssueTypeInput>;

function cleanName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw invalidField('IssueType', 'name', 'name cannot be blank');
  return trimmed;
}

export class IssueTypeService extends Service {
  /** The organization, if the caller administers it (an owner, or an installation on it); else 404. */
  async organization(principal: Principal, login: string): Promise<UserRow> {
    const org = await findAccount(this.db, login);
    if (!org || org.type !== 'Organization') throw notFound();
    await requireAccess(this.db, principal, ['owner'], { organization: org.id });
    return org;
  }

  async list(org: UserRow): Promise<IssueType[]> {
    return (await store.listForOrganization(this.db, org.id)).map((row) => issueTypeBody(row));
  }

  async create(org: UserRow, input: IssueTypeInput): Promise<IssueType> {
    const name = cleanName(input.name);
    const now = this.now();
    const row = await insertUnique('IssueType', 'name', () =>
      store.insert(this.db, {
        org_id: org.id,
        name,
        name_lower: name.toLowerCase(),
        description: input.description ?? null,
        color: input.color ?? null,
        is_enabled: input.is_enabled ? 1 : 0,
        created_at: now,
        updated_at: now,
      }),
    );
    return issueTypeBody(row);
  }

  private async find(org: UserRow, id: number): Promise<IssueTypeRow> {
    const existing = isRowId(id) ? await store.findById(this.db, org.id, id) : undefined;
    if (!existing) throw notFound();
    return existing;
  }

  /** Replaces name and is_enabled; description and color change only when sent (null clears them). */
  async update(org: UserRow, id: number, input: IssueTypeInput): Promise<IssueType> {
    const existing = await this.find(org, id);
    const name = cleanName(input.name);
    const row = await insertUnique('IssueType', 'name', () =>
      store.update(this.db, existing.id, {
        name,
        name_lower: name.toLowerCase(),
        is_enabled: input.is_enabled ? 1 : 0,
        ...(input.description !== undefined ? { description: input.description } : {}),
        ...(input.color !== undefined ? { color: input.color } : {}),
        updated_at: this.now(),
      }),
    );
    // Deleted between the read above and this write (a concurrent DELETE): gone, as a read now finds it.
    if (!row) throw notFound();
    return issueTypeBody(row);
  }

  async delete(org: UserRow, id: number): Promise<void> {
    const existing = await this.find(org, id);
    await store.remove(this.db, existing.id);
  }

  /**
   * A repository's types: its organization's types, each enabled only where the organization enables
   * it and the repository does not disable it. 404 when the caller cannot see the repository.
   */
  async listForRepository(principal: Principal, owner: string, name: string): Promise<IssueType[]> {
    const repository = await requireAccess(this.db, principal, 'read', { repository: await findRepository(this.db, owner, name) });
    return this.repositoryView(repository.owner_id, repository.id);
  }

  private async repositoryView(orgId: number, repositoryId: number): Promise<IssueType[]> {
    const [types, disabled] = await Promise.all([store.listForOrganization(this.db, orgId), store.disabledIn(this.db, repositoryId)]);
    return types.map((row) => issueTypeBody(row, Boolean(row.is_enabled) && !disabled.has(row.id)));
  }

  /** Operator surface: a repository disables (or stops disabling) one of its organization's types. */
  async setRepositoryOverride(owner: string, repo: string, typeName: string, isEnabled: boolean): Promise<IssueType> {
    const repository = await findRepository(this.db, owner, repo);
    if (!repository) throw notFound('Repository not found');
    const type = await store.findByName(this.db, repository.owner_id, typeName);
    if (!type) throw notFound(`Issue type not found: ${typeName}`);
    await store.setDisabled(this.db, type.id, repository.id, !isEnabled, this.now());
    return issueTypeBody(type, Boolean(type.is_enabled) && isEnabled);
  }

  /** Seed files: a type that already exists in its organization is left alone. */
  async seedType(entry: { org: string } & IssueTypeInput): Promise<void> {
    const org = await findAccount(this.db, entry.org);
    if (!org || org.type !== 'Organization') throw notFound(`Organization not found: ${entry.org}`);
    if (await store.findByName(this.db, org.id, entry.name.trim())) return;
    await this.create(org, entry);
  }
}
