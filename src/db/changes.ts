// What this process knows of the database's changes, for reads kept between requests (`cachedRead`):
// a token's lookup, a poll's validators. An entry is answered only while nothing has changed since it
// was read, as far as this process can know:
//   - this process's own writes move `generation` as soon as they commit (the drivers in index.ts
//     report every statement), before the request that wrote answers: 0 staleness here;
//   - SQLite: another connection's commit (the CLI, an export thread) moves `PRAGMA data_version`,
//     read before a cached answer unless it was read less than SQLITE_CHECK_REUSE_MS (1 ms) ago:
//     another connection's change is unseen here for at most that long;
//   - PostgreSQL: another process's commit sends a NOTIFY (a statement trigger on every table a
//     cached read can depend on, migration 0021), heard on a LISTEN connection of this process. A
//     heartbeat this process notifies itself every quarter of the window proves the connection
//     hears: PostgreSQL delivers notifications in commit order, so once a heartbeat sent at t is
//     heard, every change committed before t has been. Cached reads are answered only while the
//     newest heard heartbeat was sent less than `windowMs` ago: another process's change is unseen
//     here for at most that long (CODEHOST_LOOKUP_CACHE_MS). No LISTEN (behind a transaction
//     pooler, a connection lost): no cached answers, every read runs its statement.
import type { DialectAdapter } from 'kysely';
import pg from 'pg';
import { onlyReads, type DbLog, type Executor } from './index.ts';

/** The channel the triggers of migration 0021 notify (their payload: the table). */
export const CHANGES_CHANNEL = 'codehost_changes';

/**
 * Tables whose writes no cached read depends on: bookkeeping written many times a second (job
 * queues, rate-limit counters, webhook deliveries, the activity outbox's progress, an export's
 * progress). A write to one of them moves no generation and sends no notification.
 */
export const UNCACHED_TABLES: ReadonlySet<string> = new Set([
  'jobs', 'rate_limits', 'webhook_event_payloads', 'webhook_messages', 'webhook_deliveries',
  'activity_outbox', 'activity_consumptions', 'user_migrations', 'user_migration_repositories', 'git_data_removals',
]);

const WRITE_TARGET = /^\s*(?:insert\s+into|update|delete\s+from)\s+(?:"?main"?\.)?"?([a-z_]+)"?/i;
const NO_WRITE = /^\s*(?:begin|start\s+transaction|savepoint|release)\b/i;

const SEVERAL = /;\s*\S/;

/**
 * Whether a statement may have changed something a cached read depends on: any write but one to
 * `UNCACHED_TABLES`, and any text of several statements (whatever its first one is).
 */
export function mayChangeCached(text: string): boolean {
  if (SEVERAL.test(text)) return true;
  if (onlyReads(text) || NO_WRITE.test(text)) return false;
  const target = WRITE_TARGET.exec(text)?.[1];
  return target === undefined || !UNCACHED_TABLES.has(target.toLowerCase());
}

interface Entry {
  generation: number;
  value: unknown;
  weight: number;
}

/** The kept reads of one kind: by key, oldest first, with the sum of their weights. */
interface Kept {
  entries: Map<unknown, Entry>;
  weight: number;
}

export class ChangeFeed {
  /** Moves whenever something a cached read depends on may have changed. */
  generation = 0;
  /**
   * Moves whenever this process put a whole other world in place (the test double's reset or
   * snapshot restore, src/testing/support.ts): the stored versions (repositories', inboxes') go back
   * with the rows and climb again through other changes, so what is kept or tagged by version
   * (pages, repositories' JSON, the notifications' entity tags) is kept and tagged per world.
   */
  world = 0;
  /** The kept reads, by the name of their kind (`cachedRead`), then by key. */
  readonly #caches = new Map<string, Kept>();
  readonly #source: ChangeSource;

  constructor(source: ChangeSource) {
    this.#source = source;
  }

