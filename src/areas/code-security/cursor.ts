// Cursor pages (`before`, `after`) of the configuration and repository lists.
import { invalidField } from '../../platform/errors.ts';
import { decodeCursor, DEFAULT_PAGES, encodeCursor, pageParams } from '../../platform/pagination.ts';
import { isRowId } from '../../platform/schemas.ts';
import type { Window } from './store.ts';

export interface CursorArgs {
  per_page?: number;
  before?: string;
  after?: string;
}

export interface CursorPage<T> {
  items: T[];
  /** Cursor of the next page (`after`), when there is one. */
  next?: string;
  /** Cursor of the previous page (`before`), when there is one. */
  prev?: string;
}

function cursorPosition(cursor: string, field: string): number {
  const position = Number(decodeCursor(cursor, field));
  if (position !== 0 && !isRowId(position)) throw invalidField('Pagination', field, `"${cursor}" is not a valid cursor`);
  return position;
}

/** A page of a list ordered by an integer key, before or after a cursor, with the neighbouring cursors. */
export async function cursorPage<T>(args: CursorArgs, fetch: (window: Window) => Promise<T[]>, key: (item: T) => number): Promise<CursorPage<T>> {
  const limit = pageParams(args, DEFAULT_PAGES).perPage;
  if (args.before !== undefined && args.after !== undefined) throw invalidField('Pagination', 'before', 'before and after cannot be used together');
  let items: T[];
  let hasNext: boolean;
  let hasPrev: boolean;
  if (args.before !== undefined) {
    const rows = await fetch({ lt: cursorPosition(args.before, 'before'), order: 'desc', limit: limit + 1 });
    hasPrev = rows.length > limit;
    items = rows.slice(0, limit).reverse();
    hasNext = items.length > 0 && (await fetch({ gt: key(items[items.length - 1]!), order: 'asc', limit: 1 })).length > 0;
  } else {
    const rows = await fetch({ gt: args.after === undefined ? undefined : cursorPosition(args.after, 'after'), order: 'asc', limit: limit + 1 });
    hasNext = rows.length > limit;
    items = rows.slice(0, limit);
    hasPrev = items.length > 0 && (await fetch({ lt: key(items[0]!), order: 'desc', limit: 1 })).length > 0;
  }
  return {
    items,
    ...(hasNext ? { next: encodeCursor(key(items[items.length - 1]!)) } : {}),
    ...(hasPrev ? { prev: encodeCursor(key(items[0]!)) } : {}),
  };
}
