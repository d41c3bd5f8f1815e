// The writes of accounts that reach repositories: a team created with some of its organization's
// repositories, a user leaving an organization (its teams, and the direct access to its
// repositories), and a user's deletion (their repositories' git data). They stand in the
// repositories home, above accounts, whose stores and lookups they use. Access changes tell the
// areas inside the write's transaction (`access.changed`), with the change's activities.
import type { RepositoryPermission } from '../../db/tables/repositories.ts';
import { insertUnique, invalidField, notFound } from '../../platform/errors.ts';
import { recordAccountActivity } from '../accounts/activities.ts';
import { requireAccount, requireUsers } from '../accounts/lookup.ts';
import { orgMembership } from '../accounts/representations.ts';
import {
  addTeamMember, deleteAccount, findAccount, ghostAccount, insertTeam, lockAccount, reassignAuthorship, removeFromOrganization, solelyOwnedOrganizations, type UserRow,
} from '../accounts/store.ts';
import { AreaWrites } from '../area.ts';
import { recordMemberActivity } from './activities.ts';
import { removeGitData } from './git-sweep.ts';
import { requireRepository } from './lookup.ts';
import { ownedGitPaths, recordGitDataRemovals, removeCollaboratorOfOwner, setTeamRepository } from './store.ts';
import { orgRoles } from '../access/index.ts';

export class OwnerWrites extends AreaWrites {
  async createTeam(orgLogin: string, input: { slug: string; name?: string; members?: string[]; repositories?: { name: string; permission?: RepositoryPermission }[] }) {
    const org = await requireAccount(this.db, orgLogin, 'org');
    const slug = input.slug.toLowerCase();
    if (!/^[a-z0-9][a-z0-9_-]*$/.test(slug)) throw invalidField('Team', 'slug');
    const members = await requireUsers(this.db, input.members);
    const repositories = await this.teamRepositories(org, input.repositories ?? []);
    const now = this.now();
    return this.transaction(async (trx) => {
      const team = await insertUnique('Team', 'slug', () =>
        insertTeam(trx, { org_id: org.id, slug, name: input.name ?? input.slug, created_at: now, updated_at: now }),
      );
      for (const member of members) await addTeamMember(trx, team.id, member.id);
      await recordAccountActivity(this.ctx, trx, { name: 'team.created', account_id: org.id, payload: { team_id: team.id } });
      for (const repository of repositories) {
        await setTeamRepository(trx, team.id, repository.id, repository.permission);
        await recordMemberActivity(this.ctx, trx, { name: 'team_add', repository_id: repository.id, payload: { team_id: team.id } });
      }
      if (repositories.length && members.length) await this.record(trx, { name: 'access.changed', payload: { userIds: members.map((m) => m.id) } });
      return { team, org };
    });
  }

  /** The repositories a new team gets: the organization's own (`name` or `org/name`). */
  private async teamRepositories(org: UserRow, entries: readonly { name: string; permission?: RepositoryPermission }[]) {
    const out: { id: number; permission: RepositoryPermission }[] = [];
    for (const entry of entries) {
      const [owner, name] = entry.name.includes('/') ? (entry.name.split('/', 2) as [string, string]) : [org.login, entry.name];
      const repository = await requireRepository(this.db, owner, name);
      if (repository.owner_id !== org.id) throw invalidField('Team', 'repositories', `${entry.name} does not belong to ${org.login}`);
      out.push({ id: repository.id, permission: entry.permission ?? 'push' });
    }
    return out;
  }

  /** The user leaves the organization, its teams, and the direct access to its repositories. */
  async removeOrgMembership(orgLogin: string, login: string): Promise<void> {
    const org = await requireAccount(this.db, orgLogin, 'org');
    const user = await requireAccount(this.db, login, 'user');
    await this.transaction(async (trx) => {
      const roles = await orgRoles(trx, org.id, user.id);
      const teamIds = await removeFromOrganization(trx, org.id, user.id);
      const repositoryIds = await removeCollaboratorOfOwner(trx, org.id, user.id);
      await this.record(trx, { name: 'access.changed', payload: { userIds: [user.id] } });
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

  /**
   * Deletes the user in one transaction: the row, and with it (foreign keys cascade) their
   * repositories and everything in them, org and team memberships, collaborator grants, tokens of
   * every kind, installations on their account, notification threads and subscriptions, migrations.
   * What they wrote on others' repositories stays, written by `ghost` (as on the platform). The sole
   * owner of an organization is refused (422), as the platform refuses. Files go after the commit:
   * git data here, migration archives by user-migrations on the `user.deleted` activity.
   */
  async deleteUser(login: string): Promise<void> {
    const user = await requireAccount(this.db, login, 'user');
    const gitPaths = await this.transaction(async (trx) => {
      await lockAccount(trx, user.id, this.ctx.db.dialect === 'postgres');
      if (!(await findAccount(trx, login))) throw notFound(`User not found: ${login}`);
      const owned = await solelyOwnedOrganizations(trx, user.id);
      if (owned.length) {
        throw invalidField('User', 'login', `${user.login} is the only owner of ${owned.join(', ')}: add another owner or delete the organization first`);
      }
      const ghost = await ghostAccount(trx, this.now());
      if (ghost.id === user.id) throw invalidField('User', 'login', 'the ghost user cannot be deleted');
      await reassignAuthorship(trx, user.id, ghost.id);
      const paths = await ownedGitPaths(trx, user.id);
      await deleteAccount(trx, user.id);
      await recordGitDataRemovals(trx, paths, this.now());
      await recordAccountActivity(this.ctx, trx, { name: 'user.deleted', payload: { user: { id: user.id, login: user.login } } });
      return paths;
    });
    await removeGitData(this.ctx, gitPaths);
  }
}
