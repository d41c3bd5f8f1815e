// The public read of a repository, and the rule every read inside a repository shares: a public
// repository is read by any caller the route accepts; a private (or internal) one only by a caller
// who may read it through a credential that reaches it (else 404), with the `repo` scope (classic
// and OAuth tokens, else 404) or one of the route's permissions (fine-grained tokens, else 403).
// Lists of repositories follow the same rule set-wise: every public one, and the private ones the
// caller reads through a credential that reaches them (`reachOf`, one condition of the list's query).
import { Service } from '../../platform/service.ts';
import { ApiError, forbidden, notFound } from '../../platform/errors.ts';
import type { PageParams } from '../../platform/pagination.ts';
import { simpleUser, team, type SimpleUser } from '../accounts/representations.ts';
import { findAccount, findAccountById, usersById, type UserRow } from '../accounts/store.ts';
import { representRepository, repositoriesWithFacts } from './facts.ts';
import {
  fullRepository, repositorySubscription, type CollaboratorPermission, type FullRepository, type RepositoryRow, type RepositorySubscription,
} from './representations.ts';
import {
  findSubscription, privateOwnerIds, reachedRepositoryIds, repositoryPage, repositoryTeamOrgIds, repositoryTeamPage, subscriberPage,
  type PrivateReach, type RepositoryListFilter, type RepositoryListOrder,
} from './list-store.ts';
import { findFormerName, findRepository, findRepositoryById } from './store.ts';
import {
  actsForOrganization, callerRepositoryPermissions, fullPermissionsOf, hasPermissions, hasScope, installationGrantOn, isFineGrained, notAccessible, orgRoles,
  permissionNames, type Permissions, type Principal, reachesRepository, type UserPrincipal, userRepositoriesPermissions, userRepositoryRole, requireAccess,
} from '../access/index.ts';

export type ReadableRepository = RepositoryRow & { owner: UserRow };

/** Fine-grained permissions any one of which reads a repository's metadata. */
export const REPOSITORY_READ: readonly Permissions[] = [{ metadata: 'read' }, { contents: 'read' }, { issues: 'read' }, { pull_requests: 'read' }, { administration: 'read' }];
/** The fine-grained permission that reads a repository's code security configuration (code-security's `repositoryRead`). */
const SECURITY_READ: readonly Permissions[] = [{ administration: 'read' }];

/** `type` of GET /users/{username}/repos (default `owner`) and of GET /orgs/{org}/repos (default `all`). */
export type UserRepositoryType = 'all' | 'owner' | 'member';
export type OrgRepositoryType = 'all' | 'public' | 'private' | 'forks' | 'sources' | 'member';

export interface ListQuery {
  sort?: RepositoryListOrder['sort'];
  direction?: RepositoryListOrder['direction'];
}

/** The platform's order: `sort` as asked (default per list); `direction` asc for `full_name`, else desc. */
function orderOf(query: ListQuery, defaultSort: RepositoryListOrder['sort']): RepositoryListOrder {
  const sort = query.sort ?? defaultSort;
  return { sort, direction: query.direction ?? (sort === 'full_name' ? 'asc' : 'desc') };
}

export class RepositoryService extends Service {
  /** The repository `owner/name` if the caller may read it, by the route's rule (requireReadableRepository). */
  async readable(principal: Principal, owner: string, name: string): Promise<ReadableRepository> {
    return requireAccess(this.db, principal, 'read', { repository: await findRepository(this.db, owner, name) });
  }

  /** GET /repos/{owner}/{repo}: the full repository, with what the calling user may do with it. */
  async get(principal: Principal, owner: string, name: string): Promise<FullRepository> {
    return this.represent(principal, await this.readable(principal, owner, name));
  }

