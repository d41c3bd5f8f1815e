// The CLI: `codehost serve | migrate | seed FILE | admin METHOD PATH [JSON] | admin-token reset|generate
// | secret-key generate|rotate | token generate --kind KIND`.
// Settings come from the environment (and a `.env` file); every one is checked before anything is
// touched, and a failure is one line that names the setting or the cause and what to do (the stack
// only at CODEHOST_LOG_LEVEL=debug).
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { SeedReport } from './admin/seed.ts';
import type { Server } from './app.ts';
import { checkDataDir, ConfigError, loadConfig, readDotEnv, refusals, secretKeyWeakness, unknownSettings, type Config } from './config.ts';
import { networkErrorCode } from './db/errors.ts';
import type { Db } from './db/index.ts';
import { ApiError } from './platform/errors.ts';

// The server and its dependencies load only for the commands that need them: `--help` and
// `admin` stay quick.
const loadServer = () => Promise.all([import('./app.ts'), import('./admin/seed.ts')]);

const DEMO_SEED = fileURLToPath(new URL('./admin/demo.yaml', import.meta.url));
const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

const HELP: Record<string, string> = {
  main: `codehost: a self-hostable server for the code-hosting platform REST API

Usage: codehost <command> [options]

Commands:
  serve [--seed FILE]        start the API server (and its background worker)
  migrate                    apply pending database migrations and exit
  seed FILE                  load a YAML or JSON seed file and exit
  admin METHOD PATH [JSON]   call the admin API of a running server
  admin-token reset          store a new admin token and print it (the old one stops working)
  backup DIR                 copy the database, git data and archives into a new directory (online)
  admin-token generate       print a new admin token for CODEHOST_ADMIN_TOKEN (stores nothing)
  secret-key generate        print a new key for CODEHOST_SECRET_KEY
  secret-key rotate          move the database to CODEHOST_NEW_SECRET_KEY (every process stopped)
  token generate --kind KIND print a new token (classic, fine_grained, oauth, app_user) for a seed file
  help [COMMAND]             this text, or a command's

Options: --help (also after a command), --version.
Configuration comes from CODEHOST_* environment variables and DATABASE_URL, and from a .env file
in the working directory if there is one (the environment wins); see the README.`,
  serve: `Usage: codehost serve [--seed FILE]

Starts the server on CODEHOST_HOST:CODEHOST_PORT. A new embedded database gets the demo data
unless CODEHOST_DEMO=0. --seed FILE loads a seed file at start (idempotent).
The admin token: CODEHOST_ADMIN_TOKEN while it is set; otherwise the stored one, generated and
printed by the first start that listens (\`codehost admin-token reset\` makes a new one).
SIGTERM or SIGINT (Ctrl-C): finish in-flight requests, stop the worker, close the database.`,
  migrate: `Usage: codehost migrate

Applies every pending migration to the configured database (DATABASE_URL, or the embedded
SQLite file under CODEHOST_DATA_DIR) and exits.`,
  seed: `Usage: codehost seed FILE

Loads a YAML or JSON seed file (keys: users, enterprises, orgs, repos, teams, collaborators,
watching, tokens, apps, installations, authorizations, issues, comments, and the areas' keys). What exists is left
alone. Prints the one-time secrets of what it created.`,
  admin: `Usage: codehost admin METHOD PATH [JSON] [--follow]
       codehost admin users|orgs|repos|apps [--page N] [--per-page N]
       codehost admin tokens [LOGIN] [--page N] [--per-page N]
       codehost admin reset [empty|demo] | reset --seed FILE
       codehost admin snapshot save|restore|delete NAME | snapshot list
       codehost admin requests [count|clear] [--method M] [--path GLOB] [--operation ID]
                 [--login L] [--app SLUG] [--status 404|4xx] [--since ID|TIME] [--per-page N] [--page N]

Calls the admin API of a running server: CODEHOST_URL (default http://127.0.0.1:$CODEHOST_PORT)
with CODEHOST_ADMIN_TOKEN. PATH is relative to /_admin.
--follow repeats a GET every second while the answer's state is pending or exporting, printing
each change, then prints the final answer (exit status 1 when it ends failed).
Examples:
  codehost admin POST /users '{"login":"alice"}'
  codehost admin POST /jobs/drain
  codehost admin GET /clock
  codehost admin GET /migrations/7 --follow
  codehost admin users --per-page 100      # GET /_admin/users?per_page=100
  codehost admin tokens alice              # alice's tokens (never their values)
  codehost admin reset demo                # back to the demo data (laptop mode; docs/testing.md)
  codehost admin snapshot save before-test
  codehost admin requests --status 4xx     # the journal: what the server refused`,
  backup: `Usage: codehost backup DIR

Backs up the configured server's data while it runs: the database (SQLite: a consistent copy made
with VACUUM INTO; PostgreSQL: pg_dump's custom format, codehost.pgdump), the git data and the finished
migration archives, into DIR (created, 0700, every file in it 0600; it must not exist). DIR is laid out as a data
directory: restore by copying it to an empty CODEHOST_DATA_DIR (and, for PostgreSQL, pg_restore of
codehost.pgdump into an empty database). See docs/backup.md.`,
  'admin-token': `Usage: codehost admin-token reset
       codehost admin-token generate

reset: generates a new admin token, stores its hash in the configured database (no server needs to
run) and prints it once. The previous stored token stops working at once, on running servers too.
While CODEHOST_ADMIN_TOKEN is set, that variable is the admin token and the stored one is not used.
generate: prints a new token (46 characters, 238 random bits) to set as CODEHOST_ADMIN_TOKEN (or
CODEHOST_METRICS_TOKEN); it stores nothing and touches no database.`,
  'secret-key': `Usage: codehost secret-key generate
       CODEHOST_NEW_SECRET_KEY=NEW codehost secret-key rotate

generate: prints a new key for CODEHOST_SECRET_KEY: 32 random bytes, base64url (43 characters). It
touches no database. Give every process of a database the same key, and keep it: the database
records the key's fingerprint, and a process with another key refuses to start.
rotate: moves the configured database from the key in force (CODEHOST_SECRET_KEY, or when it is
unset the key generated in the database) to CODEHOST_NEW_SECRET_KEY, in one transaction: every
sealed secret (the apps' webhook secrets) is opened with the old key and sealed with the new, and
the database records the new key's fingerprint. Stop every process first; then start them all with
CODEHOST_SECRET_KEY set to the new key (a process with the old key now refuses to start). Signed
URLs issued before (archive downloads, 5 minutes) stop working. Neither key is printed. See
docs/security.md, "Rotating the secret key".`,
  token: `Usage: codehost token generate --kind classic|fine_grained|oauth|app_user

Prints a new, well-formed token of that kind (prefix, 30 random base62 characters, 6 characters of
checksum): the \`value\` of a seed file's token (classic, fine_grained) or authorization (oauth,
app_user), so that a test suite knows its tokens before the server starts. It stores nothing.`,
};

