// The secondary rate limit on content creation (issue 39): a caller's requests that create content
// (issues, comments, reactions, labels, statuses, check runs) are counted a minute and an hour; over
// either, the platform's 403 with Retry-After until that window ends, while reads and other callers
// go on and the X-RateLimit-* headers stay the primary budget's. Nothing refused is written.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.ts';
import { classicToken } from '../helpers/credentials.ts';

let server: TestServer;
let mona: string;
let hubot: string;

before(async () => {
  server = await startServer({ CODEHOST_RATE_LIMIT_CONTENT_PER_MINUTE: '3', CODEHOST_RATE_LIMIT_CONTENT_PER_HOUR: '5' });
  for (const login of ['mona', 'hubot']) await server.admin('POST', '/users', { login });
  await server.admin('POST', '/repos', { owner: 'mona', name: 'widgets' });
  await server.admin('POST', '/repos/mona/widgets/issues', { author: 'mona', title: 'Chatty' });
  mona = await classicToken(server, 'mona', ['repo']);
  hubot = await classicToken(server, 'hubot', ['public_repo']);
});
after(() => server?.close());

const comment = (token: string, body: string) => server.api('POST', '/repos/mona/widgets/issues/1/comments', { token, body: { body } });
const count = async () => (await server.api('GET', '/repos/mona/widgets/issues/1', { token: mona })).body.comments;

test('three a minute: the fourth is the secondary limit, with Retry-After; reads and another user go on', async () => {
  for (const body of ['one', 'two']) assert.equal((await comment(mona, body)).status, 201);
  assert.equal((await server.api('POST', '/repos/mona/widgets/issues/1/reactions', { token: mona, body: { content: 'eyes' } })).status, 201, 'a reaction is content too');
  const refused = await comment(mona, 'four');
  assert.equal(refused.status, 403);
  assert.match(refused.body.message, /^You have exceeded a secondary rate limit\. Please wait a few minutes before you try again\./);
  const retry = Number(refused.headers.get('retry-after'));
  assert.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`);
  assert.equal(refused.headers.get('x-ratelimit-resource'), 'core', 'the primary budget\'s headers');
  assert.ok(Number(refused.headers.get('x-ratelimit-remaining')) > 0, 'a secondary limit leaves the primary budget');
  assert.equal((await server.api('POST', '/repos/mona/widgets/labels', { token: mona, body: { name: 'chatty' } })).status, 403, 'every kind of content');
  assert.equal(await count(), 2, 'nothing refused is written');
  assert.equal((await server.api('PATCH', '/repos/mona/widgets/issues/1', { token: mona, body: { title: 'Chatty, renamed' } })).status, 200, 'a change creates no content');
  assert.equal((await comment(hubot, 'mine')).status, 201, 'another caller has its own budget');
});

test('a minute later three more may come, up to five an hour; then Retry-After names the hour', async () => {
  await server.admin('POST', '/clock', { advance_seconds: 61 });
  assert.equal((await comment(mona, 'five')).status, 201);
  assert.equal((await comment(mona, 'six')).status, 201);
  const refused = await comment(mona, 'seven');
  assert.equal(refused.status, 403, 'five an hour');
  const retry = Number(refused.headers.get('retry-after'));
  assert.ok(retry > 60 && retry <= 3600, `Retry-After ${retry}`);
  await server.admin('POST', '/clock', { advance_seconds: 3600 });
  assert.equal((await comment(mona, 'eight')).status, 201, 'a new hour');
});
