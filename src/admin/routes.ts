// The admin API under /_admin (spec/admin-api.md): JSON in and out, the admin token as Bearer.
import { Type } from 'typebox';
import { drainAll } from '../jobs/queue.ts';
import { isoSeconds } from '../platform/clock.ts';
import type { Api, Context } from '../platform/context.ts';
import { ApiError, notFound } from '../platform/errors.ts';
import { findRepository } from '../core/repositories/store.ts';
import { representRepository } from '../core/repositories/facts.ts';
import { repositorySubscription } from '../core/repositories/representations.ts';
import { type Urls } from '../platform/urls.ts';
import { organization, simpleUser, team as teamBody, userWithProfile } from '../core/accounts/representations.ts';
import { authorizationBody } from '../core/apps/representations.ts';
import type { AppRow } from '../core/apps/store.ts';
import type { UserRow } from '../core/accounts/store.ts';
import { AppBody, AppUpdateBody, AuthorizationBody, EnterpriseBody, InstallationBody, InstallationUpdateBody, OrgBody, RepoBody, TeamBody, TokenBody, UserBody, WatchBody } from './schemas.ts';
import type { Area } from '../core/area.ts';
import { coreWriters } from './writers.ts';
import { RowId } from '../platform/schemas.ts';

const hidden = { hide: true, tags: ['admin'] } as const;

/** An app as the admin API answers it (the create adds its one-time secrets). */
function appAnswer(app: AppRow) {
  return {
    id: app.id,
    slug: app.slug,
    name: app.name,
    client_id: app.client_id,
    permissions: JSON.parse(app.permissions) as Record<string, string>,
    events: JSON.parse(app.events) as string[],
  };
}

/** An installation as the admin API answers its create (and lists it, src/admin/list-routes.ts). */
export function installationAnswer(urls: Urls, installation: { id: number; repository_selection: string; permissions: string; app_id: number }, account: Pick<UserRow, 'id' | 'login' | 'type' | 'site_admin'>) {
  return {
    id: installation.id,
    account: simpleUser(urls, account),
    repository_selection: installation.repository_selection,
    permissions: JSON.parse(installation.permissions) as Record<string, string>,
    app_id: installation.app_id,
  };
}

type Writers = ReturnType<typeof coreWriters>;

/** The operator's writes of every core resource. */
export function adminRoutes(app: Api, ctx: Context, areas: readonly Area[]): void {
  const writers = coreWriters(ctx, areas);
  accountRoutes(app, ctx.urls, writers);
  repositoryRoutes(app, ctx, writers);
  appRoutes(app, ctx.urls, writers);
}

/** Users (their deletion too), enterprises, organizations and their teams. */
function accountRoutes(app: Api, urls: Urls, { accounts, owners }: Writers): void {
  app.post('/_admin/users', {
    schema: {
      ...hidden,
      body: UserBody,
    },
  }, async (request, reply) => reply.code(201).send(userWithProfile(urls, await accounts.createUser(request.body))));

  app.post('/_admin/enterprises', {
    schema: { ...hidden, body: EnterpriseBody },
  }, async (request, reply) => {
    const enterprise = await accounts.createEnterprise(request.body);
    return reply.code(201).send({ id: enterprise.id, slug: enterprise.slug, name: enterprise.name });
  });

  app.post('/_admin/orgs', {
    schema: {
      ...hidden,
      body: OrgBody,
    },
  }, async (request, reply) => reply.code(201).send(organization(urls, await accounts.createOrganization(request.body))));

  app.post('/_admin/orgs/:org/teams', {
    schema: {
      ...hidden,
      params: Type.Object({ org: Type.String() }),
      body: TeamBody,
    },
  }, async (request, reply) => {
    const { team, org } = await owners.createTeam(request.params.org, request.body);
    return reply.code(201).send(teamBody(urls, org, team));
  });

  app.delete('/_admin/users/:login', {
    schema: { ...hidden, summary: 'Delete a user', params: Type.Object({ login: Type.String() }) },
  }, async (request, reply) => {
    await owners.deleteUser(request.params.login);
    return reply.code(204).send();
  });
}

/** Repositories and their watchers; a repository as the operator reads it. */
function repositoryRoutes(app: Api, ctx: Context, { repositories }: Writers): void {
  const { urls } = ctx;
  app.post('/_admin/repos', {
    schema: {
      ...hidden,
      body: RepoBody,
    },
  }, async (request, reply) => {
    const repository = await repositories.createRepository(request.body);
    return reply.code(201).send(await representRepository(ctx.db.kysely, urls, repository, repository.owner));
  });

  app.put('/_admin/repos/:owner/:repo/subscription', {
    schema: {
      ...hidden,
      params: Type.Object({ owner: Type.String(), repo: Type.String() }),
      body: WatchBody,
    },
  }, async (request) => {
    const { repository, row, user } = await repositories.setWatch(request.params.owner, request.params.repo, request.body);
    return { login: user.login, ...repositorySubscription(urls, repository, row) };
  });

  app.get('/_admin/repos/:owner/:repo', {
    schema: { ...hidden, params: Type.Object({ owner: Type.String(), repo: Type.String() }) },
  }, async (request) => {
    const repository = await findRepository(ctx.db.kysely, request.params.owner, request.params.repo);
    if (!repository) throw notFound();
    return representRepository(ctx.db.kysely, urls, repository, repository.owner, undefined, true);
  });
}