/** The commands that print a new value: no settings, no database. */
async function generate(command: string, args: string[]): Promise<void> {
  const { randomBytes } = await import('node:crypto');
  const [{ generateToken }, { newAdminToken }] = await Promise.all([import('./platform/tokens.ts'), import('./admin/token.ts')]);
  if (command === 'secret-key') {
    console.log(randomBytes(32).toString('base64url'));
  } else if (command === 'admin-token') {
    console.log(newAdminToken());
  } else {
    const kinds = ['classic', 'fine_grained', 'oauth', 'app_user'] as const;
    let kind: string | undefined;
    try {
      kind = parseArgs({ args, options: { kind: { type: 'string' } } }).values.kind;
    } catch (error) {
      throw new ConfigError(`token generate: ${(error as Error).message}; see \`codehost help token\``);
    }
    if (!kind || !(kinds as readonly string[]).includes(kind)) {
      throw new ConfigError(`token generate: --kind must be one of ${kinds.join(', ')}${kind ? `, got "${kind}"` : ''}`);
    }
    console.log(generateToken(kind as (typeof kinds)[number]));
  }
}

function printSeedReport(report: SeedReport): void {
  const created = Object.entries(report.created).map(([k, n]) => `${n} ${k}`).join(', ') || 'nothing new';
  console.log(`seed: created ${created}`);
  for (const secret of report.secrets) {
    console.log(`  ${secret.kind} ${secret.name} (shown once):`);
    for (const [key, value] of Object.entries(secret.values)) console.log(`    ${key}: ${value.includes('\n') ? `\n${value}` : value}`);
  }
}

// --- Startup failures, explained ------------------------------------------------------------------

const errorCode = (error: unknown): string | undefined => {
  const e = error as { code?: unknown; errors?: { code?: unknown }[]; cause?: unknown };
  if (typeof e?.code === 'string') return e.code;
  if (typeof e?.errors?.[0]?.code === 'string') return e.errors[0].code;
  return e?.cause ? errorCode(e.cause) : undefined;
};

/** What went wrong with the database, naming the setting (never a password). */
function databaseError(error: unknown, config: Config): ConfigError {
  const reason = (error as Error)?.message ?? String(error);
  if (!config.databaseUrl) {
    return new ConfigError(`CODEHOST_DATA_DIR: cannot use the embedded database ${config.dataDir}/codehost.db: ${reason}`, { cause: error });
  }
  const url = new URL(config.databaseUrl);
  const where = `${url.hostname || url.searchParams.get('host')}:${url.port || 5432}`;
  const database = decodeURIComponent(url.pathname.slice(1)) || decodeURIComponent(url.username) || 'postgres';
  const messages: Record<string, string> = {
    ECONNREFUSED: `nothing answers at ${where} (connection refused); start PostgreSQL, or fix the host and port in DATABASE_URL`,
    ENOTFOUND: `the host of ${where} is not found; fix the host in DATABASE_URL`,
    EAI_AGAIN: `the host of ${where} cannot be resolved now; check the network or the host in DATABASE_URL`,
    ETIMEDOUT: `no answer from ${where} (timed out); check that PostgreSQL runs and can be reached`,
    EHOSTUNREACH: `${where} cannot be reached; check the network or the host in DATABASE_URL`,
    '28P01': `PostgreSQL at ${where} refused the password of user "${decodeURIComponent(url.username)}"; fix the user or password in DATABASE_URL`,
    '28000': `PostgreSQL at ${where} refused user "${decodeURIComponent(url.username)}"; fix the user in DATABASE_URL or the server's pg_hba.conf`,
    '3D000': `the database "${database}" does not exist at ${where}; create it (createdb ${database}) or fix its name in DATABASE_URL`,
  };
  const code = errorCode(error);
  const message = (code && messages[code]) ?? `cannot use the PostgreSQL database at ${where}: ${reason.replace(config.databaseUrl, '<DATABASE_URL>')}`;
  return new ConfigError(`DATABASE_URL: ${message}`, { cause: error });
}