  /** GET /repositories/{repository_id}: the same, by id (where a renamed or transferred repository's old name leads). */
  /**
   * Where a renamed or transferred repository's former name leads a caller: the repository's id,
   * only for a caller who may read it. Anyone else learns nothing (no id, not even that it existed):
   * undefined, the 404 of a repository that never was.
   */
  async formerNameTarget(principal: Principal, owner: string, name: string): Promise<number | undefined> {
    const id = await findFormerName(this.db, owner, name);
    const row = id === undefined ? undefined : await findRepositoryById(this.db, id);
    const account = row && await findAccountById(this.db, row.owner_id);
    if (!row || !account) return undefined;
    try {
      await requireAccess(this.db, principal, 'read', { repository: { ...row, owner: account } });
    } catch (error) {
      if (error instanceof ApiError) return undefined;
      throw error;
    }
    return row.id;
  }

  async getById(principal: Principal, id: number): Promise<FullRepository> {
    const row = await findRepositoryById(this.db, id);
    const owner = row && await findAccountById(this.db, row.owner_id);
    return this.represent(principal, await requireAccess(this.db, principal, 'read', { repository: row && owner ? { ...row, owner } : undefined }));
  }

  /** The repository as the caller is shown it (GET /repos/{owner}/{repo}). */
  async represent(principal: Principal, repository: ReadableRepository): Promise<FullRepository> {
    const permissions = principal.type === 'user' ? await callerRepositoryPermissions(this.db, principal, repository) : undefined;
    const showSecurity = (await this.readsSecurityConfiguration(principal, [repository], new Map(permissions ? [[repository.id, permissions]] : []))).has(repository.id);
    return representRepository(this.db, this.ctx.urls, repository, repository.owner, permissions, showSecurity);
  }

  /**
   * Of some repositories the caller reads, those whose code security configuration it may read too,
   * and so see their `security_and_analysis` (as the platform): a credential that reads configurations
   * (`repo`; `administration` read), and a user who administers the repository or is a security
   * manager of its organization (an installation: its permission is enough).
   */
  private async readsSecurityConfiguration(
    principal: Principal,
    repositories: readonly Pick<RepositoryRow, 'id' | 'owner_id'>[],
    permissions: ReadonlyMap<number, { admin: boolean }>,
  ): Promise<Set<number>> {
    if (principal.type === 'app' || principal.type === 'anonymous') return new Set();
    if (!(isFineGrained(principal) ? hasPermissions(principal.permissions, SECURITY_READ) : hasScope(principal, ['repo']))) return new Set();
    if (principal.type === 'installation') return new Set(repositories.map((r) => r.id));
    const securityManagerOf = new Map<number, boolean>();
    for (const ownerId of new Set(repositories.map((r) => r.owner_id))) {
      securityManagerOf.set(ownerId, (await orgRoles(this.db, ownerId, principal.user.id)).has('security_manager'));
    }
    return new Set(repositories.filter((r) => permissions.get(r.id)?.admin || securityManagerOf.get(r.owner_id)).map((r) => r.id));
  }

  /**
   * Where the caller reaches private repositories, for a list (null: nowhere, public ones only): the
   * same rule as `requireReadableRepository`, as a condition of the list's query. A classic or OAuth
   * token needs `repo`; a fine-grained personal token reaches its resource owner's (its selected
   * ones); an installation token its installation's; an app user token those its app's installation
   * covers on each owner that the list could show (`owners`, looked up once each) — all with one of
   * the REPOSITORY_READ permissions there.
   */
  private async reachOf(principal: Principal, owners: () => Promise<number[]>): Promise<PrivateReach | null> {
    if (principal.type === 'anonymous' || principal.type === 'app') return null;
    const selection = principal.repositorySelection === 'selected' ? principal.repositoryIds : null;
    if (principal.type === 'installation') {
      if (!hasPermissions(principal.permissions, REPOSITORY_READ)) return null;
      const grant = await installationGrantOn(this.db, principal.appId, principal.accountId);
      if (!grant) return null;
      const all = grant.repository_selection === 'all';
      return { userId: null, ownerIds: all ? [principal.accountId] : [], installationIds: all ? [] : [grant.id], repositoryIds: selection };
    }
    const userId = principal.user.id;
    if (principal.kind === 'classic' || principal.kind === 'oauth') {
      return hasScope(principal, ['repo']) ? { userId, ownerIds: null, installationIds: [], repositoryIds: null } : null;
    }
    if (principal.kind === 'fine_grained') {
      if (principal.resourceOwnerId === null || !hasPermissions(principal.permissions, REPOSITORY_READ)) return null;
      return { userId, ownerIds: [principal.resourceOwnerId], installationIds: [], repositoryIds: selection };
    }
    const ownerIds: number[] = [];
    const installationIds: number[] = [];
    for (const ownerId of await owners()) {
      const installation = await principal.installationOn(ownerId);
      if (!installation || !hasPermissions(installation.permissions, REPOSITORY_READ)) continue;
      if (installation.repositorySelection === 'all') ownerIds.push(ownerId);
      else installationIds.push(installation.id);
    }
    return { userId, ownerIds, installationIds, repositoryIds: selection };
  }

