// Every CODEHOST_* setting, parsed, checked and typed in one place, before anything is touched.
// The README's configuration table mirrors this file.
import { accessSync, constants, existsSync, readFileSync, statSync } from 'node:fs';
import { BlockList, isIP } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { parseEnv } from 'node:util';

export interface Config {
  /**
   * `laptop` (loopback, demo data, generated secrets, test support) or `production` (a server others
   * use). `CODEHOST_MODE`; unset, `production` when others can reach the server (`reachedBy`).
   */
  mode: 'laptop' | 'production';
  /**
   * What lets others reach this server, or null (loopback only): it listens beyond loopback, it
   * trusts a proxy in front, or a public URL is not loopback (the first of these, as the banner says
   * it). Production mode is the default when it is set.
   */
  reachedBy: string | null;
  /**
   * The settings this process derived rather than read, each with its value and what it followed
   * (the start banner prints them): `CODEHOST_MODE`, `CODEHOST_DEMO`, `CODEHOST_TEST_MODE`,
   * `CODEHOST_WEBHOOK_ALLOW_PRIVATE`.
   */
  derived: { name: string; value: string; from: string }[];
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | null;
  /** Connections in this process's PostgreSQL pool. */
  databasePoolSize: number;
  /** CODEHOST_DATABASE_POOLER: 'transaction' behind PgBouncer in transaction mode (no named statements). */
  databasePooler: 'session' | 'transaction';
  /** How long a query waits for a PostgreSQL connection (a free one in the pool, or a new one) before answering 503. */
  databaseConnectTimeoutMs: number;
  adminToken: string | null;
  /** Base of every `url` field, `Link` header and the OpenAPI `servers` entry (see `urlsFollowAddress`). */
  apiUrl: string;
  /** Base of every `html_url` field. */
  webUrl: string;
  /**
   * Which of the two bases were left unset and so follow the address the server listens on (and
   * prints): `apiUrl`/`webUrl` are that address as far as the settings tell it; with port 0 the real
   * port is known only once listening (`publicUrls`).
   */
  urlsFollowAddress: { api: boolean; web: boolean };
  /** Origins a browser may call the API from: `*` (any, no credentials mode) or a list. */
  corsOrigins: '*' | string[];
  testClock: boolean;
  /** The test-only admin routes (fault injection); on by default with the test clock. */
  testMode: boolean;
  demo: boolean;
  logLevel: string;
  /** `GET /metrics` asks for it as a bearer token when set; unset, the metrics are open. */
  metricsToken: string | null;
  /** Key for HMAC-signed URLs and for encrypting webhook secrets at rest. */
  secretKey: string | null;
  /**
   * Which proxies in front may name the client in X-Forwarded-For: none (`false`, the socket's
   * address is the client's), a hop count, or the proxies' addresses and CIDR ranges.
   */
  trustProxy: false | number | string[];
  /** Slow clients: how long a request's headers, a whole request, and an idle keep-alive connection may take. */
  timeouts: {
    headersMs: number;
    requestMs: number;
    keepAliveMs: number;
  };
  rateLimit: {
    authenticatedPerHour: number;
    anonymousPerHour: number;
    failedLoginsPerHour: number;
    /** The most requests of a budget one process leases from the database at once. */
    block: number;
  };
  /**
   * How long a process trusts what it read of state another process may change: an app by its
   * client id (Basic credentials), an address's failed-login count, and on PostgreSQL the reads kept
   * between requests (src/db/changes.ts: token lookups, poll validators), which another process's
   * change reaches within this window. Changes made by this process take effect at once; 0 keeps nothing.
   */
  lookupCacheMs: number;
  jobs: {
    /** Start the background worker in this process. */
    worker: boolean;
    /** How long a running job is leased before another worker may take it over. */
    leaseSeconds: number;
    pollMilliseconds: number;
  };
  notifications: {
    markReadThreshold: number;
    /** Threads the background mark-as-read marks per transaction; 0: the database's default. */
    markReadBatch: number;
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
    /**
     * Private and loopback networks deliveries may reach whatever `allowPrivateAddresses` says
     * (`address/prefix`, inside LOOPBACK_NETWORKS or PRIVATE_NETWORKS): a company's receivers.
     */
    allowNetworks: string[];
    responseBodyLimit: number;
  };
  migrations: {
    archiveDays: number;
    downloadUrlSeconds: number;
    /** Exports one user may have pending or exporting at once. */
    exportsPerUser: number;
    /** Finished archives one user may keep (exports in progress count too), and their bytes. */
    archivesPerUser: number;
    archiveBytesPerUser: number;
  };
  assistantMetricsSunset: string;
  /** The request journal (GET /_admin/requests): on outside production mode unless turned off; entries kept in memory. */
  journal: { enabled: boolean; entries: number };
  /** The console page at /_console (src/console): served outside production mode unless turned off. */
  console: boolean;
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

function databasePooler(env: Env): 'session' | 'transaction' {
  const value = str(env, 'CODEHOST_DATABASE_POOLER', 'session');
  if (value !== 'session' && value !== 'transaction') throw new ConfigError(`CODEHOST_DATABASE_POOLER must be "session" or "transaction", got "${value}"`);
  return value;
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

/** Whether the server listens on a loopback address only: `localhost`, 127.0.0.0/8 or ::1. */
function isLoopbackHost(value: string): boolean {
  const lower = value.toLowerCase();
  return lower === 'localhost' || (isIP(lower) === 4 && lower.startsWith('127.')) || (isIP(lower) === 6 && /^(0{0,4}:){2,7}0{0,3}1$/.test(lower));
}

export const MODES = ['laptop', 'production'] as const;

function mode(env: Env, reachedBy: string | null): Config['mode'] {
  const value = str(env, 'CODEHOST_MODE', reachedBy ? 'production' : 'laptop');
  if (!(MODES as readonly string[]).includes(value)) {
    throw new ConfigError(`CODEHOST_MODE must be laptop or production, got "${value}"`);
  }
  return value as Config['mode'];
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

/** A token callers send as `Authorization: Bearer <token>`, or null when unset. */
function bearerToken(env: Env, name: 'CODEHOST_ADMIN_TOKEN' | 'CODEHOST_METRICS_TOKEN'): string | null {
  const value = env[name] || null;
  if (value && /\s/.test(value)) throw new ConfigError(`${name} must not contain spaces (it is sent as "Authorization: Bearer <token>")`);
  return value;
}

/**
 * The address a client on this machine reaches a server listening on `host`:`port` at, the one the
 * start banner prints: a wildcard address (`0.0.0.0`, `::`) is reached through loopback.
 */
export function listeningAddress(host: string, port: number): string {
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}

/** The API and web bases once the server listens at `address`: the settings, or that address. */
export function publicUrls(config: Config, address: string): { api: string; web: string } {
  const web = config.urlsFollowAddress.web ? address : config.webUrl;
  return { web, api: config.urlsFollowAddress.api ? `${web}/api/v3` : config.apiUrl };
}

/** `*`, or a comma-separated list of origins (`scheme://host[:port]`, nothing after). */
function corsOrigins(env: Env): '*' | string[] {
  const raw = str(env, 'CODEHOST_CORS_ORIGINS', '*').trim();
  if (raw === '*') return '*';
  const origins = raw.split(',').map((origin) => origin.trim()).filter(Boolean);
  for (const origin of origins) {
    let url: URL | null = null;
    try {
      url = new URL(origin);
    } catch {
      // reported below
    }
    if (!url || !['http:', 'https:'].includes(url.protocol) || url.origin !== origin.replace(/\/$/, '').toLowerCase()) {
      throw new ConfigError(`CODEHOST_CORS_ORIGINS must be * or comma-separated origins like https://app.example.com,http://127.0.0.1:8080 (no path), got "${origin}"`);
    }
  }
  if (!origins.length) throw new ConfigError('CODEHOST_CORS_ORIGINS must be * or at least one origin');
  return origins.map((origin) => new URL(origin).origin);
}

/** proxy-addr's names for the reserved ranges, accepted beside addresses and CIDRs. */
const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

function isProxyAddress(value: string): boolean {
  if (PROXY_RANGE_NAMES.includes(value)) return true;
  const [address, prefix, ...rest] = value.split('/');
  const family = isIP(address!);
  if (!family || rest.length) return false;
  if (prefix === undefined) return true;
  // A prefix length, or (IPv4) a netmask.
  if (/^\d{1,3}$/.test(prefix)) return Number(prefix) <= (family === 4 ? 32 : 128);
  return family === 4 && isIP(prefix) === 4;
}

function trustProxy(env: Env): false | number | string[] {
  const raw = str(env, 'CODEHOST_TRUST_PROXY', '').trim();
  if (raw === '' || raw === '0') return false;
  if (/^\d+$/.test(raw)) return int(env, 'CODEHOST_TRUST_PROXY', 0, 0, 100);
  const addresses = raw.split(',').map((part) => part.trim());
  const wrong = addresses.find((address) => !isProxyAddress(address));
  if (wrong !== undefined) {
    throw new ConfigError(
      `CODEHOST_TRUST_PROXY must be a hop count (1 for one proxy in front) or a comma-separated list of proxy addresses or CIDR ranges (10.0.0.1, 10.0.0.0/8, loopback), got "${wrong}"`,
    );
  }
  return addresses;
}

/**
 * The loopback and private networks: the webhook address guard's `loopback` and `private` classes
 * (src/areas/app-webhooks/sender.ts), and where CODEHOST_WEBHOOK_ALLOW_NETWORKS may open. Private:
 * RFC 1918, carrier-grade NAT, benchmarking; IPv6 unique-local and the deprecated site-local.
 */
export const LOOPBACK_NETWORKS: readonly (readonly [string, number])[] = [['127.0.0.0', 8], ['::1', 128]];
export const PRIVATE_NETWORKS: readonly (readonly [string, number])[] = [
  ['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16], ['100.64.0.0', 10], ['198.18.0.0', 15], ['fc00::', 7], ['fec0::', 10],
];

/**
 * CODEHOST_WEBHOOK_ALLOW_NETWORKS: comma-separated CIDRs (or addresses), each inside one loopback or
 * private network, so that no list opens more than those (link-local and metadata addresses stay
 * refused whatever it says). An address is written in its plain form: the guard reads every
 * spelling of the addresses it checks, the settings take one.
 */
function allowNetworks(env: Env): string[] {
  const raw = env.CODEHOST_WEBHOOK_ALLOW_NETWORKS;
  if (!raw) return [];
  const entries = raw.split(',').map((part) => part.trim()).filter(Boolean);
  const name = 'CODEHOST_WEBHOOK_ALLOW_NETWORKS';
  if (!entries.length) throw new ConfigError(`${name} must list at least one network (10.20.0.0/16, fd12:3456::/32); unset it to allow none`);
  return entries.map((entry) => {
    const [address = '', prefixText, ...rest] = entry.split('/');
    const family = isIP(address);
    const prefix = prefixText === undefined ? (family === 6 ? 128 : 32) : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
    if (!family || rest.length || !(prefix <= (family === 4 ? 32 : 128))) {
      throw new ConfigError(`${name} must be comma-separated networks like 10.20.0.0/16 or fd12:3456::/32 (an IPv4 or IPv6 address, a prefix length), got "${entry}"`);
    }
    const kind = family === 4 ? 'ipv4' : 'ipv6';
    // Inside a range: as long a prefix, and its address in it (ranges are aligned, so all of it is).
    const inside = [...LOOPBACK_NETWORKS, ...PRIVATE_NETWORKS].some(([base, length]) => {
      if (isIP(base) !== family || prefix < length) return false;
      const range = new BlockList();
      range.addSubnet(base, length, kind);
      return range.check(address, kind);
    });
    if (!inside) {
      throw new ConfigError(
        `${name}: "${entry}" is not inside a private or loopback range (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 100.64.0.0/10, 198.18.0.0/15, 127.0.0.0/8, fc00::/7, fec0::/10, ::1/128); ` +
          'name your receivers\' networks (public addresses need no allowing; link-local and metadata addresses are never allowed)',
      );
    }
    return `${address.toLowerCase()}/${prefix}`;
  });
}

function timeouts(env: Env): Config['timeouts'] {
  const headersMs = int(env, 'CODEHOST_HEADERS_TIMEOUT_MS', 10_000, 1);
  const requestMs = int(env, 'CODEHOST_REQUEST_TIMEOUT_MS', 60_000, 1);
  const keepAliveMs = int(env, 'CODEHOST_KEEP_ALIVE_TIMEOUT_MS', 72_000, 1);
  if (headersMs > requestMs) {
    throw new ConfigError(`CODEHOST_HEADERS_TIMEOUT_MS (${headersMs}) must not exceed CODEHOST_REQUEST_TIMEOUT_MS (${requestMs}): the headers are part of the request`);
  }
  return { headersMs, requestMs, keepAliveMs };
}

/** Whether a URL's host is a loopback address (`localhost`, 127.0.0.0/8, ::1). */
function isLoopbackUrl(url: string): boolean {
  return isLoopbackHost(new URL(url).hostname.replace(/^\[|\]$/g, ''));
}

export function loadConfig(env: Env = process.env): Config {
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
export function readDotEnv(dir: string, env: Env = process.env): string[] {
  const file = join(dir, '.env');
  if (!existsSync(file)) return [];
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`.env: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)}); fix or remove the file`);
  }
  for (const [key, value] of Object.entries(parseEnv(text))) {
    if (!(key in env)) env[key] = value;
  }
  // Only the line's leading name is shown: the rest may be a secret written the wrong way.
  return dotEnvJunk(text).map(({ line, text: junk }) => {
    const name = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)/.exec(junk)?.[1];
    return `warning: .env line ${line}${name ? ` (${name}…)` : ''} is not NAME=value, a # comment or blank, and is ignored`;
  });
}

/**
 * The lines of a .env file that are not \`NAME=value\` (optionally \`export NAME=value\`), a \`#\`
 * comment or blank; the lines inside a quoted value that spans lines are part of it.
 */
function dotEnvJunk(text: string): { line: number; text: string }[] {
  const junk: { line: number; text: string }[] = [];
  let quote: string | null = null;
  text.split(/\r?\n/).forEach((line, index) => {
    if (quote) {
      if (line.includes(quote)) quote = null;
      return;
    }
    if (/^\s*(#|$)/.test(line)) return;
    const assignment = /^\s*(?:export\s+)?[A-Za-z_][A-Za-z0-9_.-]*\s*=\s*(.*)$/.exec(line);
    if (!assignment) {
      junk.push({ line: index + 1, text: line.trim() });
      return;
    }
    const value = assignment[1]!;
    const opening = /^["'`]/.exec(value)?.[0];
    if (opening && !value.slice(1).includes(opening)) quote = opening;
  });
  return junk;
}

// --- Production mode's refusals -------------------------------------------------------------------

/**
 * What is wrong with a secret key, or null: a key must carry 32 bytes (256 bits) of entropy. The
 * characters tell how much each can carry: a hex key (0-9, a-f) 4 bits, a base64 or base64url key
 * 6 bits, anything else (a passphrase) is counted at 6.5 bits; hence at least 64, 43 and 40
 * characters. A longer key made of few characters or of a repeated run (`k3k3k3…`) is refused too:
 * at least 12 distinct characters in a hex key, 20 in any other, and no key that repeats a shorter
 * one. A heuristic against mistakes and placeholders, not a measurement: `codehost secret-key
 * generate` makes keys from the CSPRNG.
 */
export function secretKeyWeakness(key: string): string | null {
  const hex = /^[0-9a-f]+$/i.test(key);
  const base64 = !hex && /^[A-Za-z0-9+/_-]+={0,2}$/.test(key);
  const [alphabet, minimum, distinct] = hex ? ['hex', 64, 12] : base64 ? ['base64', 43, 20] : ['passphrase', 40, 20];
  if (key.length < minimum) return `has ${key.length} character${key.length === 1 ? '' : 's'}: a ${alphabet} key needs at least ${minimum} for 32 bytes of entropy`;
  for (let period = 1; period <= key.length / 2; period++) {
    if (key.slice(period) === key.slice(0, key.length - period)) return `repeats a run of ${period} character${period === 1 ? '' : 's'} (it carries the entropy of that run alone)`;
  }
  const count = new Set(key).size;
  if (count < distinct) return `has ${count} distinct characters: a random ${alphabet} key of this length has at least ${distinct}`;
  return null;
}

/**
 * The settings a server refuses to start with, one line each (setting, reason, fix); empty when it
 * may start. Production mode refuses what is safe only on a machine nobody else reaches; every mode
 * refuses private webhook targets where a proxy or public URLs make the server reachable.
 */
export function refusals(config: Config, env: Env = {}): string[] {
  const lines: string[] = [];
  const laptop = 'CODEHOST_MODE=laptop on a machine only you reach';
  if (config.mode === 'production') {
    // A setting production mode would ignore (a misspelled name) is a setting the operator believes in force.
    for (const { name, nearest } of unknownNames(env)) {
      lines.push(`${name} is not a codehost setting: production mode does not start with a setting it would ignore; the nearest one is ${nearest} (the README lists them all)`);
    }
    if (config.demo) {
      lines.push(`CODEHOST_DEMO=1: production mode loads no demo data (its credentials are public); set CODEHOST_DEMO=0 (or ${laptop})`);
    }
    if (!config.adminToken) {
      // A generated token would be printed in the start banner, and so kept in the service's journal.
      lines.push('CODEHOST_ADMIN_TOKEN is not set: production mode generates none (the start banner would print it into the service\'s log for good); make one with `codehost admin-token generate` and set it');
    } else if (config.adminToken.length < 32) {
      lines.push(`CODEHOST_ADMIN_TOKEN has ${config.adminToken.length} character${config.adminToken.length === 1 ? '' : 's'}: production mode needs at least 32; make one with \`codehost admin-token generate\``);
    }
    const weakness = config.secretKey === null ? null : secretKeyWeakness(config.secretKey);
    if (!config.secretKey) {
      lines.push('CODEHOST_SECRET_KEY is not set: production mode needs a key of 32 bytes of entropy, the same on every process; make one with `codehost secret-key generate`');
    } else if (weakness) {
      lines.push(`CODEHOST_SECRET_KEY ${weakness}; make one with \`codehost secret-key generate\``);
    }
    if (config.testClock) {
      lines.push('CODEHOST_TEST_CLOCK=1 lets the admin token move the server\'s clock (and turns on test mode): production mode refuses it; unset CODEHOST_TEST_CLOCK');
    } else if (config.testMode) {
      lines.push('CODEHOST_TEST_MODE=1 turns on fault injection (/_admin/faults): production mode refuses it; unset CODEHOST_TEST_MODE');
    }
    if (!config.metricsToken && !(isLoopbackHost(config.host) && config.trustProxy === false)) {
      const why = config.trustProxy === false ? `the server listens on ${config.host}` : 'a proxy forwards to it (CODEHOST_TRUST_PROXY)';
      lines.push(`CODEHOST_METRICS_TOKEN is not set: GET /metrics would be open to anyone (${why}); set CODEHOST_METRICS_TOKEN (\`codehost admin-token generate\` makes a good one)`);
    }
  }
  if (config.webhooks.allowPrivateAddresses) {
    const why = config.mode === 'production' ? 'in production mode'
      : config.trustProxy !== false ? 'when a proxy is trusted (CODEHOST_TRUST_PROXY)'
      : !isLoopbackUrl(config.webUrl) || !isLoopbackUrl(config.apiUrl) ? 'when the public URLs (CODEHOST_WEB_URL, CODEHOST_API_URL) are not loopback'
      : null;
    if (why) {
      lines.push(`CODEHOST_WEBHOOK_ALLOW_PRIVATE=1: webhooks may not reach private and loopback addresses ${why} (an app owner would read internal services' answers in its deliveries); unset it, and list your receivers' networks in CODEHOST_WEBHOOK_ALLOW_NETWORKS (10.20.0.0/16)`);
    }
  }
  return lines;
}

// --- Settings nobody reads ------------------------------------------------------------------------

/**
 * CODEHOST_* variables that are not server settings but are known: `CODEHOST_URL` (the server's
 * address for `codehost admin` and the docs' shell examples) and the test tools' variables.
 */
const TOOL_VARIABLES = ['CODEHOST_URL', 'CODEHOST_NEW_SECRET_KEY', 'CODEHOST_TEST_ONLY', 'CODEHOST_TEST_LOG_LEVEL', 'CODEHOST_TEST_PG_BIN', 'CODEHOST_TEST_WALKTHROUGH_OUTPUT'];

/** Every CODEHOST_* name codehost knows: the ones loadConfig reads (recorded as it reads them), and the tools'. */
function knownNames(): string[] {
  const read = new Set<string>(TOOL_VARIABLES);
  loadConfig(new Proxy({}, {
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
function unknownNames(env: Env): { name: string; nearest: string }[] {
  const names = Object.keys(env).filter((name) => name.startsWith('CODEHOST_'));
  if (!names.length) return [];
  const known = knownNames();
  return names.filter((name) => !known.includes(name)).sort().map((name) => ({
    name,
    nearest: known.reduce((best, candidate) => (editDistance(name, candidate) < editDistance(name, best) ? candidate : best)),
  }));
}

/**
 * One warning line for each CODEHOST_* variable in `env` that no setting reads, naming the nearest
 * known one (a production server's start refuses them instead: `refusals`).
 */
export function unknownSettings(env: Env = process.env): string[] {
  return unknownNames(env).map(({ name, nearest }) => `warning: ${name} is not a codehost setting and is ignored; the nearest one is ${nearest} (the README lists them all)`);
}