/** What went wrong when listening, naming CODEHOST_HOST or CODEHOST_PORT. */
function listenError(error: unknown, config: Config): Error {
  const { host, port } = config;
  const messages: Record<string, string> = {
    EADDRINUSE: `CODEHOST_PORT: port ${port} on ${host} is already in use (another codehost?); stop what uses it, or set CODEHOST_PORT to a free port`,
    EACCES: `CODEHOST_PORT: this user may not listen on port ${port} (ports below 1024 need privileges); set CODEHOST_PORT to 1024 or above`,
    EADDRNOTAVAIL: `CODEHOST_HOST: ${host} is not an address of this machine; use 127.0.0.1 (this machine only), 0.0.0.0 (every network) or one of its addresses`,
    ENOTFOUND: `CODEHOST_HOST: the host name "${host}" does not resolve; use 127.0.0.1, 0.0.0.0 or an address of this machine`,
    EAI_AGAIN: `CODEHOST_HOST: the host name "${host}" cannot be resolved now; use an IP address such as 127.0.0.1 or 0.0.0.0`,
    EAFNOSUPPORT: `CODEHOST_HOST: this machine has no IPv6 for ${host}; use 127.0.0.1 or 0.0.0.0`,
  };
  const message = messages[errorCode(error) ?? ''];
  return message ? new ConfigError(message, { cause: error }) : (error as Error);
}

/** Binds host:port for a moment: a busy port or a wrong host is reported before the database is touched. */
async function checkListen(config: Config): Promise<void> {
  if (config.port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const probe = createNetServer();
    probe.once('error', reject);
    probe.listen({ host: config.host, port: config.port, exclusive: true }, () => probe.close(() => resolve()));
  }).catch((error: unknown) => {
    throw listenError(error, config);
  });
}

function checkSeedFile(file: string, what: string): string {
  const path = resolve(file);
  if (!existsSync(path) || !statSync(path).isFile()) throw new ConfigError(`${what}: no file at ${path}; give the path of a YAML or JSON seed file`);
  return path;
}

/** A seed file parsed and its keys checked, before any database is touched (its entries are checked as it loads, all rolled back on an error). */
async function readCheckedSeed(path: string): Promise<unknown> {
  const [{ AREAS }, { readSeedFile, checkSeed }] = await loadServer();
  const data = await readSeedFile(path);
  checkSeed(AREAS, data);
  return data;
}

/**
 * The database of commands that do not serve, migrated, with the migrations this applied; for
 * SQLite, the data directory is checked first.
 */
async function openMigrated(config: Config): Promise<{ db: Db; applied: string[] }> {
  if (!config.databaseUrl) checkDataDir(config);
  const [{ openDatabase }, { migrateToLatest }] = await Promise.all([import('./db/index.ts'), import('./db/migrate.ts')]);
  const db = openDatabase({ databaseUrl: config.databaseUrl, sqlitePath: `${config.dataDir}/codehost.db` });
  try {
    return { db, applied: await migrateToLatest(db) };
  } catch (error) {
    await db.close().catch(() => undefined);
    throw fromDatabase(error) ? databaseError(error, config) : error;
  }
}

/** Whether an error came from the database driver (a connection or an SQL failure). */
function fromDatabase(error: unknown): boolean {
  const code = errorCode(error) ?? '';
  return /^[0-9A-Z]{5}$/.test(code) || code.startsWith('ERR_SQLITE') || code.startsWith('SQLITE_') ||
    networkErrorCode(code);
}

/**
 * A start on PostgreSQL looks for a transaction pooler in front (src/db/pooler.ts). Found with
 * CODEHOST_DATABASE_POOLER unset (or `session`), the process runs as if it were `transaction`, and
 * the banner says so among the settings derived. Found on a database not migrated, the start
 * refuses: the migrations' lock is held across statements, which needs a direct connection.
 */
async function settlePooler(config: Config): Promise<Config> {
  if (!config.databaseUrl) return config;
  const [{ migrationsRecorded, transactionPoolerEvidence }, { migrations }] = await Promise.all([import('./db/pooler.ts'), import('./db/migrations/index.ts')]);
  const options = { connectTimeoutMs: config.databaseConnectTimeoutMs };
  let evidence: string | null;
  try {
    evidence = await transactionPoolerEvidence(config.databaseUrl, options);
    if (evidence && !(await migrationsRecorded(config.databaseUrl, Object.keys(migrations), options))) {
      throw new ConfigError(`DATABASE_URL leads to a transaction pooler (${evidence}) and the database is not migrated: migrations cannot run through it (their lock is held across statements); run \`codehost migrate\` with DATABASE_URL naming PostgreSQL itself (a direct connection), then start again`);
    }
  } catch (error) {
    throw fromDatabase(error) ? databaseError(error, config) : error;
  }
  if (!evidence || config.databasePooler === 'transaction') return config;
  return {
    ...config,
    databasePooler: 'transaction',
    derived: [...config.derived, { name: 'CODEHOST_DATABASE_POOLER', value: 'transaction', from: `DATABASE_URL leads to a transaction pooler: ${evidence}` }],
  };
}

