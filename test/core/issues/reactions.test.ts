// Reactions (issue 39): users and an installation (as its bot account) react to an issue, a pull
// request and a comment; the same reaction twice is the one reaction (200); lists filter by content
// and page with Link; the issue's and the comment's `reactions` roll-ups count them; a reaction is
// deleted by who made it only. No webhook event, no notification, as on the platform. Then who may,
// what a refused write leaves, and a deleted user's reactions, which are ghost's.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { Receiver } from '../../helpers/receiver.ts';
import { install, mintInstallationToken } from '../../helpers/app-credentials.ts';
import { classicToken, type TestApp } from '../../helpers/credentials.ts';

let server: TestServer;
let receiver: Receiver;
let bot: string;
let reader: string;
let mona: string;
let olga: string;
let hubot: string;
let issue: number;
let pull: number;
let comment: number;
let quiet: number;
let hidden: number;
/** The listener's deliveries and hubot's notification threads before any reaction (the setup's). */
let baseline: { deliveries: number; threads: unknown };

const ISSUE = () => `/repos/acme/widgets/issues/${issue}/reactions`;
const COMMENT = () => `/repos/acme/widgets/issues/comments/${comment}/reactions`;
const ZEROS = { total_count: 0, '+1': 0, '-1': 0, laugh: 0, hooray: 0, confused: 0, heart: 0, rocket: 0, eyes: 0 };

before(async () => {
  receiver = await new Receiver().start();
  server = await startServer();
  for (const login of ['mona', 'olga', 'hubot']) await server.admin('POST', '/users', { login });
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'], members: ['hubot'] });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'vault', visibility: 'private' });
  const writer: TestApp = await server.admin('POST', '/apps', { slug: 'reactor', permissions: { issues: 'write', metadata: 'read' } });
  bot = await mintInstallationToken(server, writer, await install(server, writer, 'acme'));
  const readOnly: TestApp = await server.admin('POST', '/apps', { slug: 'onlooker', permissions: { issues: 'read', metadata: 'read' } });
  reader = await mintInstallationToken(server, readOnly, await install(server, readOnly, 'acme'));
  await server.admin('POST', '/apps', {
    slug: 'listener', permissions: { issues: 'read', pull_requests: 'read', metadata: 'read' }, events: ['issues', 'issue_comment', 'pull_request'], webhook: { url: receiver.url('/listener') },
  });
  await server.admin('POST', '/apps/listener/installations', { account: 'acme', repositories: 'all' });
  mona = await classicToken(server, 'mona', ['repo']);
  olga = await classicToken(server, 'olga', ['public_repo']);
  hubot = await classicToken(server, 'hubot', ['repo', 'notifications']);
  issue = (await server.admin('POST', '/repos/acme/widgets/issues', { author: 'mona', title: 'Wobbles' })).number;
  pull = (await server.admin('POST', '/repos/acme/widgets/issues', { author: 'mona', title: 'Steady', pull_request: true })).number;
  comment = (await server.admin('POST', `/repos/acme/widgets/issues/${issue}/comments`, { author: 'hubot', body: 'Seen it too' })).id;
  quiet = (await server.admin('POST', `/repos/acme/widgets/issues/${issue}/comments`, { author: 'mona', body: 'No one reacts to this' })).id;
  hidden = (await server.admin('POST', '/repos/acme/vault/issues', { author: 'mona', title: 'Secret' })).number;
  await server.drain();
  baseline = { deliveries: receiver.on('/listener').length, threads: (await server.api('GET', '/notifications?all=true', { token: hubot })).body };
});

after(async () => {
  await server?.close();
  await receiver?.stop();
});

const react = (path: string, token: string | undefined, content: unknown) => server.api('POST', path, { ...(token ? { token } : {}), body: { content } });
const listed = async (path: string) => (await server.api('GET', path)).body as { id: number; content: string; user: { login: string } }[];
const rollUp = async (path: string) => {
  const { url: _url, ...counts } = (await server.api('GET', path)).body.reactions;
  return counts;
};

