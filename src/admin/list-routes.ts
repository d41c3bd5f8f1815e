// The admin API's lists (spec/admin-api.md): what exists, page by page, in the representations the
// admin create answers use, without the secrets those answers show once (client secrets, private
// keys, token values and hashes). `per_page` (default 30, at most 100) and `page`, with `Link`
// (under the server's root, CODEHOST_WEB_URL, where /_admin lives).
import { Type } from 'typebox';
import { isoSeconds } from '../platform/clock.ts';
import type { Api, Context } from '../platform/context.ts';
import { notFound } from '../platform/errors.ts';
import { PageQuery, pageParams, setPageLinks } from '../platform/pagination.ts';
import { findAccount, listAccounts } from '../core/accounts/store.ts';
import { organization, userWithProfile } from '../core/accounts/representations.ts';
import { listApps } from '../core/apps/store.ts';
import { repositoryIdPage } from '../core/repositories/store.ts';
import { repositoriesWithFacts } from '../core/repositories/facts.ts';
import { fullRepository } from '../core/repositories/representations.ts';
import { listTokens } from '../core/callers/token-store.ts';

const admin = { admin: true } as const;
const hidden = { hide: true, tags: ['admin'] } as const;
const PAGES = { perPage: 30, maxPerPage: 100 };

export function adminListRoutes(app: Api, ctx: Context): void {
  const { urls } = ctx;
  const db = ctx.db.kysely;

  app.get('/_admin/users', {
    config: admin,
    schema: { ...hidden, querystring: Type.Object(PageQuery) },
  }, async (request, reply) => {
    const params = pageParams(request.query, PAGES);
    const { rows, total } = await listAccounts(db, 'users', { limit: params.perPage, offset: params.offset });
    setPageLinks(reply, request, urls.web, params, { total, returned: rows.length });
    return rows.map((row) => userWithProfile(urls, row));
  });

  app.get('/_admin/orgs', {
    config: admin,
    schema: { ...hidden, querystring: Type.Object(PageQuery) },
  }, async (request, reply) => {
    const params = pageParams(request.query, PAGES);
    const { rows, total } = await listAccounts(db, 'orgs', { limit: params.perPage, offset: params.offset });
    setPageLinks(reply, request, urls.web, params, { total, returned: rows.length });
    return rows.map((row) => organization(urls, row));
  });

  app.get('/_admin/repos', {
    config: admin,
    schema: { ...hidden, querystring: Type.Object(PageQuery) },
  }, async (request, reply) => {
    const params = pageParams(request.query, PAGES);
    const { ids, total } = await repositoryIdPage(db, { limit: params.perPage, offset: params.offset });
    const loaded = new Map((await repositoriesWithFacts(db, ids)).map((row) => [row.repository.id, row]));
    // A repository deleted between the two reads is left out.
    const rows = ids.flatMap((id) => loaded.get(id) ?? []);
    setPageLinks(reply, request, urls.web, params, { total, returned: rows.length });
    return rows.map((row) => fullRepository(urls, row.repository, row.owner, row.facts));
  });

  app.get('/_admin/apps', {
    config: admin,
    schema: { ...hidden, querystring: Type.Object(PageQuery) },
  }, async (request, reply) => {
    const params = pageParams(request.query, PAGES);
    const { rows, total } = await listApps(db, { limit: params.perPage, offset: params.offset });
    setPageLinks(reply, request, urls.web, params, { total, returned: rows.length });
    return rows.map((row) => ({
      id: row.id,
      slug: row.slug,
      name: row.name,
      owner: row.owner_login,
      client_id: row.client_id,
      permissions: JSON.parse(row.permissions),
      events: JSON.parse(row.events),
      created_at: isoSeconds(row.created_at),
    }));
  });

  app.get('/_admin/tokens', {
    config: admin,
    schema: {
      ...hidden,
      querystring: Type.Object({ ...PageQuery, login: Type.Optional(Type.String({ minLength: 1, description: 'Only the tokens of this user' })) }),
    },
  }, async (request, reply) => {
    const params = pageParams(request.query, PAGES);
    let userId: number | undefined;
    if (request.query.login !== undefined) {
      const user = await findAccount(db, request.query.login);
      if (!user) throw notFound();
      userId = user.id;
    }
    const { rows, total } = await listTokens(db, { userId }, { limit: params.perPage, offset: params.offset });
    setPageLinks(reply, request, urls.web, params, { total, returned: rows.length });
    return rows.map((row) => ({
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
    }));
  });
}
