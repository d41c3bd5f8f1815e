// `codehost serve`: every setting checked before anything is created, the demo data or a seed
// file loaded, the banner printed, and a graceful stop on SIGTERM and SIGINT.
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Server } from '../app.ts';
import { checkDataDir, ConfigError, refusals, type Config } from '../config.ts';
import { checkListen, checkSeedFile, createServerOrExplain, debugging, listenError, loadServer, printSeedReport, readCheckedSeed, settlePooler } from './startup.ts';

const DEMO_SEED = fileURLToPath(new URL('../admin/demo.yaml', import.meta.url));

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
  const [{ authenticate }, { findRepository }] = await Promise.all([import('../core/access/index.ts'), import('../core/repositories/store.ts')]);
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

export async function serve(config: Config, seedFile: string | undefined): Promise<void> {
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
