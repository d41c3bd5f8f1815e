// Page and cursor pagination with the platform's `Link` header (absolute URLs that keep the
// request's other query parameters). `per_page` over the maximum is capped; below 1 or not an
// integer is a 422 (the query schema says so).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { invalidField } from './errors.ts';
import { withoutApiPrefix } from './urls.ts';

export const PerPage = Type.Integer({ minimum: 1, description: 'Results per page' });
export const Page = Type.Integer({ minimum: 1, description: 'Page number of the results to fetch' });

/** Query properties of a page-paginated list. */
export const PageQuery = {
  page: Type.Optional(Page),
  per_page: Type.Optional(PerPage),
};

/** Query properties of a cursor-paginated list (`before` / `after`). */
export const CursorQuery = {
  per_page: Type.Optional(PerPage),
  before: Type.Optional(Type.String({ description: 'A cursor, as given in the Link header' })),
  after: Type.Optional(Type.String({ description: 'A cursor, as given in the Link header' })),
};

const MAX_PAGE = 2 ** 31 - 1;

export interface PageParams {
  page: number;
  perPage: number;
  offset: number;
}

export function pageParams(query: { page?: number; per_page?: number }, defaults: { perPage: number; maxPerPage: number }): PageParams {
  // `?page=1e20` is an integer, but no list has that many rows (ids stop at 2^31 - 1): the page is
  // capped there, so it is empty rather than an offset the database cannot hold.
  const page = Math.min(query.page ?? 1, MAX_PAGE);
  const perPage = Math.min(query.per_page ?? defaults.perPage, defaults.maxPerPage);
  return { page, perPage, offset: (page - 1) * perPage };
}

/** The platform's page sizes: 30 a page unless asked, at most 100. */
export const DEFAULT_PAGES = { perPage: 30, maxPerPage: 100 };

/**
 * Answers a page-paginated list: one page of `list` (by the request's `page` and `per_page`), with
 * `Link` naming the last page. `base` is the URL the links are under (the API's, or the web root's
 * for /_admin).
 */
export async function sendPage<T>(
  request: FastifyRequest<{ Querystring: { page?: number; per_page?: number } }>,
  reply: FastifyReply,
  base: string,
  list: (page: PageParams) => Promise<{ total: number; items: T[] }>,
  defaults = DEFAULT_PAGES,
): Promise<T[]> {
  const page = pageParams(request.query, defaults);
  const { total, items } = await list(page);
  setPageLinks(reply, request, base, page, { total, returned: items.length });
  return items;
}

/** The URL of this request with some query parameters replaced, under the configured API URL. */
export function linkUrl(apiUrl: string, request: FastifyRequest, replace: Record<string, string | number | undefined>): string {
  const current = new URL(request.url, 'http://x');
  const params = new URLSearchParams(current.search);
  for (const [key, value] of Object.entries(replace)) {
    if (value === undefined) params.delete(key);
    else params.set(key, String(value));
  }
  const path = withoutApiPrefix(current.pathname);
  const search = params.toString();
  return `${apiUrl}${path}${search ? `?${search}` : ''}`;
}

function setLink(reply: FastifyReply, links: [string, string][]): void {
  if (links.length) reply.header('link', links.map(([rel, url]) => `<${url}>; rel="${rel}"`).join(', '));
}

/**
 * `Link` for a page-paginated list. With `total` the header names `last`; without it (when counting
 * would cost too much) `next` appears whenever the page came back full.
 */
export function setPageLinks(
  reply: FastifyReply,
  request: FastifyRequest,
  apiUrl: string,
  params: PageParams,
  options: { total?: number; returned: number },
): void {
  const links: [string, string][] = [];
  const url = (page: number) => linkUrl(apiUrl, request, { page, per_page: params.perPage });
  const lastPage = options.total === undefined ? undefined : Math.max(1, Math.ceil(options.total / params.perPage));
  const hasNext = lastPage === undefined ? options.returned >= params.perPage : params.page < lastPage;
  if (params.page > 1) links.push(['prev', url(Math.min(params.page - 1, lastPage ?? params.page - 1))]);
  if (hasNext) links.push(['next', url(params.page + 1)]);
  if (lastPage !== undefined && params.page < lastPage) links.push(['last', url(lastPage)]);
  if (params.page > 1) links.push(['first', url(1)]);
  setLink(reply, links);
}

/** Opaque cursors: the position (usually an id) base64url-encoded. */
export function encodeCursor(position: string | number): string {
  return Buffer.from(`v1:${position}`).toString('base64url');
}

export function decodeCursor(cursor: string, field: string): string {
  const decoded = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!decoded.startsWith('v1:')) throw invalidField('Pagination', field, `"${cursor}" is not a valid cursor`);
  return decoded.slice(3);
}

/** `Link` for a cursor-paginated list: `next` and `prev` carry the cursors. */
export function setCursorLinks(
  reply: FastifyReply,
  request: FastifyRequest,
  apiUrl: string,
  cursors: { next?: Record<string, string>; prev?: Record<string, string> },
  cursorParams: readonly string[] = ['before', 'after'],
): void {
  const clear = Object.fromEntries(cursorParams.map((p) => [p, undefined]));
  const links: [string, string][] = [];
  if (cursors.next) links.push(['next', linkUrl(apiUrl, request, { ...clear, ...cursors.next })]);
  if (cursors.prev) links.push(['prev', linkUrl(apiUrl, request, { ...clear, ...cursors.prev })]);
  setLink(reply, links);
}