async function createServerOrExplain(config: Config, options: Parameters<typeof import('./app.ts').createServer>[1]): Promise<Server> {
  const [{ createServer }] = await loadServer();
  try {
    return await createServer(config, options);
  } catch (error) {
    throw fromDatabase(error) ? databaseError(error, config) : error;
  }
}

// --- serve ----------------------------------------------------------------------------------------

/** Log lines written before the banner wait for it, so the banner is not split by a JSON line. */
class HeldLog {
  private held: string[] | null = [];
  write(line: string): void {
    if (this.held) this.held.push(line);
    else process.stdout.write(line);
  }
  release(): void {
    const held = this.held ?? [];
    this.held = null;
    for (const line of held) process.stdout.write(line);
  }
  /** Startup failed: the one-line message says it all, the lines show only at debug. */
  discard(show: boolean): void {
    const held = this.held ?? [];
    this.held = null;
    if (show) for (const line of held) process.stderr.write(line);
  }
}

const DEMO = {
  monaToken: 'chp_DemoMonaClassicToken00000000013Mkcu6',
  clientId: 'Iv1.demoapp0000000001',
  clientSecret: 'demo-client-secret-0000000000000000000000',
  oauthToken: 'cho_DemoMonaOAuthToken0000000000010H4Nxz',
};

/** Whether the credentials and the repository the demo curl lines use are in this database. */
async function demoDataPresent(server: Server): Promise<boolean> {
  const [{ authenticate }, { findRepository }] = await Promise.all([import('./core/access/index.ts'), import('./core/repositories/store.ts')]);
  const { db, clock } = server.ctx;
  try {
    const mona = await authenticate(db.kysely, clock, `Bearer ${DEMO.monaToken}`, { basicApp: false });
    const basic = `Basic ${Buffer.from(`${DEMO.clientId}:${DEMO.clientSecret}`).toString('base64')}`;
    const app = await authenticate(db.kysely, clock, basic, { basicApp: true });
    const oauth = await authenticate(db.kysely, clock, `Bearer ${DEMO.oauthToken}`, { basicApp: false });
    const widgets = await findRepository(db.kysely, 'acme', 'widgets');
    return mona.type === 'user' && app.type === 'app' && oauth.type === 'user' && widgets?.visibility === 'public';
  } catch {
    return false;
  }
}

function banner(address: string, server: Server, demo: boolean): string {
  const base = `${address}/api/v3`;
  const { config } = server.ctx;
  const lines = [`codehost is listening on ${address} (API at ${base}, reference at ${address}/docs)`];
  const { urls } = server.ctx;
  if (config.host === '0.0.0.0' || config.host === '::') {
    lines.push(`  on every network interface (${config.host}); ${address} is this machine's own address`);
    if (config.urlsFollowAddress.web || config.urlsFollowAddress.api) {
      lines.push(`  url fields and Link headers name ${urls.api}: for clients on other machines, set CODEHOST_WEB_URL (and CODEHOST_API_URL) to the address they use, e.g. CODEHOST_WEB_URL=http://<this host>:${new URL(address).port}`);
    }
  }
  if (urls.api !== base) lines.push(`  url fields and Link headers name ${urls.api} (CODEHOST_API_URL / CODEHOST_WEB_URL)`);
  lines.push(config.mode === 'production' ? 'mode: production (a server others use: the start refused what is unsafe)'
    : config.reachedBy ? `mode: laptop, chosen by CODEHOST_MODE=laptop although ${config.reachedBy}: demo data, generated secrets and test support are open to whoever reaches it`
    : 'mode: laptop (this machine only: demo data, generated secrets and test support allowed)');
  lines.push(`node: ${process.version} (${process.execPath})`);
  const pooled = config.databasePooler === 'transaction' ? ' (CODEHOST_DATABASE_POOLER=transaction: no named prepared statements, no LISTEN)' : '';
  lines.push(`database: ${server.ctx.db.dialect === 'sqlite' ? `${config.dataDir}/codehost.db (embedded SQLite)` : `PostgreSQL${pooled}`}`);
  lines.push(config.jobs.worker
    ? 'worker: on (background jobs run in this process; CODEHOST_WORKER=0 turns it off)'
    : 'worker: off (CODEHOST_WORKER=0): no background jobs run in this process; another process with the worker on must run them');
  lines.push(`test mode: ${config.testMode ? 'on (fault injection at /_admin/faults)' : 'off'}; test clock: ${config.testClock ? 'on (POST /_admin/clock moves it)' : 'off'}`);
  const derived = config.derived.map(({ name, value, from }) => `${name}=${value} (${from})`);
  if (config.urlsFollowAddress.web) derived.push(`CODEHOST_WEB_URL=${urls.web} (the address it listens on)`);
  if (config.urlsFollowAddress.api) derived.push(`CODEHOST_API_URL=${urls.api} (CODEHOST_WEB_URL/api/v3)`);
  if (!config.secretKey) derived.push('CODEHOST_SECRET_KEY: the key generated once and kept in the database');
  if (derived.length) lines.push('settings derived, not set:', ...derived.map((line) => `  ${line}`));
  if (server.ctx.db.dialect !== 'sqlite' && !config.secretKey) {
    // A copy of the database (a backup, a replica) would carry the key that opens its own secrets.
    lines.push('warning: CODEHOST_SECRET_KEY is not set: the key that signs download URLs and encrypts webhook secrets is kept in the database, beside the data it protects; set CODEHOST_SECRET_KEY (and keep it) in production');
  }
  const token = server.adminToken;
  if (token?.source === 'generated') {
    lines.push(`admin token (new, shown once, stored hashed): ${token.token}`);
    lines.push('  lost it? `bin/codehost.js admin-token reset` prints a new one; CODEHOST_ADMIN_TOKEN, while set, takes its place');
  } else if (token?.source === 'environment') {
    lines.push('admin token: CODEHOST_ADMIN_TOKEN (while it is set; the stored token is not used)');
  } else {
    lines.push('admin token: the stored one (lost it? `bin/codehost.js admin-token reset` prints a new one; or set CODEHOST_ADMIN_TOKEN)');
  }
  if (demo) {
    lines.push('', 'Try the demo data:');
    lines.push(`  curl -H "Authorization: Bearer ${DEMO.monaToken}" ${base}/notifications`);
    lines.push(`  curl -u ${DEMO.clientId}:${DEMO.clientSecret} -X POST ${base}/applications/${DEMO.clientId}/token -d '{"access_token":"${DEMO.oauthToken}"}'`);
    lines.push(`  curl ${base}/repos/acme/widgets/issue-types`);
  }
  return lines.join('\n');
}

