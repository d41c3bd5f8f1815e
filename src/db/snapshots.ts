// The whole database state for the test double (src/testing/support.ts): emptied, saved under a
// name, put back. Every table but the server's own (settings: the admin token's hash and the secret
// key; the migrations' bookkeeping) is state, and so are the queued jobs (the `jobs` table on SQLite,
// pg-boss's `pgboss.job` on PostgreSQL).
//   SQLite: a snapshot is a database file of its own, ATTACHed: `CREATE TABLE snap.t AS SELECT`,
//     and back with DELETE + INSERT … SELECT in one transaction (foreign keys checked at COMMIT),
//     `sqlite_sequence` included so ids continue as they would have.
//   PostgreSQL: a snapshot is a schema `codehost_snap_<hash of the name>` (`CREATE TABLE … AS TABLE`),
//     and back with DELETE of every table (children first), INSERT … SELECT in foreign-key order and
//     the identity sequences set as saved, all in one round trip and one transaction. DELETE, not
//     TRUNCATE: a test double's tables are small, and TRUNCATE makes new files for each of ~50
//     tables (measured: a reset to empty took 1.8 s with it on the loaded 2-core machine).
// The caller runs these alone (the gate), so no request sees a half-restored state.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { sql, type Kysely } from 'kysely';
import type { Db } from './index.ts';

/** Tables that are the server's, not the world's: a reset or a restore leaves them as they are. */
const KEPT = new Set(['settings', 'kysely_migration', 'kysely_migration_lock']);
/** Where a snapshot keeps its name, time and the caller's own state (JSON). */
const META = '_snapshot';

export interface SnapshotMeta {
  name: string;
  createdAt: string;
  /** Whatever else the caller saved with the rows (the clock, faults...), as JSON. */
  state: string;
  bytes: number;
}

