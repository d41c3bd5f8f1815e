// PostgreSQL plans a list's named statement once per connection only if its generic plan (made for
// any parameters) costs no more than the plans made for each run's values; otherwise it plans it
// anew on every run (the planning of this statement, about 3 ms, is ten times running it). With
// LIMIT and OFFSET as plain parameters, the generic plan, which must guess them, cost more than a
// plan that knew them (offset 0, limit 50) once the users had 1,000 threads each: every run was
// planned. As uncorrelated subqueries they are guessed alike in both, and the generic plan is kept.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import * as store from '../../../src/areas/notifications/store.ts';
import { openDatabase } from '../../../src/db/index.ts';
import { createTestDatabase, engine, type TestDatabase } from '../../helpers/database.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

const skip = engine !== 'postgres' && 'PostgreSQL only: SQLite has no plan cache';
let database: TestDatabase;
let server: TestServer;

before(async () => {
  if (skip) return;
  database = await createTestDatabase();
  server = await startServer({}, { database });
  await server.admin('POST', '/users', { login: 'mona' });
  const repository = await server.admin('POST', '/repos', { owner: 'mona', name: 'widgets' });
  const db = server.server.ctx.db.kysely;
  // 20 users with 1,000 unread threads each, interleaved as months of activity leave them.
  await sql`insert into users (login, login_lower, type, site_admin, created_at, updated_at)
    select 'plan-' || i, 'plan-' || i, 'User', 0, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z' from generate_series(1, 19) i`.execute(db);
  await sql`insert into notification_subjects (repository_id, issue_id, subject_key, type, title, url, created_at, updated_at)
    select ${repository.id}, null, 'plan:' || i, 'Release', 'Release ' || i, null, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z' from generate_series(1, 1000) i`.execute(db);
  await sql`insert into notification_threads (user_id, subject_id, repository_id, reason, unread, done, updated_at, last_read_at, latest_comment_id, last_activity_id, created_at)
    select u.id, s.id, s.repository_id, 'subscribed', 1, 0, to_char(timestamp '2026-01-01' + (s.id || ' seconds')::interval, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), null, null, 0, '2026-01-01T00:00:00.000Z'
    from notification_subjects s cross join users u where s.subject_key like 'plan:%' order by s.id, u.id`.execute(db);
  await sql`analyze`.execute(db);
});
after(async () => {
  await server?.close();
  await database?.drop();
});

test('a list\'s named statement is planned once for all runs (a generic plan), not on every run', { skip }, async () => {
  // One connection: the plan cache is the connection's.
  const own = openDatabase({ databaseUrl: database.databaseUrl, sqlitePath: `${database.dataDir}/codehost.db`, poolSize: 1 });
  try {
    const userId = (await own.kysely.selectFrom('users').select('id').where('login', '=', 'mona').executeTakeFirstOrThrow()).id;
    for (let i = 0; i < 10; i++) assert.equal((await store.listPage(own.kysely, { userId, all: false }, 50, 0)).threads.length, 50);
    const { rows } = await sql<{ generic_plans: number; custom_plans: number }>`select generic_plans::int, custom_plans::int from pg_prepared_statements where name like 'codehost_notifications_list_%'`.execute(own.kysely);
    assert.equal(rows.length, 1);
    assert.ok(rows[0]!.generic_plans >= 5, `planned on every run: ${JSON.stringify(rows[0])}`);
  } finally {
    await own.close();
  }
});