async function serve(config: Config, seedFile: string | undefined): Promise<void> {
  // Under npm, the shell npm started this process from (read first: it may be gone by the banner).
  const parent = process.ppid;
  // Everything that can be checked is checked before the database is created: what cannot work,
  // then what the mode refuses (one line each).
  checkDataDir(config);
  const seedPath = seedFile === undefined ? undefined : checkSeedFile(seedFile, '--seed');
  const seedData = seedPath === undefined ? undefined : await readCheckedSeed(seedPath);
  await checkListen(config);
  const refused = refusals(config, process.env);
  if (refused.length) throw new ConfigError(refused.join('\n'));
  // Behind a transaction pooler found now, the server runs as if CODEHOST_DATABASE_POOLER=transaction.
  config = await settlePooler(config);

  const log = new HeldLog();
  const server = await createServerOrExplain(config, { logStream: log });

  // The signals are handled from here on, before the server listens: a SIGTERM that arrives
  // while the start finishes (the demo check, the banner) is a graceful stop, never a kill.
  let stopping = false;
  const stop = (why: { signal: string } | { reason: string }) => {
    if (stopping) return;
    stopping = true;
    server.ctx.log.info(why, 'shutting down: finishing in-flight requests and jobs');
    const force = setTimeout(() => process.exit(1), 30_000);
    force.unref();
    server.close().then(() => process.exit(0), (err: unknown) => {
      server.ctx.log.error({ err }, 'shutdown failed');
      process.exit(1);
    });
  };
  process.on('SIGTERM', () => stop({ signal: 'SIGTERM' }));
  process.on('SIGINT', () => stop({ signal: 'SIGINT' }));

  let address: string;
  let demo: boolean;
  try {
    const [{ AREAS }, { loadSeeds, readSeedFile }] = await loadServer();
    // The demo data and the seed file load in one transaction: a bad seed file leaves neither.
    const seeds = server.freshDatabase && config.demo && server.ctx.db.dialect === 'sqlite' ? [await readSeedFile(DEMO_SEED)] : [];
    if (seedData !== undefined) seeds.push(seedData);
    if (seeds.length) for (const report of await loadSeeds(server.ctx, AREAS, seeds)) printSeedReport(report);
    if (config.mode === 'production' && (await demoDataPresent(server))) {
      throw new ConfigError(
        'the database holds the demo data, whose credentials are public (src/admin/demo.yaml): production mode refuses to serve it; start on a new database (or CODEHOST_MODE=laptop on a machine only you reach)',
      );
    }
    address = await server.listen().catch((error: unknown) => {
      throw listenError(error, config);
    });
    demo = await demoDataPresent(server);
  } catch (error) {
    log.discard(debugging());
    // Stopped by a signal during the start: the stop above closes the server and exits.
    if (stopping) return;
    await server.close().catch(() => undefined);
    // An embedded database this start created goes with it: the next start is a first start again.
    if (server.freshDatabase && server.ctx.db.dialect === 'sqlite') {
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${config.dataDir}/codehost.db${suffix}`, { force: true });
    }
    throw error;
  }
  if (!stopping) console.log(banner(address, server, demo));
  log.release();
  // Under npm (`npx codehost serve`, `npm start`) the server runs below `sh -c`: npm passes SIGTERM
  // and SIGINT on to that shell, which dies without passing them on. The shell going away is then
  // the signal: the shell as it was when the process started (a signal sent as the banner is printed
  // may have ended it before this line runs).
  if (process.env.npm_lifecycle_event) {
    setInterval(() => {
      if (process.ppid !== parent) stop({ reason: 'npm ended (it was sent a signal)' });
    }, 200).unref();
  }
}

// --- admin ----------------------------------------------------------------------------------------

/** States of a background operation (a user migration's export) that `--follow` waits out. */
const IN_PROGRESS = ['pending', 'exporting'];

/** The operator lists by name: `users`, `orgs`, `repos`, `apps` (`--page N`, `--per-page N`), `tokens [LOGIN]`. */
const ADMIN_LISTS = ['users', 'orgs', 'repos', 'apps', 'tokens'];

function adminListCall(args: string[]): string[] {
  const [list, ...rest] = args;
  if (!list || !ADMIN_LISTS.includes(list)) return args;
  const query = new URLSearchParams();
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg === '--page' || arg === '--per-page') query.set(arg === '--page' ? 'page' : 'per_page', rest[++i] ?? '');
    else if (list === 'tokens' && !query.has('login')) query.set('login', arg);
    else throw new ConfigError(`codehost admin ${list}: unexpected "${arg}" (see \`codehost help admin\`)`);
  }
  return ['GET', `/${list}${query.size ? `?${query}` : ''}`];
}

/** The journal's filters as options: `--status 4xx` is `status=4xx`, `--per-page` is `per_page`. */
const JOURNAL_OPTIONS = ['method', 'path', 'operation', 'login', 'app', 'status', 'since', 'per-page', 'page'];

/**
 * The test double by name (docs/testing.md): `reset [empty|demo] [--seed FILE]`, `snapshot
 * save|restore|list|delete NAME`, `requests [count|clear] [--FILTER VALUE]...`.
 */
function testSupportCall(args: string[]): string[] {
  const [command, ...rest] = args;
  const usage = (message: string) => new ConfigError(`codehost admin ${command}: ${message} (see \`codehost help admin\`)`);
  if (command === 'reset') {
    const { values, positionals } = parseArgs({ args: rest, options: { seed: { type: 'string' } }, allowPositionals: true, strict: false });
    if (typeof values.seed === 'string') {
      if (positionals.length) throw usage('--seed FILE replaces empty or demo');
      return ['POST', '/reset', JSON.stringify({ to: 'seed', seed: readFileSync(checkSeedFile(values.seed, '--seed'), 'utf8') })];
    }
    if (positionals.length > 1 || (positionals[0] && !['empty', 'demo'].includes(positionals[0]))) throw usage('reset [empty|demo] or reset --seed FILE');
    return ['POST', '/reset', JSON.stringify({ to: positionals[0] ?? 'empty' })];
  }
  if (command === 'snapshot') {
    const [action, name, extra] = rest;
    if (action === 'list' && name === undefined) return ['GET', '/snapshots'];
    if (!name || extra !== undefined) throw usage('snapshot save|restore|delete NAME, or snapshot list');
    const named = `/snapshots/${encodeURIComponent(name)}`;
    if (action === 'save') return ['POST', '/snapshots', JSON.stringify({ name })];
    if (action === 'restore') return ['POST', `${named}/restore`];
    if (action === 'delete') return ['DELETE', named];
    throw usage(`unknown action "${action}"`);
  }
  if (command === 'requests') {
    const action = rest[0] === 'count' || rest[0] === 'clear' ? rest.shift() : undefined;
    const filter: Record<string, string> = {};
    for (let i = 0; i < rest.length; i++) {
      const option = rest[i]!.replace(/^--/, '');
      if (!rest[i]!.startsWith('--') || !JOURNAL_OPTIONS.includes(option) || rest[i + 1] === undefined) throw usage(`unexpected "${rest[i]}"; filters: ${JOURNAL_OPTIONS.map((o) => `--${o}`).join(' ')}`);
      filter[option.replace('-', '_')] = rest[++i]!;
    }
    if (action === 'clear') return ['DELETE', '/requests'];
    if (action === 'count') return ['POST', '/requests/count', JSON.stringify(filter)];
    return ['GET', `/requests?${new URLSearchParams(filter)}`];
  }
  return args;
}

async function adminCall(config: Config, args: string[]): Promise<void> {
  const follow = args.includes('--follow');
  const [method, path, body] = adminListCall(testSupportCall(args.filter((arg) => arg !== '--follow')));
  if (!method || !path) throw new ConfigError(HELP.admin!);
  if (follow && method.toUpperCase() !== 'GET') throw new ConfigError('--follow repeats a GET');
  const token = process.env.CODEHOST_ADMIN_TOKEN;
  if (!token) throw new ConfigError('CODEHOST_ADMIN_TOKEN must be set to call the admin API (the token the server printed at its first start)');
  const base = (process.env.CODEHOST_URL || `http://127.0.0.1:${config.port}`).replace(/\/+$/, '');
  if (!URL.canParse(base) || !/^https?:$/.test(new URL(base).protocol)) {
    throw new ConfigError(`CODEHOST_URL must be the server's address, like http://127.0.0.1:3000, got "${base}"`);
  }
  const url = `${base}/_admin${path.startsWith('/') ? path : `/${path}`}`;
  let last = '';
  for (;;) {
    const response = await fetch(url, {
      method: method.toUpperCase(),
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ?? (method.toUpperCase() === 'POST' ? '{}' : undefined),
    }).catch((error: unknown) => {
      throw new ConfigError(
        `codehost admin: no server answers at ${base} (${errorCode(error) ?? (error as Error).message}); start one with \`bin/codehost.js serve\`, or set CODEHOST_URL to its address`,
        { cause: error },
      );
    });
    const text = await response.text();
    let answer: { state?: string; records_exported?: number } | undefined;
    try {
      answer = text ? JSON.parse(text) : undefined;
    } catch {
      throw new ConfigError(`codehost admin: ${base} answered ${response.status} with something that is not JSON; is CODEHOST_URL a codehost server?`);
    }
    if (follow && response.ok && IN_PROGRESS.includes(answer?.state ?? '')) {
      const line = `state: ${answer!.state}${answer!.records_exported ? `, records: ${answer!.records_exported}` : ''}`;
      if (line !== last) console.log(line);
      last = line;
      await new Promise((resolve) => setTimeout(resolve, 1000));
      continue;
    }
    console.log(answer !== undefined ? JSON.stringify(answer, null, 2) : `${response.status} ${response.statusText}`);
    if (!response.ok || (follow && answer?.state === 'failed')) process.exitCode = 1;
    return;
  }
}

// --- the commands ---------------------------------------------------------------------------------

/**
 * The options each command knows (besides --help): any other argument that starts with `-` is
 * refused before anything is read or touched, so that a mistyped or imagined option
 * (`migrate --check`) never runs the command without it.
 */
const OPTIONS: Record<string, string[]> = {
  serve: ['--seed'],
  migrate: [],
  seed: [],
  admin: ['--follow', '--page', '--per-page', '--seed', ...JOURNAL_OPTIONS.map((option) => `--${option}`)],
  backup: [],
  'admin-token': [],
  'secret-key': [],
  token: ['--kind'],
  help: [],
  '--version': [],
};

function refuseUnknownOptions(command: string, args: string[]): void {
  const known = OPTIONS[command] ?? [];
  for (const arg of args) {
    if (!arg.startsWith('-') || arg === '-') continue;
    const name = arg.split('=')[0]!;
    if (known.includes(name)) continue;
    const which = known.length ? `its options: ${known.join(' ')}` : 'it takes none';
    const own = command !== '--version' && command !== 'help';
    throw new ConfigError(`${command === '--version' ? 'codehost --version' : command}: unknown option ${name} (${which}); see \`codehost help${own ? ` ${command}` : ''}\``);
  }
}

export async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (command === '--version' || command === '-v') {
    refuseUnknownOptions('--version', rest);
    console.log(`codehost ${VERSION}`);
    return;
  }
  if (!command || command === '--help' || command === '-h' || (command === 'help' && !rest.length)) {
    console.log(HELP.main);
    return;
  }
  if (command === 'help') {
    refuseUnknownOptions('help', rest);
    const topic = rest[0]!;
    if (!(topic in HELP) || topic === 'main') throw new ConfigError(`unknown command "${topic}"\n\n${HELP.main}`);
    console.log(HELP[topic]);
    return;
  }
  if (!(command in HELP) || command === 'main') throw new ConfigError(`unknown command "${command}"\n\n${HELP.main}`);
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(HELP[command]);
    return;
  }
  refuseUnknownOptions(command, rest);
  if (command === 'token' || (command === 'secret-key' && rest[0] !== 'rotate') || (command === 'admin-token' && rest[0] === 'generate')) {
    const [action, ...args] = rest;
    if (action !== 'generate' || (command !== 'token' && args.length)) {
      const actions = command === 'secret-key' ? '`codehost secret-key generate` or `codehost secret-key rotate`' : `\`codehost ${command} generate${command === 'token' ? ' --kind KIND' : ''}\``;
      throw new ConfigError(`${command}: the action is ${actions} (see \`codehost help ${command}\`)`);
    }
    return generate(command, args);
  }
  // Settings nobody reads and .env lines that set nothing are said, not ignored silently (a
  // production server's start refuses the settings: refusals).
  for (const warning of readDotEnv(process.cwd())) console.error(warning);
  const config = loadConfig();
  if (command !== 'serve' || config.mode !== 'production') for (const warning of unknownSettings()) console.error(warning);
  switch (command) {
    case 'serve': {
      let seed: string | undefined;
      try {
        seed = parseArgs({ args: rest, options: { seed: { type: 'string' } } }).values.seed;
      } catch (error) {
        throw new ConfigError(`serve: ${(error as Error).message}; see \`codehost help serve\``);
      }
      return serve(config, seed);
    }
    case 'migrate': {
      const { db, applied } = await openMigrated(await settlePooler(config));
      try {
        console.log(applied.length ? `applied: ${applied.join(', ')}` : 'the database is up to date');
      } finally {
        await db.close().catch(() => undefined);
      }
      return;
    }
    case 'seed': {
      const [file] = rest;
      if (!file) throw new ConfigError(HELP.seed!);
      const data = await readCheckedSeed(checkSeedFile(file, 'seed'));
      checkDataDir(config);
      const server = await createServerOrExplain({ ...config, jobs: { ...config.jobs, worker: false } }, { logger: false });
      try {
        const [{ AREAS }, { loadSeed }] = await loadServer();
        printSeedReport(await loadSeed(server.ctx, AREAS, data));
        // Activity in the seed (issues, comments) is fanned out by a running server's worker.
      } finally {
        await server.close();
      }
      return;
    }
    case 'admin':
      return adminCall(config, rest);
    case 'backup': {
      const [target] = rest;
      if (!target || rest.length > 1) throw new ConfigError(HELP.backup!);
      const { backup } = await import('./admin/backup.ts');
      const report = await backup({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, target: resolve(target) }).catch((error: Error) => {
        throw new ConfigError(`backup: ${error.message}`, { cause: error });
      });
      console.log(`backup: ${resolve(target)}: ${report.files} files, ${(report.bytes / 1024).toFixed(0)} KiB, in ${report.ms} ms (database: ${report.database})`);
      return;
    }
    case 'secret-key': {
      if (rest.length > 1) throw new ConfigError('secret-key rotate: it takes no arguments; the new key is CODEHOST_NEW_SECRET_KEY (see `codehost help secret-key`)');
      return rotateKey(config);
    }
    case 'admin-token': {
      if (rest[0] !== 'reset' || rest.length > 1) throw new ConfigError('admin-token: the actions are `codehost admin-token reset` and `codehost admin-token generate` (see `codehost help admin-token`)');
      const { db } = await openMigrated(config);
      try {
        const { resetAdminToken } = await import('./admin/token.ts');
        const token = await resetAdminToken(db);
        console.log(`new admin token (shown once, stored hashed; the previous one no longer works): ${token}`);
        if (config.adminToken) {
          console.log('note: CODEHOST_ADMIN_TOKEN is set: while it is, it is the admin token and this stored one is not used');
        }
      } finally {
        await db.close();
      }
      return;
    }
  }
}

