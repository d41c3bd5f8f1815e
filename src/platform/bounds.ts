// How far any request body may go, public or admin, checked as it is parsed, before a schema, a
// service or the database sees it: nesting (a body nested thousands of levels overflows the stack
// of whatever walks it recursively: JSON.stringify, a schema's deep clone) and array sizes (each
// item may be work: a login to look up, a row to write). Over either: 422, naming where.
import { validationFailed, type ApiError } from './errors.ts';

/** The deepest a body may nest objects and arrays (the platform's own bodies nest a few levels). */
export const MAX_BODY_DEPTH = 32;
/** The most items any one array of a body may hold. */
export const MAX_BODY_ARRAY_ITEMS = 10_000;

/** The error for a parsed body beyond the bounds, or null. Walks without recursion; stops at the first excess. */
export function bodyBoundsError(body: unknown): ApiError | null {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value: body, path: '', depth: 0 }];
  while (stack.length) {
    const { value, path, depth } = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    const field = path || 'body';
    if (depth >= MAX_BODY_DEPTH) return excess(field, `${field} nests deeper than ${MAX_BODY_DEPTH} levels`);
    if (Array.isArray(value)) {
      if (value.length > MAX_BODY_ARRAY_ITEMS) return excess(field, `${field} has more than ${MAX_BODY_ARRAY_ITEMS} items`);
      value.forEach((item, index) => stack.push({ value: item, path: path ? `${path}.${index}` : String(index), depth: depth + 1 }));
    } else {
      for (const [key, item] of Object.entries(value)) stack.push({ value: item, path: path ? `${path}.${key}` : key, depth: depth + 1 });
    }
  }
  return null;
}

function excess(field: string, message: string): ApiError {
  return validationFailed([{ resource: 'body', field, code: 'invalid', message }]);
}
