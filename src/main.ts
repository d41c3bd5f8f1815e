// The CLI: `codehost serve | migrate | seed FILE | admin METHOD PATH [JSON]`.
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { SeedReport } from './admin/seed.ts';
import type { Server } from './app.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { ApiError } from './platform/errors.ts';

// The server and its dependencies load only for the commands that need them: `--help` and
// `admin` stay quick.
const loadServer = () => Promise.all([import('./app.ts'), import('./admin/seed.ts')]);

const DEMO_SEED = fileURLToPath(new URL('./admin/demo.yaml', import.meta.url));

const HELP: Record<string, string> = {
  main: `codehost: a self-hostable server for the code-hosting platform REST API

Usage: codehost <command> [options]

Commands:
  serve [--seed FILE]        start the API server (and its background worker)
  migrate                    apply pending database migrations and exit
  seed FILE                  load a YAML or JSON seed file and exit
  admin METHOD PATH [JSON]   call the admin API of a running server

Configuration comes from CODEHOST_* environment variables (see the README).
Run \`codehost <command> --help\` for a command's options.`,
  serve: `Usage: codehost serve [--seed FILE]

Starts the server on CODEHOST_HOST:CODEHOST_PORT. A new embedded database gets the demo data
unless CODEHOST_DEMO=0. --seed FILE loads a seed file at start (idempotent).
SIGTERM or SIGINT: finish in-flight requests, stop the worker, close the database.`,
  migrate: `Usage: codehost migrate

Applies every pending migration to the configured database (DATABASE_URL, or the embedded
SQLite file under CODEHOST_DATA_DIR) and exits.`,
  seed: `Usage: codehost seed FILE

Loads a YAML or JSON seed file (keys: users, enterprises, orgs, teams, repos, watching, tokens,
apps, installations, authorizations, issues, comments, and the areas' keys). What exists is left
alone. Prints the one-time secrets of what it created.`,
  admin: `Usage: codehost admin METHOD PATH [JSON] [--follow]

Calls the admin API of a running server: CODEHOST_URL (default http://127.0.0.1:$CODEHOST_PORT)
with CODEHOST_ADMIN_TOKEN. PATH is relative to /_admin.
--follow repeats a GET every second while the answer's state is pending or exporting, printing
each change, then prints the final answer (exit status 1 when it ends failed).
Examples:
  codehost admin POST /users '{"login":"alice"}'
  codehost admin POST /jobs/drain
  codehost admin GET /clock
  codehost admin GET /migrations/7 --follow`,
};

function printSeedReport(report: SeedReport): void {
  const created = Object.entries(report.created).map(([k, n]) => `${n} ${k}`).join(', ') || 'nothing new';
  console.log(`seed: created ${created}`);
  for (const secret of report.secrets) {
    console.log(`  ${secret.kind} ${secret.name} (shown once):`);
    for (const [key, value] of Object.entries(secret.values)) console.log(`    ${key}: ${value.includes('\n') ? `\n${value}` : value}`);
  }
}

function banner(address: string, server: Server, demoLoaded: boolean): void {
  const base = `${address}/api/v3`;
  const lines = [`codehost is listening on ${address} (API at ${base}, reference at ${address}/docs)`];
  lines.push(`database: ${server.ctx.db.dialect === 'sqlite' ? `${server.ctx.config.dataDir}/codehost.db (embedded SQLite)` : 'PostgreSQL'}`);
  if (server.generatedAdminToken) {
    lines.push(`admin token (shown once, stored hashed; set CODEHOST_ADMIN_TOKEN to choose your own): ${server.generatedAdminToken}`);
  }
  if (demoLoaded || server.ctx.config.demo) {
    lines.push('', 'Try the demo data:');
    lines.push(`  curl -H "Authorization: Bearer chp_DemoMonaClassicToken00000000013Mkcu6" ${base}/notifications`);
    lines.push(`  curl -u Iv1.demoapp0000000001:demo-client-secret-0000000000000000000000 -X POST ${base}/applications/Iv1.demoapp0000000001/token -d '{"access_token":"cho_DemoMonaOAuthToken0000000000010H4Nxz"}'`);
    lines.push(`  curl ${base}/repos/acme/widgets/issue-types`);
  }
  console.log(lines.join('\n'));
}