  /**
   * The repositories a user reaches by affiliation (owned, or through an organization, a team or as
   * a collaborator), of one owner when given, that the caller's credential sees: where the user's
   * and an organization's issue lists look.
   */
  async affiliatedIds(principal: UserPrincipal, ownerId?: number): Promise<number[]> {
    const filter: RepositoryListFilter = { affiliation: { userId: principal.user.id, owner: true, member: true }, ...(ownerId !== undefined ? { ownerId } : {}) };
    const reach = await this.reachOf(principal, async () => (ownerId !== undefined ? [ownerId] : privateOwnerIds(this.db, filter, principal.user.id)));
    return reachedRepositoryIds(this.db, filter, reach);
  }

  /** A page of repositories the caller may see among those of the filter, with their facts (and the calling user's permissions). */
  private async list(principal: Principal, filter: RepositoryListFilter, order: RepositoryListOrder, page: PageParams, owners: () => Promise<number[]>) {
    const reach = await this.reachOf(principal, owners);
    const { total, ids } = await repositoryPage(this.db, filter, reach, order, { offset: page.offset, limit: page.perPage });
    const loaded = new Map((await repositoriesWithFacts(this.db, ids)).map((r) => [r.repository.id, r]));
    const permissions = principal.type === 'user' ? await userRepositoriesPermissions(this.db, principal.user.id, ids) : null;
    const showSecurity = await this.readsSecurityConfiguration(principal, [...loaded.values()].map((found) => found.repository), permissions ?? new Map());
    const items = ids.flatMap((id) => {
      const found = loaded.get(id);
      return found ? [fullRepository(this.ctx.urls, found.repository, found.owner, found.facts, permissions?.get(id), showSecurity.has(id))] : [];
    });
    return { total, items };
  }

  /**
   * GET /users/{username}/repos: the account's repositories (`owner`), those it reaches as a member of
   * their organization, a team or a collaborator (`member`), or both (`all`); of them, what the caller
   * may see.
   */
  async listForUser(principal: Principal, login: string, type: UserRepositoryType, query: ListQuery, page: PageParams) {
    const account = await findAccount(this.db, login);
    if (!account) throw notFound();
    const filter: RepositoryListFilter = { affiliation: { userId: account.id, owner: type !== 'member', member: type !== 'owner' } };
    const owners = async () => (principal.type === 'user' ? privateOwnerIds(this.db, filter, principal.user.id) : []);
    return this.list(principal, filter, orderOf(query, 'full_name'), page, owners);
  }

  /**
   * GET /orgs/{org}/repos: the organization's repositories the caller may see; `member`: those the
   * calling user reaches through a membership, a team or as a collaborator; `forks`: none (codehost
   * keeps no forks), `sources`: all.
   */
  async listForOrg(principal: Principal, login: string, type: OrgRepositoryType, query: ListQuery, page: PageParams) {
    const org = await findAccount(this.db, login);
    if (!org || org.type !== 'Organization') throw notFound();
    const filter: RepositoryListFilter = { ownerId: org.id };
    if (type === 'public' || type === 'private') filter.visibility = type;
    if (type === 'forks') filter.none = true;
    if (type === 'member') {
      if (principal.type === 'user') filter.affiliation = { userId: principal.user.id, owner: false, member: true };
      else filter.none = true;
    }
    return this.list(principal, filter, orderOf(query, 'created'), page, async () => [org.id]);
  }

