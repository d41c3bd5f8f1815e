// The admin API's lists (spec/admin-api.md): what exists (users, orgs, an org's teams, repos, apps, an
// app's installations, tokens), page by page, in the representations the
// admin create answers use, without the secrets those answers show once (client secrets, private
// keys, token values and hashes). `per_page` (default 30, at most 100) and `page`, with `Link`
// (under the server's root, CODEHOST_WEB_URL, where /_admin lives).
import { Type } from 'typebox';
import { isoSeconds } from '../platform/clock.ts';
import type { Api, Context } from '../platform/context.ts';
import { notFound } from '../platform/errors.ts';
import { PageQuery, sendPage } from '../platform/pagination.ts';
import { findAccount, listAccounts, listTeams } from '../core/accounts/store.ts';
import { requireAccount } from '../core/accounts/lookup.ts';
import { organization, team, userWithProfile } from '../core/accounts/representations.ts';
import { listApps, listInstallations } from '../core/apps/store.ts';
import { requireApp } from '../core/apps/writes.ts';
import { repositoryIdPage } from '../core/repositories/store.ts';
import { repositoriesWithFacts } from '../core/repositories/facts.ts';
import { fullRepository } from '../core/repositories/representations.ts';
import { installationAnswer } from './routes.ts';
import { listTokens } from '../core/access/index.ts';

const hidden = { hide: true, tags: ['admin'] } as const;

export function adminListRoutes(app: Api, ctx: Context): void {
  const { urls } = ctx;
  const db = ctx.db.kysely;

  app.get('/_admin/users', {
    schema: { ...hidden, querystring: Type.Object(PageQuery) },
  }, async (request, reply) => sendPage(request, reply, urls.web, async (page) => {
    const { rows, total } = await listAccounts(db, 'users', { limit: page.perPage, offset: page.offset });
    return { total, items: rows.map((row) => ({ ...userWithProfile(urls, row), suspended_at: row.suspended_at && isoSeconds(row.suspended_at), suspended_reason: row.suspended_reason })) };
  }));

  app.get('/_admin/orgs', {
    schema: { ...hidden, querystring: Type.Object(PageQuery) },
  }, async (request, reply) => sendPage(request, reply, urls.web, async (page) => {
    const { rows, total } = await listAccounts(db, 'orgs', { limit: page.perPage, offset: page.offset });
    return { total, items: rows.map((row) => organization(urls, row)) };
  }));

  app.get('/_admin/repos', {
    schema: { ...hidden, querystring: Type.Object(PageQuery) },
  }, async (request, reply) => sendPage(request, reply, urls.web, async (page) => {
    const { ids, total } = await repositoryIdPage(db, { limit: page.perPage, offset: page.offset });
    const loaded = new Map((await repositoriesWithFacts(db, ids)).map((row) => [row.repository.id, row]));
    // A repository deleted between the two reads is left out.
    const rows = ids.flatMap((id) => loaded.get(id) ?? []);
    return { total, items: rows.map((row) => fullRepository(urls, row.repository, row.owner, row.facts, undefined, true)) };
  }));

  app.get('/_admin/apps', {
    schema: { ...hidden, querystring: Type.Object(PageQuery) },
  }, async (request, reply) => sendPage(request, reply, urls.web, async (page) => {
    const { rows, total } = await listApps(db, { limit: page.perPage, offset: page.offset });
    return { total, items: rows.map((row) => ({
      id: row.id,
      slug: row.slug,
      name: row.name,
      owner: row.owner_login,
      client_id: row.client_id,
      permissions: JSON.parse(row.permissions),
      events: JSON.parse(row.events),
      created_at: isoSeconds(row.created_at),
    })) };
  }));

  app.get('/_admin/orgs/:org/teams', {
    schema: { ...hidden, params: Type.Object({ org: Type.String() }), querystring: Type.Object(PageQuery) },
  }, async (request, reply) => {
    const org = await requireAccount(db, request.params.org, 'org');
    return sendPage(request, reply, urls.web, async (page) => {
      const { rows, total } = await listTeams(db, org.id, { limit: page.perPage, offset: page.offset });
      return { total, items: rows.map((row) => team(urls, org, row)) };
    });
  });

  app.get('/_admin/apps/:app_slug/installations', {
    schema: { ...hidden, params: Type.Object({ app_slug: Type.String() }), querystring: Type.Object(PageQuery) },
  }, async (request, reply) => {
    const found = await requireApp(db, request.params.app_slug);
    return sendPage(request, reply, urls.web, async (page) => {
      const { total, installations } = await listInstallations(db, found.id, { limit: page.perPage, offset: page.offset });
      return { total, items: installations.map(({ installation, account }) => ({
        ...installationAnswer(urls, installation, account),
        suspended_at: installation.suspended_at && isoSeconds(installation.suspended_at),
      })) };
    });
  });

  app.get('/_admin/tokens', {
    schema: {
      ...hidden,
      querystring: Type.Object({ ...PageQuery, login: Type.Optional(Type.String({ minLength: 1, description: 'Only the tokens of this user' })) }),
    },
  }, async (request, reply) => {
    let userId: number | undefined;
    if (request.query.login !== undefined) {
      const user = await findAccount(db, request.query.login);
      if (!user) throw notFound();
      userId = user.id;
    }
    return sendPage(request, reply, urls.web, async (page) => {
      const { rows, total } = await listTokens(db, { userId }, { limit: page.perPage, offset: page.offset });
      return { total, items: rows.map((row) => ({
        id: row.id,
        kind: row.kind,
        login: row.login,
        app: row.app_slug,
        note: row.note,
        scopes: JSON.parse(row.scopes),
        permissions: JSON.parse(row.permissions),
        token_last_eight: row.token_last_eight,
        expires_at: row.expires_at ? isoSeconds(row.expires_at) : null,
        created_at: isoSeconds(row.created_at),
      })) };
    });
  });
}
