// The export's batched reads (src/areas/user-migrations/store.ts), explained on the database as the
// store sends them. Each is one reusable statement whatever the batch (named on PostgreSQL: parsed
// and planned once per export, not per batch), and a repository's comments and events are read as a
// range of their (repository_id, id) index: PostgreSQL, with statistics of repositories whose rows
// lie in id order, otherwise walked the primary key and filtered by repository, through every other
// repository's rows (the last repository's first batch, and each repository's last).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql, type CompiledQuery } from 'kysely';
import type { Executor } from '../../../src/db/index.ts';
import { preparedNames } from '../../../src/db/prepared.ts';
import * as store from '../../../src/areas/user-migrations/store.ts';
import { insertSyntheticActivity } from '../../fixtures/migration-data.ts';
import { createTestDatabase, engine, type TestDatabase } from '../../helpers/database.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

let database: TestDatabase;
let server: TestServer;
const repositories: number[] = [];
const postgres = engine === 'postgres';
const db = () => server.server.ctx.db.kysely;

before(async () => {
  database = await createTestDatabase();
  server = await startServer({}, { database });
  const user = await server.admin('POST', '/users', { login: 'mona' });
  for (const name of ['alpha', 'beta', 'gamma', 'delta']) {
    const repository = await server.admin('POST', '/repos', { owner: 'mona', name });
    repositories.push(repository.id);
    await insertSyntheticActivity(db(), { repositoryId: repository.id, authorId: user.id, issues: 400, commentsPerIssue: 3 });
  }
  for (const event of ['closed', 'reopened']) {
    await sql`insert into issue_events (issue_id, repository_id, actor_id, event, created_at) select id, repository_id, author_id, ${event}, created_at from issues order by id`.execute(db());
  }
  await sql`analyze`.execute(db());
});
after(async () => {
  await server?.close();
  await database?.drop();
});

/** The database as the store sees it, every statement it runs recorded. */
function recorded(statements: CompiledQuery[]): Executor {
  const target = db();
  return new Proxy(target, {
    get(object, key) {
      if (key === 'executeQuery') return (query: CompiledQuery) => (statements.push(query), object.executeQuery(query));
      const value = Reflect.get(object, key);
      return typeof value === 'function' ? value.bind(object) : value;
    },
  });
}

async function plan(statement: CompiledQuery): Promise<string> {
  const explain = postgres ? 'explain ' : 'explain query plan ';
  const result = await db().executeQuery({ ...statement, sql: explain + statement.sql });
  return (result.rows as Record<string, string>[]).map((row) => row['QUERY PLAN'] ?? row.detail).join('\n');
}

for (const [kind, index, read] of [
  ['comments', 'issue_comments_repository', store.commentsAfter],
  ['events', 'issue_events_repository', store.eventsAfter],
] as const) {
  test(`a repository's ${kind}: one reusable statement for every batch, an index range of (repository_id, id)`, async () => {
    const statements: CompiledQuery[] = [];
    const reader = recorded(statements);
    const last = repositories.at(-1)!;
    // The last repository's first batch (every other repository's rows come before it), a later
    // batch, and the first repository's batch past its end (every other repository's after it).
    const first = await read(reader, last, 0);
    assert.equal(first.length, store.BATCH);
    const later = await read(reader, last, first.at(-1)!.id);
    assert.ok(later.length > 0 && later[0]!.id > first.at(-1)!.id);
    assert.deepEqual(await read(reader, repositories[0]!, 1_000_000), []);
    assert.equal(statements.length, 3);
    assert.equal(new Set(statements.map((s) => s.sql)).size, 1, 'the same text for every batch');
    assert.ok(preparedNames.get(statements[0]!.sql)?.startsWith(`codehost_export_${kind}_`), 'a reusable (named) statement');
    for (const statement of statements) {
      const explained = await plan(statement);
      assert.match(explained, new RegExp(index), explained);
      if (postgres) assert.doesNotMatch(explained, /_pkey on issue_(comments|events)\b/, explained);
    }
  });
}

test("a repository's issues, and their assignees: one reusable statement each, whatever the batch", async () => {
  const statements: CompiledQuery[] = [];
  const reader = recorded(statements);
  const first = await store.issuesAfter(reader, repositories[1]!, false, 0);
  assert.deepEqual(first.map((issue) => issue.number), Array.from({ length: store.BATCH > 400 ? 400 : store.BATCH }, (_, i) => i + 1));
  assert.equal(Number(first[0]!.comment_count), 3);
  assert.equal(first[0]!.author_login, 'mona');
  await store.issuesAfter(reader, repositories[1]!, false, 200);
  await store.assigneesOf(reader, first.slice(0, 10).map((issue) => issue.id));
  await store.assigneesOf(reader, first.slice(0, 300).map((issue) => issue.id));
  assert.equal(statements.length, 4);
  assert.equal(statements[0]!.sql, statements[1]!.sql);
  assert.equal(statements[2]!.sql, statements[3]!.sql);
});
