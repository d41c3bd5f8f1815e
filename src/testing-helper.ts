// The testing helper, exported as `codehost/testing` (package.json): `startCodehost()` starts the
// server in the test's own process, on a free loopback port, with a fresh embedded database in a
// temporary directory (or a new database on a PostgreSQL server you name), the test clock and test mode on; and the
// admin calls a test needs, named. docs/testing.md.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from './app.ts';
import { loadConfig } from './config.ts';
import { copyMigratedTemplate, createFromTemplateDatabase, type FreshDatabase } from './db/template.ts';

export interface StartOptions {
  /** Load the demo data (users mona, hubot, octo; org acme; demo-app; fixed tokens). Default false. */
  demo?: boolean;
  /** A seed to load (a seed file's content, YAML or JSON, or the object itself). */
  seed?: string | object;
  /** More settings (CODEHOST_* names), e.g. CODEHOST_RATE_LIMIT. */
  env?: Record<string, string>;
  /**
   * A PostgreSQL server, as a connection string to a database on it: each start makes a database of
   * its own there (a copy of a migrated template database) and stop drops it. Unset: embedded SQLite
   * in the temporary directory.
   */
  databaseUrl?: string;
  /** Log lines to stderr at this level (default: none). */
  logLevel?: string;
}

/** The journal's filters (GET /_admin/requests). */
export interface RequestFilter {
  method?: string;
  path?: string;
  operation?: string;
  login?: string;
  app?: string;
  /** An installation's id. */
  installation?: string | number;
  /** A token, whole or its last eight characters. */
  token?: string;
  /** A warning's code, e.g. `unserved_operation`, `injected_fault`. */
  warning?: string;
  status?: string | number;
  since?: string | number;
}

/** Whether a reset or a restore empties the request journal too (it outlives both by default). */
export interface JournalOption {
  journal?: 'keep' | 'clear';
}

export interface Codehost {
  /** http://127.0.0.1:PORT */
  url: string;
  /** The public API's base: give it to your client as its base URL. */
  apiUrl: string;
  adminToken: string;
  /** PostgreSQL: the database this start made on the server (stop drops it); SQLite: null. */
  databaseUrl: string | null;
  /** Calls the admin API; throws with the answer's body unless it is 2xx. */
  admin<T = any>(method: string, path: string, body?: unknown): Promise<T>;
  /** Back to empty (default), the demo data or a seed. The journal stays unless `{ journal: 'clear' }`. */
  reset(to?: 'empty' | 'demo' | { seed: string | object }, options?: JournalOption): Promise<void>;
  snapshot(name: string): Promise<void>;
  /** The state as the snapshot saved it. The journal stays unless `{ journal: 'clear' }`. */
  restore(name: string, options?: JournalOption): Promise<void>;
  /** The request journal, newest first. */
  requests(filter?: RequestFilter): Promise<any[]>;
  /** How many journal entries match (verify "my client called X exactly N times"). */
  count(filter?: RequestFilter): Promise<number>;
  /**
   * Per credential (app, installation, token) among the entries that match: the scopes and
   * permissions its calls needed beside what it held, and what it held but never needed
   * (GET /_admin/requests/permissions-used; docs/testing.md "Verifying calls").
   */
  permissionsUsed(filter?: RequestFilter): Promise<any[]>;
  /** Empties the journal (reset and restore leave it alone). */
  clearRequests(): Promise<void>;
  /** An app's webhook deliveries, newest first, once every queued job has run. */
  deliveries(app: string): Promise<any[]>;
  /**
   * An app's deliveries as a fixtures file, once every queued job has run: each request as posted
   * (headers, body, signatures; never the secret), in the order sent, since a time (ISO 8601) if given.
   */
  fixtures(app: string, options?: { since?: string | Date }): Promise<{ app: string; since: string | null; exported_at: string; fixtures: any[] }>;
  /** Runs every queued background job (webhook deliveries, notifications) now. */
  drain(): Promise<void>;
  stop(): Promise<void>;
}

const seedText = (seed: string | object) => (typeof seed === 'string' ? seed : JSON.stringify(seed));

