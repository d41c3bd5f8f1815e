// GET / (and, through the /api/v3 prefix, GET /api/v3/): the platform's root document, a map of URL
// templates a client can start from. It lists only the entries whose route this server answers
// (seen as routes are registered), built from the configured API URL, plus where the reference
// (/docs) and the OpenAPI document (/openapi.json) are.
import type { FastifyContextConfig } from 'fastify';
import { Type } from 'typebox';
import type { Api } from '../platform/context.ts';
import { referenceUrl, type Urls } from '../platform/urls.ts';

/** The platform's root document entries, as paths under the API URL (RFC 6570 templates). */
const ENTRIES: readonly (readonly [string, string])[] = [
  ['current_user_url', '/user'],
  ['authorizations_url', '/authorizations'],
  ['code_search_url', '/search/code?q={query}{&page,per_page,sort,order}'],
  ['commit_search_url', '/search/commits?q={query}{&page,per_page,sort,order}'],
  ['emails_url', '/user/emails'],
  ['emojis_url', '/emojis'],
  ['events_url', '/events'],
  ['feeds_url', '/feeds'],
  ['followers_url', '/user/followers'],
  ['following_url', '/user/following{/target}'],
  ['gists_url', '/gists{/gist_id}'],
  ['issue_search_url', '/search/issues?q={query}{&page,per_page,sort,order}'],
  ['issues_url', '/issues'],
  ['keys_url', '/user/keys'],
  ['label_search_url', '/search/labels?q={query}&repository_id={repository_id}{&page,per_page}'],
  ['notifications_url', '/notifications'],
  ['organization_url', '/orgs/{org}'],
  ['organization_repositories_url', '/orgs/{org}/repos{?type,page,per_page,sort}'],
  ['organization_teams_url', '/orgs/{org}/teams'],
  ['public_gists_url', '/gists/public'],
  ['rate_limit_url', '/rate_limit'],
  ['repository_url', '/repos/{owner}/{repo}'],
  ['repository_search_url', '/search/repositories?q={query}{&page,per_page,sort,order}'],
  ['current_user_repositories_url', '/user/repos{?type,page,per_page,sort}'],
  ['starred_url', '/user/starred{/owner}{/repo}'],
  ['starred_gists_url', '/gists/starred'],
  ['topic_search_url', '/search/topics?q={query}{&page,per_page}'],
  ['user_url', '/users/{user}'],
  ['user_organizations_url', '/user/orgs'],
  ['user_repositories_url', '/users/{user}/repos{?type,page,per_page,sort}'],
  ['user_search_url', '/search/users?q={query}{&page,per_page,sort,order}'],
];

/** A path's shape with parameter names erased: `/orgs/{org}` and `/orgs/:org` both give `/orgs/{}`. */
const templateShape = (template: string) => template.replace(/[?{][?&/][^}]*}.*$|\?.*$/, '').replace(/\{\w+\}/g, '{}');
const routeShape = (url: string) => url.replace(/:\w+(\([^)]*\))?/g, '{}').replace(/\/$/, '') || '/';

/** Registers GET / with `access` (a rule that lets anyone in, so the API's headers and limits apply). */
export function installRootDocument(app: Api, urls: Urls, access: NonNullable<FastifyContextConfig['access']>): void {
  const served = new Set<string>();
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.includes('GET')) served.add(routeShape(route.url));
  });

  let document: Record<string, string> | null = null;
  // Built at the first request, when every route is registered and the URLs are final (listening).
  const build = () => {
    const root = urls.api.replace(/\/api\/v3$/, '');
    return {
      ...Object.fromEntries(ENTRIES.filter(([, template]) => served.has(templateShape(template))).map(([key, template]) => [key, `${urls.api}${template}`])),
      documentation_url: referenceUrl(urls),
      openapi_url: `${root}/openapi.json`,
    };
  };

  app.get('/', {
    config: { access },
    schema: {
      summary: 'Get the API root',
      description: 'URL templates for the resources this server answers, and where its reference and OpenAPI document are.',
      tags: ['meta'],
      response: { 200: Type.Record(Type.String(), Type.String()) },
    },
  }, async () => (document ??= build()));
}
