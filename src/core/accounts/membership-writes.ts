// The writes of teams and memberships: create a team (with its members and repositories), add or
// remove organization and team members. Each changes repository access: the areas are told inside
// the write's transaction (`access.changed`: notifications hide or show threads and move
// Last-Modified), and the change's activities are recorded in it.
import type { RepositoryPermission } from '../../db/tables/repositories.ts';
import { insertUnique, invalidField } from '../../platform/errors.ts';
import { AreaWrites } from '../area.ts';
import { recordMemberActivity } from '../repositories/activities.ts';
import { requireRepository } from '../repositories/lookup.ts';
import { removeCollaboratorOfOwner, setTeamRepository } from '../repositories/store.ts';
import { recordAccountActivity } from './activities.ts';
import { requireAccount, requireTeam, requireUsers } from './lookup.ts';
import { orgMembership } from './representations.ts';
import {
  addTeamMember, insertTeam, lockAccount, MEMBER_ROLES, removeFromOrganization, removeTeamMember, setOrgRole, type UserRow,
} from './store.ts';
import { type OrgRole, orgRoles } from '../access/index.ts';

/** Whether these organization roles make the user a member (owner, member, security manager). */
const isMember = (roles: ReadonlySet<OrgRole>) => MEMBER_ROLES.some((role) => roles.has(role));

export class MembershipWrites extends AreaWrites {
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

  /** Adds a user to an organization or changes their role (`owner` and `member` replace each other). */
  async setOrgMembership(orgLogin: string, login: string, role: OrgRole) {
    const org = await requireAccount(this.db, orgLogin, 'org');
    const user = await requireAccount(this.db, login, 'user');
    return this.transaction(async (trx) => {
      // `owner` replaces `member` and the reverse (a delete, then an insert): two changes at once
      // would leave both.
      await lockAccount(trx, org.id, this.ctx.db.dialect === 'postgres');
      const before = await orgRoles(trx, org.id, user.id);
      const roles = await setOrgRole(trx, org.id, user.id, role);
      await this.record(trx, { name: 'access.changed', payload: { userIds: [user.id] } });
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

  async setTeamMembership(orgLogin: string, slug: string, login: string) {
    return this.changeTeamMembership(orgLogin, slug, login, 'added');
  }

  async removeTeamMembership(orgLogin: string, slug: string, login: string): Promise<void> {
    await this.changeTeamMembership(orgLogin, slug, login, 'removed');
  }

  /**
   * Adds the user to the team, or removes them: `membership.added` / `membership.removed` when that
   * changed the team, and the areas told of the user's access either way.
   */
  private async changeTeamMembership(orgLogin: string, slug: string, login: string, change: 'added' | 'removed') {
    const { org, team } = await requireTeam(this.db, orgLogin, slug);
    const user = await requireAccount(this.db, login, 'user');
    await this.transaction(async (trx) => {
      const changed = change === 'added' ? await addTeamMember(trx, team.id, user.id) : await removeTeamMember(trx, team.id, user.id);
      if (changed) {
        await recordAccountActivity(this.ctx, trx, { name: `membership.${change}`, account_id: org.id, payload: { member_id: user.id, team_id: team.id } });
      }
      await this.record(trx, { name: 'access.changed', payload: { userIds: [user.id] } });
    });
    return { org, team, user };
  }
}
