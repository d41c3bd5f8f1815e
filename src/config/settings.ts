// The settings read from an environment (readSettings), and the CODEHOST_* names in one that no
// setting reads (unknownNames). The README's configuration table mirrors readSettings.
import { resolve } from 'node:path';
import {
  allowNetworks, bearerToken, bool, corsOrigins, databasePooler, databaseUrl, host, httpUrl, int, isLoopbackHost, isLoopbackUrl,
  listeningAddress, logLevel, mode, str, timeouts, trustProxy,
} from './parse.ts';
import { ConfigError, type Config, type Env } from './types.ts';

/** Every setting read from `env`, checked and typed; the first that cannot work throws. */
export function readSettings(env: Env): Config {
  const port = int(env, 'CODEHOST_PORT', 3000, 0, 65_535);
  const listenHost = host(env);
  const webSet = Boolean(env.CODEHOST_WEB_URL);
  const apiSet = Boolean(env.CODEHOST_API_URL);
  const webUrl = httpUrl('CODEHOST_WEB_URL', str(env, 'CODEHOST_WEB_URL', listeningAddress(listenHost, port)));
  const apiUrl = httpUrl('CODEHOST_API_URL', str(env, 'CODEHOST_API_URL', `${webUrl}/api/v3`));
  const derived: Config['derived'] = [];
  /** A setting's value, or when unset the default it follows (recorded for the banner). */
  const follow = <T>(name: string, read: (fallback: T) => T, fallback: T, from: string): T => {
    if (env[name] !== undefined && env[name] !== '') return read(fallback);
    derived.push({ name, value: typeof fallback === 'boolean' ? (fallback ? '1' : '0') : String(fallback), from });
    return fallback;
  };
  const proxy = trustProxy(env);
  const publicLoopback = isLoopbackUrl(webUrl) && isLoopbackUrl(apiUrl);
  // Who else can reach this server: anyone on a network it listens on, whoever a trusted proxy
  // forwards, whoever uses a public URL (a TLS front on this machine forwards them to loopback).
  const reachedBy = !isLoopbackHost(listenHost) ? `CODEHOST_HOST=${listenHost} listens beyond loopback`
    : proxy !== false ? `CODEHOST_TRUST_PROXY=${str(env, 'CODEHOST_TRUST_PROXY', '').trim()}: a proxy forwards to it`
    // On a loopback host an unset URL is loopback (it follows the address, the API URL the web URL).
    : !isLoopbackUrl(webUrl) ? `CODEHOST_WEB_URL=${webUrl} is not loopback`
    : !isLoopbackUrl(apiUrl) ? `CODEHOST_API_URL=${apiUrl} is not loopback`
    : null;
  const serverMode = mode(env, reachedBy);
  if (!env.CODEHOST_MODE) {
    derived.push({ name: 'CODEHOST_MODE', value: serverMode, from: reachedBy ?? `CODEHOST_HOST=${listenHost} is loopback, no proxy is trusted, the URLs are loopback` });
  }
  const laptop = serverMode === 'laptop';
  const testClock = bool(env, 'CODEHOST_TEST_CLOCK', false);
  // Private and loopback webhook targets: only a laptop server, reached by no proxy, whose public
  // URLs are loopback, may deliver to the receivers beside it (refusals() holds the rule when set).
  const allowPrivate = follow(
    'CODEHOST_WEBHOOK_ALLOW_PRIVATE',
    (fallback) => bool(env, 'CODEHOST_WEBHOOK_ALLOW_PRIVATE', fallback),
    laptop && proxy === false && publicLoopback,
    !laptop ? 'production mode' : proxy !== false ? 'CODEHOST_TRUST_PROXY is set' : !publicLoopback ? 'the public URLs are not loopback' : 'laptop mode, loopback URLs, no proxy',
  );
  // The word header names carry where the spec writes `Vendor` (src/platform/vendor.ts): a letter, then letters and digits.
  const vendorWord = str(env, 'CODEHOST_VENDOR_WORD', 'Vendor');
  if (!/^[A-Za-z][A-Za-z0-9]{0,31}$/.test(vendorWord)) {
    throw new ConfigError(`CODEHOST_VENDOR_WORD must be a word of letters and digits that starts with a letter (as in X-Vendor-Event), got "${vendorWord}"`);
  }
  const sunset = str(env, 'CODEHOST_ASSISTANT_METRICS_SUNSET', '2026-04-02');
  if (sunset !== 'never' && !/^\d{4}-\d{2}-\d{2}$/.test(sunset)) {
    throw new ConfigError(`CODEHOST_ASSISTANT_METRICS_SUNSET must be a date (YYYY-MM-DD) or "never", got "${sunset}"`);
  }
  return {
    mode: serverMode,
    reachedBy,
    derived,
    port,
    host: listenHost,
    dataDir: resolve(str(env, 'CODEHOST_DATA_DIR', './data')),
    databaseUrl: databaseUrl(env),
    databasePoolSize: int(env, 'CODEHOST_DATABASE_POOL_SIZE', 10, 1),
    databasePooler: databasePooler(env),
    databaseConnectTimeoutMs: int(env, 'CODEHOST_DATABASE_CONNECT_TIMEOUT_MS', 5_000, 100),
    adminToken: bearerToken(env, 'CODEHOST_ADMIN_TOKEN'),
    apiUrl,
    webUrl,
    urlsFollowAddress: { api: !apiSet, web: !webSet },
    corsOrigins: corsOrigins(env),
    vendorWord,
    testClock,
    testMode: follow('CODEHOST_TEST_MODE', (fallback) => bool(env, 'CODEHOST_TEST_MODE', fallback), testClock, `CODEHOST_TEST_CLOCK=${testClock ? 1 : 0}`),
    demo: follow('CODEHOST_DEMO', (fallback) => bool(env, 'CODEHOST_DEMO', fallback), laptop, `${serverMode} mode`),
    logLevel: logLevel(env),
    metricsToken: bearerToken(env, 'CODEHOST_METRICS_TOKEN'),
    secretKey: env.CODEHOST_SECRET_KEY || null,
    trustProxy: proxy,
    timeouts: timeouts(env),
    rateLimit: {
      authenticatedPerHour: int(env, 'CODEHOST_RATE_LIMIT', 5000, 1),
      anonymousPerHour: int(env, 'CODEHOST_RATE_LIMIT_ANONYMOUS', 60, 1),
      failedLoginsPerHour: int(env, 'CODEHOST_RATE_LIMIT_FAILED_LOGINS', 100, 1),
      block: int(env, 'CODEHOST_RATE_LIMIT_BLOCK', 50, 1),
      contentPerMinute: int(env, 'CODEHOST_RATE_LIMIT_CONTENT_PER_MINUTE', 80, 1),
      contentPerHour: int(env, 'CODEHOST_RATE_LIMIT_CONTENT_PER_HOUR', 500, 1),
    },
    lookupCacheMs: int(env, 'CODEHOST_LOOKUP_CACHE_MS', 1_000, 0),
    jobs: {
      worker: bool(env, 'CODEHOST_WORKER', true),
      leaseSeconds: int(env, 'CODEHOST_JOB_LEASE_SECONDS', 60, 1),
      pollMilliseconds: int(env, 'CODEHOST_JOB_POLL_MS', 250, 10),
    },
    notifications: {
      markReadThreshold: int(env, 'CODEHOST_NOTIFICATIONS_MARK_READ_THRESHOLD', 1000, 1),
      markReadBatch: int(env, 'CODEHOST_NOTIFICATIONS_MARK_READ_BATCH', 0, 0, 100_000),
      pollInterval: int(env, 'CODEHOST_NOTIFICATIONS_POLL_INTERVAL', 60, 1),
    },
    webhooks: {
      retentionDays: int(env, 'CODEHOST_WEBHOOK_RETENTION_DAYS', 3, 1),
      timeoutMs: int(env, 'CODEHOST_WEBHOOK_TIMEOUT_MS', 10_000, 1),
      concurrency: int(env, 'CODEHOST_WEBHOOK_CONCURRENCY', 32, 1),
      ratePerSecond: int(env, 'CODEHOST_WEBHOOK_RATE_PER_SECOND', 0, 0),
      retries: int(env, 'CODEHOST_WEBHOOK_RETRIES', 0, 0),
      retryBaseSeconds: int(env, 'CODEHOST_WEBHOOK_RETRY_BASE_SECONDS', 60, 1),
      allowPrivateAddresses: allowPrivate,
      allowNetworks: allowNetworks(env),
      responseBodyLimit: int(env, 'CODEHOST_WEBHOOK_RESPONSE_BODY_LIMIT', 65_536, 0),
    },
    migrations: {
      archiveDays: int(env, 'CODEHOST_MIGRATION_ARCHIVE_DAYS', 7, 1),
      downloadUrlSeconds: int(env, 'CODEHOST_MIGRATION_URL_SECONDS', 300, 1),
      exportsPerUser: int(env, 'CODEHOST_MIGRATION_EXPORTS_PER_USER', 5, 1),
      archivesPerUser: int(env, 'CODEHOST_MIGRATION_ARCHIVES_PER_USER', 20, 1),
      archiveBytesPerUser: int(env, 'CODEHOST_MIGRATION_ARCHIVE_BYTES_PER_USER', 10 * 1024 ** 3, 1),
    },
    assistantMetricsSunset: sunset,
    journal: {
      enabled: bool(env, 'CODEHOST_JOURNAL', serverMode !== 'production'),
      entries: int(env, 'CODEHOST_JOURNAL_ENTRIES', 1_000, 1, 100_000),
    },
    console: bool(env, 'CODEHOST_CONSOLE', serverMode !== 'production'),
  };
}

