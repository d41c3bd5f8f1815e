// The public reads of accounts: GET /user, /users/{username}, /users/{username}/orgs, /orgs/{org},
// /orgs/{org}/teams/{team_slug}, and the membership checks /orgs/{org}/members/{username} and
// /orgs/{org}/public_members/{username}.
import { Readable } from 'node:stream';
import { accountAdminRoutes } from './admin-routes.ts';
import { Type } from 'typebox';
import type { Area } from '../area.ts';
import type { Api, Context } from '../../platform/context.ts';
import { ErrorBody } from '../../platform/schemas.ts';
import { PageQuery, sendPage } from '../../platform/pagination.ts';
import { ValidationErrorBody } from '../../platform/schemas.ts';
import { OrganizationProfile, OrganizationSimple, PrivateUser, PublicUser, TeamProfile } from './representations.ts';
import { AccountService } from './service.ts';
import { type AccessRule, ALL_TOKENS, USER_TOKENS, type UserPrincipal } from '../access/index.ts';

const security = [{ token: [] }];
const denied = { 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };

/** The caller's own profile: a token acting as a user (not an installation). */
const self: AccessRule = { credentials: USER_TOKENS };
/** Public profiles: anyone. */
const profile: AccessRule = { credentials: ALL_TOKENS, anonymous: true };
/** Teams: the organization's members, with `read:org` or the organization `members` permission. */
const teamRead: AccessRule = { credentials: ALL_TOKENS, scopes: ['read:org'], permissions: [{ members: 'read' }] };

/**
 * The membership checks: anyone (an outsider is led to the public membership, which anyone may
 * check); classic and OAuth tokens need no scope to call them (`read:org` to see a private
 * membership, ./service.ts), fine-grained credentials the organization `members: read` permission.
 */
const membershipCheck: AccessRule = { credentials: ALL_TOKENS, anonymous: true, permissions: [{ members: 'read' }] };

const OrgParams = Type.Object({ org: Type.String({ description: 'The organization name, not case sensitive' }) });

function accountRoutes(app: Api, ctx: Context): void {
  const service = new AccountService(ctx);

  app.get('/user', {
    config: { access: self },
    schema: {
      summary: 'Get the authenticated user',
      tags: ['users'],
      security,
      response: { 200: Type.Union([PrivateUser, PublicUser]), ...denied },
    },
  }, async (request) => service.authenticatedUser(request.principal as UserPrincipal));

  app.get('/users/:username', {
    config: { access: profile },
    schema: {
      summary: 'Get a user (or an organization, as a user)',
      tags: ['users'],
      security,
      params: Type.Object({ username: Type.String({ description: 'The handle of the user account' }) }),
      response: { 200: PublicUser, ...denied },
    },
  }, async (request) => service.profile(request.params.username));

  app.get('/users/:username/orgs', {
    config: { access: profile },
    schema: {
      summary: 'List organizations for a user (memberships its caller shares, see docs/permissions.md)',
      tags: ['orgs'],
      security,
      params: Type.Object({ username: Type.String({ description: 'The handle of the user account' }) }),
      querystring: Type.Object(PageQuery),
      response: { 200: Type.Array(OrganizationSimple), ...denied, 422: ValidationErrorBody },
    },
  }, async (request, reply) => sendPage(request, reply, ctx.urls.api, (page) => service.organizationsOf(request.principal, request.params.username, page)));

  app.get('/orgs/:org', {
    config: { access: profile },
    schema: { summary: 'Get an organization', tags: ['orgs'], security, params: OrgParams, response: { 200: OrganizationProfile, ...denied } },
  }, async (request) => service.organization(request.principal, request.params.org));

  const MemberParams = Type.Object({ ...OrgParams.properties, username: Type.String({ description: 'The handle of the user account' }) });
  // Empty streams: neither the GET nor its HEAD (whose step gives a body it knows a length) says a
  // Content-Length, as a 204 (and the platform's bodiless 302) has none.
  app.get('/orgs/:org/members/:username', {
    config: { access: membershipCheck },
    schema: {
      summary: 'Check organization membership for a user',
      tags: ['orgs'],
      security,
      params: MemberParams,
      response: {
        204: Type.Null({ description: 'The requester sees the organization\'s members, and the user is one' }),
        302: Type.Null({ description: 'The requester is not a member of the organization: Location names the public membership check' }),
        ...denied,
      },
    },
  }, async (request, reply) => {
    const location = await service.membershipCheck(request.principal, request.params.org, request.params.username);
    if (location === undefined) reply.code(204);
    else reply.code(302).header('location', location);
    return reply.send(Readable.from([]) as unknown as null);
  });

  app.get('/orgs/:org/public_members/:username', {
    config: { access: membershipCheck },
    schema: {
      summary: 'Check public organization membership for a user',
      tags: ['orgs'],
      security,
      params: MemberParams,
      response: { 204: Type.Null({ description: 'The user is a public member of the organization (codehost keeps none: docs/permissions.md)' }), ...denied },
    },
  }, async (request, reply) => {
    await service.publicMembershipCheck(request.principal, request.params.org, request.params.username);
    return reply.code(204).send(Readable.from([]) as unknown as null);
  });

  app.get('/orgs/:org/teams/:team_slug', {
    config: { access: teamRead },
    schema: {
      summary: 'Get a team by name',
      tags: ['teams'],
      security,
      params: Type.Object({ ...OrgParams.properties, team_slug: Type.String({ description: 'The slug of the team name' }) }),
      response: { 200: TeamProfile, ...denied },
    },
  }, async (request) => service.team(request.principal, request.params.org, request.params.team_slug));
}

export const accounts: Area = { name: 'accounts', routes: accountRoutes, admin: accountAdminRoutes };
