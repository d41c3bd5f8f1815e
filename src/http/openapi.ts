// What /openapi.json says of each operation beyond its route's schema, given centrally as routes are
// registered: an `operationId` in the platform's style (`area/verb-noun`, from the route's first tag
// and its summary: `activity/list-notifications-for-authenticated-user`), so that client generators
// produce usable method names; and an example for each response, sampled from its schema (errors
// get the platform's body for their status).
import type { FastifyInstance } from 'fastify';
import { documentationUrl, type ReferencedOperation } from '../platform/errors.ts';

/** Words the platform's operation ids leave out of a summary. */
const SKIPPED = new Set(['a', 'an', 'the']);

/** `area/verb-noun` from a tag and a summary: `activity` + `List notifications for the authenticated user`. */
export function operationId(tag: string, summary: string): string {
  // What a summary adds in parentheses or after a semicolon or colon is a remark, not the name.
  const name = summary.replace(/\([^)]*\)/g, ' ').replace(/[;:].*$/, '').replace(/['’]/g, '');
  const words = name.toLowerCase().replace(/[^a-z0-9]+/g, ' ').trim().split(' ').filter((word) => word && !SKIPPED.has(word));
  return `${tag.toLowerCase().replace(/[^a-z0-9]+/g, '-')}/${words.join('-')}`;
}

/** Messages of the platform's error bodies, by status. */
const ERROR_MESSAGES: Record<string, string> = {
  400: 'Problems parsing JSON',
  401: 'Requires authentication',
  403: 'Resource not accessible by integration',
  404: 'Not Found',
  409: 'Conflict',
  410: 'Gone',
  413: 'Payload Too Large',
  416: 'Range Not Satisfiable',
  422: 'Validation Failed',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

type Schema = Record<string, unknown> & {
  type?: unknown;
  properties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
};

const STRING_FORMATS: Record<string, string> = {
  'date-time': '2026-01-01T00:00:00Z',
  date: '2026-01-01',
  uri: 'https://codehost.example/api/v3',
  email: 'mona@example.com',
  binary: '',
};

/** A value the schema accepts, or undefined where none is simple to give (references, deep nesting). */
export function sample(schema: Schema | undefined, name = '', depth = 0): unknown {
  if (!schema || depth > 8 || '$ref' in schema) return undefined;
  if (Array.isArray(schema.examples) && schema.examples.length) return schema.examples[0];
  if ('example' in schema) return schema.example;
  if ('default' in schema) return schema.default;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) {
    const branch = branches.find((b) => b.type !== 'null') ?? branches[0];
    return sample(branch, name, depth + 1);
  }
  if (schema.allOf) return Object.assign({}, ...schema.allOf.map((part) => sample(part, name, depth + 1) ?? {}));
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [key, property] of Object.entries(schema.properties ?? {})) {
        const value = sample(property, key, depth + 1);
        if (value === undefined) return undefined;
        out[key] = value;
      }
      return out;
    }
    case 'array': {
      const item = sample(schema.items, name, depth + 1);
      return item === undefined ? undefined : [item];
    }
    case 'string':
      if (typeof schema.format === 'string' && schema.format in STRING_FORMATS) return STRING_FORMATS[schema.format];
      if (name.endsWith('url')) return 'https://codehost.example/api/v3';
      if (name.endsWith('_at')) return STRING_FORMATS['date-time'];
      return typeof schema.minLength === 'number' && schema.minLength > 6 ? 'x'.repeat(schema.minLength) : 'string';
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? Math.max(schema.minimum, 1) : 1;
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return undefined;
  }
}

/** The example of one response: the platform's error body for an error status, else one sampled from the schema. */
function responseExample(status: string, schema: Schema, operation: ReferencedOperation): unknown {
  const properties = schema.properties ?? {};
  if (Number(status) >= 400 && 'message' in properties && 'documentation_url' in properties) {
    const message = ERROR_MESSAGES[status] ?? 'Error';
    return {
      message,
      ...('errors' in properties && status === '422'
        ? { errors: [properties.errors?.items?.type === 'string' ? 'Name has already been taken' : { resource: 'Resource', field: 'name', code: 'missing_field' }] }
        : {}),
      documentation_url: documentationUrl('https://codehost.example/docs', operation),
      status,
    };
  }
  return sample(schema);
}

/** Gives every documented route its operation id and its responses their examples. */
export function installOperationIds(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const schema = route.schema as (Record<string, unknown> & { hide?: boolean; tags?: string[]; summary?: string; operationId?: string; response?: Record<string, Schema> }) | undefined;
    if (!schema || schema.hide) return;
    const extra: Record<string, unknown> = {};
    if (!schema.operationId) {
      const method = Array.isArray(route.method) ? route.method[0]! : route.method;
      const tag = schema.tags?.[0] ?? (route.url.split('/')[1] || 'meta');
      extra.operationId = operationId(tag, schema.summary ?? `${method} ${route.url.replace(/[:{}]/g, '')}`);
    }
    if (schema.response) {
      const responses: Record<string, Schema> = {};
      for (const [status, response] of Object.entries(schema.response)) {
        const example = response && typeof response === 'object' && !('examples' in response) ? responseExample(status, response, { tags: schema.tags, operationId: schema.operationId ?? (extra.operationId as string | undefined) }) : undefined;
        // A copy: response schemas are shared between routes, and each status has its own example.
        responses[status] = example === undefined || (response.type === 'null') ? response : { ...response, examples: [example] };
      }
      extra.response = responses;
    }
    route.schema = { ...schema, ...extra };
  });
}
