// The admin API's rows that change repository access (spec/admin-api.md): organization and team
// membership, a team's repositories, direct collaborators, and a repository's visibility,
// description and archived flag. Answers in the platform's shapes; removals are 204.
import { Type } from 'typebox';
import type { Api, Context } from '../platform/context.ts';
import { organization, orgMembership, simpleUser } from '../core/accounts/representations.ts';
import { representRepository } from '../core/repositories/facts.ts';
import { OrgMembershipBody, RepoChangeBody, RepositoryAccessBody } from './schemas.ts';
import type { Area } from '../core/area.ts';
import { coreWriters } from './writers.ts';
import { fullPermissionsOf, permissionNames, permissionsOf } from '../core/access/index.ts';

const hidden = { hide: true, tags: ['admin'] } as const;

const MemberParams = Type.Object({ org: Type.String(), login: Type.String() });
const TeamMemberParams = Type.Object({ org: Type.String(), team_slug: Type.String(), login: Type.String() });
const TeamRepoParams = Type.Object({ org: Type.String(), team_slug: Type.String(), owner: Type.String(), repo: Type.String() });
const RepoParams = Type.Object({ owner: Type.String(), repo: Type.String() });
const CollaboratorParams = Type.Object({ owner: Type.String(), repo: Type.String(), login: Type.String() });

export function membershipRoutes(app: Api, ctx: Context, areas: readonly Area[]): void {
  const { urls } = ctx;
  const { memberships, owners, repositories } = coreWriters(ctx, areas);

  app.put('/_admin/orgs/:org/members/:login', {
    schema: { ...hidden, summary: 'Add a member to an organization or change their role', params: MemberParams, body: OrgMembershipBody },
  }, async (request) => {
    const { org, user, roles } = await memberships.setOrgMembership(request.params.org, request.params.login, request.body.role ?? 'member');
    const { user: member, ...membership } = orgMembership(urls, org, user, roles);
    return { ...membership, organization: organization(urls, org), user: member };
  });

  app.delete('/_admin/orgs/:org/members/:login', {
    schema: { ...hidden, summary: 'Remove a user from an organization, its teams and its repositories', params: MemberParams },
  }, async (request, reply) => {
    await owners.removeOrgMembership(request.params.org, request.params.login);
    return reply.code(204).send();
  });

  app.put('/_admin/orgs/:org/teams/:team_slug/members/:login', {
    schema: { ...hidden, summary: 'Add a user to a team', params: TeamMemberParams },
  }, async (request) => {
    const { org, team, user } = await memberships.setTeamMembership(request.params.org, request.params.team_slug, request.params.login);
    return { url: `${urls.api}/orgs/${org.login}/teams/${team.slug}/memberships/${user.login}`, role: 'member', state: 'active' };
  });

  app.delete('/_admin/orgs/:org/teams/:team_slug/members/:login', {
    schema: { ...hidden, summary: 'Remove a user from a team', params: TeamMemberParams },
  }, async (request, reply) => {
    await memberships.removeTeamMembership(request.params.org, request.params.team_slug, request.params.login);
    return reply.code(204).send();
  });

  app.put('/_admin/orgs/:org/teams/:team_slug/repos/:owner/:repo', {
    schema: { ...hidden, summary: 'Give a team access to a repository of its organization', params: TeamRepoParams, body: RepositoryAccessBody },
  }, async (request) => {
    const { params } = request;
    const { repository, permission } = await repositories.setTeamRepository(params.org, params.team_slug, params.owner, params.repo, request.body.permission);
    return {
      ...(await representRepository(ctx.db.kysely, urls, repository, repository.owner, permissionsOf(permission))),
      permissions: fullPermissionsOf(permission),
      role_name: permissionNames(permission).role_name,
    };
  });

  app.delete('/_admin/orgs/:org/teams/:team_slug/repos/:owner/:repo', {
    schema: { ...hidden, summary: 'Take a repository from a team', params: TeamRepoParams },
  }, async (request, reply) => {
    const { params } = request;
    await repositories.removeTeamRepository(params.org, params.team_slug, params.owner, params.repo);
    return reply.code(204).send();
  });

  app.put('/_admin/repos/:owner/:repo/collaborators/:login', {
    schema: { ...hidden, summary: 'Give a user direct access to a repository', params: CollaboratorParams, body: RepositoryAccessBody },
  }, async (request) => {
    const { params } = request;
    const { user, permission } = await repositories.setCollaborator(params.owner, params.repo, params.login, request.body.permission);
    return { ...permissionNames(permission), user: simpleUser(urls, user) };
  });

  app.delete('/_admin/repos/:owner/:repo/collaborators/:login', {
    schema: { ...hidden, summary: 'Remove a collaborator from a repository', params: CollaboratorParams },
  }, async (request, reply) => {
    const { params } = request;
    await repositories.removeCollaborator(params.owner, params.repo, params.login);
    return reply.code(204).send();
  });

  app.patch('/_admin/repos/:owner/:repo', {
    schema: { ...hidden, summary: 'Change a repository\'s visibility, description or archived flag', params: RepoParams, body: RepoChangeBody },
  }, async (request) => {
    const repository = await repositories.updateRepository(request.params.owner, request.params.repo, request.body);
    return representRepository(ctx.db.kysely, urls, repository, repository.owner);
  });

  app.delete('/_admin/repos/:owner/:repo', {
    schema: { ...hidden, summary: 'Delete a repository and everything in it', params: RepoParams },
  }, async (request, reply) => {
    await repositories.deleteRepository(request.params.owner, request.params.repo);
    return reply.code(204).send();
  });
}
