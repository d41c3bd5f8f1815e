// Response schemas shared by every route: the platform's error bodies.
import { Type } from 'typebox';

export const ErrorBody = Type.Object({
  message: Type.String(),
  documentation_url: Type.String(),
  status: Type.String(),
});

export const ValidationErrorBody = Type.Object({
  message: Type.String(),
  errors: Type.Optional(Type.Array(Type.Object({
    resource: Type.String(),
    field: Type.String(),
    code: Type.String(),
    message: Type.Optional(Type.String()),
  }))),
  documentation_url: Type.String(),
  status: Type.String(),
});

/** The validation body of routes configured with `errorStrings` (src/http/errors.ts): `errors` are strings. */
export const SimpleValidationErrorBody = Type.Object({
  message: Type.String(),
  errors: Type.Optional(Type.Array(Type.String())),
  documentation_url: Type.String(),
  status: Type.String(),
});

/** Whether an integer can be a row id at all (ids are int4 on both engines; PostgreSQL refuses larger values). */
export function isRowId(id: number): boolean {
  return Number.isInteger(id) && id >= 1 && id <= 2 ** 31 - 1;
}

/**
 * The schema of an id in a path or a body: a row id (1..2^31-1). A larger integer, that no row can
 * have and PostgreSQL's integer columns refuse, is a 404 in a path (no such resource, as for any
 * unknown id; see the error handler) and a 422 in a body.
 */
export function RowId(description?: string) {
  return Type.Integer({ minimum: 1, maximum: 2 ** 31 - 1, ...(description ? { description } : {}) });
}

/** Whether text can be stored and looked up at all: PostgreSQL's text refuses NUL, so no name holds one. */
export function isStorableText(value: string): boolean {
  return !value.includes('\u0000');
}

/**
 * A copy of a body schema in which every object that lists its fields and says nothing of others
 * refuses others (`additionalProperties: false`): a field the operation does not know is a 422 naming
 * it, not silently dropped. Maps (`Type.Record`: no listed fields) and objects that say what they take
 * stay as they are, and so do the parts of an intersection (each would refuse the others' fields).
 */
export function closedObjects<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map(closedObjects) as T;
  if (schema === null || typeof schema !== 'object') return schema;
  const node = schema as Record<string, unknown>;
  // A copy with every property as it was (TypeBox's own markers included, which Value reads for
  // defaults), then the parts below it closed in their turn.
  const out = Object.create(Object.getPrototypeOf(node), Object.getOwnPropertyDescriptors(node)) as Record<string, unknown>;
  for (const [key, value] of Object.entries(node)) {
    if (key === 'allOf' || value === null || typeof value !== 'object') continue;
    out[key] = key === 'properties' ? Object.fromEntries(Object.entries(value).map(([name, property]) => [name, closedObjects(property)])) : closedObjects(value);
  }
  if (node.type === 'object' && node.properties && node.additionalProperties === undefined) out.additionalProperties = false;
  return out as T;
}
