import type { CreateTableBuilder, Kysely } from 'kysely';
import { isPostgres } from '../prepared.ts';

export { isPostgres };

/** An integer id column that the database numbers: the same column type (int4) on both engines. */
export function withId<T extends string>(db: Kysely<any>, table: CreateTableBuilder<T, never>): CreateTableBuilder<T, 'id'> {
  return isPostgres(db)
    ? table.addColumn('id', 'integer', (c) => c.primaryKey().generatedByDefaultAsIdentity())
    : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}