  /**
   * GET /repos/{owner}/{repo}/collaborators/{username}/permission: the strongest permission the user
   * holds on the repository, from every source (ownership, organization owner and base permission,
   * teams, direct collaboration, its visibility: anyone reads a public one), as the platform names it;
   * `none` for a user without any. Who may ask: a caller who reads the repository, through a token
   * whose reach includes it (a public repository elsewhere is seen, its people not: 403), and a user
   * with push access there, as the platform answers ("Must have push access to view collaborator
   * permission."); an installation needs no role. An unknown user (or an organization) is a 404.
   */
  async collaboratorPermission(principal: Principal, owner: string, name: string, login: string): Promise<CollaboratorPermission> {
    const repository = await this.readable(principal, owner, name);
    if (!(await reachesRepository(this.db, principal, repository))) throw notAccessible(principal);
    if (principal.type === 'user' && !(await callerRepositoryPermissions(this.db, principal, repository)).push) {
      throw forbidden('Must have push access to view collaborator permission.');
    }
    const user = await findAccount(this.db, login);
    if (!user || user.type === 'Organization') throw notFound();
    const role = await userRepositoryRole(this.db, user.id, repository);
    const names = role ? permissionNames(role) : { permission: 'none' as const, role_name: 'none' };
    return { ...names, user: { ...simpleUser(this.ctx.urls, user), permissions: fullPermissionsOf(role), role_name: names.role_name } };
  }

  /** GET /repos/{owner}/{repo}/subscribers: the users watching it (who can still read it). */
  async subscribers(principal: Principal, owner: string, name: string, page: PageParams): Promise<{ total: number; items: SimpleUser[] }> {
    const repository = await this.readable(principal, owner, name);
    const { total, users } = await subscriberPage(this.db, repository.id, { offset: page.offset, limit: page.perPage });
    return { total, items: users.map((user) => simpleUser(this.ctx.urls, user)) };
  }

  /**
   * GET /repos/{owner}/{repo}/subscription: the calling user's watch state; 404 when they have none
   * (never set, or set to neither watching nor ignoring).
   */
  async subscription(principal: UserPrincipal, owner: string, name: string): Promise<RepositorySubscription> {
    const repository = await this.readable(principal, owner, name);
    const row = await findSubscription(this.db, repository.id, principal.user.id);
    if (!row || (!row.subscribed && !row.ignored)) throw notFound();
    return repositorySubscription(this.ctx.urls, repository, row);
  }

  /**
   * GET /repos/{owner}/{repo}/teams: the teams with access to it (with their permission on it) that
   * the caller sees: those of organizations the caller acts for as a member (an installation: its
   * own organization). Other readers of a public repository get an empty list, as teams are visible
   * to their organization's members only (GET /orgs/{org}/teams/{team_slug}).
   */
  async teams(principal: Principal, owner: string, name: string, page: PageParams) {
    const repository = await this.readable(principal, owner, name);
    // The route admits `public_repo`, which reaches public repositories only.
    if (repository.visibility !== 'public' && (principal.kind === 'classic' || principal.kind === 'oauth') && !hasScope(principal, ['repo'])) throw notFound();
    const visible: number[] = [];
    for (const orgId of await repositoryTeamOrgIds(this.db, repository.id)) {
      if (await actsForOrganization(this.db, principal, orgId, ['owner', 'member', 'security_manager'])) visible.push(orgId);
    }
    const { total, teams } = await repositoryTeamPage(this.db, repository.id, visible, { offset: page.offset, limit: page.perPage });
    // Teams of organizations other than the owner (one query for them all).
    const others = [...new Set(teams.map((row) => row.org_id))].filter((id) => id !== repository.owner.id);
    const orgs = new Map<number, Pick<UserRow, 'login'>>([[repository.owner.id, repository.owner], ...(await usersById(this.db, others)).map((org) => [org.id, org] as const)]);
    const items = teams.map((row) => ({ ...team(this.ctx.urls, orgs.get(row.org_id)!, row), permission: row.permission, permissions: fullPermissionsOf(row.permission) }));
    return { total, items };
  }
}
