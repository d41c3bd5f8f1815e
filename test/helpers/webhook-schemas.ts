// The platform's published webhook schemas (@octokit/openapi-webhooks, the api.github.com
// description) with the spec's renamings applied to member names (github → vendor, dependabot →
// updater, copilot → assistant: `performed_via_vendor_app`), compiled with ajv. A payload is
// checked against the schema of its `event/action` (or `event` for an event without actions).
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { schemas } from '@octokit/openapi-webhooks';
import { publishedAjv } from './published-schemas.ts';

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
  const ajv = publishedAjv('webhooks', { schemas: document.components.schemas });
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
