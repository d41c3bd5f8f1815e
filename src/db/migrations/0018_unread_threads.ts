import { sql, type Kysely, type SqlBool } from 'kysely';

// The unread threads of each user in a partial index, (user_id, updated_at, id) where unread = 1,
// instead of (user_id, unread, updated_at, id) over every thread. Marking a thread read then only
// removes its entry (the old index moved it: a delete and an insert at the read end of the user's
// range, for every thread of a mark-all-read), the index holds only what the unread list and
// marking read walk, and a mark-all-read in batches reads each batch from the front of what is left.
// Queries must name the predicate with a literal (`unread = 1`), not a parameter, for either
// database to use it (src/areas/notifications/store.ts).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('notification_threads_unread_by_user')
    .on('notification_threads')
    .columns(['user_id', 'updated_at', 'id'])
    .where(sql<SqlBool>`unread = 1`)
    .execute();
  await db.schema.dropIndex('notification_threads_unread').execute();
}
