// What the commands share to start: the server loaded on demand, the database migrated, the seed
// file checked, and every startup failure explained in one line that names the setting.
import { existsSync, statSync } from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import { resolve } from 'node:path';
import type { SeedReport } from '../admin/seed.ts';
import type { Server } from '../app.ts';
import { checkDataDir, ConfigError, type Config } from '../config.ts';
import { networkErrorCode } from '../db/errors.ts';
import type { Db } from '../db/index.ts';

// The server and its dependencies load only for the commands that need them: `--help` and
// `admin` stay quick.
export const loadServer = () => Promise.all([import('../app.ts'), import('../admin/seed.ts')]);

export function printSeedReport(report: SeedReport): void {
  const created = Object.entries(report.created).map(([k, n]) => `${n} ${k}`).join(', ') || 'nothing new';
  console.log(`seed: created ${created}`);
  for (const secret of report.secrets) {
    console.log(`  ${secret.kind} ${secret.name} (shown once):`);
    for (const [key, value] of Object.entries(secret.values)) console.log(`    ${key}: ${value.includes('\n') ? `\n${value}` : value}`);
  }
}

// --- Startup failures, explained ------------------------------------------------------------------

export const errorCode = (error: unknown): string | undefined => {
  const e = error as { code?: unknown; errors?: { code?: unknown }[]; cause?: unknown };
  if (typeof e?.code === 'string') return e.code;
  if (typeof e?.errors?.[0]?.code === 'string') return e.errors[0].code;
  return e?.cause ? errorCode(e.cause) : undefined;
};

/** What went wrong with the database, naming the setting (never a password). */
export function databaseError(error: unknown, config: Config): ConfigError {
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
export function listenError(error: unknown, config: Config): Error {
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
export async function checkListen(config: Config): Promise<void> {
  if (config.port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const probe = createNetServer();
    probe.once('error', reject);
    probe.listen({ host: config.host, port: config.port, exclusive: true }, () => probe.close(() => resolve()));
  }).catch((error: unknown) => {
    throw listenError(error, config);
  });
}

export function checkSeedFile(file: string, what: string): string {
  const path = resolve(file);
  if (!existsSync(path) || !statSync(path).isFile()) throw new ConfigError(`${what}: no file at ${path}; give the path of a YAML or JSON seed file`);
  return path;
}

/** A seed file parsed and its keys checked, before any database is touched (its entries are checked as it loads, all rolled back on an error). */
export async function readCheckedSeed(path: string): Promise<unknown> {
  const [{ AREAS }, { readSeedFile, checkSeed }] = await loadServer();
  const data = await readSeedFile(path);
  checkSeed(AREAS, data);
  return data;
}

/**
 * The database of commands that do not serve, migrated, with the migrations this applied; for
 * SQLite, the data directory is checked first.
 */
export async function openMigrated(config: Config): Promise<{ db: Db; applied: string[] }> {
  if (!config.databaseUrl) checkDataDir(config);
  const [{ openDatabase }, { migrateToLatest }] = await Promise.all([import('../db/index.ts'), import('../db/migrate.ts')]);
  const db = openDatabase({ databaseUrl: config.databaseUrl, sqlitePath: `${config.dataDir}/codehost.db` });
  try {
    return { db, applied: await migrateToLatest(db) };
  } catch (error) {
    await db.close().catch(() => undefined);
    throw fromDatabase(error) ? databaseError(error, config) : error;
  }
}

/** Whether an error came from the database driver (a connection or an SQL failure). */
export function fromDatabase(error: unknown): boolean {
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
export async function settlePooler(config: Config): Promise<Config> {
  if (!config.databaseUrl) return config;
  const [{ migrationsRecorded, transactionPoolerEvidence }, { migrations }] = await Promise.all([import('../db/pooler.ts'), import('../db/migrations/index.ts')]);
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

export async function createServerOrExplain(config: Config, options: Parameters<typeof import('../app.ts').createServer>[1]): Promise<Server> {
  const [{ createServer }] = await loadServer();
  try {
    return await createServer(config, options);
  } catch (error) {
    throw fromDatabase(error) ? databaseError(error, config) : error;
  }
}

/** Whether failures show their stack: CODEHOST_LOG_LEVEL=debug or trace. */
export function debugging(): boolean {
  return ['debug', 'trace'].includes(process.env.CODEHOST_LOG_LEVEL ?? '');
}
