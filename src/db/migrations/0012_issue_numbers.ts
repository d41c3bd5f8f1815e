import type { Kysely } from 'kysely';

// The last issue number of each repository (issues and pull requests share the sequence). Creating an
// issue takes its number by incrementing this row in the creating transaction: concurrent creations
// queue on the row lock and each gets the next number, and a creation that rolls back gives its
// number back (no gaps). Repositories that already have issues start from their highest number.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('issue_numbers')
    .addColumn('repository_id', 'integer', (c) => c.primaryKey().references('repositories.id').onDelete('cascade'))
    .addColumn('last_number', 'integer', (c) => c.notNull())
    .execute();
  await db
    .insertInto('issue_numbers')
    .columns(['repository_id', 'last_number'])
    .expression((eb) => eb.selectFrom('issues').select(['repository_id', eb.fn.max('number').as('last_number')]).groupBy('repository_id'))
    .execute();
}
