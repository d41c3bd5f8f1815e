// A savepoint inside a transaction: `fn` runs, and when it throws, what it wrote is rolled back to
// where it started while the enclosing transaction goes on (the error is thrown again).
import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.ts';

export async function withSavepoint<T>(trx: Kysely<Database>, name: string, fn: () => Promise<T>): Promise<T> {
  if (!/^[a-z_]+$/.test(name)) throw new Error(`bad savepoint name ${name}`);
  await sql.raw(`savepoint ${name}`).execute(trx);
  try {
    const result = await fn();
    await sql.raw(`release savepoint ${name}`).execute(trx);
    return result;
  } catch (error) {
    await sql.raw(`rollback to savepoint ${name}`).execute(trx);
    await sql.raw(`release savepoint ${name}`).execute(trx);
    throw error;
  }
}
