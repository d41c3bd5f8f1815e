// The public reads of accounts: the authenticated user, any user's or organization's public profile,
// an organization, and a team (seen by the organization's members only).
import { Service } from '../../platform/service.ts';
import { notFound } from '../../platform/errors.ts';
import { actsForOrganization, hasPermissions, hasScope, isFineGrained } from '../callers/access.ts';
import type { Principal, UserPrincipal } from '../callers/principal.ts';
import { organizationProfile, privateUser, publicUser, teamProfile } from './representations.ts';
import { findAccount, findTeam, repositoryCountsOf, teamMemberCount } from './store.ts';

export class AccountService extends Service {
  /**
   * The caller's own profile. A classic or OAuth token shows the private fields only with the `user`
   * scope; tokens without scopes (fine-grained, app user) are the user's own.
   */
  async authenticatedUser(principal: UserPrincipal) {
    const user = principal.user;
    const facts = await repositoryCountsOf(this.db, user.id);
    const own = isFineGrained(principal) || hasScope(principal, ['user']);
    return own ? privateUser(this.ctx.urls, user, facts) : publicUser(this.ctx.urls, user, facts);
  }

  async profile(login: string) {
    const account = await findAccount(this.db, login);
    if (!account) throw notFound();
    return publicUser(this.ctx.urls, account, await repositoryCountsOf(this.db, account.id));
  }

  async organization(principal: Principal, login: string) {
    const org = await findAccount(this.db, login);
    if (!org || org.type !== 'Organization') throw notFound();
    const facts = await repositoryCountsOf(this.db, org.id);
    // Owners see the private counts, through a credential that may administer the organization.
    const administers =
      (principal.type === 'user' && !isFineGrained(principal) && hasScope(principal, ['admin:org', 'read:org'])) ||
      (principal.type !== 'anonymous' && principal.type !== 'app' && isFineGrained(principal) && hasPermissions(principal.permissions, [{ organization_administration: 'read' }]));
    const owner = administers && (await actsForOrganization(this.db, principal, org.id, ['owner']));
    return organizationProfile(this.ctx.urls, org, facts, owner);
  }

  /** A team of the organization, for its members (and installations on it); anyone else gets 404. */
  async team(principal: Principal, login: string, slug: string) {
    const org = await findAccount(this.db, login);
    if (!org || org.type !== 'Organization') throw notFound();
    if (!(await actsForOrganization(this.db, principal, org.id, ['owner', 'member', 'security_manager']))) throw notFound();
    const row = await findTeam(this.db, org.id, slug);
    if (!row) throw notFound();
    // codehost does not give teams repositories of their own.
    const facts = { members: await teamMemberCount(this.db, row.id), repositories: 0 };
    return teamProfile(this.ctx.urls, org, row, facts, await repositoryCountsOf(this.db, org.id));
  }
}
