// Queries built once and run many times with new parameters: building and compiling a Kysely query
// cost more CPU than running it (a token lookup on SQLite), and PostgreSQL parses and plans a named
// statement once per connection instead of on every request.
import { PostgresAdapter, sql, type Compilable, type CompiledQuery, type DialectAdapter, type RawBuilder, type SqlBool } from 'kysely';
import type { Executor } from './index.ts';

/** Whether `db` (a database or one of its transactions) is PostgreSQL: for statements whose text differs by dialect. */
export function isPostgres(db: Executor): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** The SQL of every reusable query and the name PostgreSQL prepares it under (the pool reads it). */
export const preparedNames = new Map<string, string>();

/**
 * A list of ids bound as one parameter, so that a statement's text is the same for any length: an
 * array on PostgreSQL, a JSON array on SQLite (read there with `json_each`).
 */
export type IdList = number[] | string;
export function idList(db: Executor, ids: readonly number[]): IdList {
  return isPostgres(db) ? [...ids] : JSON.stringify(ids);
}

/** `column` is one of `ids`, an `IdList` parameter (on PostgreSQL an array of `type`). */
export function inIdList(postgres: boolean, column: string, ids: unknown, type: 'int4' | 'int8' = 'int4'): RawBuilder<SqlBool> {
  return postgres
    ? sql<SqlBool>`${sql.ref(column)} = any(cast(${ids} as ${sql.raw(type)}[]))`
    : sql<SqlBool>`${sql.ref(column)} in (select value from json_each(${ids}))`;
}

/**
 * `build` makes the query (a query builder, or raw `sql`) from placeholders, once per database (its
 * transactions share it; a text that differs by dialect asks `isPostgres(db)`); each call runs it with `params`
 * in their places. Only for queries whose shape does not depend on the parameters' values, and
 * with their columns named (no `*`): PostgreSQL refuses to run a prepared statement whose result
 * columns changed since it was prepared.
 */
export function reusableQuery<P extends unknown[], R>(name: string, build: (db: Executor, ...params: P) => Compilable<R> | RawBuilder<R>) {
  // Keyed by the database's adapter, which its transactions share: each transaction is a new Kysely.
  const compiled = new WeakMap<DialectAdapter, { query: CompiledQuery<R>; slots: Array<number | null> }>();
  return async (db: Executor, ...params: P): Promise<R[]> => {
    const adapter = db.getExecutor().adapter;
    let entry = compiled.get(adapter);
    if (!entry) {
      const placeholders = params.map((_, i) => `\u0000${name}:${i}`);
      const built = build(db, ...(placeholders as P));
      // A query builder compiles itself; raw SQL (`sql`...``) compiles against the database.
      const query = 'isRawBuilder' in built ? built.compile(db) : built.compile();
      const slots = query.parameters.map((value) => {
        const index = placeholders.indexOf(value as string);
        return index < 0 ? null : index;
      });
      if (placeholders.some((_, i) => !slots.includes(i))) throw new Error(`reusable query ${name}: a parameter does not appear in it`);
      entry = { query, slots };
      compiled.set(adapter, entry);
      reusableText(name, query.sql);
    }
    const { query, slots } = entry;
    const parameters = query.parameters.map((value, i) => (slots[i] === null ? value : params[slots[i]!]));
    return (await db.executeQuery<R>({ ...query, parameters })).rows;
  };
}

/**
 * A statement of fixed text (raw SQL, or a library's own, such as the job queue's insert) run many
 * times: on PostgreSQL it becomes a named prepared statement like a reusable query. Only for texts
 * that do not embed values (each text is prepared once per connection and kept); answers the text.
 */
export function reusableText(name: string, text: string): string {
  if (!preparedNames.has(text)) preparedNames.set(text, `codehost_${name}_${preparedNames.size}`);
  return text;
}