/**
 * The data directory must be a directory this process can write, or be creatable: checked before
 * the database is opened, so a wrong setting leaves nothing behind.

// --- Settings nobody reads ------------------------------------------------------------------------

/**
 * CODEHOST_* variables that are not server settings but are known: `CODEHOST_URL` (the server's
 * address for `codehost admin` and the docs' shell examples) and the test tools' variables.
 */
const TOOL_VARIABLES = ['CODEHOST_URL', 'CODEHOST_NEW_SECRET_KEY', 'CODEHOST_TEST_ONLY', 'CODEHOST_TEST_LOG_LEVEL', 'CODEHOST_TEST_PG_BIN', 'CODEHOST_TEST_WALKTHROUGH_OUTPUT'];

/** Every CODEHOST_* name codehost knows: the ones readSettings reads (recorded as it reads them), and the tools'. */
function knownNames(): string[] {
  const read = new Set<string>(TOOL_VARIABLES);
  readSettings(new Proxy({}, {
    get: (_target, name) => {
      if (typeof name === 'string') read.add(name);
      return undefined;
    },
    has: (_target, name) => {
      if (typeof name === 'string') read.add(name);
      return false;
    },
  }));
  return [...read].filter((name) => name.startsWith('CODEHOST_'));
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** Each CODEHOST_* variable in `env` that no setting reads, with the nearest known name. */
export function unknownNames(env: Env): { name: string; nearest: string }[] {
  const names = Object.keys(env).filter((name) => name.startsWith('CODEHOST_'));
  if (!names.length) return [];
  const known = knownNames();
  return names.filter((name) => !known.includes(name)).sort().map((name) => ({
    name,
    nearest: known.reduce((best, candidate) => (editDistance(name, candidate) < editDistance(name, best) ? candidate : best)),
  }));
}