/**
 * `codehost secret-key rotate`: the configured database moves from the key in force to
 * CODEHOST_NEW_SECRET_KEY (src/platform/secrets.ts); the key is read from the environment, never
 * from the command line (which `ps` and shell history show), and neither key is printed.
 */
async function rotateKey(config: Config): Promise<void> {
  const next = process.env.CODEHOST_NEW_SECRET_KEY;
  if (!next) throw new ConfigError('secret-key rotate: CODEHOST_NEW_SECRET_KEY is not set: set it to the new key (make one with `codehost secret-key generate`); CODEHOST_SECRET_KEY is the key in force');
  const weakness = secretKeyWeakness(next);
  if (weakness) throw new ConfigError(`secret-key rotate: CODEHOST_NEW_SECRET_KEY ${weakness}; make one with \`codehost secret-key generate\``);
  const { db } = await openMigrated(config);
  try {
    const [{ AREAS }, { rotateSecretKey }] = await Promise.all([import('./app.ts'), import('./platform/secrets.ts')]);
    const report = await rotateSecretKey(db.kysely, config.secretKey, next, async (trx, reseal) => {
      let count = 0;
      for (const area of AREAS) count += (await area.resealSecrets?.(trx, reseal)) ?? 0;
      return count;
    }).catch((error: unknown) => {
      if (error instanceof ConfigError) throw error;
      throw new ConfigError(`secret-key rotate: nothing changed: ${(error as Error).message}`, { cause: error });
    });
    console.log(`secret-key rotate: ${report.resealed} sealed secret${report.resealed === 1 ? '' : 's'} sealed again; the database's key is now fingerprint ${report.to} (was ${report.from})`);
    console.log('start every process with CODEHOST_SECRET_KEY set to the new key (the value of CODEHOST_NEW_SECRET_KEY); a process with the old key refuses to start, and URLs signed before no longer verify');
  } finally {
    await db.close().catch(() => undefined);
  }
}

/** Whether failures show their stack: CODEHOST_LOG_LEVEL=debug or trace. */
function debugging(): boolean {
  return ['debug', 'trace'].includes(process.env.CODEHOST_LOG_LEVEL ?? '');
}

function describeError(error: unknown): string {
  if (error instanceof ConfigError) return error.message;
  if (error instanceof ApiError) {
    const details = error.errors?.map((e) => e.message ?? `${e.resource} ${e.field}: ${e.code}`).join('; ');
    return `error: ${error.message}${details ? `: ${details}` : ''}`;
  }
  const message = error instanceof Error ? error.message : String(error);
  return `error: ${message}${debugging() ? '' : ' (CODEHOST_LOG_LEVEL=debug shows where)'}`;
}

/** Runs the CLI; a failure is one line on stderr (the stack too at debug) and exit status 1. */
export function run(argv: string[]): void {
  main(argv).catch((error: unknown) => {
    console.error(describeError(error));
    if (debugging()) {
      for (let e = error as { stack?: string; cause?: unknown } | undefined; e; e = e.cause as typeof e) {
        if (e.stack) console.error(e === error ? e.stack : `caused by: ${e.stack}`);
      }
    }
    process.exit(1);
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) run(process.argv.slice(2));
