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

/** Whether a driver's error code is the network's (the database could not be reached or the connection broke). */
export function networkErrorCode(code: string): boolean {
  return NETWORK_CODES.has(code);
}

/**
 * PostgreSQL's code when it cancelled a transaction that is meant to be run again (a deadlock, a
 * serialization failure): nothing of it committed. Null for every other error.
 */
export function retriedTransaction(error: unknown): '40P01' | '40001' | null {
  const code = (error as DriverError | null)?.code;
  return code === '40P01' || code === '40001' ? code : null;
}

/** pg's own errors for a lost connection (they have no code). */
const PG_LOST_MESSAGES = [/^Connection terminated/, /is not queryable/, /^terminating connection/];

/** pg's own errors for a lost connection or a pool that gave no connection in time. */
const PG_CONNECTION_MESSAGES = [
  /^timeout exceeded when trying to connect/,
  ...PG_LOST_MESSAGES,
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
  return ['57P01', '57P02', 'ECONNRESET', 'EPIPE'].includes(code) || code.startsWith('08') || PG_LOST_MESSAGES.some((pattern) => pattern.test(message));
}

interface DriverError {
  code?: unknown;
  syscall?: unknown;
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
  // Where it came from, not only its code: a driver's socket failing is the system's answer to a
  // call on it (`syscall`: connect, read, write, getaddrinfo). Node's HTTP server gives a client that
  // dropped its connection mid-body the same ECONNRESET ('aborted', no syscall): that is the client's.
  if (NETWORK_CODES.has(code) && typeof e.syscall === 'string') return `the database connection failed (${code})`;
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

/** A statement the database refused because of a value the client sent: the client's error, not the server's. */
export interface DataError {
  status: 422;
  /** What the client may be told: no SQL, no path, no value. */
  message: string;
  /** The driver's code, for the log. */
  code: string;
}

/** PostgreSQL classes 22 (data exception) and 23 (integrity constraint), and 54000 (a value too large to index). */
function pgDataError(code: string): string | null {
  if (code === '23505') return 'A value in the request is already taken';
  if (code === '23503') return 'The request names something that does not exist';
  if (code.startsWith('23')) return 'A value in the request is missing or not allowed';
  if (code === '22021' || code === '22P05') return 'A value in the request holds a character that cannot be stored';
  if (code === '22003' || code === '2201W' || code === '2201X' || code === '22008') return 'A number or date in the request is out of range';
  if (code === '22001' || code === '54000') return 'A value in the request is too long';
  if (code.startsWith('22')) return 'A value in the request is not valid for its field';
  return null;
}

/** SQLite's result codes (primary: errcode & 0xff) for a value the statement could not take. */
const SQLITE_DATA: Record<number, string> = {
  18: 'A value in the request is too long', // SQLITE_TOOBIG
  19: 'A value in the request is missing, taken or not allowed', // SQLITE_CONSTRAINT (unique, not null, foreign key, check)
  20: 'A value in the request is not valid for its field', // SQLITE_MISMATCH: datatype mismatch
};

/**
 * The backstop behind the edge validation: an error the database raised because of a value (out
 * of range, malformed, a NUL, a constraint the service did not check first) is the client's 422,
 * never a 500. Null for every other error. The message never quotes the statement or the value.
 */
export function classifyDataError(error: unknown, depth = 0): DataError | null {
  const e = error as DriverError | null;
  if (!e || typeof e !== 'object' || depth > 4) return null;
  const code = typeof e.code === 'string' ? e.code : '';
  if (/^[0-9A-Z]{5}$/.test(code)) {
    const message = pgDataError(code);
    if (message) return { status: 422, message, code };
  }
  if (code === 'ERR_SQLITE_ERROR' && typeof e.errcode === 'number') {
    const message = SQLITE_DATA[e.errcode & 0xff];
    if (message) return { status: 422, message, code: `SQLITE_${e.errcode}` };
  }
  return classifyDataError(e.cause, depth + 1);
}
