// The neighbours of fan-out, end to end (real HTTP, a real loopback receiver, signatures verified on the
// exact bytes): one activity, and for each neighbour of the app or user it is meant for, a row saying
// whether that neighbour hears of it. Webhooks: a second app on the same account (subscribed or not,
// covering the repository or with a selection that does not), a second installation of the same app
// (on another account), an app's bot acting. Notifications: two users (one watching, one not), one
// mentioned who cannot read the repository, the bot that acted. A new neighbour is a new row.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { verify } from '@octokit/webhooks-methods';
import { Receiver } from '../../helpers/receiver.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

const SECRET = 'neighbours’ secret';

let server: TestServer;
let receiver: Receiver;
const installations: Record<string, number> = {};
const tokens: Record<string, string> = {};

before(async () => {
  receiver = await new Receiver().start();
  server = await startServer();
  for (const login of ['mona', 'wally', 'walt', 'rita', 'rhea', 'hubot']) {
    await server.admin('POST', '/users', { login });
    tokens[login] = (await server.admin('POST', '/tokens', { login, kind: 'classic', scopes: ['notifications'] })).token;
  }
  await server.admin('POST', '/users', { login: 'helper-bot', type: 'Bot' });
  tokens['helper-bot'] = (await server.admin('POST', '/tokens', { login: 'helper-bot', kind: 'classic', scopes: ['notifications'] })).token;
  // rita and rhea are no members of acme: they read none of its private repositories (rhea is given access later).
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'], members: ['wally', 'walt', 'helper-bot'] });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets', visibility: 'private' });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'gadgets', visibility: 'private' });
  await server.admin('POST', '/repos', { owner: 'hubot', name: 'elsewhere' });
  await server.admin('PUT', '/repos/acme/widgets/subscription', { login: 'wally' });
  await server.admin('PUT', '/repos/acme/widgets/subscription', { login: 'helper-bot' });
  const app = async (slug: string, events: string[]) =>
    server.admin('POST', '/apps', { slug, permissions: { issues: 'write', contents: 'read', metadata: 'read' }, events, webhook: { url: receiver.url(`/${slug}`), secret: SECRET } });
  const install = async (name: string, slug: string, account: string, repositories?: string[]) =>
    (installations[name] = (await server.admin('POST', `/apps/${slug}/installations`, { account, ...(repositories ? { repositories } : {}) })).id);
  await app('subscribed', ['issues', 'issue_comment']);
  await app('unsubscribed', ['push']);
  await app('selected-here', ['issues', 'issue_comment']);
  await app('selected-elsewhere', ['issues', 'issue_comment']);
  await install('subscribed on acme', 'subscribed', 'acme');
  // The same app's second installation, on another account.
  await install('subscribed on hubot', 'subscribed', 'hubot');
  await install('unsubscribed on acme', 'unsubscribed', 'acme');
  await install('selected-here on acme', 'selected-here', 'acme', ['widgets']);
  await install('selected-elsewhere on acme', 'selected-elsewhere', 'acme', ['gadgets']);
});
after(async () => {
  await server?.close();
  await receiver?.stop();
});

/** What each app's receiver path got of one activity (its signatures checked), by the activity's title. */
async function postsOf(title: string): Promise<Record<string, { installation: number; sender: string }[]>> {
  const out: Record<string, { installation: number; sender: string }[]> = {};
  for (const request of receiver.received.filter((r) => r.json?.issue?.title === title)) {
    assert.ok(await verify(SECRET, request.body, request.headers['x-hub-signature-256'] as string), `${request.path}: the signature verifies`);
    (out[request.path.slice(1)] ??= []).push({ installation: request.json.installation.id, sender: request.json.sender.login });
  }
  return out;
}

/** An issue opened and commented on by `actor` in the repository, mentioning rita, rhea and mona; both delivered and fanned out. */
async function activity(title: string, actor: string, repository = 'acme/widgets'): Promise<void> {
  const issue = await server.admin('POST', `/repos/${repository}/issues`, { author: actor, title, body: 'cc @rita @rhea' });
  await server.admin('POST', `/repos/${repository}/issues/${issue.number}/comments`, { author: actor, body: 'and @mona' });
  await server.drain();
}

