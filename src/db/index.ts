// Kysely on SQLite (node:sqlite, embedded default) or PostgreSQL (pg, when DATABASE_URL is set).
import { chmodSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
import { Kysely, PostgresDialect, SqliteDialect, type PostgresPool, type PostgresPoolClient, type SqliteDatabase, type KyselyConfig, type SqliteStatement, type TransactionBuilder } from 'kysely';
import pg from 'pg';
import { ChangeFeed, NO_CACHE, postgresChanges, registerFeed, sqliteChanges } from './changes.ts';
import { connectionLost, retriedTransaction } from './errors.ts';
import { preparedNames } from './prepared.ts';
import type { Database } from './schema.ts';

export type Dialect = 'sqlite' | 'postgres';

export interface Db {
  kysely: Kysely<Database>;
  dialect: Dialect;
  /** The pg connection string, for components (the job queue) that open their own pool. */
  url: string | null;
  /** What this process knows of the database's changes, for the reads kept between requests (changes.ts). */
  feed: ChangeFeed;
  close(): Promise<void>;
}

export type Executor = Kysely<Database>;

/**
 * node:sqlite binds every JS number as a REAL: a whole number goes as a BigInt, so SQLite gets an
 * INTEGER (a REAL 5 is '5.0' in a TEXT column, and a REAL `LIMIT ?` made a sort three times slower).
 */
function toSqlite(value: unknown): SQLInputValue {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? BigInt(value) : value;
  if (typeof value === 'boolean') return value ? 1n : 0n;
  if (value instanceof Date) return value.toISOString();
  return value as SQLInputValue;
}

const STATEMENT_CACHE_SIZE = 500;

const BOUND_LIMIT = /\b(limit|offset)\s+\?/gi;
const BEGIN = /^\s*begin\s*$/i;

/**
 * The text SQLite prepares for a statement: a bare bound LIMIT or OFFSET (`limit ?`, as Kysely
 * writes `.limit(n)`) is put behind a cast. SQLite's planner reads such a parameter's value, so it
 * prepared the statement again on every run (sqlite3Reprepare: 20,000 instructions, a sixth of a
 * 30-row page's cost, docs/performance.md); a cast is an expression it does not read.
 *
 * A transaction (Kysely's `begin`) takes the write lock at its start (`begin immediate`), waiting
 * out another connection's write (the busy timeout). A deferred transaction's first write, after a
 * read, fails at once when another connection (an export thread, the CLI) wrote in between: its
 * snapshot is stale, and no timeout waits that out (the request answered 503). This process's
 * transactions take turns on its one connection anyway.
 */
export function sqliteText(sql: string): string {
  if (BEGIN.test(sql)) return 'begin immediate';
  return sql.replace(BOUND_LIMIT, '$1 cast(? as integer)');
}

/**
 * Adapts node:sqlite's synchronous API to the interface Kysely's SqliteDialect drives. Prepared
 * statements are cached by their SQL: preparing was a fifth of a simple request's CPU time.
 */
function nodeSqlite(path: string, feed: () => ChangeFeed): { database: SqliteDatabase; dataVersion: () => number } {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const db = new DatabaseSync(path);
  // Its own user's only, also when made by an older version (SQLite gives its -wal and -shm files the same mode).
  if (path !== ':memory:') chmodSync(path, 0o600);
  db.exec('PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000; PRAGMA synchronous = NORMAL;');
  const cache = new Map<string, SqliteStatement>();
  // The one connection's statements, reported to the change feed after each (a write moves its generation once committed).
  const connection = { pending: false };
  const reported = <T>(sql: string, run: () => T): T => {
    try {
      return run();
    } finally {
      feed().ran(sql, db.isTransaction, connection);
    }
  };
  const dataVersion = db.prepare('PRAGMA data_version');
  const database: SqliteDatabase = {
    close: () => db.close(),
    prepare(sql: string): SqliteStatement {
      const cached = cache.get(sql);
      if (cached) return cached;
      // SQLite rolls a transaction back itself when a statement fails for the disk (full, I/O error,
      // read-only). Kysely's ROLLBACK after it would then fail with "cannot rollback - no transaction
      // is active" and hide the statement's error: with no transaction left, there is nothing to do.
      if (/^rollback$/i.test(sql.trim())) {
        const rollback = db.prepare(sql);
        const run = () => reported(sql, () => (db.isTransaction ? rollback.run() : { changes: 0, lastInsertRowid: 0 }));
        return { reader: false, all: () => [], run, iterate: () => [][Symbol.iterator]() };
      }
      const statement = db.prepare(sqliteText(sql));
      const adapted: SqliteStatement = {
        reader: statement.columns().length > 0,
        all: (parameters) => reported(sql, () => statement.all(...parameters.map(toSqlite))),
        run: (parameters) => reported(sql, () => statement.run(...parameters.map(toSqlite))),
        // Only reads are iterated (Kysely's streaming): nothing to report.
        iterate: (parameters) => statement.iterate(...parameters.map(toSqlite)) as IterableIterator<unknown>,
      };
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
      cache.set(sql, adapted);
      return adapted;
    },
  };
  return { database, dataVersion: () => Number((dataVersion.get() as { data_version: number }).data_version) };
}

// int8 (count(*), sums) arrive from pg as strings; every count here fits a JS number.
pg.types.setTypeParser(20, (value) => Number(value));

const SELECT = /^\s*select\b/i;
const WITH = /^\s*with\b/i;
const MODIFYING = /\b(insert|update|delete|merge)\b/i;

/** A statement that only reads: a SELECT, or a WITH query none of whose parts inserts, updates or deletes. */
export function onlyReads(text: string): boolean {
  return SELECT.test(text) || (WITH.test(text) && !MODIFYING.test(text));
}
const LOCKING = /\bfor\s+(update|share|no\s+key\s+update|key\s+share)\b/i;

/**
 * The pool as Kysely sees it, where a read that fails because its connection was lost (terminated,
 * reset) runs once more on a fresh connection: a lone SELECT outside a transaction has no effect to
 * repeat. Writes, and anything in a transaction, are never retried (they may have committed, or the
 * transaction is gone): the error goes up and the request answers 503.
 */
function retryingReads(pool: pg.Pool, namedStatements: boolean, feed: () => ChangeFeed): PostgresPool {
  return {
    end: () => pool.end(),
    async connect(): Promise<PostgresPoolClient> {
      let client: pg.PoolClient | null = await pool.connect();
      const connection = { pending: false };
      const query = async (text: string, parameters: readonly unknown[]) => {
        try {
          return await queryOnce(text, parameters);
        } finally {
          // After it: a write moves the feed's generation once committed, before the request answers.
          feed().ran(text, transactionOpen(client), connection);
        }
      };
      const queryOnce = async (text: string, parameters: readonly unknown[]) => {
        if (!client) throw new Error('Connection terminated: the lost connection could not be replaced');
        // A reusable query (prepared.ts) runs as a named statement: parsed and planned once per connection.
        // Behind a transaction-pooling PgBouncer a named statement may land on another server connection: none then.
        const name = namedStatements ? preparedNames.get(text) : undefined;
        const run = (on: pg.PoolClient) => (name ? on.query({ name, text, values: parameters as unknown[] }) : on.query(text, parameters as unknown[]));
        try {
          return await run(client);
        } catch (error) {
          // A lost connection sends no new status: the server's last one says whether this ran in a transaction.
          if (transactionOpen(client) || !onlyReads(text) || LOCKING.test(text) || !connectionLost(error)) throw error;
          const lost = client;
          client = null;
          lost.release(error as Error);
          client = await pool.connect();
          return await run(client);
        }
      };
      return {
        query: ((textOrCursor: string | object, parameters?: readonly unknown[]) =>
          typeof textOrCursor === 'string' ? query(textOrCursor, parameters ?? []) : client!.query(textOrCursor as never)) as unknown as PostgresPoolClient['query'],
        release: () => {
          client?.release();
          client = null;
        },
      };
    },
  };
}

/**
 * Whether a transaction is open on the connection after its last statement: what the server said
 * in its last ReadyForQuery (I idle, T in a transaction, E in a failed one), which a text of several
 * statements (`BEGIN; …; COMMIT`) also gets right. No connection: no transaction.
 */
function transactionOpen(client: pg.PoolClient | null): boolean {
  const status = client?.getTransactionStatus();
  return status === 'T' || status === 'E';
}

/** How many times a transaction runs again after a deadlock or a serialization failure. */
const TRANSACTION_RETRIES = 4;

/**
 * Kysely whose transactions run again when PostgreSQL cancelled them for a deadlock (40P01) or a
 * serialization failure (40001), which it means to be retried: nothing of the attempt committed, and
 * the race that caused it is the server's own, not the client's. A bounded number of times, after a
 * growing pause with jitter (so the transactions that met do not meet again in step); then the error
 * goes up (503). The callback runs again whole: it must not have effects outside the database that
 * a second run would double (the services' transactions read what they need inside them).
 */
class RetryingKysely extends Kysely<Database> {
  readonly #log: DbLog | undefined;
  constructor(config: KyselyConfig, log: DbLog | undefined) {
    super(config);
    this.#log = log;
  }

  override transaction(): TransactionBuilder<Database> {
    return retrying(super.transaction(), this.#log);
  }
}

function retrying(builder: TransactionBuilder<Database>, log: DbLog | undefined): TransactionBuilder<Database> {
  return new Proxy(builder, {
    get(target, property) {
      if (property === 'execute') {
        return async <T>(callback: Parameters<typeof target.execute<T>>[0]): Promise<T> => {
          for (let attempt = 1; ; attempt++) {
            try {
              return await target.execute(callback);
            } catch (error) {
              const code = retriedTransaction(error);
              if (!code || attempt > TRANSACTION_RETRIES) throw error;
              log?.warn({ code, attempt }, 'transaction cancelled by PostgreSQL (deadlock or serialization failure); running it again');
              await new Promise((resolve) => setTimeout(resolve, attempt * (5 + Math.random() * 20)));
            }
          }
        };
      }
      if (property === 'setIsolationLevel' || property === 'setAccessMode') {
        return (value: never) => retrying((target[property] as (v: never) => TransactionBuilder<Database>).call(target, value), log);
      }
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** Where the database layer reports a lost connection (the server's logger). */
export interface DbLog {
  warn(object: object, message: string): void;
}

export interface OpenOptions {
  databaseUrl: string | null;
  sqlitePath: string;
  poolSize?: number;
  /** 'transaction': a pooler (PgBouncer) hands each transaction any server connection, so no named statements. */
  pooler?: 'session' | 'transaction';
  /** How long a query waits for a pooled connection (or for a new one to open) before failing: an exhausted pool answers 503, not a hang. */
  connectTimeoutMs?: number;
  /**
   * How long another process's committed change may go unseen by the reads kept between requests
   * (changes.ts; PostgreSQL only: on SQLite it is SQLITE_CHECK_REUSE_MS). 0 (the default): none kept, every read runs its statement.
   */
  lookupCacheMs?: number;
  log?: DbLog;
}

export function openDatabase(options: OpenOptions): Db {
  if (options.databaseUrl) {
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
    });
    const lost = (err: Error) => options.log?.warn({ err }, 'database connection lost; it is replaced on the next query');
    // A connection terminated by the server (pg_terminate_backend, a restart, a failover) emits
    // 'error' on its client, in use or idle: unheard, that is an uncaught exception. The query it was
    // running rejects with the error (the request answers 503) and the pool drops the client.
    pool.on('connect', (client) => client.on('error', lost));
    // An idle client's error is also reported by the pool: the client's own listener logged it.
    pool.on('error', () => {});
    const window = options.lookupCacheMs ?? 0;
    // Behind a transaction pooler a LISTEN connection hears nothing reliably (its server connection serves others).
    const feed = new ChangeFeed(window > 0 && options.pooler !== 'transaction' ? postgresChanges(options.databaseUrl, window, options.log) : NO_CACHE);
    const kysely = new RetryingKysely({ dialect: new PostgresDialect({ pool: retryingReads(pool, options.pooler !== 'transaction', () => feed) }) }, options.log);
    registerFeed(kysely, feed);
    return { kysely, dialect: 'postgres', url: options.databaseUrl, feed, close: () => closeBoth(kysely, feed) };
  }
  let feed: ChangeFeed | null = null;
  const sqlite = nodeSqlite(options.sqlitePath, () => feed!);
  feed = new ChangeFeed((options.lookupCacheMs ?? 0) > 0 ? sqliteChanges(sqlite.dataVersion) : NO_CACHE);
  const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite.database }) });
  registerFeed(kysely, feed);
  return { kysely, dialect: 'sqlite', url: null, feed, close: () => closeBoth(kysely, feed) };
}

async function closeBoth(kysely: Kysely<Database>, feed: ChangeFeed): Promise<void> {
  await feed.close();
  await kysely.destroy();
}