  /**
   * A statement ran on one of this process's connections; `inTransaction`: whether a transaction is
   * still open there after it. A write in a transaction marks the connection `pending`, and the
   * generation moves when the transaction ends (committed or not): its writes are seen from then on.
   */
  ran(text: string, inTransaction: boolean, connection: { pending: boolean }): void {
    // Nothing is kept (a window of 0, the CLI, an export thread): nothing to throw away.
    if (this.#source === NO_CACHE) return;
    if (mayChangeCached(text)) connection.pending = true;
    if (connection.pending && !inTransaction) {
      connection.pending = false;
      this.generation++;
    }
  }

  /** Whatever happened (a reset, a lost connection): no entry read before now is answered. */
  moved(): void {
    this.generation++;
  }

  /** A whole other world is in place (see `world`). */
  replaced(): void {
    this.world++;
    this.generation++;
  }

  /** Whether a cached read may answer now (on SQLite this also hears other connections' commits). */
  fresh(): boolean {
    return this.#source.fresh(this);
  }

  cache(name: string): Kept {
    let cache = this.#caches.get(name);
    if (!cache) this.#caches.set(name, (cache = { entries: new Map(), weight: 0 }));
    return cache;
  }

  close(): Promise<void> {
    return this.#source.close();
  }
}

export interface ChangeSource {
  fresh(feed: ChangeFeed): boolean;
  close(): Promise<void>;
}

/** Caches off (CODEHOST_LOOKUP_CACHE_MS=0, or PostgreSQL behind a transaction pooler). */
export const NO_CACHE: ChangeSource = { fresh: () => false, close: async () => {} };

/**
 * How long one reading of SQLite's `PRAGMA data_version` answers for the kept reads after it. Each
 * reading is a statement with its own read lock (measured: about a third of a poll's CPU when every
 * kept read made its own); reused for this long, another connection's commit is seen within it.
 */
export const SQLITE_CHECK_REUSE_MS = 1;

/**
 * SQLite: other connections' commits, from `PRAGMA data_version` (it moves when another connection
 * commits), read at most once per SQLITE_CHECK_REUSE_MS (`clock` in milliseconds).
 */
export function sqliteChanges(dataVersion: () => number, clock: () => number = performance.now.bind(performance)): ChangeSource {
  let seen = dataVersion();
  let checkedAt = -Infinity;
  return {
    fresh(feed) {
      const at = clock();
      if (at - checkedAt < SQLITE_CHECK_REUSE_MS) return true;
      let now: number;
      try {
        now = dataVersion();
      } catch {
        return false; // closed: nothing is answered from memory
      }
      checkedAt = at;
      if (now !== seen) {
        seen = now;
        feed.moved();
      }
      return true;
    },
    close: async () => {},
  };
}

/** PostgreSQL: other processes' commits, heard by LISTEN, and the heartbeat that bounds what is unheard. */
export function postgresChanges(url: string, windowMs: number, log?: DbLog): ChangeSource {
  const id = `${process.pid}.${Math.random().toString(36).slice(2, 10)}`;
  const heartbeat = `hb:${id}:`;
  let client: pg.Client | null = null;
  let starting = false;
  let closed = false;
  let timer: NodeJS.Timeout | null = null;
  let retry: NodeJS.Timeout | null = null;
  let heardSentAt = -Infinity;
  let sequence = 0;
  const sent = new Map<number, number>();
  let feedOfSource: ChangeFeed | null = null;

  /** `lost` failed (an error, its end, a heartbeat refused); nothing if it is not the connection in use any more. */
  const lose = (lost: pg.Client, err: unknown) => {
    if (client !== lost) return;
    log?.warn({ err }, 'the change feed lost its LISTEN connection; cached reads are off until it is back');
    client = null;
    heardSentAt = -Infinity;
    sent.clear();
    feedOfSource?.moved();
    if (timer) clearInterval(timer);
    timer = null;
    lost.end().catch(() => {});
    if (!closed) retry = setTimeout(() => start(), Math.max(windowMs, 1_000)).unref();
  };

  const beat = () => {
    const on = client;
    if (!on) return;
    // Unheard for a long while (a connection that hangs): start again rather than keep counting.
    if (sent.size >= 1_000) return lose(on, new Error('the change feed heard none of its last 1,000 heartbeats'));
    const n = ++sequence;
    sent.set(n, Date.now());
    // On the LISTEN connection itself: a session hears its own notifications, after the others committed before.
    on.query('select pg_notify($1, $2)', [CHANGES_CHANNEL, `${heartbeat}${n}`]).catch((err) => lose(on, err));
  };

  const start = () => {
    if (starting || client || closed) return;
    starting = true;
    retry = null;
    // Named, so that an operator sees it in pg_stat_activity: one per process that keeps reads.
    const connecting = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000, application_name: 'codehost change feed' });
    connecting.on('error', (err) => lose(connecting, err));
    connecting.on('end', () => lose(connecting, new Error('LISTEN connection ended')));
    connecting.on('notification', (message) => {
      if (client !== connecting || message.channel !== CHANGES_CHANNEL) return;
      const payload = message.payload ?? '';
      if (payload.startsWith(heartbeat)) {
        const n = Number(payload.slice(heartbeat.length));
        const at = sent.get(n);
        if (at !== undefined) {
          for (const key of sent.keys()) if (key <= n) sent.delete(key);
          if (at > heardSentAt) heardSentAt = at;
        }
      } else if (!payload.startsWith('hb:')) {
        feedOfSource?.moved();
      }
    });
    connecting
      .connect()
      .then(() => connecting.query(`listen ${CHANGES_CHANNEL}`))
      .then(() => {
        starting = false;
        if (closed) return void connecting.end().catch(() => {});
        client = connecting;
        // Nothing was heard before the LISTEN: what was read before is not answered.
        feedOfSource?.moved();
        timer = setInterval(beat, Math.min(Math.max(Math.floor(windowMs / 4), 10), 60_000)).unref();
        beat();
      })
      .catch((err) => {
        starting = false;
        connecting.end().catch(() => {});
        log?.warn({ err }, 'the change feed could not LISTEN; cached reads are off until it can');
        if (!closed) retry = setTimeout(() => start(), Math.max(windowMs, 1_000)).unref();
      });
  };

  return {
    fresh(feed) {
      feedOfSource = feed;
      if (!client) {
        if (!retry) start();
        return false;
      }
      return Date.now() - heardSentAt <= windowMs;
    },
    async close() {
      closed = true;
      if (timer) clearInterval(timer);
      if (retry) clearTimeout(retry);
      const open = client;
      client = null;
      await open?.end().catch(() => {});
    },
  };
}