describe('webhook fan-out: a row per neighbour app or installation', () => {
  interface Row {
    name: string;
    /** The activity's actor and repository. */
    actor: string;
    repository: string;
    /** The app (its receiver path) and whether it gets the issue and its comment, through which installation. */
    app: string;
    installation: string | null;
  }
  const ROWS: Row[] = [
    { name: 'the app subscribed, installed on every repository of the account', actor: 'mona', repository: 'acme/widgets', app: 'subscribed', installation: 'subscribed on acme' },
    { name: 'a second app on the account, not subscribed to the event', actor: 'mona', repository: 'acme/widgets', app: 'unsubscribed', installation: null },
    { name: 'a second app on the account whose selection covers the repository', actor: 'mona', repository: 'acme/widgets', app: 'selected-here', installation: 'selected-here on acme' },
    { name: 'a second app on the account whose selection does not cover the repository', actor: 'mona', repository: 'acme/widgets', app: 'selected-elsewhere', installation: null },
    { name: 'that app, on the repository its selection covers', actor: 'mona', repository: 'acme/gadgets', app: 'selected-elsewhere', installation: 'selected-elsewhere on acme' },
    { name: 'the app with a selection, on a repository it does not cover', actor: 'mona', repository: 'acme/gadgets', app: 'selected-here', installation: null },
    { name: 'the same app\'s second installation, on another account: through that installation alone', actor: 'hubot', repository: 'hubot/elsewhere', app: 'subscribed', installation: 'subscribed on hubot' },
    { name: 'another account\'s activity reaches no installation on acme', actor: 'hubot', repository: 'hubot/elsewhere', app: 'selected-here', installation: null },
    { name: 'an app\'s bot acting: still delivered to the apps (the bot as sender)', actor: 'helper-bot', repository: 'acme/widgets', app: 'subscribed', installation: 'subscribed on acme' },
    { name: 'an app\'s bot acting: to a second app on the account too', actor: 'helper-bot', repository: 'acme/widgets', app: 'selected-here', installation: 'selected-here on acme' },
  ];
  let n = 0;
  for (const row of ROWS) {
    test(row.name, async () => {
      const title = `webhooks ${++n}`;
      await activity(title, row.actor, row.repository);
      const posts = (await postsOf(title))[row.app] ?? [];
      const expected = row.installation === null ? [] : [{ installation: installations[row.installation]!, sender: row.actor }];
      // The issue and its comment: two posts, or none.
      assert.deepEqual(posts, [...expected, ...expected]);
    });
  }
});

describe('notification fan-out: a row per neighbour user', () => {
  interface Row {
    name: string;
    actor: string;
    user: string;
    /** The reason of the user's thread about the activity, or null for none. */
    reason: string | null;
    /** The list read (default: every thread of the user). */
    list?: string;
    /** Given read access to the repository after the activity, before the list is read. */
    grantedAfter?: boolean;
  }
  const ROWS: Row[] = [
    { name: 'a member watching the repository', actor: 'mona', user: 'wally', reason: 'subscribed' },
    { name: 'a member not watching it', actor: 'mona', user: 'walt', reason: null },
    { name: 'a user mentioned who cannot read the repository', actor: 'mona', user: 'rita', reason: null },
    // The lists hide what the user cannot read now: a thread made for who could not read it then shows once they can.
    { name: 'a user mentioned who could not read the repository then, given access since', actor: 'mona', user: 'rhea', reason: null, grantedAfter: true },
    { name: 'the actor, mentioned in their own comment', actor: 'mona', user: 'mona', reason: null },
    { name: 'the owner mentioned by another', actor: 'wally', user: 'mona', reason: 'mention' },
    { name: 'an app\'s bot acting: the bot, watching, is not notified', actor: 'helper-bot', user: 'helper-bot', reason: null },
    { name: 'an app\'s bot acting: the others are', actor: 'helper-bot', user: 'mona', reason: 'mention' },
    { name: 'an app\'s bot acting: a watcher is', actor: 'helper-bot', user: 'wally', reason: 'subscribed' },
    { name: 'the participating list: not a watcher\'s thread', actor: 'mona', user: 'wally', reason: null, list: '/notifications?participating=true' },
    { name: 'the participating list: a mention', actor: 'wally', user: 'mona', reason: 'mention', list: '/notifications?participating=true' },
    { name: 'the repository\'s list: a watcher\'s thread', actor: 'mona', user: 'wally', reason: 'subscribed', list: '/repos/acme/widgets/notifications' },
    { name: 'the repository\'s participating list: not a watcher\'s thread', actor: 'mona', user: 'wally', reason: null, list: '/repos/acme/widgets/notifications?participating=true' },
    { name: 'another repository\'s list: not this one\'s thread', actor: 'wally', user: 'mona', reason: null, list: '/repos/acme/gadgets/notifications' },
  ];
  let n = 0;
  for (const row of ROWS) {
    test(row.name, async () => {
      const title = `notifications ${++n}`;
      await activity(title, row.actor);
      if (row.grantedAfter) await server.admin('PUT', `/repos/acme/widgets/collaborators/${row.user}`, { permission: 'pull' });
      const response = await server.api('GET', row.list ?? '/notifications?all=true&per_page=50', { token: tokens[row.user] });
      assert.equal(response.status, 200, response.text);
      const thread = response.body.find((t: { subject: { title: string } }) => t.subject.title === title);
      assert.equal(thread?.reason ?? null, row.reason);
    });
  }
});
