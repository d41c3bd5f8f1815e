// A repository's issue list (issue 39): pull requests included, filtered by state, labels, assignee,
// creator, mentioned user and type, sorted and paged with Link; and a repository's comments across
// its issues. Each item is the issue (or comment) as its own GET shows it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { classicToken } from '../../helpers/credentials.ts';

let server: TestServer;
let mona: string;
let olga: string;
const numbers: Record<string, number> = {};

before(async () => {
  server = await startServer();
  for (const login of ['mona', 'hubot', 'olga']) await server.admin('POST', '/users', { login });
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'], members: ['hubot'] });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'secret', visibility: 'private' });
  mona = await classicToken(server, 'mona', ['repo']);
  olga = await classicToken(server, 'olga', ['repo']);
  const bug = await server.api('POST', '/orgs/acme/issue-types', { token: await classicToken(server, 'mona', ['admin:org']), body: { name: 'Bug', is_enabled: true } });
  assert.equal(bug.status, 200, bug.text);
  const open = async (key: string, author: string, body: Record<string, unknown>) => {
    numbers[key] = (await server.admin('POST', '/repos/acme/widgets/issues', { author, ...body })).number;
    await server.admin('POST', '/clock', { advance_seconds: 60 });
  };
  await open('first', 'mona', { title: 'First', assignees: ['hubot'], type: 'Bug' });
  await open('second', 'olga', { title: 'Second', body: 'cc @hubot' });
  await open('pull', 'hubot', { title: 'A change', pull_request: true });
  await open('closed', 'mona', { title: 'Done' });
  await server.admin('PATCH', `/repos/acme/widgets/issues/${numbers.closed}`, { actor: 'mona', state: 'closed' });
  for (const [key, labels] of [['first', ['bug', 'help wanted']], ['second', ['bug']]] as const) {
    assert.equal((await server.api('POST', `/repos/acme/widgets/issues/${numbers[key]}/labels`, { token: mona, body: { labels } })).status, 200);
  }
  for (const body of ['One', 'Two', 'Three']) await server.admin('POST', `/repos/acme/widgets/issues/${numbers.second}/comments`, { author: 'mona', body });
  await server.admin('POST', `/repos/acme/widgets/issues/${numbers.first}/comments`, { author: 'hubot', body: 'Four' });
});

after(() => server?.close());

const titles = async (query: string, token = mona) => {
  const answer = await server.api('GET', `/repos/acme/widgets/issues${query}`, { token });
  assert.equal(answer.status, 200, `${query}: ${answer.text}`);
  return answer.body.map((issue: { title: string }) => issue.title);
};

