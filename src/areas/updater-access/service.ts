// Updater repository access: which repositories of an organization (or of an enterprise's
// organizations) the dependency-updater bot may access, and its default access level. Callers who may
// not manage the list see a 404, as if the endpoint did not exist.
import type { Static } from 'typebox';
import { enterpriseOrganizationIds, findAccount, findEnterprise, isEnterpriseOwner } from '../../core/accounts/store.ts';
import { invalidField, notFound } from '../../platform/errors.ts';
import { isRowId } from '../../platform/schemas.ts';
import { DEFAULT_PAGES, pageParams, type PageParams } from '../../platform/pagination.ts';
import { minimalRepository } from '../../core/repositories/representations.ts';
import { userWithProfile } from '../../core/accounts/representations.ts';
import { type DefaultLevel, type UpdaterAccessList } from './representations.ts';
import * as store from './store.ts';
import type { ListOwner } from './store.ts';
import { Service } from '../../platform/service.ts';
import type { Executor } from '../../db/index.ts';
import { actingUser, isFineGrained, notAccessible, permittedOn, type Principal, reachesAccount, requireAccess } from '../../core/access/index.ts';

export class UpdaterAccessService extends Service {
  /** The organization's list, if the caller administers the organization (an owner, or an installation on it). */
  async organization(principal: Principal, login: string): Promise<ListOwner> {
    const org = await findAccount(this.db, login);
    if (!org || org.type !== 'Organization') throw notFound();
    await requireAccess(this.db, principal, ['owner'], { organization: org.id });
    return { type: 'organization', id: org.id };
  }

  /**
   * The enterprise's list, for enterprise owners only. A fine-grained token reaches an enterprise
   * through its owner's own account or one of the enterprise's organizations, holding the route's
   * permissions there.
   */
  async enterprise(principal: Principal, slug: string): Promise<ListOwner> {
    const enterprise = await findEnterprise(this.db, slug);
    const user = actingUser(principal);
    if (!enterprise || !user || !(await isEnterpriseOwner(this.db, enterprise.id, user.id))) throw notFound();
    if (isFineGrained(principal)) {
      const orgIds = await enterpriseOrganizationIds(this.db, enterprise.id);
      // Reached through an account where the token holds the route's permissions; reached only where
      // it lacks them (its app's installation grants too little) is a 403.
      let reached = false;
      for (const accountId of [user.id, ...orgIds]) {
        if (!(await reachesAccount(this.db, principal, accountId))) continue;
        if (await permittedOn(principal, accountId)) return { type: 'enterprise', id: enterprise.id };
        reached = true;
      }
      if (reached) throw notAccessible(principal);
      throw notFound();
    }
    return { type: 'enterprise', id: enterprise.id };
  }

  async list(owner: ListOwner, query: { page?: number; per_page?: number }): Promise<{ list: UpdaterAccessList; page: PageParams; total: number }> {
    const page = pageParams(query, DEFAULT_PAGES);
    const [level, total, rows] = await Promise.all([
      store.defaultLevel(this.db, owner),
      store.countRepositories(this.db, owner),
      store.pageOfRepositories(this.db, owner, page.perPage, page.offset),
    ]);
    const { urls } = this.ctx;
    return {
      list: {
        default_level: level as UpdaterAccessList['default_level'],
        // The access list shows owners with their profile fields (name, email, user_view_type).
        accessible_repositories: rows.map(({ repository, owner: account }) => ({
          ...minimalRepository(urls, repository, account),
          owner: userWithProfile(urls, account),
        })),
      },
      page,
      total,
    };
  }

  /**
   * Adds and removes repositories, all or nothing: every id must name a repository the list may
   * hold, else 404 and nothing changes.
   */
  async update(owner: ListOwner, input: { repository_ids_to_add?: number[]; repository_ids_to_remove?: number[] }): Promise<void> {
    const add = [...new Set(input.repository_ids_to_add ?? [])];
    const remove = [...new Set(input.repository_ids_to_remove ?? [])];
    const both = add.filter((id) => remove.includes(id));
    if (both.length) {
      throw invalidField('UpdaterRepositoryAccess', 'repository_ids_to_remove', `repository ids both added and removed: ${both.join(', ')}`);
    }
    const now = this.now();
    await this.db.transaction().execute(async (trx) => {
      const requested = [...add, ...remove];
      const known = await store.repositoriesWithin(trx, owner, requested.filter(isRowId));
      const missing = requested.filter((id) => !known.has(id));
      if (missing.length) throw notFound(`Repository not found: ${missing.join(', ')}`);
      await store.removeRepositories(trx, owner, remove);
      await store.addRepositories(trx, owner, add, now);
    });
  }

  /** A repository moved to another owner (inside the transfer's transaction): the lists that may no longer name it drop it. */
  async onTransferred(trx: Executor, repositoryId: number, ownerId: number): Promise<void> {
    await store.dropFromListsOutOfReach(trx, repositoryId, ownerId);
  }

  async setDefaultLevel(owner: ListOwner, level: Static<typeof DefaultLevel>): Promise<void> {
    await store.setDefaultLevel(this.db, owner, level, this.now());
  }
}
