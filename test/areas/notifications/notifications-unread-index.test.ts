// Marking 1,000,000 threads read (issue 22): the unread threads of each user are a partial index,
// (user_id, updated_at, id) where unread = 1 (migration 0018), from which a marked thread drops out
// instead of moving. The statements that walk it (the bounded count that decides between marking in
// the request and in the background, each batch of the marking, the unread list) must use it: each
// one, as the store sends it (captured, with its parameters), is explained on the database and its
// plan names the index. Both databases use a partial index only when the query states its predicate
// as a literal.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql, type CompiledQuery, type Kysely, type KyselyPlugin } from 'kysely';
import type { Database } from '../../../src/db/schema.ts';
import pg from 'pg';
import * as store from '../../../src/areas/notifications/store.ts';
import { createTestDatabase, engine, type TestDatabase } from '../../helpers/database.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

let database: TestDatabase;
let server: TestServer;
let userId: number;

const INDEX = 'notification_threads_unread_by_user';
const db = () => server.server.ctx.db.kysely;

before(async () => {
  database = await createTestDatabase();
  server = await startServer({}, { database });
  for (const login of ['mona', 'hubot']) await server.admin('POST', '/users', { login });
  const repository = await server.admin('POST', '/repos', { owner: 'mona', name: 'widgets' });
  userId = (await db().selectFrom('users').select('id').where('login', '=', 'hubot').executeTakeFirstOrThrow()).id;
  const monaId = (await db().selectFrom('users').select('id').where('login', '=', 'mona').executeTakeFirstOrThrow()).id;
  // 4,000 threads of two users, a quarter of hubot's unread: the index is the way to them.
  const now = '2026-01-01T00:00:00.000Z';
  for (let chunk = 0; chunk < 8; chunk++) {
    const subjects = await db()
      .insertInto('notification_subjects')
      .values(Array.from({ length: 250 }, (_, i) => ({
        repository_id: repository.id, issue_id: null, subject_key: `plan:${chunk}:${i}`, type: 'Release', title: `Release ${i}`, url: null, created_at: now, updated_at: now,
      })))
      .returning('id')
      .execute();
    const rows = subjects.flatMap((s, i) => [userId, monaId].map((user) => ({
      user_id: user, subject_id: s.id, repository_id: repository.id, reason: 'subscribed', unread: user === userId && i % 4 === 0 ? 1 : 0, done: 0,
      updated_at: new Date(Date.parse(now) + (chunk * 250 + i) * 1000).toISOString(), last_read_at: null, latest_comment_id: null, last_activity_id: 0, created_at: now,
    })));
    await db().insertInto('notification_threads').values(rows).execute();
  }
  if (engine === 'postgres') await sql`analyze notification_threads`.execute(db());
  else await sql`analyze`.execute(db());
});
after(async () => {
  await server?.close();
  await database?.drop();
});

/** The plan of a statement as the store sent it. */
async function plan(statement: { sql: string; parameters: readonly unknown[] }): Promise<string> {
  const explain = engine === 'postgres' ? 'explain ' : 'explain query plan ';
  const result = await db().executeQuery({ ...sql.raw('').compile(db()), sql: explain + statement.sql, parameters: statement.parameters });
  return (result.rows as Record<string, string>[]).map((row) => row['QUERY PLAN'] ?? row.detail).join('\n');
}