async function serve(config: Config, seedFile: string | undefined): Promise<void> {
  const [{ AREAS, createServer }, { loadSeedFile }] = await loadServer();
  const server = await createServer(config);
  let demoLoaded = false;
  if (server.freshDatabase && config.demo && server.ctx.db.dialect === 'sqlite') {
    printSeedReport(await loadSeedFile(server.ctx, AREAS, DEMO_SEED));
    demoLoaded = true;
  }
  if (seedFile) printSeedReport(await loadSeedFile(server.ctx, AREAS, seedFile));
  const address = await server.listen();
  banner(address, server, demoLoaded);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    server.ctx.log.info({ signal }, 'shutting down: finishing in-flight requests and jobs');
    const force = setTimeout(() => process.exit(1), 30_000);
    force.unref();
    server.close().then(() => process.exit(0), (err: unknown) => {
      server.ctx.log.error({ err }, 'shutdown failed');
      process.exit(1);
    });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

/** States of a background operation (a user migration's export) that `--follow` waits out. */
const IN_PROGRESS = ['pending', 'exporting'];

async function adminCall(config: Config, args: string[]): Promise<void> {
  const follow = args.includes('--follow');
  const [method, path, body] = args.filter((arg) => arg !== '--follow');
  if (!method || !path) throw new ConfigError(HELP.admin!);
  if (follow && method.toUpperCase() !== 'GET') throw new ConfigError('--follow repeats a GET');
  const token = process.env.CODEHOST_ADMIN_TOKEN;
  if (!token) throw new ConfigError('CODEHOST_ADMIN_TOKEN must be set to call the admin API');
  const base = (process.env.CODEHOST_URL ?? `http://127.0.0.1:${config.port}`).replace(/\/+$/, '');
  const url = `${base}/_admin${path.startsWith('/') ? path : `/${path}`}`;
  let last = '';
  for (;;) {
    const response = await fetch(url, {
      method: method.toUpperCase(),
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ?? (method.toUpperCase() === 'POST' ? '{}' : undefined),
    });
    const text = await response.text();
    const answer = text ? (JSON.parse(text) as { state?: string; records_exported?: number }) : undefined;
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

export async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    console.log(HELP.main);
    return;
  }
  if (!(command in HELP) || command === 'main') throw new ConfigError(`unknown command "${command}"\n\n${HELP.main}`);
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(HELP[command]);
    return;
  }
  const config = loadConfig();
  switch (command) {
    case 'serve': {
      const { values } = parseArgs({ args: rest, options: { seed: { type: 'string' } } });
      return serve(config, values.seed);
    }
    case 'migrate': {
      const [{ openDatabase }, { migrateToLatest }] = await Promise.all([import('./db/index.ts'), import('./db/migrate.ts')]);
      const db = openDatabase({ databaseUrl: config.databaseUrl, sqlitePath: `${config.dataDir}/codehost.db` });
      const applied = await migrateToLatest(db);
      console.log(applied.length ? `applied: ${applied.join(', ')}` : 'the database is up to date');
      await db.close();
      return;
    }
    case 'seed': {
      const [file] = rest;
      if (!file) throw new ConfigError(HELP.seed!);
      const [{ AREAS, createServer }, { loadSeedFile }] = await loadServer();
      const server = await createServer({ ...config, jobs: { ...config.jobs, worker: false } }, { logger: false });
      try {
        printSeedReport(await loadSeedFile(server.ctx, AREAS, file));
        // Activity in the seed (issues, comments) is fanned out by a running server's worker.
      } finally {
        await server.close();
      }
      return;
    }
    case 'admin':
      return adminCall(config, rest);
  }
}

/** Runs the CLI and turns errors into a message and exit code 1. */
export function run(argv: string[]): void {
  main(argv).catch((error: unknown) => {
    if (error instanceof ConfigError) console.error(error.message);
    else if (error instanceof ApiError) {
      const details = error.errors?.map((e) => e.message ?? `${e.resource} ${e.field}: ${e.code}`).join('; ');
      console.error(`error: ${error.message}${details ? `: ${details}` : ''}`);
    }
    else console.error(error);
    process.exit(1);
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) run(process.argv.slice(2));
