import { sql, type Kysely } from 'kysely';
import { CHANGES_CHANNEL, UNCACHED_TABLES } from '../changes.ts';
import { isPostgres } from './helpers.ts';

// PostgreSQL: a commit that wrote a table a cached read may depend on notifies every process
// (src/db/changes.ts): one statement trigger per table, whose NOTIFY PostgreSQL sends at commit,
// once per table and transaction (it folds equal notifications of a transaction into one). Every
// table of the schema but the bookkeeping of UNCACHED_TABLES and the migrations' own; a table made
// by a later migration gets its trigger there (src/db/changes.test.ts checks every table).
// SQLite needs none: another connection's commit moves `PRAGMA data_version`.
export async function up(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`
    create function codehost_changed() returns trigger language plpgsql as $$
    begin
      perform pg_notify(${sql.lit(CHANGES_CHANNEL)}, tg_table_name);
      return null;
    end $$`.execute(db);
  const { rows } = await sql<{ name: string }>`select table_name as name from information_schema.tables
    where table_schema = current_schema() and table_type = 'BASE TABLE' order by table_name`.execute(db);
  for (const { name } of rows) {
    if (UNCACHED_TABLES.has(name) || name.startsWith('kysely_')) continue;
    await sql`create trigger codehost_changes after insert or update or delete or truncate on ${sql.table(name)}
      for each statement execute function codehost_changed()`.execute(db);
  }
}
