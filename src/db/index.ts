// Kysely on SQLite (node:sqlite, embedded default) or PostgreSQL (pg, when DATABASE_URL is set).
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
import { Kysely, PostgresDialect, SqliteDialect, type SqliteDatabase, type SqliteStatement } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.ts';

export type Dialect = 'sqlite' | 'postgres';

export interface Db {
  kysely: Kysely<Database>;
  dialect: Dialect;
  /** The pg connection string, for components (the job queue) that open their own pool. */
  url: string | null;
  close(): Promise<void>;
}

export type Executor = Kysely<Database>;

function toSqlite(value: unknown): SQLInputValue {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value instanceof Date) return value.toISOString();
  return value as SQLInputValue;
}

const STATEMENT_CACHE_SIZE = 500;

/**
 * Adapts node:sqlite's synchronous API to the interface Kysely's SqliteDialect drives. Prepared
 * statements are cached by their SQL: preparing was a fifth of a simple request's CPU time.
 */
function nodeSqlite(path: string): SqliteDatabase {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new DatabaseSync(path);
  db.exec('PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000; PRAGMA synchronous = NORMAL;');
  const cache = new Map<string, SqliteStatement>();
  return {
    close: () => db.close(),
    prepare(sql: string): SqliteStatement {
      const cached = cache.get(sql);
      if (cached) return cached;
      const statement = db.prepare(sql);
      const adapted: SqliteStatement = {
        reader: statement.columns().length > 0,
        all: (parameters) => statement.all(...parameters.map(toSqlite)),
        run: (parameters) => statement.run(...parameters.map(toSqlite)),
        iterate: (parameters) => statement.iterate(...parameters.map(toSqlite)) as IterableIterator<unknown>,
      };
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
      cache.set(sql, adapted);
      return adapted;
    },
  };
}

// int8 (count(*), sums) arrive from pg as strings; every count here fits a JS number.
pg.types.setTypeParser(20, (value) => Number(value));

export function openDatabase(options: { databaseUrl: string | null; sqlitePath: string; poolSize?: number }): Db {
  if (options.databaseUrl) {
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: options.poolSize ?? 10 });
    // An idle client that loses its connection must not crash the process.
    pool.on('error', () => {});
    const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { kysely, dialect: 'postgres', url: options.databaseUrl, close: () => kysely.destroy() };
  }
  const sqlite = nodeSqlite(options.sqlitePath);
  const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  return { kysely, dialect: 'sqlite', url: null, close: () => kysely.destroy() };
}
