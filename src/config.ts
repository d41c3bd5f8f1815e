// Every CODEHOST_* setting, parsed, checked and typed in one place, before anything is touched.
// The README's configuration table mirrors this file.
import { accessSync, constants, existsSync, readFileSync, statSync } from 'node:fs';
import { isIP } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { parseEnv } from 'node:util';

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | null;
  /** Connections in this process's PostgreSQL pool. */
  databasePoolSize: number;
  /** How long a query waits for a PostgreSQL connection (a free one in the pool, or a new one) before answering 503. */
  databaseConnectTimeoutMs: number;
  adminToken: string | null;
  apiUrl: string;
  webUrl: string;
  testClock: boolean;
  demo: boolean;
  logLevel: string;
  /** Key for HMAC-signed URLs and for encrypting webhook secrets at rest. */
  secretKey: string | null;
  rateLimit: {
    authenticatedPerHour: number;
    anonymousPerHour: number;
    failedLoginsPerHour: number;
  };
  jobs: {
    /** Start the background worker in this process. */
    worker: boolean;
    /** How long a running job is leased before another worker may take it over. */
    leaseSeconds: number;
    pollMilliseconds: number;
  };
  notifications: {
    markReadThreshold: number;
    pollInterval: number;
  };
  webhooks: {
    retentionDays: number;
    timeoutMs: number;
    concurrency: number;
    ratePerSecond: number;
    retries: number;
    retryBaseSeconds: number;
    allowPrivateAddresses: boolean;
    responseBodyLimit: number;
  };
  migrations: {
    archiveDays: number;
    downloadUrlSeconds: number;
  };
  assistantMetricsSunset: string;
}

type Env = Record<string, string | undefined>;

/** A setting or an argument that cannot work; the message names it and says what to do. */
export class ConfigError extends Error {}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function int(env: Env, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer${max < Number.MAX_SAFE_INTEGER ? ` from ${min} to ${max}` : ` >= ${min}`}, got "${raw}"`);
  }
  return value;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(`${name} must be a boolean (1/0, true/false), got "${raw}"`);
}

function str(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  return raw === undefined || raw === '' ? fallback : raw;
}

/** An absolute http(s) URL without a trailing slash. */
function httpUrl(name: string, value: string): string {
  let url: URL | null = null;
  try {
    url = new URL(value);
  } catch {
    // reported below
  }
  if (!url || !['http:', 'https:'].includes(url.protocol)) {
    throw new ConfigError(`${name} must be an absolute http:// or https:// URL, got "${value}"`);
  }
  return value.replace(/\/+$/, '');
}

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

function host(env: Env): string {
  const value = str(env, 'CODEHOST_HOST', '127.0.0.1');
  if (!isIP(value) && !HOST_NAME.test(value)) {
    throw new ConfigError(`CODEHOST_HOST must be an IP address or a host name of this machine (127.0.0.1, 0.0.0.0, ::, localhost), got "${value}"`);
  }
  return value;
}

/** A PostgreSQL URL, checked for its form only (the connection is tried at start). Never echoes a password. */
function databaseUrl(env: Env): string | null {
  const value = env.DATABASE_URL;
  if (!value) return null;
  let url: URL | null = null;
  try {
    url = new URL(value);
  } catch {
    // reported below
  }
  if (!url || !['postgres:', 'postgresql:'].includes(url.protocol) || (!url.hostname && !url.searchParams.has('host'))) {
    const shown = url ? ` (got ${url.protocol}//${url.host}${url.pathname})` : '';
    throw new ConfigError(
      `DATABASE_URL must be a PostgreSQL URL like postgres://user:password@host:5432/database${shown}; unset it to use the embedded SQLite database`,
    );
  }
  return value;
}

function logLevel(env: Env): string {
  const value = str(env, 'CODEHOST_LOG_LEVEL', 'info');
  if (!(LOG_LEVELS as readonly string[]).includes(value)) {
    throw new ConfigError(`CODEHOST_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${value}"`);
  }
  return value;
}

function adminToken(env: Env): string | null {
  const value = env.CODEHOST_ADMIN_TOKEN || null;
  if (value && /\s/.test(value)) throw new ConfigError('CODEHOST_ADMIN_TOKEN must not contain spaces (it is sent as "Authorization: Bearer <token>")');
  return value;
}

