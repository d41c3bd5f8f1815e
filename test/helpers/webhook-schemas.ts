// The platform's published webhook schemas (@octokit/openapi-webhooks, the api.github.com
// description) with the spec's renamings applied to member names (github → vendor, dependabot →
// updater, copilot → assistant: `performed_via_vendor_app`), compiled with ajv. A payload is
// checked against the schema of its `event/action` (or `event` for an event without actions).
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { schemas } from '@octokit/openapi-webhooks';

const rename = (name: string) => name.replace(/github/g, 'vendor').replace(/dependabot/g, 'updater').replace(/copilot/g, 'assistant');

/** The schema with every member name renamed (keys of `properties`, entries of `required`). */
function renamed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(renamed);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'properties' && value && typeof value === 'object') {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, member]) => [rename(name), renamed(member)]));
    } else if (key === 'required' && Array.isArray(value)) {
      out[key] = value.map((name) => (typeof name === 'string' ? rename(name) : name));
    } else if (key === 'examples' || key === 'example' || key === 'default') {
      out[key] = value;
    } else {
      out[key] = renamed(value);
    }
  }
  return out;
}

export interface WebhookSchemas {
  /** The published name of the description these schemas come from. */
  version: string;
  /** Whether the platform describes this event/action. */
  has(event: string, action: string | undefined): boolean;
  /** The schema errors of `payload` as `event`/`action` (empty when it validates). */
  errors(event: string, action: string | undefined, payload: unknown): ErrorObject[];
}

export function webhookSchemas(): WebhookSchemas {
  const document = schemas['api.github.com'] as {
    info: { version: string };
    webhooks: Record<string, { post: { operationId: string; requestBody: { content: { 'application/json': { schema: { $ref: string } } } } } }>;
    components: { schemas: Record<string, unknown> };
  };
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats.default(ajv);
  ajv.addFormat('int64', true);
  ajv.addSchema({ $id: 'webhooks', components: { schemas: renamed(document.components.schemas) } });
  // `issues/opened`, `ping`: the operation ids name event (with dashes) and action.
  const refs = new Map<string, string>();
  for (const hook of Object.values(document.webhooks)) {
    refs.set(hook.post.operationId, hook.post.requestBody.content['application/json'].schema.$ref);
  }
  const compiled = new Map<string, ValidateFunction>();
  const key = (event: string, action: string | undefined) => `${event.replace(/_/g, '-')}${action ? `/${action.replace(/_/g, '-')}` : ''}`;
  return {
    version: document.info.version,
    has: (event, action) => refs.has(key(event, action)),
    errors(event, action, payload) {
      const name = key(event, action);
      const ref = refs.get(name);
      if (!ref) throw new Error(`the platform describes no ${name} webhook`);
      let validate = compiled.get(ref);
      if (!validate) compiled.set(ref, (validate = ajv.compile({ $ref: `webhooks${ref}` })));
      return validate(payload) ? [] : [...(validate.errors ?? [])];
    },
  };
}