describe('reactions', () => {
  test('on an issue: 201, the same again 200 with that reaction; the bot reacts as reactor[bot]; lists filter and page; the issue counts them', async () => {
    const made = await react(ISSUE(), olga, '+1');
    assert.equal(made.status, 201, made.text);
    assert.deepEqual(Object.keys(made.body), ['id', 'node_id', 'user', 'content', 'created_at']);
    assert.equal(made.body.user.login, 'olga');
    assert.equal(made.body.content, '+1');
    assert.match(made.body.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(typeof made.body.node_id, 'string');
    const again = await react(ISSUE(), olga, '+1');
    assert.equal(again.status, 200);
    assert.deepEqual(again.body, made.body, 'the reaction there is');

    assert.equal((await react(ISSUE(), mona, 'heart')).status, 201);
    const byBot = await react(ISSUE(), bot, 'rocket');
    assert.equal(byBot.status, 201);
    assert.deepEqual([byBot.body.user.login, byBot.body.user.type], ['reactor[bot]', 'Bot']);
    assert.equal((await react(ISSUE(), bot, '+1')).status, 201);

    const all = await listed(ISSUE());
    assert.deepEqual(all.map((r) => `${r.user.login} ${r.content}`), ['olga +1', 'mona heart', 'reactor[bot] rocket', 'reactor[bot] +1'], 'oldest first');
    assert.deepEqual((await listed(`${ISSUE()}?content=%2B1`)).map((r) => r.user.login), ['olga', 'reactor[bot]']);
    assert.deepEqual(await listed(`${ISSUE()}?content=eyes`), []);
    const paged = await server.api('GET', `${ISSUE()}?content=%2B1&per_page=1`);
    assert.equal(paged.body.length, 1);
    assert.match(paged.headers.get('link') ?? '', /content=%2B1&per_page=1&page=2>; rel="next".*page=2>; rel="last"/);

    const shown = (await server.api('GET', `/repos/acme/widgets/issues/${issue}`)).body.reactions;
    assert.deepEqual(shown, { ...ZEROS, url: `${server.apiUrl}${ISSUE()}`, total_count: 4, '+1': 2, heart: 1, rocket: 1 });
  });

  test('on a pull request, through its issue: the same operations; its issue form counts them', async () => {
    const path = `/repos/acme/widgets/issues/${pull}/reactions`;
    assert.equal((await react(path, bot, 'hooray')).status, 201);
    assert.equal((await react(path, hubot, 'eyes')).status, 201);
    assert.deepEqual(await rollUp(`/repos/acme/widgets/issues/${pull}`), { ...ZEROS, total_count: 2, hooray: 1, eyes: 1 });
  });

  test('on a comment: the comment counts them, in GET and in its issue\'s list (others 0); the issue counts its own only', async () => {
    assert.equal((await react(COMMENT(), olga, 'laugh')).status, 201);
    assert.equal((await react(COMMENT(), mona, 'laugh')).status, 201);
    assert.equal((await react(COMMENT(), bot, 'confused')).status, 201);
    assert.equal((await react(COMMENT(), bot, 'confused')).status, 200);
    assert.deepEqual((await listed(`${COMMENT()}?content=laugh`)).map((r) => r.user.login), ['olga', 'mona']);
    assert.deepEqual(await rollUp(`/repos/acme/widgets/issues/comments/${comment}`), { ...ZEROS, total_count: 3, laugh: 2, confused: 1 });
    const comments = (await server.api('GET', `/repos/acme/widgets/issues/${issue}/comments`)).body as { id: number; reactions: Record<string, unknown> }[];
    const counts = Object.fromEntries(comments.map((c) => [c.id, c.reactions.total_count]));
    assert.deepEqual(counts, { [comment]: 3, [quiet]: 0 });
    assert.equal(comments[0]!.reactions.url, `${server.apiUrl}${COMMENT()}`);
    assert.equal((await rollUp(`/repos/acme/widgets/issues/${issue}`)).total_count, 4);
  });

  test('no webhook event and no notification for a reaction', async () => {
    await server.drain();
    assert.deepEqual(receiver.on('/listener').slice(baseline.deliveries).map((d) => `${d.headers['x-vendor-event']}/${d.json.action}`), []);
    const threads = await server.api('GET', '/notifications?all=true', { token: hubot });
    assert.equal(threads.status, 200, threads.text);
    assert.deepEqual(threads.body, baseline.threads, 'hubot, whose comment has reactions, is not notified');
  });

  test('delete: the reaction\'s own user (the bot its own), 204; another\'s 403; one the subject lacks, or gone, 404', async () => {
    const [olgas, monas, botRocket] = await listed(ISSUE());
    assert.equal((await server.api('DELETE', `${ISSUE()}/${monas!.id}`, { token: olga })).status, 403, 'mona\'s reaction');
    assert.equal((await server.api('DELETE', `${ISSUE()}/${botRocket!.id}`, { token: mona })).status, 403, 'the bot\'s reaction, even for the owner');
    assert.equal((await server.api('DELETE', `${ISSUE()}/${olgas!.id}`, { token: bot })).status, 403, 'olga\'s reaction, for the bot');
    assert.equal((await server.api('DELETE', `${COMMENT()}/${olgas!.id}`, { token: olga })).status, 404, 'an issue\'s reaction, named as the comment\'s');
    assert.equal((await server.api('DELETE', `/repos/acme/widgets/issues/${pull}/reactions/${olgas!.id}`, { token: olga })).status, 404, 'another issue\'s reaction');
    assert.equal((await server.api('DELETE', `${ISSUE()}/999999`, { token: olga })).status, 404);
    assert.equal((await server.api('DELETE', `${ISSUE()}/nope`, { token: olga })).status, 404);
    assert.equal((await listed(ISSUE())).length, 4, 'nothing deleted');

    assert.equal((await server.api('DELETE', `${ISSUE()}/${olgas!.id}`, { token: olga })).status, 204);
    assert.equal((await server.api('DELETE', `${ISSUE()}/${olgas!.id}`, { token: olga })).status, 404, 'gone');
    assert.equal((await server.api('DELETE', `${ISSUE()}/${botRocket!.id}`, { token: bot })).status, 204);
    assert.deepEqual(await rollUp(`/repos/acme/widgets/issues/${issue}`), { ...ZEROS, total_count: 2, '+1': 1, heart: 1 });
    const botConfused = (await listed(`${COMMENT()}?content=confused`))[0]!;
    assert.equal((await server.api('DELETE', `${COMMENT()}/${botConfused.id}`, { token: bot })).status, 204);
    assert.deepEqual(await rollUp(`/repos/acme/widgets/issues/comments/${comment}`), { ...ZEROS, total_count: 2, laugh: 2 });
    assert.equal((await react(ISSUE(), olga, '+1')).status, 201, 'made again after its deletion');
  });

  test('who may: 422 for a content not of the eight; 404 for what the caller does not see; 401 anonymous; 403 read-only installation and archived; nothing written', async () => {
    const before = await listed(ISSUE());
    for (const content of ['smile', '', 'HEART', 1, null]) {
      const refused = await react(ISSUE(), olga, content);
      assert.equal(refused.status, 422, JSON.stringify(content));
      assert.equal(refused.body.message, 'Validation Failed');
    }
    assert.equal((await server.api('POST', ISSUE(), { token: olga, body: {} })).status, 422);
    assert.equal((await server.api('GET', `${ISSUE()}?content=smile`)).status, 422);
    assert.equal((await react(COMMENT(), olga, 'sad')).status, 422);

    const secret = `/repos/acme/vault/issues/${hidden}/reactions`;
    assert.equal((await server.api('GET', secret, { token: olga })).status, 404);
    assert.equal((await react(secret, olga, 'heart')).status, 404);
    assert.equal((await react(secret, mona, 'heart')).status, 201, 'the owner sees it');
    assert.equal((await server.api('GET', secret)).status, 404, 'anonymous');
    assert.equal((await react('/repos/acme/widgets/issues/999/reactions', olga, 'heart')).status, 404);
    assert.equal((await react('/repos/acme/widgets/issues/comments/999999/reactions', olga, 'heart')).status, 404);
    assert.equal((await react(ISSUE(), undefined, 'heart')).status, 401);

    assert.equal((await server.api('GET', ISSUE(), { token: reader })).status, 200, 'a read-only installation reads them');
    assert.equal((await react(ISSUE(), reader, 'eyes')).status, 403);
    assert.equal((await react(COMMENT(), reader, 'eyes')).status, 403);
    const botPlusOne = before.find((r) => r.user.login === 'reactor[bot]')!;
    assert.equal((await server.api('DELETE', `${ISSUE()}/${botPlusOne.id}`, { token: reader })).status, 403);

    await server.admin('PATCH', '/repos/acme/widgets', { archived: true });
    try {
      assert.equal((await react(ISSUE(), mona, 'eyes')).status, 403);
      assert.equal((await react(COMMENT(), bot, 'eyes')).status, 403);
      assert.equal((await server.api('DELETE', `${ISSUE()}/${botPlusOne.id}`, { token: bot })).status, 403);
      assert.equal((await server.api('GET', ISSUE())).status, 200, 'an archived repository\'s reactions are read');
    } finally {
      await server.admin('PATCH', '/repos/acme/widgets', { archived: false });
    }
    assert.deepEqual(await listed(ISSUE()), before, 'nothing written, nothing deleted');
    assert.equal((await listed(COMMENT())).length, 2);
  });

  test('a deleted user\'s reactions are ghost\'s; one ghost has already stands for both', async () => {
    for (const login of ['dora', 'eve']) {
      await server.admin('POST', '/users', { login });
      const token = await classicToken(server, login, ['public_repo']);
      assert.equal((await react(ISSUE(), token, 'eyes')).status, 201);
      assert.equal((await react(COMMENT(), token, login === 'dora' ? 'heart' : 'rocket')).status, 201);
    }
    assert.equal((await server.adminRaw('DELETE', '/users/dora')).status, 204);
    assert.equal((await server.adminRaw('DELETE', '/users/eve')).status, 204);
    assert.deepEqual((await listed(`${ISSUE()}?content=eyes`)).map((r) => r.user.login), ['ghost']);
    assert.deepEqual((await listed(COMMENT())).filter((r) => r.user.login === 'ghost').map((r) => r.content), ['heart', 'rocket']);
    assert.equal((await rollUp(`/repos/acme/widgets/issues/${issue}`)).eyes, 1);
  });
});
