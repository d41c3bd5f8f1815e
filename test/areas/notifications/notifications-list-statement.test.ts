// GET /notifications in few round trips (issue 22, issue 42): a list reads what its ETag and
// Last-Modified are made of (the validator, itself kept between requests while nothing changed), and
// a page not yet written under that tag reads its page, the page's count and its validator again in
// one statement, a reusable one (named on PostgreSQL: parsed and planned once per connection). A
// page already written under its tag is answered as it was written, reading no page. A conditional
// request is decided from the validator alone, and reads the page only when it answers 200. Every
// statement the server sends is seen here at Kysely's connection.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { CompiledQuery, DatabaseConnection } from 'kysely';
import { preparedNames } from '../../../src/db/prepared.ts';
import { classicToken } from '../../helpers/credentials.ts';
import { links, startServer, type TestServer } from '../../helpers/server.ts';

let server: TestServer;
let token: string;
const sent: string[] = [];

const notify = (title: string) =>
  server.admin('POST', '/notifications', {
    login: 'hubot',
    repository: 'hubot/widgets',
    subject: { type: 'Release', title, url: `https://example.com/releases/${title}` },
    reason: 'subscribed',
  });

/** The notifications statements one request sends (the caller's token and rate limit left out), and those of them that read a page. */
async function statementsOf(path: string, headers: Record<string, string> = {}) {
  sent.length = 0;
  const response = await server.api('GET', path, { token, headers });
  const statements = sent.filter((text) => /notification_/.test(text));
  return { response, statements, pages: statements.filter((text) => /notification_subjects/.test(text)) };
}

/** A page not yet written: one page statement, reusable, and at most the validator besides it. */
function onePageRead(read: { statements: string[]; pages: string[] }, what: string): void {
  assert.equal(read.pages.length, 1, `${what}: ${read.statements.join('\n---\n')}`);
  assert.ok(preparedNames.has(read.pages[0]!), `${what}: a reusable statement (named on PostgreSQL)`);
  assert.ok(read.statements.length <= 2, `${what}: the validator and the page: ${read.statements.join('\n---\n')}`);
}

before(async () => {
  server = await startServer();
  await server.admin('POST', '/users', { login: 'hubot' });
  token = await classicToken(server, 'hubot', ['notifications']);
  await server.admin('POST', '/repos', { owner: 'hubot', name: 'widgets' });
  for (const title of ['one', 'two', 'three']) await notify(title);
  const executor = server.server.ctx.db.kysely.getExecutor();
  const provide = executor.provideConnection.bind(executor);
  executor.provideConnection = (consume) =>
    provide((connection) => {
      const seen: DatabaseConnection = {
        executeQuery: (query: CompiledQuery) => {
          sent.push(query.sql);
          return connection.executeQuery(query);
        },
        streamQuery: (query, chunkSize) => connection.streamQuery(query, chunkSize),
      };
      return consume(seen);
    });
});
after(() => server?.close());

test('a list not yet written reads its page in one reusable statement; written once, it is answered again without reading it', async () => {
  await statementsOf('/notifications?per_page=3'); // the repository's JSON is kept from here on
  const read = await statementsOf('/notifications?per_page=2');
  const { response } = read;
  assert.equal(response.status, 200);
  assert.deepEqual(response.body.map((thread: { subject: { title: string } }) => thread.subject.title), ['three', 'two']);
  assert.equal(links(response.headers.get('link')).last?.includes('page=2'), true, 'the count is read: the last page is 2');
  onePageRead(read, 'per_page=2');
  assert.match(response.headers.get('etag')!, /^W\/"[0-9a-f]{40}"$/);
  assert.ok(response.headers.get('last-modified'));
  const again = await statementsOf('/notifications?per_page=2');
  assert.deepEqual(again.pages, [], 'the page written under this tag is answered again');
  assert.ok(again.statements.length <= 1, 'the validator at most');
  assert.equal(again.response.text, response.text);
  for (const header of ['etag', 'last-modified', 'link']) assert.equal(again.response.headers.get(header), response.headers.get(header), header);

  // The other shapes of filter: each one page statement too, with the same answers as before.
  for (const [query, titles] of [
    ['?all=true&participating=false', ['three', 'two', 'one']],
    ['?participating=true', []],
    ['?since=2000-01-01T00:00:00Z&before=2100-01-01T00:00:00Z&per_page=1&page=3', ['one']],
  ] as const) {
    const shaped = await statementsOf(`/notifications${query}`);
    assert.deepEqual(shaped.response.body.map((thread: { subject: { title: string } }) => thread.subject.title), titles, query);
    onePageRead(shaped, query);
  }

  // A page past the end counts in the same statement (its Link header's prev is the last page).
  const past = await statementsOf('/notifications?per_page=2&page=5');
  assert.deepEqual(past.response.body, []);
  assert.equal(links(past.response.headers.get('link')).prev?.includes('page=2'), true);
  onePageRead(past, 'past the end');
});

