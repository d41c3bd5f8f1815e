// The typed settings (Config) and the error that names a setting that cannot work. The files of
// src/config/ take the environment as an argument; src/config.ts is where process.env is read.

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
  /**
   * CODEHOST_VENDOR_WORD: the word header names, the hookshot's `User-Agent` and the media type
   * carry where the spec writes `Vendor` (`X-Vendor-Event`); the spec's `Vendor` by default.
   */
  vendorWord: string;
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
    /** The secondary rate limit: requests that create content (issues, comments, reactions...) a caller may make a minute and an hour. */
    contentPerMinute: number;
    contentPerHour: number;
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

export type Env = Record<string, string | undefined>;

/** A setting or an argument that cannot work; the message names it and says what to do. */
export class ConfigError extends Error {}