const FEED = Symbol('codehost change feed');
type WithFeed = DialectAdapter & { [FEED]?: ChangeFeed };

/** Gives a database its feed (openDatabase), on its dialect adapter: its transactions share the adapter, so they find it too. */
export function registerFeed(db: Executor, feed: ChangeFeed): void {
  (db.getExecutor().adapter as WithFeed)[FEED] = feed;
}

/** The feed of a database, or of one of its transactions. */
export function feedOf(db: Executor): ChangeFeed | undefined {
  return (db.getExecutor().adapter as WithFeed)[FEED];
}

/**
 * A read kept per database and key, answered again while the feed says nothing changed since it
 * was read (see above). Never inside a transaction (it may have written what the read depends on);
 * an answer that is `undefined` is not kept (an unknown token is not remembered). The value is
 * shared between requests: callers must not change it. Bounded per database: the weights of the
 * kept values (1 each, unless `weight` says how many parts one holds) add up to at most `limit`,
 * the oldest going first; a value heavier than that is not kept.
 */
export function cachedRead<K, V>(name: string, bound: { limit?: number; weight?: (value: V) => number } = {}) {
  const limit = bound.limit ?? 10_000;
  const weigh = bound.weight ?? (() => 1);
  return async (db: Executor, key: K, read: () => Promise<V>): Promise<V> => {
    const feed = db.isTransaction ? undefined : feedOf(db);
    if (!feed || !feed.fresh()) return read();
    const kept = feed.cache(name);
    const generation = feed.generation;
    const hit = kept.entries.get(key);
    if (hit && hit.generation === generation) return hit.value as V;
    const value = await read();
    // Something changed while it was read: the value may be older than the change.
    if (value === undefined || feed.generation !== generation) return value;
    const weight = weigh(value);
    if (weight > limit) return value;
    if (hit) forget(kept, key, hit);
    for (const [oldest, entry] of kept.entries) {
      if (kept.weight + weight <= limit) break;
      forget(kept, oldest, entry);
    }
    kept.entries.set(key, { generation, value, weight });
    kept.weight += weight;
    return value;
  };
}

/**
 * A kept read of the one row a reusable query finds by a unique key (a token by its hash, a
 * repository by its name): the row, or `undefined` (not kept). `key` names the row among the others
 * this query finds; the query runs with `params` only when the row is read.
 */
export function cachedRow<P extends unknown[], R>(name: string, query: (db: Executor, ...params: P) => Promise<R[]>) {
  const read = cachedRead<string, R | undefined>(name);
  // Not async itself: `read` is, so the caller waits on one promise, not two.
  return (db: Executor, key: string, ...params: P): Promise<R | undefined> => read(db, key, async () => (await query(db, ...params))[0]);
}

function forget(kept: Kept, key: unknown, entry: Entry): void {
  kept.entries.delete(key);
  kept.weight -= entry.weight;
}
