// The writes of accounts: create users, enterprises and organizations (the operator surface and seed
// files), and a user's suspension (spec/admin-api.md "Lifecycle"; a user's deletion, which takes
// their repositories, is the repositories home's: src/core/repositories/owner-writes.ts).
// A suspended user's every credential is refused on its next request (src/core/access/principal.ts
// reads the flag with the token, in the same round trip), with the platform's 403. Unknown references
// are 404, duplicates 422 `already_exists`; every create returns the row, routes shape the answer.
import { insertUnique, invalidField, notFound } from '../../platform/errors.ts';
import { Service } from '../../platform/service.ts';
import { requireAccount, requireUsers } from './lookup.ts';
import {
  addEnterpriseMember, addOrgMembership, findEnterprise, insertAccount, insertEnterprise, insertOrganization, setSuspended, type UserRow,
} from './store.ts';
import type { OrgRole } from '../access/index.ts';

export const LOGIN_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$/;

export class AccountWrites extends Service {
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
    return this.transaction(async (trx) => {
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
    return this.transaction(async (trx) => {
      const org = await insertUnique('Organization', 'login', () =>
        insertOrganization(trx, { login: input.login, login_lower: input.login.toLowerCase(), type: 'Organization', name: input.name ?? null, email: null, site_admin: 0, created_at: now, updated_at: now }, enterprise?.id ?? null),
      );
      for (const [role, users] of roles) {
        for (const user of users) await addOrgMembership(trx, org.id, user.id, role);
      }
      return org;
    });
  }

  /** Suspends the user (again: the time and reason are the new ones). */
  async suspend(login: string, reason: string | null): Promise<void> {
    const user = await requireAccount(this.db, login, 'user');
    await setSuspended(this.db, user.id, { suspended_at: this.now(), suspended_reason: reason, updated_at: this.now() });
  }

  async unsuspend(login: string): Promise<void> {
    const user = await requireAccount(this.db, login, 'user');
    await setSuspended(this.db, user.id, { suspended_at: null, suspended_reason: null, updated_at: this.now() });
  }
}
