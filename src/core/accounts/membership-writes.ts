// The writes of memberships: add organization members (or change their role), add or remove team
// members. (A team's creation with its repositories and a member leaving an organization, which
// take repository grants, are the repositories home's: src/core/repositories/owner-writes.ts.)
// Each changes repository access: the areas are told inside the write's transaction
// (`access.changed`: notifications hide or show threads and move Last-Modified), and the change's
// activities are recorded in it.
import { AreaWrites } from '../area.ts';
import { recordAccountActivity } from './activities.ts';
import { requireAccount, requireTeam } from './lookup.ts';
import { orgMembership } from './representations.ts';
import { addTeamMember, lockAccount, MEMBER_ROLES, removeTeamMember, setOrgRole } from './store.ts';
import { type OrgRole, orgRoles } from '../access/index.ts';

/** Whether these organization roles make the user a member (owner, member, security manager). */
const isMember = (roles: ReadonlySet<OrgRole>) => MEMBER_ROLES.some((role) => roles.has(role));

export class MembershipWrites extends AreaWrites {
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
