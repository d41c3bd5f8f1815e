// Every CODEHOST_* setting, parsed and typed in one place. The README's configuration table mirrors this file.
import { resolve } from 'node:path';

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | null;
  /** Connections in this process's PostgreSQL pool. */
  databasePoolSize: number;
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

export class ConfigError extends Error {}

function int(env: Env, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new ConfigError(`${name} must be an integer >= ${min}, got "${raw}"`);
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

export function loadConfig(env: Env = process.env): Config {
  const port = int(env, 'CODEHOST_PORT', 3000);
  const host = str(env, 'CODEHOST_HOST', '127.0.0.1');
  const webUrl = str(env, 'CODEHOST_WEB_URL', `http://localhost:${port}`).replace(/\/+$/, '');
  const sunset = str(env, 'CODEHOST_ASSISTANT_METRICS_SUNSET', '2026-04-02');
  if (sunset !== 'never' && !/^\d{4}-\d{2}-\d{2}$/.test(sunset)) {
    throw new ConfigError(`CODEHOST_ASSISTANT_METRICS_SUNSET must be a date (YYYY-MM-DD) or "never", got "${sunset}"`);
  }
  return {
    port,
    host,
    dataDir: resolve(str(env, 'CODEHOST_DATA_DIR', './data')),
    databaseUrl: env.DATABASE_URL || null,
    databasePoolSize: int(env, 'CODEHOST_DATABASE_POOL_SIZE', 10, 1),
    adminToken: env.CODEHOST_ADMIN_TOKEN || null,
    apiUrl: str(env, 'CODEHOST_API_URL', `${webUrl}/api/v3`).replace(/\/+$/, ''),
    webUrl,
    testClock: bool(env, 'CODEHOST_TEST_CLOCK', false),
    demo: bool(env, 'CODEHOST_DEMO', true),
    logLevel: str(env, 'CODEHOST_LOG_LEVEL', 'info'),
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