/** The database, with each query it runs through `executeQuery` shown to `see` first. */
function seen(on: Kysely<Database>, see: (query: CompiledQuery) => void): Kysely<Database> {
  return new Proxy(on, {
    get(target, key) {
      if (key === 'executeQuery') return (query: CompiledQuery) => (see(query), target.executeQuery(query));
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

test('the bounded count, each batch of a marking and the unread list walk the partial index of unread threads', async () => {
  const statements: { sql: string; parameters: readonly unknown[] }[] = [];
  const capture: KyselyPlugin = {
    transformQuery: (args) => {
      statements.push(db().getExecutor().compileQuery(args.node, args.queryId));
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
  const captured = db().withPlugin(capture);
  const selection = { userId, repositoryId: null, until: '2030-01-01T00:00:00.000Z', read: true };
  const postgres = engine === 'postgres';
  const reads: [string, () => Promise<unknown>][] = [
    ['the bounded count', () => store.coversMoreThan(captured, selection, [], 100)],
    ['the first batch', () => captured.transaction().execute((trx) => store.markThreads(trx, selection, [], selection.until, 100, postgres))],
    ['a later batch', () => captured.transaction().execute((trx) => store.markThreads(trx, selection, [], selection.until, 100, postgres, { updated_at: '2026-01-01T00:10:00.000Z', id: 1 }))],
    // The list is a reusable query, compiled once and run through executeQuery (no plugin sees it).
    ['the unread list', () => store.listPage(seen(db(), (query) => statements.push(query)), { userId, all: false }, 50, 0)],
  ];
  for (const [name, read] of reads) {
    statements.length = 0;
    await read();
    const select = statements.find((s) => /^\s*(select|with)\b/i.test(s.sql))!;
    assert.ok(select, `${name}: a select`);
    const shown = await plan(select);
    assert.match(shown, new RegExp(INDEX), `${name} walks ${INDEX}:\n${select.sql}\n${shown}`);
  }
});

test('marking read takes threads out of the partial index; marking unread puts them back', async () => {
  const count = async () => Number((await sql<{ n: number }>`select count(*) as n from notification_threads where user_id = ${userId} and unread = 1`.execute(db())).rows[0]!.n);
  const before = await count();
  assert.ok(before > 0);
  const token = (await server.admin('POST', '/tokens', { login: 'hubot', kind: 'classic', scopes: ['notifications'] })).token as string;
  assert.ok([202, 205].includes((await server.api('PUT', '/notifications', { token, body: {} })).status));
  await server.drain();
  assert.equal(await count(), 0);
  assert.deepEqual((await server.api('GET', '/notifications', { token })).body, []);
  assert.ok([202, 205].includes((await server.api('PUT', '/notifications', { token, body: { read: false } })).status));
  await server.drain();
  assert.equal(await count(), 4000 / 2);
  assert.equal((await server.api('GET', '/notifications?per_page=50', { token })).body.length, 50);
});

test('PostgreSQL: a thread that new activity reaches while a batch marks it stays unread (the update re-checks it)', { skip: engine !== 'postgres' && 'SQLite serializes the transactions' }, async () => {
  const until = '2030-01-01T00:00:00.000Z';
  const thread = await db().selectFrom('notification_threads').select(['id', 'last_read_at']).where('user_id', '=', userId).where(sql<boolean>`unread = 1`).orderBy('id').executeTakeFirstOrThrow();
  const activity = new pg.Client({ connectionString: database.databaseUrl! });
  await activity.connect();
  try {
    // New activity, after `until`, holds the row while the marking chooses it and waits on it.
    await activity.query('begin');
    await activity.query(`update notification_threads set updated_at = '2031-01-01T00:00:00.000Z', unread = 1 where id = $1`, [thread.id]);
    const marking = db().transaction().execute((trx) => store.markThreads(trx, { userId, repositoryId: null, until, read: true }, [], until, 100_000, true));
    let waiting = false;
    for (let i = 0; i < 100 && !waiting; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      const { rows } = await activity.query(`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`);
      waiting = rows[0].n > 0;
    }
    assert.ok(waiting, 'the marking waits on the row');
    await activity.query('commit');
    const result = await marking;
    assert.equal(result.changed, result.chosen - 1);
  } finally {
    await activity.end();
  }
  const after = await db().selectFrom('notification_threads').select(['unread', 'last_read_at']).where('id', '=', thread.id).executeTakeFirstOrThrow();
  assert.equal(Number(after.unread), 1);
  assert.equal(after.last_read_at, thread.last_read_at);
});