export function loadConfig(env: Env = process.env): Config {
  const port = int(env, 'CODEHOST_PORT', 3000, 0, 65_535);
  const webUrl = httpUrl('CODEHOST_WEB_URL', str(env, 'CODEHOST_WEB_URL', `http://localhost:${port}`));
  const sunset = str(env, 'CODEHOST_ASSISTANT_METRICS_SUNSET', '2026-04-02');
  if (sunset !== 'never' && !/^\d{4}-\d{2}-\d{2}$/.test(sunset)) {
    throw new ConfigError(`CODEHOST_ASSISTANT_METRICS_SUNSET must be a date (YYYY-MM-DD) or "never", got "${sunset}"`);
  }
  return {
    port,
    host: host(env),
    dataDir: resolve(str(env, 'CODEHOST_DATA_DIR', './data')),
    databaseUrl: databaseUrl(env),
    databasePoolSize: int(env, 'CODEHOST_DATABASE_POOL_SIZE', 10, 1),
    databaseConnectTimeoutMs: int(env, 'CODEHOST_DATABASE_CONNECT_TIMEOUT_MS', 5_000, 100),
    adminToken: adminToken(env),
    apiUrl: httpUrl('CODEHOST_API_URL', str(env, 'CODEHOST_API_URL', `${webUrl}/api/v3`)),
    webUrl,
    testClock: bool(env, 'CODEHOST_TEST_CLOCK', false),
    demo: bool(env, 'CODEHOST_DEMO', true),
    logLevel: logLevel(env),
    secretKey: env.CODEHOST_SECRET_KEY || null,
    rateLimit: {
      authenticatedPerHour: int(env, 'CODEHOST_RATE_LIMIT', 5000, 1),
      anonymousPerHour: int(env, 'CODEHOST_RATE_LIMIT_ANONYMOUS', 60, 1),
      failedLoginsPerHour: int(env, 'CODEHOST_RATE_LIMIT_FAILED_LOGINS', 100, 1),
    },
    jobs: {
      worker: bool(env, 'CODEHOST_WORKER', true),
      leaseSeconds: int(env, 'CODEHOST_JOB_LEASE_SECONDS', 60, 1),
      pollMilliseconds: int(env, 'CODEHOST_JOB_POLL_MS', 250, 10),
    },
    notifications: {
      markReadThreshold: int(env, 'CODEHOST_NOTIFICATIONS_MARK_READ_THRESHOLD', 1000, 1),
      pollInterval: int(env, 'CODEHOST_NOTIFICATIONS_POLL_INTERVAL', 60, 1),
    },
    webhooks: {
      retentionDays: int(env, 'CODEHOST_WEBHOOK_RETENTION_DAYS', 3, 1),
      timeoutMs: int(env, 'CODEHOST_WEBHOOK_TIMEOUT_MS', 10_000, 1),
      concurrency: int(env, 'CODEHOST_WEBHOOK_CONCURRENCY', 32, 1),
      ratePerSecond: int(env, 'CODEHOST_WEBHOOK_RATE_PER_SECOND', 0, 0),
      retries: int(env, 'CODEHOST_WEBHOOK_RETRIES', 0, 0),
      retryBaseSeconds: int(env, 'CODEHOST_WEBHOOK_RETRY_BASE_SECONDS', 60, 1),
      allowPrivateAddresses: bool(env, 'CODEHOST_WEBHOOK_ALLOW_PRIVATE', true),
      responseBodyLimit: int(env, 'CODEHOST_WEBHOOK_RESPONSE_BODY_LIMIT', 65_536, 0),
    },
    migrations: {
      archiveDays: int(env, 'CODEHOST_MIGRATION_ARCHIVE_DAYS', 7, 1),
      downloadUrlSeconds: int(env, 'CODEHOST_MIGRATION_URL_SECONDS', 300, 1),
    },
    assistantMetricsSunset: sunset,
  };
}

/**
 * The data directory must be a directory this process can write, or be creatable: checked before
 * the database is opened, so a wrong setting leaves nothing behind.
 */
export function checkDataDir(config: Config): void {
  let path = config.dataDir;
  // The nearest part of the path that exists decides.
  while (!existsSync(path) && dirname(path) !== path) path = dirname(path);
  const missing = path !== config.dataDir;
  if (!statSync(path).isDirectory()) {
    throw new ConfigError(`CODEHOST_DATA_DIR: ${path} is not a directory; set CODEHOST_DATA_DIR to a directory (it is created if missing)`);
  }
  try {
    accessSync(path, constants.W_OK | constants.X_OK);
  } catch (error) {
    const readOnly = (error as NodeJS.ErrnoException).code === 'EROFS' ? ' (a read-only file system)' : '';
    throw new ConfigError(
      `CODEHOST_DATA_DIR: ${missing ? `${config.dataDir} cannot be created: ${path}` : config.dataDir} is not writable${readOnly}; ` +
        'set CODEHOST_DATA_DIR to a directory this user can write',
    );
  }
}

/**
 * Reads `.env` in `dir`, if there is one, into `env`: the variables it sets that `env` does not
 * already have (real environment variables win).
 */
export function readDotEnv(dir: string, env: Env = process.env): void {
  const file = join(dir, '.env');
  if (!existsSync(file)) return;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`.env: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)}); fix or remove the file`);
  }
  for (const [key, value] of Object.entries(parseEnv(text))) {
    if (!(key in env)) env[key] = value;
  }
}
