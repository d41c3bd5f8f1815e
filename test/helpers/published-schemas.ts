// What the platform's published descriptions share: the spec's renamings of the platform's own
// words (github → vendor, dependabot → updater, copilot → assistant), applied to member names and
// paths, and the ajv that compiles them (OpenAPI 3.0 schemas: `nullable`, formats, int64).
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

export const rename = (name: string) => name.replace(/github/g, 'vendor').replace(/dependabot/g, 'updater').replace(/copilot/g, 'assistant');

/**
 * The schema with every member name renamed (keys of `properties`, entries of `required`), and
 * OpenAPI 3.0's `nullable` beside no `type` (`{ nullable: true, allOf: [...] }`) written as JSON
 * Schema says it (`anyOf` the schema or null), which ajv requires, and a nullable `enum` with null.
 */
export function renamed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(renamed);
  if (schema === null || typeof schema !== 'object') return schema;
  if ('nullable' in schema && schema.nullable === true && !('type' in schema)) {
    const { nullable: _, ...rest } = schema as Record<string, unknown>;
    return { anyOf: [renamed(rest), { type: 'null' }] };
  }
  // `nullable` widens `enum` too (the platform answers `state_reason: null`, an enum of strings).
  if ('nullable' in schema && schema.nullable === true && 'enum' in schema && Array.isArray(schema.enum) && !schema.enum.includes(null)) {
    return renamed({ ...schema, enum: [...schema.enum, null] });
  }
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

/** An ajv holding `components` (renamed) under `id`, for `$ref: '<id>#/components/…'`. */
export function publishedAjv(id: string, components: unknown): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats.default(ajv);
  ajv.addFormat('int64', true);
  ajv.addSchema({ $id: id, components: renamed(components) });
  return ajv;
}
