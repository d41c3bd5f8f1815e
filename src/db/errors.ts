// Which database errors mean "the database is unavailable now" (a 503 the client can retry) rather
// than a bug: the one place that knows the drivers' codes, so the platform's error handler does not.

/** A failure of the connection or of the database's capacity, not of the statement. */
const PG_UNAVAILABLE = new Set([
  '57P01', // admin_shutdown: the connection was terminated (pg_terminate_backend, a restart)
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up, shutting down, in recovery
  '57014', // query_canceled: statement_timeout
  '53300', // too_many_connections
  '53100', // disk_full
  '53200', // out_of_memory
  '40001', // serialization_failure: the same request may succeed again
  '40P01', // deadlock_detected
  '25006', // read_only_sql_transaction: a standby after a failover
]);

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND']);

/** pg's own errors for a lost connection or a pool that gave no connection in time (they have no code). */
const PG_CONNECTION_MESSAGES = [
  /^timeout exceeded when trying to connect/,
  /^Connection terminated/,
  /is not queryable/,
  /^terminating connection/,
];

/** SQLite's primary result codes (errcode & 0xff) that are the disk's or another writer's, not the statement's. */
const SQLITE_UNAVAILABLE: Record<number, string> = {
  5: 'the database is busy (another writer holds the lock)',
  6: 'a table is locked',
  8: 'the database file is read-only',
  10: 'a disk I/O error',
  13: 'the disk is full',
  14: 'the database file cannot be opened',
};

/** The connection a statement ran on was lost (terminated, reset, closed): the statement may not have run. */
export function connectionLost(error: unknown): boolean {
  const e = error as DriverError | null;
  if (!e || typeof e !== 'object') return false;
  const code = typeof e.code === 'string' ? e.code : '';
  const message = typeof e.message === 'string' ? e.message : '';
  return ['57P01', '57P02', 'ECONNRESET', 'EPIPE'].includes(code) || code.startsWith('08') || /^Connection terminated|is not queryable|^terminating connection/.test(message);
}

interface DriverError {
  code?: unknown;
  errcode?: unknown;
  message?: unknown;
  errors?: unknown[];
  cause?: unknown;
}

/**
 * Why the database is unavailable, when `error` says so (a connection lost or refused, the pool
 * exhausted, the disk full or read-only); null for every other error.
 */
export function databaseUnavailable(error: unknown, depth = 0): string | null {
  const e = error as DriverError | null;
  if (!e || typeof e !== 'object' || depth > 4) return null;
  const code = typeof e.code === 'string' ? e.code : '';
  const message = typeof e.message === 'string' ? e.message : '';
  if (PG_UNAVAILABLE.has(code) || code.startsWith('08')) return `PostgreSQL ${code}: ${message}`;
  if (NETWORK_CODES.has(code)) return `the database connection failed (${code})`;
  if (PG_CONNECTION_MESSAGES.some((pattern) => pattern.test(message))) return message;
  if (code === 'ERR_SQLITE_ERROR' && typeof e.errcode === 'number') {
    const reason = SQLITE_UNAVAILABLE[e.errcode & 0xff];
    if (reason) return `SQLite: ${reason} (${message})`;
  }
  for (const inner of e.errors ?? []) {
    const reason = databaseUnavailable(inner, depth + 1);
    if (reason) return reason;
  }
  return databaseUnavailable(e.cause, depth + 1);
}
