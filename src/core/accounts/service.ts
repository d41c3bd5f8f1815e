// The public reads of accounts: the authenticated user, any user's or organization's public profile,
// an organization, a team (seen by the organization's members only), and whether a user is a member
// of an organization.
import { Service } from '../../platform/service.ts';
import { notFound } from '../../platform/errors.ts';
import type { PageParams } from '../../platform/pagination.ts';
import { organizationProfile, organizationSimple, privateUser, publicUser, teamProfile } from './representations.ts';
import { findAccount, findTeam, MEMBER_ROLES, memberOrganizationIds, organizationsOfMember, repositoryCountsOf, teamMemberCount } from './store.ts';
import { actsForOrganization, hasPermissions, hasScope, isFineGrained, type Principal, reachesAccount, type UserPrincipal, requireAccess } from '../access/index.ts';

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
    await requireAccess(this.db, principal, ['owner', 'member', 'security_manager'], { organization: org.id });
    const row = await findTeam(this.db, org.id, slug);
    if (!row) throw notFound();
    // codehost does not give teams repositories of their own.
    const facts = { members: await teamMemberCount(this.db, row.id), repositories: 0 };
    return teamProfile(this.ctx.urls, org, row, facts, await repositoryCountsOf(this.db, org.id));
  }

  /**
   * GET /orgs/{org}/members/{username}: whether the user is a member of the organization (an owner,
   * a member or a security manager; a billing manager is not one), answered as the platform answers
   * a requester who is a member of it: undefined (204) when the user is, the 404 when not (an unknown
   * user too). A member of it is a user who holds one of those roles, through a token that reaches
   * the organization (a classic or OAuth token with `read:org`, as private memberships ask; a
   * fine-grained one owned by it; an app user token whose app is installed on it), or an installation
   * on it. Anyone else may see public memberships only: they are led to
   * /orgs/{org}/public_members/{username} (the URL answered, for the platform's 302). An unknown
   * organization is a 404 to everyone.
   */
  async membershipCheck(principal: Principal, orgLogin: string, login: string): Promise<string | undefined> {
    const org = await findAccount(this.db, orgLogin);
    if (!org || org.type !== 'Organization') throw notFound();
    const scoped = (principal.kind !== 'classic' && principal.kind !== 'oauth') || hasScope(principal, ['read:org']);
    if (!scoped || !(await actsForOrganization(this.db, principal, org.id, MEMBER_ROLES))) {
      return `${this.ctx.urls.api}/orgs/${encodeURIComponent(org.login)}/public_members/${encodeURIComponent(login)}`;
    }
    const user = await findAccount(this.db, login);
    if (!user || !(await memberOrganizationIds(this.db, user.id, [org.id])).has(org.id)) throw notFound();
    return undefined;
  }

  /**
   * GET /orgs/{org}/public_members/{username}: whether the user has made their membership public.
   * codehost keeps no public/private flag on a membership and shows one only to those who see it
   * anyway (its members, the user themself: GET /users/{username}/orgs), so every membership is
   * private, as a new one is on the platform: the 404 to anyone, for any organization and user.
   */
  async publicMembershipCheck(_principal: Principal, _orgLogin: string, _login: string): Promise<never> {
    throw notFound();
  }

  /**
   * GET /users/{username}/orgs. The platform lists an account's public memberships only; codehost
   * keeps no public/private flag on a membership, so it shows a membership to those who could see it
   * anyway: the user themself and the other members of that organization, through a credential that
   * reaches the organization (a classic or OAuth token with `read:org` or `user`, as the platform's
   * private membership list asks; an installation: on that organization). Anyone else gets an
   * empty list, as for an account whose memberships are all private.
   */
  async organizationsOf(principal: Principal, login: string, page: PageParams) {
    const account = await findAccount(this.db, login);
    if (!account) throw notFound();
    if (principal.type !== 'user' && principal.type !== 'installation') return { total: 0, items: [] };
    if ((principal.kind === 'classic' || principal.kind === 'oauth') && !hasScope(principal, ['read:org', 'user'])) return { total: 0, items: [] };
    const orgs = await organizationsOfMember(this.db, account.id);
    const shared = principal.type === 'user' && principal.user.id !== account.id
      ? await memberOrganizationIds(this.db, principal.user.id, orgs.map((org) => org.id))
      : null;
    const visible = [];
    for (const org of orgs) {
      if (principal.type === 'installation' ? principal.accountId !== org.id : shared !== null && !shared.has(org.id)) continue;
      if (!(await reachesAccount(this.db, principal, org.id))) continue;
      visible.push(org);
    }
    const items = visible.slice(page.offset, page.offset + page.perPage).map((org) => organizationSimple(this.ctx.urls, org));
    return { total: visible.length, items };
  }
}