test('a conditional list is decided from the validator alone; a 200 then reads the page with its validator', async () => {
  const { response } = await statementsOf('/notifications');
  const etag = response.headers.get('etag')!;
  const current = await statementsOf('/notifications', { 'if-none-match': etag });
  assert.equal(current.response.status, 304);
  assert.ok(current.statements.length <= 1, 'the validator only (none when it is kept)');
  assert.deepEqual(current.pages, [], 'no page read for a 304');

  await notify('four');
  const changed = await statementsOf('/notifications', { 'if-none-match': etag });
  assert.equal(changed.response.status, 200);
  assert.equal(changed.statements.length, 2, 'the validator, then the page with its validator');
  assert.equal(changed.pages.length, 1, 'the page read once');
  assert.equal(changed.response.body[0].subject.title, 'four');
  const fresh = changed.response.headers.get('etag')!;
  assert.notEqual(fresh, etag);
  assert.equal((await statementsOf('/notifications')).response.headers.get('etag'), fresh, 'the same tag as an unconditional list');
  assert.equal((await statementsOf('/notifications', { 'if-none-match': fresh })).response.status, 304);
});

test('a list whose repositories changed records them, then reads its page again (never a page older than its tag)', async () => {
  const before = (await statementsOf('/notifications')).response;
  await server.admin('PATCH', '/repos/hubot/widgets', { description: 'Changed' });
  const { response, statements } = await statementsOf('/notifications');
  assert.equal(response.status, 200);
  assert.equal(response.body[0].repository.description, 'Changed');
  assert.notEqual(response.headers.get('etag'), before.headers.get('etag'));
  // The page statement, the inbox's record of the repositories (its version moves), the page again.
  const recorded = statements.findIndex((text) => /notification_inboxes/.test(text) && /^\s*insert/i.test(text));
  assert.ok(recorded > 0, statements.join('\n---\n'));
  assert.equal(statements.slice(recorded + 1).filter((text) => preparedNames.has(text) && /notification_subjects/.test(text)).length, 1, 'the page read after the record');
  assert.equal((await statementsOf('/notifications', { 'if-none-match': response.headers.get('etag')! })).response.status, 304);
});

test('a conditional poll repeated while nothing changed runs no statement: its caller and validator are kept reads (src/db/changes.ts)', async () => {
  const etag = (await statementsOf('/notifications')).response.headers.get('etag')!;
  const deadline = Date.now() + 10_000;
  while (!server.server.ctx.db.feed.fresh()) {
    assert.ok(Date.now() < deadline, 'the change feed never became fresh');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  await statementsOf('/notifications', { 'if-none-match': etag });
  const again = await statementsOf('/notifications', { 'if-none-match': etag });
  assert.equal(again.response.status, 304);
  // Every statement, not only the notifications': the token's lookup is kept too (the rate limit's
  // lease is read once per block of requests; on SQLite the job queue polls through the same connection).
  assert.deepEqual(sent.filter((text) => !/rate_limits|\bjobs\b/.test(text)), [], 'no statement but the rate limit\'s lease and the job queue\'s own (SQLite)');
  // A write, and the next poll reads its validator again.
  await notify('five');
  const changed = await statementsOf('/notifications', { 'if-none-match': etag });
  assert.equal(changed.response.status, 200);
  assert.equal(changed.response.body[0].subject.title, 'five');
});