/** Tokens, apps, their installations and authorizations. */
function appRoutes(app: Api, urls: Urls, { tokens, apps, installations }: Writers): void {
  app.post('/_admin/tokens', {
    schema: {
      ...hidden,
      body: TokenBody,
    },
  }, async (request, reply) => {
    const { row, token } = await tokens.createToken(request.body);
    return reply.code(201).send({
      id: row.id,
      token,
      kind: row.kind,
      scopes: JSON.parse(row.scopes),
      permissions: JSON.parse(row.permissions),
      expires_at: row.expires_at ? isoSeconds(row.expires_at) : null,
    });
  });

  app.post('/_admin/apps', {
    schema: {
      ...hidden,
      body: AppBody,
    },
  }, async (request, reply) => {
    const { app: created, clientSecret, privateKey } = await apps.createApp(request.body);
    const { permissions, events, ...identity } = appAnswer(created);
    // The one-time secrets come only with the create.
    return reply.code(201).send({ ...identity, client_secret: clientSecret, private_key: privateKey, permissions, events });
  });

  app.patch('/_admin/apps/:app_slug', {
    schema: {
      ...hidden,
      params: Type.Object({ app_slug: Type.String() }),
      body: AppUpdateBody,
    },
  }, async (request) => {
    return appAnswer(await apps.updateApp(request.params.app_slug, request.body));
  });

  app.patch('/_admin/apps/:app_slug/installations/:installation_id', {
    schema: {
      ...hidden,
      params: Type.Object({ app_slug: Type.String(), installation_id: RowId() }),
      body: InstallationUpdateBody,
    },
  }, async (request) => {
    const { installation, account } = await installations.updateInstallation(request.params.app_slug, request.params.installation_id, request.body);
    return installationAnswer(urls, installation, account);
  });

  app.post('/_admin/apps/:app_slug/installations', {
    schema: {
      ...hidden,
      params: Type.Object({ app_slug: Type.String() }),
      body: InstallationBody,
    },
  }, async (request, reply) => {
    const { installation, account } = await installations.createInstallation(request.params.app_slug, request.body);
    return reply.code(201).send(installationAnswer(urls, installation, account));
  });

  app.post('/_admin/apps/:app_slug/authorizations', {
    schema: {
      ...hidden,
      params: Type.Object({ app_slug: Type.String() }),
      body: AuthorizationBody,
    },
  }, async (request, reply) => {
    const result = await apps.createAuthorization(request.params.app_slug, request.body);
    return reply.code(201).send(authorizationBody(urls, { token: result.row, app: result.app, user: result.user, authorization: result.authorization }, result.token));
  });
}

/** The jobs drain: registered outside the test double's gate, since it waits for jobs, which hold the gate. */
export function jobsDrainRoute(app: Api, ctx: Context): void {
  // Drained: no job ready or running and, unless `wait_for_deferred` is false, none scheduled for
  // later (throttled deliveries, retries). Due times are wall time: moving the test clock makes no
  // job due sooner, so a deferred job counts until its real time has come and it has run.
  app.post('/_admin/jobs/drain', {
    schema: {
      ...hidden,
      body: Type.Object({
        timeout_seconds: Type.Optional(Type.Number({ minimum: 0, maximum: 600 })),
        wait_for_deferred: Type.Optional(Type.Boolean()),
      }),
    },
  }, async (request, reply) => {
    const deadline = Date.now() + (request.body.timeout_seconds ?? 30) * 1000;
    // Sweeps first (they may enqueue work), then until nothing is queued.
    await ctx.periodic.runAll();
    const result = await drainAll(ctx.queue, Math.max(0, deadline - Date.now()), { waitForDeferred: request.body.wait_for_deferred ?? true });
    const body = { pending: result.pending, deferred: result.deferred, next_run_at: result.nextRunAt === null ? null : isoSeconds(result.nextRunAt) };
    if (!result.drained) {
      // Without a worker here, only another process's worker can run what waits.
      const message = ctx.config.jobs.worker ? 'Background jobs are still waiting' : 'Background jobs are still waiting: no worker runs in this process (CODEHOST_WORKER=0); a process with the worker on runs them';
      throw new ApiError(504, message, { extra: body });
    }
    return body;
  });
}
