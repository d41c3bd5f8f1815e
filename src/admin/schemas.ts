// The bodies of the admin API's creates. Seed files use the same schemas for their entries.
import { Type } from 'typebox';

const Logins = Type.Array(Type.String());
const PermissionsBody = Type.Record(Type.String(), Type.Union([Type.Literal('read'), Type.Literal('write')]));
const RepositoriesChoice = Type.Union([Type.Literal('all'), Type.Array(Type.String())]);

export const UserBody = Type.Object({
  login: Type.String(),
  name: Type.Optional(Type.String()),
  email: Type.Optional(Type.String()),
  type: Type.Optional(Type.Union([Type.Literal('User'), Type.Literal('Bot')])),
  site_admin: Type.Optional(Type.Boolean()),
});

export const EnterpriseBody = Type.Object({ slug: Type.String(), name: Type.Optional(Type.String()), owners: Type.Optional(Logins) });

export const OrgBody = Type.Object({
  login: Type.String(),
  name: Type.Optional(Type.String()),
  enterprise: Type.Optional(Type.String()),
  owners: Type.Optional(Logins),
  members: Type.Optional(Logins),
  security_managers: Type.Optional(Logins),
  billing_managers: Type.Optional(Logins),
});

/** A repository permission, weakest first (pull and triage read, push and maintain write). */
export const RepositoryPermissionBody = Type.Union(['pull', 'triage', 'push', 'maintain', 'admin'].map((p) => Type.Literal(p as 'pull' | 'triage' | 'push' | 'maintain' | 'admin')));

export const TeamBody = Type.Object({
  slug: Type.String(),
  name: Type.Optional(Type.String()),
  members: Type.Optional(Logins),
  /** Repositories of the organization the team gets (`name` or `org/name`), `push` unless told. */
  repositories: Type.Optional(Type.Array(Type.Object({ name: Type.String(), permission: Type.Optional(RepositoryPermissionBody) }))),
});

export const RepoBody = Type.Object({
  owner: Type.String(),
  name: Type.String(),
  visibility: Type.Optional(Type.Union([Type.Literal('public'), Type.Literal('private'), Type.Literal('internal')])),
  description: Type.Optional(Type.String()),
  language: Type.Optional(Type.String()),
  topics: Type.Optional(Type.Array(Type.String())),
  default_branch: Type.Optional(Type.String()),
  init_git: Type.Optional(Type.Boolean()),
});

export const WatchBody = Type.Object({ login: Type.String(), subscribed: Type.Optional(Type.Boolean()), ignored: Type.Optional(Type.Boolean()) });

export const TokenBody = Type.Object({
  login: Type.String(),
  kind: Type.Union([Type.Literal('classic'), Type.Literal('fine_grained')]),
  scopes: Type.Optional(Type.Array(Type.String())),
  resource_owner: Type.Optional(Type.String()),
  repositories: Type.Optional(RepositoriesChoice),
  permissions: Type.Optional(PermissionsBody),
  expires_at: Type.Optional(Type.String({ format: 'date-time' })),
  value: Type.Optional(Type.String()),
  note: Type.Optional(Type.String()),
});

export const AppBody = Type.Object({
  slug: Type.String(),
  name: Type.Optional(Type.String()),
  owner: Type.Optional(Type.String()),
  permissions: Type.Optional(PermissionsBody),
  events: Type.Optional(Type.Array(Type.String())),
  webhook: Type.Optional(Type.Object({
    url: Type.Optional(Type.String()),
    secret: Type.Optional(Type.String()),
    content_type: Type.Optional(Type.String()),
    insecure_ssl: Type.Optional(Type.Union([Type.String(), Type.Number()])),
    active: Type.Optional(Type.Boolean()),
  })),
  client_id: Type.Optional(Type.String()),
  client_secret: Type.Optional(Type.String({ minLength: 20 })),
  private_key: Type.Optional(Type.String()),
});

/** PATCH /_admin/apps/{app_slug}: what is given replaces what the app had. */
export const AppUpdateBody = Type.Object({
  permissions: Type.Optional(PermissionsBody),
  events: Type.Optional(Type.Array(Type.String())),
});

/**
 * PATCH /_admin/apps/{app_slug}/installations/{installation_id}: the installation's new grant, and/or
 * the repositories it covers (`all`, or names of its account's); at least one. `sender`: who changed
 * the repositories (the `installation_repositories` event's sender), a user's login.
 */
export const InstallationUpdateBody = Type.Object({
  permissions: Type.Optional(PermissionsBody),
  repositories: Type.Optional(RepositoriesChoice),
  sender: Type.Optional(Type.String()),
});

export const InstallationBody = Type.Object({
  account: Type.String(),
  repositories: Type.Optional(RepositoriesChoice),
  permissions: Type.Optional(PermissionsBody),
  /** Who installed it (the `installation` `created` event's sender): a user's login. */
  sender: Type.Optional(Type.String()),
});

export const AuthorizationBody = Type.Object({
  login: Type.String(),
  scopes: Type.Optional(Type.Array(Type.String())),
  note: Type.Optional(Type.String()),
  note_url: Type.Optional(Type.String()),
  expires_at: Type.Optional(Type.String({ format: 'date-time' })),
  kind: Type.Optional(Type.Union([Type.Literal('oauth'), Type.Literal('app_user')])),
  value: Type.Optional(Type.String()),
});

/** `role` defaults to `member`, as on the platform (an owner PUT without a role becomes a member). */
export const OrgMembershipBody = Type.Object({
  role: Type.Optional(Type.Union([Type.Literal('member'), Type.Literal('owner'), Type.Literal('security_manager'), Type.Literal('billing_manager')])),
});

/** A collaborator's or a team's permission on a repository (`push` unless told). */
export const RepositoryAccessBody = Type.Object({ permission: Type.Optional(RepositoryPermissionBody) });

export const RepoChangeBody = Type.Object({
  visibility: Type.Optional(Type.Union([Type.Literal('public'), Type.Literal('private'), Type.Literal('internal')])),
  description: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  archived: Type.Optional(Type.Boolean()),
  name: Type.Optional(Type.String({ maxLength: 100 })),
  owner: Type.Optional(Type.String({ maxLength: 39 })),
});

/** A seed file's direct access: `repository` (owner/name), `login`, `permission`. */
export const CollaboratorSeedBody = Type.Object({
  repository: Type.String({ pattern: '^[^/]+/[^/]+$' }),
  login: Type.String(),
  permission: Type.Optional(RepositoryPermissionBody),
});
