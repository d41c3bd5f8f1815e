// Tables of the accounts: users (and organizations' account rows), enterprises, organizations,
// memberships and teams.
import type { Generated } from 'kysely';
import type { Bool } from './columns.ts';

export interface UsersTable {
  id: Generated<number>;
  login: string;
  login_lower: string;
  /** `User`, `Bot` or `Organization`: users and organizations share one id and login space. */
  type: string;
  name: string | null;
  email: string | null;
  site_admin: Bool;
  created_at: string;
  updated_at: string;
  /** Set while the user is suspended: every credential of theirs is refused (403). */
  suspended_at: string | null;
  suspended_reason: string | null;
}

export interface EnterprisesTable {
  id: Generated<number>;
  slug: string;
  slug_lower: string;
  name: string;
  created_at: string;
  updated_at: string;
}

export interface EnterpriseMembersTable {
  enterprise_id: number;
  user_id: number;
  /** `owner` (owners are administrators too) */
  role: string;
}

/** Organization-only facts; the organization's account row lives in `users`. */
export interface OrganizationsTable {
  id: number;
  enterprise_id: number | null;
}

export interface OrgMembershipsTable {
  org_id: number;
  user_id: number;
  /** `owner`, `member`, `security_manager` or `billing_manager`; a user may hold several. */
  role: string;
}

export interface TeamsTable {
  id: Generated<number>;
  org_id: number;
  slug: string;
  name: string;
  created_at: string;
  updated_at: string;
}

export interface TeamMembersTable {
  team_id: number;
  user_id: number;
}

export interface AccountTables {
  users: UsersTable;
  enterprises: EnterprisesTable;
  enterprise_members: EnterpriseMembersTable;
  organizations: OrganizationsTable;
  org_memberships: OrgMembershipsTable;
  teams: TeamsTable;
  team_members: TeamMembersTable;
}