export async function startCodehost(options: StartOptions = {}): Promise<Codehost> {
  const dataDir = mkdtempSync(join(tmpdir(), 'codehost-testing-'));
  const adminToken = `testing-${randomBytes(16).toString('hex')}`;
  const configFor = (databaseUrl: string | undefined) => loadConfig({
    // A test double on loopback: laptop mode (the journal, reset) even when options.env names public URLs.
    CODEHOST_MODE: 'laptop',
    CODEHOST_HOST: '127.0.0.1',
    CODEHOST_PORT: '0',
    CODEHOST_DATA_DIR: dataDir,
    CODEHOST_ADMIN_TOKEN: adminToken,
    CODEHOST_DEMO: '0',
    CODEHOST_TEST_CLOCK: '1',
    CODEHOST_TEST_MODE: '1',
    CODEHOST_LOG_LEVEL: options.logLevel ?? 'silent',
    CODEHOST_JOB_POLL_MS: '20',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    ...options.env,
  });
  // Compiled as requests need them: a test uses a few of the routes (docs/performance.md).
  const start = (databaseUrl: string | undefined) => createServer(configFor(databaseUrl), { compileSchemas: 'on first use' });
  // A fresh database, copied from a migrated template instead of running every migration
  // (src/db/template.ts): a file in the data directory, or a new database on the PostgreSQL server.
  let fresh: FreshDatabase | undefined;
  let server: Awaited<ReturnType<typeof createServer>> | undefined;
  let url: string;
  try {
    if (options.databaseUrl) {
      fresh = await createFromTemplateDatabase(options.databaseUrl, async (templateUrl) => {
        // What a server's first start writes there: the migrations, the job queue's schema and queues.
        const making = await start(templateUrl);
        try {
          await making.listen();
        } finally {
          await making.close();
        }
      });
    } else {
      await copyMigratedTemplate(join(dataDir, 'codehost.db'));
    }
    server = await start(fresh?.databaseUrl);
    url = await server.listen();
  } catch (error) {
    await server?.close();
    await fresh?.drop();
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  const running = server;

  const admin = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${url}/_admin${path}`, {
      method,
      headers: { authorization: `Bearer ${adminToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`codehost: ${method} /_admin${path} answered ${response.status}: ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
  const query = (filter: RequestFilter) =>
    new URLSearchParams(Object.entries(filter).filter(([, value]) => value !== undefined).map(([key, value]): [string, string] => [key, String(value)])).toString();
  const codehost: Codehost = {
    url,
    apiUrl: `${url}/api/v3`,
    adminToken,
    databaseUrl: fresh?.databaseUrl ?? null,
    admin,
    async reset(to = 'empty', options = {}) {
      await admin('POST', '/reset', { ...(typeof to === 'string' ? { to } : { to: 'seed', seed: seedText(to.seed) }), ...options });
    },
    async snapshot(name) {
      await admin('POST', '/snapshots', { name });
    },
    async restore(name, options = {}) {
      await admin('POST', `/snapshots/${encodeURIComponent(name)}/restore`, options);
    },
    async requests(filter = {}) {
      return admin('GET', `/requests?${query({ per_page: 1000, ...filter } as RequestFilter)}`);
    },
    async count(filter = {}) {
      const body = Object.fromEntries(Object.entries(filter).filter(([, value]) => value !== undefined).map(([key, value]) => [key, String(value)]));
      return (await admin('POST', '/requests/count', body)).count;
    },
    async permissionsUsed(filter = {}) {
      return admin('GET', `/requests/permissions-used?${query(filter)}`);
    },
    async clearRequests() {
      await admin('DELETE', '/requests');
    },
    async deliveries(app) {
      await codehost.drain();
      return admin('GET', `/apps/${encodeURIComponent(app)}/deliveries?per_page=100`);
    },
    async fixtures(app, { since } = {}) {
      await codehost.drain();
      const query = since === undefined ? '' : `?${new URLSearchParams({ since: since instanceof Date ? since.toISOString() : since })}`;
      return admin('GET', `/apps/${encodeURIComponent(app)}/deliveries/fixtures${query}`);
    },
    async drain() {
      await admin('POST', '/jobs/drain', { timeout_seconds: 60 });
    },
    async stop() {
      // The test's clients are on loopback in this process: an idle keep-alive connection waits a few
      // milliseconds for a request on its way, not a network's half second (src/http/shutdown.ts).
      await running.close({ idleGraceMs: 10 });
      await fresh?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  if (options.demo && options.seed !== undefined) {
    await codehost.stop();
    throw new Error('codehost: start with demo or with a seed, not both (a seed may copy what it needs of src/admin/demo.yaml)');
  }
  if (options.demo) await codehost.reset('demo');
  if (options.seed !== undefined) await codehost.reset({ seed: options.seed });
  return codehost;
}
