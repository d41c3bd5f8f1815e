// The platform's published REST description (@octokit/openapi: the api.github.com description
// GitHub publishes, with the spec's renamings applied to paths and member names), compiled with
// ajv: an answer is checked against the schema the platform publishes for its operation and status.
// Operations are named as codehost's OpenAPI document names them (`GET /repos/{owner}/{repo}`);
// path parameters match whatever their names.
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { createRequire } from 'node:module';
import { publishedAjv, rename, renamed } from './published-schemas.ts';

interface Response {
  $ref?: string;
  content?: Record<string, { schema?: unknown }>;
}
interface Description {
  info: { version: string };
  paths: Record<string, Record<string, { responses?: Record<string, Response> }>>;
  components: { schemas: Record<string, unknown>; responses: Record<string, Response> };
}

export interface RestSchemas {
  /** The published version of the description. */
  version: string;
  /** Whether the platform describes the operation (`METHOD /path`). */
  describes(operation: string): boolean;
  /** The statuses the platform describes a JSON body for. */
  statuses(operation: string): string[];
  /** The schema errors of `body` as the answer `status` of `operation` (empty when it validates); null when the platform describes no JSON body for it. */
  errors(operation: string, status: number, body: unknown): ErrorObject[] | null;
}

const shape = (path: string) => path.replace(/\{[^}]+\}/g, '{}');
const key = (operation: string) => {
  const [method, path] = operation.split(' ');
  return `${method!.toLowerCase()} ${shape(path!)}`;
};

/** The schema with its local references pointed at the description held under `id`. */
function anchored(schema: unknown, id: string): unknown {
  if (Array.isArray(schema)) return schema.map((item) => anchored(item, id));
  if (schema === null || typeof schema !== 'object') return schema;
  return Object.fromEntries(Object.entries(schema).map(([name, value]) =>
    [name, name === '$ref' && typeof value === 'string' && value.startsWith('#') ? `${id}${value}` : anchored(value, id)]));
}

/**
 * Where the published description is stricter than the platform's own answers, and codehost answers
 * as the platform does. Each is a change to the description before it is compiled.
 */
function corrected(document: Description): Description {
  // An organization that never set them answers `name`, `company`, `location` and `email` null and
  // `blog` "" (e.g. GET /orgs/{org} of a new organization); the description has them as strings, `blog` a URI.
  for (const name of ['organization-full', 'team-organization']) {
    const properties = (document.components.schemas[name] as { properties: Record<string, Record<string, unknown>> }).properties;
    for (const member of ['name', 'company', 'location', 'email']) properties[member] = { ...properties[member], nullable: true };
    const { format: _, ...blog } = properties.blog!;
    properties.blog = blog;
  }
  // The installation list inlines `installation` with its `account` as allOf [Simple User, Enterprise]
  // (both at once, which no account is); the `installation` schema itself has anyOf.
  const installations = document.paths['/app/installations']!.get!.responses!['200']!.content!['application/json']!;
  installations.schema = { type: 'array', items: { $ref: '#/components/schemas/installation' } };
  return document;
}

let loaded: RestSchemas | undefined;

/** The description, loaded once per process (13 MB of JSON; each schema compiled when first used). */
export function restSchemas(): RestSchemas {
  if (loaded) return loaded;
  const document = corrected(createRequire(import.meta.url)('@octokit/openapi/generated/api.github.com.json') as Description);
  const ajv = publishedAjv('rest', { schemas: document.components.schemas });
  const operations = new Map<string, Record<string, Response>>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (operation && typeof operation === 'object' && operation.responses) operations.set(`${method} ${shape(rename(path))}`, operation.responses);
    }
  }
  const json = (response: Response | undefined) => {
    const resolved = response?.$ref ? document.components.responses[response.$ref.split('/').pop()!] : response;
    const type = Object.keys(resolved?.content ?? {}).find((name) => name.includes('json'));
    return type ? resolved!.content![type]!.schema : undefined;
  };
  const compiled = new Map<string, ValidateFunction>();
  loaded = {
    version: document.info.version,
    describes: (operation) => operations.has(key(operation)),
    statuses: (operation) => Object.entries(operations.get(key(operation)) ?? {}).filter(([, response]) => json(response) !== undefined).map(([status]) => status),
    errors(operation, status, body) {
      const name = `${key(operation)} ${status}`;
      let validate = compiled.get(name);
      if (!validate) {
        const schema = json(operations.get(key(operation))?.[String(status)]);
        if (schema === undefined) return null;
        compiled.set(name, (validate = ajv.compile(anchored(renamed(schema), 'rest') as object)));
      }
      return validate(body) ? [] : [...(validate.errors ?? [])];
    },
  };
  return loaded;
}