describe('a repository\'s issues', () => {
  test('open ones by default, newest first, pull requests included as issues; each as GET shows it', async () => {
    const answer = await server.api('GET', '/repos/acme/widgets/issues', { token: mona });
    assert.deepEqual(answer.body.map((i: { title: string }) => i.title), ['A change', 'Second', 'First']);
    assert.ok(answer.body[0].pull_request, 'a pull request has pull_request');
    const one = await server.api('GET', `/repos/acme/widgets/issues/${numbers.first}`, { token: mona });
    assert.deepEqual(answer.body[2], one.body);
    assert.deepEqual(answer.body[2].labels.map((l: { name: string }) => l.name), ['bug', 'help wanted']);
    assert.equal(answer.body[2].comments, 1);
  });

  test('state, labels, assignee, creator, mentioned and type filter; an unknown login matches nothing', async () => {
    assert.deepEqual(await titles('?state=closed'), ['Done']);
    assert.deepEqual(await titles('?state=all'), ['Done', 'A change', 'Second', 'First']);
    assert.deepEqual(await titles('?labels=bug'), ['Second', 'First']);
    assert.deepEqual(await titles('?labels=BUG,help%20wanted'), ['First'], 'every label, any case');
    assert.deepEqual(await titles('?assignee=hubot'), ['First']);
    assert.deepEqual(await titles('?assignee=none'), ['A change', 'Second']);
    assert.deepEqual(await titles('?assignee=*'), ['First']);
    assert.deepEqual(await titles('?creator=olga'), ['Second']);
    assert.deepEqual(await titles('?mentioned=hubot'), ['Second']);
    assert.deepEqual(await titles('?type=bug'), ['First']);
    assert.deepEqual(await titles('?type=none'), ['A change', 'Second']);
    assert.deepEqual(await titles('?creator=nobody'), []);
    assert.deepEqual(await titles('?milestone=none'), ['A change', 'Second', 'First']);
    assert.deepEqual(await titles('?milestone=*'), [], 'codehost keeps no milestones');
  });

  test('sorted by created, updated or comments, either way; since; paged with Link', async () => {
    assert.deepEqual(await titles('?direction=asc'), ['First', 'Second', 'A change']);
    assert.deepEqual(await titles('?sort=comments'), ['Second', 'First', 'A change']);
    await server.admin('POST', '/clock', { advance_seconds: 60 });
    await server.api('PATCH', `/repos/acme/widgets/issues/${numbers.first}`, { token: mona, body: { title: 'First, edited' } });
    assert.deepEqual(await titles('?sort=updated'), ['First, edited', 'Second', 'A change'], 'a comment or a label changes an issue too');
    const now = (await server.api('GET', `/repos/acme/widgets/issues/${numbers.first}`, { token: mona })).body.updated_at;
    assert.deepEqual(await titles(`?since=${encodeURIComponent(now)}`), ['First, edited']);
    const page = await server.api('GET', '/repos/acme/widgets/issues?per_page=2', { token: mona });
    assert.equal(page.body.length, 2);
    assert.match(page.headers.get('link') ?? '', /page=2>; rel="next".*rel="last"/);
  });

  test('what is no filter is a 422; a private repository is a 404 to who may not read it', async () => {
    for (const query of ['?state=merged', '?sort=popularity', '?direction=up', '?since=yesterday', '?per_page=0']) {
      assert.equal((await server.api('GET', `/repos/acme/widgets/issues${query}`, { token: mona })).status, 422, query);
    }
    assert.equal((await server.api('GET', '/repos/acme/secret/issues', { token: olga })).status, 404);
    assert.equal((await server.api('GET', '/repos/acme/secret/issues')).status, 404);
    assert.deepEqual((await server.api('GET', '/repos/acme/secret/issues', { token: mona })).body, []);
    assert.equal((await server.api('GET', '/repos/acme/widgets/issues')).status, 200, 'a public repository answers anyone');
  });
});

describe('a repository\'s comments', () => {
  test('every issue\'s, oldest first; sort, direction and since; each as GET shows it', async () => {
    const answer = await server.api('GET', '/repos/acme/widgets/issues/comments', { token: mona });
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body.map((c: { body: string }) => c.body), ['One', 'Two', 'Three', 'Four']);
    const four = await server.api('GET', `/repos/acme/widgets/issues/comments/${answer.body[3].id}`, { token: mona });
    assert.deepEqual(answer.body[3], four.body);
    assert.equal(answer.body[3].issue_url, `${server.apiUrl}/repos/acme/widgets/issues/${numbers.first}`);
    const desc = await server.api('GET', '/repos/acme/widgets/issues/comments?direction=desc&per_page=2', { token: mona });
    assert.deepEqual(desc.body.map((c: { body: string }) => c.body), ['Four', 'Three']);
    await server.admin('POST', '/clock', { advance_seconds: 60 });
    assert.equal((await server.api('PATCH', `/repos/acme/widgets/issues/comments/${answer.body[0].id}`, { token: mona, body: { body: 'One, edited' } })).status, 200);
    const updated = await server.api('GET', '/repos/acme/widgets/issues/comments?sort=updated&direction=desc', { token: mona });
    assert.equal(updated.body[0].body, 'One, edited');
    const since = await server.api('GET', `/repos/acme/widgets/issues/comments?since=${encodeURIComponent(updated.body[0].updated_at)}`, { token: mona });
    assert.deepEqual(since.body.map((c: { body: string }) => c.body), ['One, edited']);
    assert.equal((await server.api('GET', '/repos/acme/widgets/issues/comments?sort=comments', { token: mona })).status, 422);
    assert.equal((await server.api('GET', '/repos/acme/secret/issues/comments', { token: olga })).status, 404);
  });
});