export interface StateTables {
  /** Deletes every row of the state (and every queued job); ids start again at 1. */
  empty(): Promise<void>;
  /**
   * The same inside the caller's transaction `trx`, so that what the caller writes next commits with
   * it or not at all. Answers what puts back what a rollback does not (PostgreSQL's sequences: setval
   * is not transactional), to be called once the transaction has rolled back.
   */
  emptyIn(trx: Kysely<any>): Promise<() => Promise<void>>;
  save(name: string, createdAt: string, state: string): Promise<number>;
  /** Puts the saved rows back in place of the present ones; null when there is no such snapshot. */
  restore(name: string): Promise<SnapshotMeta | null>;
  drop(name: string): Promise<boolean>;
  list(): Promise<SnapshotMeta[]>;
  exists(name: string): Promise<boolean>;
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

export function stateTables(db: Db, snapshotDir: string): StateTables {
  return db.dialect === 'postgres' ? postgresState(db.kysely) : sqliteState(db.kysely, snapshotDir);
}

function sqliteState(kysely: Kysely<any>, dir: string): StateTables {
  const fileOf = (name: string) => join(dir, `${name}.db`);
  const tablesOf = async (executor: Kysely<any>, schema: string) =>
    (await sql<{ name: string }>`SELECT name FROM ${sql.raw(schema)}.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`.execute(executor)).rows
      .map((row) => row.name)
      .filter((name) => !KEPT.has(name) && name !== META);
  const run = (executor: Kysely<any>, text: string) => sql.raw(text).execute(executor);
  const readMeta = (file: string): SnapshotMeta | null => {
    if (!existsSync(file)) return null;
    const snapshot = new DatabaseSync(file, { readOnly: true });
    try {
      const row = snapshot.prepare(`SELECT name, created_at, state FROM ${META}`).get() as { name: string; created_at: string; state: string } | undefined;
      return row ? { name: row.name, createdAt: row.created_at, state: row.state, bytes: statSync(file).size } : null;
    } finally {
      snapshot.close();
    }
  };
  const attached = <T>(file: string, work: (connection: Kysely<any>) => Promise<T>) =>
    kysely.connection().execute(async (connection) => {
      await sql`ATTACH DATABASE ${file} AS snap`.execute(connection);
      try {
        return await work(connection);
      } finally {
        await run(connection, 'DETACH DATABASE snap');
      }
    });
  const inTransaction = async (connection: Kysely<any>, work: () => Promise<void>) => {
    await run(connection, 'BEGIN IMMEDIATE');
    try {
      await work();
      await run(connection, 'COMMIT');
    } catch (error) {
      await run(connection, 'ROLLBACK');
      throw error;
    }
  };
  return {
    async empty() {
      await kysely.connection().execute(async (connection) => {
        const tables = await tablesOf(connection, 'main');
        await inTransaction(connection, async () => {
          await run(connection, 'PRAGMA defer_foreign_keys = ON');
          for (const table of tables) await run(connection, `DELETE FROM main.${quote(table)}`);
          await run(connection, 'DELETE FROM main.sqlite_sequence');
        });
      });
    },
    async emptyIn(trx) {
      // Foreign keys checked at the transaction's commit (the pragma ends with it).
      await run(trx, 'PRAGMA defer_foreign_keys = ON');
      for (const table of await tablesOf(trx, 'main')) await run(trx, `DELETE FROM main.${quote(table)}`);
      await run(trx, 'DELETE FROM main.sqlite_sequence');
      return async () => {};
    },
    async save(name, createdAt, state) {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const file = fileOf(name);
      const partial = `${file}.partial`;
      rmSync(partial, { force: true });
      await attached(partial, async (connection) => {
        // A snapshot half-written is thrown away, never read: no journal, no fsync.
        await run(connection, 'PRAGMA snap.journal_mode = OFF');
        await run(connection, 'PRAGMA snap.synchronous = OFF');
        const tables = await tablesOf(connection, 'main');
        await inTransaction(connection, async () => {
          for (const table of tables) await run(connection, `CREATE TABLE snap.${quote(table)} AS SELECT * FROM main.${quote(table)}`);
          await run(connection, 'CREATE TABLE snap.sequences AS SELECT name, seq FROM main.sqlite_sequence');
          await run(connection, `CREATE TABLE snap.${META} (name TEXT, created_at TEXT, state TEXT)`);
          await sql`INSERT INTO snap._snapshot (name, created_at, state) VALUES (${name}, ${createdAt}, ${state})`.execute(connection);
        });
      });
      // Only a whole snapshot takes the name.
      renameSync(partial, file);
      return statSync(file).size;
    },
    async restore(name) {
      const file = fileOf(name);
      const meta = readMeta(file);
      if (!meta) return null;
      await attached(file, async (connection) => {
        const present = await tablesOf(connection, 'main');
        const saved = new Set(await tablesOf(connection, 'snap'));
        saved.delete('sequences');
        await inTransaction(connection, async () => {
          await run(connection, 'PRAGMA defer_foreign_keys = ON');
          for (const table of present) {
            await run(connection, `DELETE FROM main.${quote(table)}`);
            if (saved.has(table)) await run(connection, `INSERT INTO main.${quote(table)} SELECT * FROM snap.${quote(table)}`);
          }
          await run(connection, 'DELETE FROM main.sqlite_sequence');
          await run(connection, 'INSERT INTO main.sqlite_sequence (name, seq) SELECT name, seq FROM snap.sequences');
        });
      });
      return meta;
    },
    async drop(name) {
      const file = fileOf(name);
      if (!existsSync(file)) return false;
      rmSync(file, { force: true });
      return true;
    },
    async list() {
      if (!existsSync(dir)) return [];
      return readdirSync(dir)
        .filter((file) => file.endsWith('.db'))
        .map((file) => readMeta(join(dir, file)))
        .filter((meta): meta is SnapshotMeta => meta !== null);
    },
    async exists(name) {
      return existsSync(fileOf(name));
    },
  };
}

/** A snapshot's schema: the name may be 64 characters, an identifier at most 63. */
const schemaOf = (name: string) => `codehost_snap_${createHash('sha256').update(name).digest('hex').slice(0, 40)}`;

// PostgreSQL: a snapshot is a schema of its own holding a copy of every state table, the sequences'
// positions and pg-boss's jobs.
const pgQuery = async <T>(executor: Kysely<any>, text: string) => (await sql.raw<T>(text).execute(executor)).rows;
/** Statements sent as one (no parameters: the simple protocol takes several), in one transaction. */
const atomically = async (connection: Kysely<any>, statements: string[]) => {
  try {
    await pgQuery(connection, ['BEGIN', ...statements, 'COMMIT'].join(';\n'));
  } catch (error) {
    // The connection goes back to the pool: not in a failed transaction.
    await pgQuery(connection, 'ROLLBACK').catch(() => {});
    throw error;
  }
};
const tablesOf = async (executor: Kysely<any>, schema: string) =>
  (await sql<{ name: string }>`SELECT tablename AS name FROM pg_tables WHERE schemaname = ${schema}`.execute(executor)).rows
    .map((row) => row.name)
    .filter((name) => !KEPT.has(name) && !name.startsWith('_'));
/** The state tables, each after the tables it refers to (foreign keys), so inserts in this order hold. */
const ordered = async (executor: Kysely<any>) => {
  const tables = await tablesOf(executor, 'public');
  const edges = (await sql<{ child: string; parent: string }>`
    SELECT c.relname AS child, p.relname AS parent FROM pg_constraint k
    JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class p ON p.oid = k.confrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE k.contype = 'f' AND n.nspname = 'public'`.execute(executor)).rows;
  const parents = new Map<string, string[]>(tables.map((table) => [table, []]));
  for (const { child, parent } of edges) if (child !== parent) parents.get(child)?.push(parent);
  const out: string[] = [];
  const seen = new Set<string>();
  const visit = (table: string) => {
    if (seen.has(table)) return;
    seen.add(table);
    for (const parent of parents.get(table) ?? []) visit(parent);
    out.push(table);
  };
  tables.forEach(visit);
  return out;
};
/** Identity sequences of the state tables: `"public"."t_id_seq"`. */
const sequencesOf = async (executor: Kysely<any>) =>
  (await sql<{ sequence: string }>`
    SELECT pg_get_serial_sequence(quote_ident(table_name), column_name) AS sequence FROM information_schema.columns
    WHERE table_schema = 'public' AND is_identity = 'YES'`.execute(executor)).rows
    .map((row) => row.sequence)
    .filter((sequence) => !KEPT.has(sequence.replace(/^public\./, '').replace(/_id_seq$/, '').replace(/"/g, '')));
/** pg-boss's jobs (a partitioned table): its writable columns, or null before pg-boss made its schema. */
const jobColumns = async (executor: Kysely<any>) => {
  const rows = (await sql<{ column_name: string }>`
    SELECT column_name FROM information_schema.columns
    WHERE table_schema = 'pgboss' AND table_name = 'job' AND is_generated = 'NEVER' ORDER BY ordinal_position`.execute(executor)).rows;
  return rows.length === 0 ? null : rows.map((row) => quote(row.column_name)).join(', ');
};
/**
 * The saved jobs' columns as they go back: a job claimed when the snapshot was taken (`active`, its
 * handler waiting at the gate) is claimable again (`created`, never started): no worker holds it
 * in the restored world, and left active it would wait for pg-boss to expire it (drains answering
 * 504 meanwhile), then run a second time. One claimed now too stays active: the worker that
 * claimed it waits at the gate and completes it (made claimable, it would run twice).
 */
const unheld = `state = 'active' AND id NOT IN (SELECT id FROM codehost_held_jobs)`;
const claimable = (columns: string) => columns.split(', ').map((column) => {
  if (column === '"state"') return `CASE WHEN ${unheld} THEN 'created'::pgboss.job_state ELSE state END`;
  if (column === '"started_on"' || column === '"heartbeat_on"') return `CASE WHEN ${unheld} THEN NULL ELSE ${column} END`;
  return column;
}).join(', ');
const readSchemaMeta = async (executor: Kysely<any>, schema: string): Promise<SnapshotMeta | null> => {
  const rows = await pgQuery<{ name: string; created_at: string; state: string; bytes: number }>(executor, `
    SELECT m.name, m.created_at, m.state, (
      SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = '${schema}' AND c.relkind = 'r') AS bytes
    FROM ${quote(schema)}.${META} m`).catch(() => []);
  const row = rows[0];
  return row ? { name: row.name, createdAt: row.created_at, state: row.state, bytes: Number(row.bytes) } : null;
};
/** Every row of the tables gone, children before the parents they refer to. */
const deleteAll = (tables: string[]) => [...tables].reverse().map((table) => `DELETE FROM public.${quote(table)}`);
const schemaExists = async (executor: Kysely<any>, schema: string) =>
  (await sql`SELECT 1 FROM pg_namespace WHERE nspname = ${schema}`.execute(executor)).rows.length > 0;

function postgresState(kysely: Kysely<any>): StateTables {
  return {
    async empty() {
      await kysely.connection().execute(async (connection) => {
        const tables = await ordered(connection);
        const sequences = await sequencesOf(connection);
        const jobs = await jobColumns(connection);
        await atomically(connection, [
          ...deleteAll(tables),
          ...(sequences.length ? [`SELECT ${sequences.map((sequence) => `setval('${sequence}', 1, false)`).join(', ')}`] : []),
          ...(jobs ? ['DELETE FROM pgboss.job'] : []),
        ]);
      });
    },
    async emptyIn(trx) {
      const tables = await ordered(trx);
      const sequences = await sequencesOf(trx);
      const jobs = await jobColumns(trx);
      const before = sequences.length
        ? await pgQuery<{ name: string; last_value: string; is_called: boolean }>(trx, sequences.map((sequence) => `SELECT '${sequence}'::text AS name, last_value, is_called FROM ${sequence}`).join(' UNION ALL '))
        : [];
      await pgQuery(trx, [
        ...deleteAll(tables),
        ...(sequences.length ? [`SELECT ${sequences.map((sequence) => `setval('${sequence}', 1, false)`).join(', ')}`] : []),
        ...(jobs ? ['DELETE FROM pgboss.job'] : []),
      ].join(';\n'));
      return async () => {
        if (before.length) await pgQuery(kysely, `SELECT ${before.map((row) => `setval('${row.name}', ${Number(row.last_value)}, ${row.is_called})`).join(', ')}`);
      };
    },
    async save(name, createdAt, state) {
      const schema = schemaOf(name);
      await kysely.connection().execute(async (connection) => {
        const tables = await tablesOf(connection, 'public');
        const sequences = await sequencesOf(connection);
        const jobs = await jobColumns(connection);
        const literal = (value: string) => `'${value.replace(/'/g, "''")}'`;
        await atomically(connection, [
          `CREATE SCHEMA ${quote(schema)}`,
          ...tables.map((table) => `CREATE TABLE ${quote(schema)}.${quote(table)} AS TABLE public.${quote(table)}`),
          `CREATE TABLE ${quote(schema)}._sequences AS ` + (sequences.length === 0
            ? 'SELECT NULL::text AS name, 0::bigint AS last_value, false AS is_called WHERE false'
            : sequences.map((sequence) => `SELECT ${literal(sequence)}::text AS name, last_value, is_called FROM ${sequence}`).join(' UNION ALL ')),
          ...(jobs ? [`CREATE TABLE ${quote(schema)}._jobs AS SELECT ${jobs} FROM pgboss.job`] : []),
          `CREATE TABLE ${quote(schema)}.${META} AS SELECT ${literal(name)}::text AS name, ${literal(createdAt)}::text AS created_at, ${literal(state)}::text AS state`,
        ]);
      });
      return (await readSchemaMeta(kysely, schema))?.bytes ?? 0;
    },
    async restore(name) {
      const schema = schemaOf(name);
      return kysely.connection().execute(async (connection) => {
        const meta = await readSchemaMeta(connection, schema);
        if (!meta) return null;
        const tables = await ordered(connection);
        const saved = new Set(await tablesOf(connection, schema));
        const jobs = await jobColumns(connection);
        const savedJobs = (await sql`SELECT 1 FROM pg_tables WHERE schemaname = ${schema} AND tablename = '_jobs'`.execute(connection)).rows.length > 0;
        await atomically(connection, [
          ...deleteAll(tables),
          // Each table emptied again just before its rows go in: a trigger on a table inserted
          // earlier (a repository's insert makes its repository_versions row) has written to it.
          ...tables.filter((table) => saved.has(table)).flatMap((table) => [
            `DELETE FROM public.${quote(table)}`,
            `INSERT INTO public.${quote(table)} SELECT * FROM ${quote(schema)}.${quote(table)}`,
          ]),
          `SELECT setval(name::regclass, last_value, is_called) FROM ${quote(schema)}._sequences`,
          // The jobs claimed now, by a worker whose handler waits at the gate: it completes them.
          ...(jobs ? ['CREATE TEMPORARY TABLE codehost_held_jobs ON COMMIT DROP AS SELECT id FROM pgboss.job WHERE state = \'active\''] : []),
          ...(jobs ? ['DELETE FROM pgboss.job'] : []),
          ...(jobs && savedJobs ? [`INSERT INTO pgboss.job (${jobs}) SELECT ${claimable(jobs)} FROM ${quote(schema)}._jobs`] : []),
        ]);
        return meta;
      });
    },
    async drop(name) {
      const schema = schemaOf(name);
      if (!(await schemaExists(kysely, schema))) return false;
      await pgQuery(kysely, `DROP SCHEMA ${quote(schema)} CASCADE`);
      return true;
    },
    async list() {
      const schemas = (await sql<{ nspname: string }>`SELECT nspname FROM pg_namespace WHERE nspname LIKE 'codehost\_snap\_%'`.execute(kysely)).rows;
      const metas = await Promise.all(schemas.map((row) => readSchemaMeta(kysely, row.nspname)));
      return metas.filter((meta): meta is SnapshotMeta => meta !== null);
    },
    async exists(name) {
      return schemaExists(kysely, schemaOf(name));
    },
  };
}
