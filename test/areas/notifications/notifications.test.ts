// Notification fan-out end to end: activity written through the operator surface, threads read
// through the public API. Each reason from the activity that produces it, precedence, actor
// exclusion, repository visibility, ignored / deleted subscriptions and what lifts them, watchers
// (also with `ignored`), done threads coming back, and operator-made notifications.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../../helpers/server.ts';

let server: TestServer;
const tokens: Record<string, string> = {};

/** A user with a classic token (`notifications`). */
async function person(login: string): Promise<string> {
  await server.admin('POST', '/users', { login });
  tokens[login] = (await server.admin('POST', '/tokens', { login, kind: 'classic', scopes: ['notifications'] })).token;
  return login;
}

async function watch(login: string, repository: string, options: { subscribed?: boolean; ignored?: boolean } = {}) {
  await server.admin('PUT', `/repos/${repository}/subscription`, { login, ...options });
}

/** Activity, then the fan-out. */
async function open(title: string, input: Record<string, unknown> = {}, repository = 'acme/widgets') {
  const issue = await server.admin('POST', `/repos/${repository}/issues`, { author: 'alice', title, ...input });
  await server.drain();
  return issue;
}
async function comment(number: number, author: string, body: string, repository = 'acme/widgets') {
  const created = await server.admin('POST', `/repos/${repository}/issues/${number}/comments`, { author, body });
  await server.drain();
  return created;
}
async function change(number: number, input: Record<string, unknown>, repository = 'acme/widgets') {
  const issue = await server.admin('PATCH', `/repos/${repository}/issues/${number}`, input);
  await server.drain();
  return issue;
}

/** The user's thread about a subject title (read or unread), or undefined. */
async function thread(login: string, title: string) {
  const response = await server.api('GET', '/notifications?all=true&per_page=50', { token: tokens[login] });
  assert.equal(response.status, 200, response.text);
  return response.body.find((t: { subject: { title: string } }) => t.subject.title === title);
}
const reasonOf = async (login: string, title: string) => (await thread(login, title))?.reason;

async function markRead(login: string, title: string) {
  const found = await thread(login, title);
  assert.equal((await server.api('PATCH', `/notifications/threads/${found.id}`, { token: tokens[login] })).status, 205);
  return found;
}

async function subscription(login: string, title: string) {
  const found = await thread(login, title);
  return (await server.api('GET', `/notifications/threads/${found.id}/subscription`, { token: tokens[login] })).body;
}

before(async () => {
  server = await startServer();
  for (const login of ['alice', 'bob', 'carol', 'dave', 'erin', 'olga', 'wally']) await person(login);
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['alice'], members: ['bob', 'carol', 'dave', 'erin', 'wally'] });
  await server.admin('POST', '/orgs/acme/teams', { slug: 'reviewers', members: ['carol', 'dave'] });
  // olga is on a team of acme without being a member of the organization: she reads only public repositories.
  await server.admin('POST', '/orgs/acme/teams', { slug: 'docs', members: ['erin', 'olga'] });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'secret', visibility: 'private' });
  await watch('wally', 'acme/widgets');
});
after(() => server.close());

describe('reasons from activity', () => {
  test('opening an issue: assign, mention, team_mention, subscribed; never the author', async () => {
    const issue = await open('Opened', { body: 'cc @carol and @acme/docs', assignees: ['bob'] });
    assert.equal(await reasonOf('bob', 'Opened'), 'assign');
    assert.equal(await reasonOf('carol', 'Opened'), 'mention');
    assert.equal(await reasonOf('erin', 'Opened'), 'team_mention');
    assert.equal(await reasonOf('olga', 'Opened'), 'team_mention', 'a public repository: every team member reads it');
    assert.equal(await reasonOf('wally', 'Opened'), 'subscribed');
    assert.equal(await thread('alice', 'Opened'), undefined, 'the actor is never notified');
    assert.equal(await thread('dave', 'Opened'), undefined);
    const bobs = await thread('bob', 'Opened');
    assert.equal(bobs.subject.type, 'Issue');
    assert.equal(bobs.subject.url, issue.url);
    assert.equal(bobs.subject.latest_comment_url, issue.url);
    assert.equal(bobs.unread, true);
    // The author's participation subscribed them.
    await comment(issue.number, 'bob', 'on it');
    assert.equal(await reasonOf('alice', 'Opened'), 'author');
  });

  test('opening a pull request: requested reviewers and members of requested teams', async () => {
    const pull = await open('Pulled', { pull_request: true, reviewers: ['bob'], team_reviewers: ['reviewers'] });
    assert.equal(await reasonOf('bob', 'Pulled'), 'review_requested');
    assert.equal(await reasonOf('carol', 'Pulled'), 'review_requested');
    assert.equal(await reasonOf('dave', 'Pulled'), 'review_requested');
    const bobs = await thread('bob', 'Pulled');
    assert.equal(bobs.subject.type, 'PullRequest');
    assert.equal(bobs.subject.url, pull.pull_request.url);
  });

  test('comments reach the author, earlier commenters and mentioned users, with the comment as latest_comment_url', async () => {
    const issue = await open('Discussed');
    await comment(issue.number, 'bob', 'first');
    const latest = await comment(issue.number, 'carol', 'what do you think, @dave?');
    assert.equal(await reasonOf('alice', 'Discussed'), 'author');
    assert.equal(await reasonOf('bob', 'Discussed'), 'comment');
    assert.equal(await reasonOf('dave', 'Discussed'), 'mention');
    assert.equal(await reasonOf('wally', 'Discussed'), 'subscribed');
    assert.equal(await thread('carol', 'Discussed'), undefined, 'not of her own comment');
    assert.equal((await thread('alice', 'Discussed')).subject.latest_comment_url, latest.url);
  });

  test('state changes: closing and merging notify subscribers; the actor later hears as state_change', async () => {
    const pull = await open('Merged', { pull_request: true });
    await markRead('wally', 'Merged');
    await change(pull.number, { actor: 'dave', state: 'merged' });
    const wallys = await thread('wally', 'Merged');
    assert.equal(wallys.unread, true, 'the merge reached the watcher');
    assert.equal(await thread('dave', 'Merged'), undefined);
    await comment(pull.number, 'bob', 'thanks');
    assert.equal(await reasonOf('alice', 'Merged'), 'author');
    assert.equal(await reasonOf('dave', 'Merged'), 'state_change');

    const issue = await open('Closed');
    await change(issue.number, { actor: 'erin', state: 'closed' });
    await change(issue.number, { actor: 'erin', state: 'open' });
    await comment(issue.number, 'bob', 'reopened, good');
    assert.equal(await reasonOf('erin', 'Closed'), 'state_change');
  });

  test('an assignment or a review request reaches only the assignee or the reviewer', async () => {
    const pull = await open('Assigned later', { pull_request: true });
    await comment(pull.number, 'erin', 'looks fine');
    await markRead('wally', 'Assigned later');
    await markRead('alice', 'Assigned later');
    await change(pull.number, { actor: 'alice', assignees: ['carol'], reviewers: ['bob'], team_reviewers: ['docs'] });
    assert.equal(await reasonOf('carol', 'Assigned later'), 'assign');
    assert.equal(await reasonOf('bob', 'Assigned later'), 'review_requested');
    assert.equal(await reasonOf('olga', 'Assigned later'), 'review_requested');
    assert.equal(await reasonOf('erin', 'Assigned later'), 'review_requested', 'erin commented, and is on the requested team');
    assert.equal((await thread('alice', 'Assigned later')).unread, false, 'the author does not hear of it');
    assert.equal((await thread('wally', 'Assigned later')).unread, false, 'nor does a watcher');
  });
});

describe('precedence and the reason over time', () => {
  test('the most direct reason wins', async () => {
    await open('Several reasons', { body: '@bob, @acme/reviewers', assignees: ['bob', 'wally', 'carol'] });
    assert.equal(await reasonOf('bob', 'Several reasons'), 'mention', 'mention beats assign');
    assert.equal(await reasonOf('carol', 'Several reasons'), 'team_mention', 'team_mention beats assign');
    assert.equal(await reasonOf('wally', 'Several reasons'), 'assign', 'assign beats subscribed');
    assert.equal(await reasonOf('dave', 'Several reasons'), 'team_mention');

    await open('Team asked twice', { pull_request: true, body: 'ping @acme/reviewers', team_reviewers: ['reviewers'] });
    assert.equal(await reasonOf('carol', 'Team asked twice'), 'team_mention', 'team_mention beats review_requested');
  });

  test('the reason stays until a later notification has another one', async () => {
    const issue = await open('Changing reason');
    assert.equal(await reasonOf('wally', 'Changing reason'), 'subscribed');
    await change(issue.number, { actor: 'alice', assignees: ['wally'] });
    assert.equal(await reasonOf('wally', 'Changing reason'), 'assign');
    // Assigning subscribed wally with `assign`, which beats watching on later comments too.
    await comment(issue.number, 'bob', 'more');
    assert.equal(await reasonOf('wally', 'Changing reason'), 'assign');
  });
});

describe('who may hear of a repository', () => {
  test('in a private repository only readers are notified', async () => {
    await watch('olga', 'acme/secret');
    await open('Private', { body: '@olga @bob @acme/docs' }, 'acme/secret');
    assert.equal(await reasonOf('bob', 'Private'), 'mention');
    assert.equal(await reasonOf('erin', 'Private'), 'team_mention');
    assert.equal(await thread('olga', 'Private'), undefined, 'mentioned, on a mentioned team and watching, but no reader');
  });
});

describe('thread subscriptions', () => {
  test('an ignored thread gets nothing until the user is mentioned', async () => {
    const issue = await open('Ignored');
    await comment(issue.number, 'bob', 'hello');
    await markRead('alice', 'Ignored');
    const found = await thread('alice', 'Ignored');
    const ignored = await server.api('PUT', `/notifications/threads/${found.id}/subscription`, { token: tokens.alice, body: { ignored: true } });
    assert.equal(ignored.status, 200);
    assert.deepEqual([ignored.body.subscribed, ignored.body.ignored, ignored.body.reason], [false, true, 'author']);
    await watch('alice', 'acme/widgets');
    await comment(issue.number, 'carol', 'still here');
    assert.equal((await thread('alice', 'Ignored')).unread, false, 'neither participation nor watching reaches an ignored thread');
    await change(issue.number, { actor: 'bob', assignees: ['alice'] });
    assert.equal((await thread('alice', 'Ignored')).unread, false, 'not even an assignment');
    await comment(issue.number, 'carol', '@alice are you there?');
    const back = await thread('alice', 'Ignored');
    assert.equal(back.unread, true);
    assert.equal(back.reason, 'mention');
    assert.deepEqual([(await subscription('alice', 'Ignored')).subscribed, (await subscription('alice', 'Ignored')).ignored], [true, false]);
    await watch('alice', 'acme/widgets', { subscribed: false });
  });

  test("the user's own comment lifts an ignore", async () => {
    const issue = await open('Ignored then commented');
    await comment(issue.number, 'bob', 'first');
    const found = await thread('alice', 'Ignored then commented');
    await server.api('PUT', `/notifications/threads/${found.id}/subscription`, { token: tokens.alice, body: { ignored: true } });
    await comment(issue.number, 'alice', 'never mind, I am back');
    await markRead('alice', 'Ignored then commented');
    await comment(issue.number, 'bob', 'welcome back');
    const back = await thread('alice', 'Ignored then commented');
    assert.equal(back.unread, true);
    assert.equal(back.reason, 'author', 'subscribed again, keeping the higher reason');
  });

  test('a deleted subscription mutes participation but not watching, until a mention', async () => {
    const frank = await person('frank');
    const issue = await open('Muted', { assignees: [frank] });
    const found = await markRead(frank, 'Muted');
    assert.equal((await server.api('DELETE', `/notifications/threads/${found.id}/subscription`, { token: tokens.frank })).status, 204);
    const muted = await subscription(frank, 'Muted');
    assert.deepEqual([muted.subscribed, muted.ignored, muted.reason], [false, false, null]);
    await comment(issue.number, 'bob', 'ping');
    assert.equal((await thread(frank, 'Muted')).unread, false, 'muted: the assignment no longer subscribes');
    await change(issue.number, { actor: 'bob', assignees: [] });
    await change(issue.number, { actor: 'bob', assignees: [frank] });
    assert.equal((await thread(frank, 'Muted')).unread, false, 'muted: not even a new assignment');
    await watch(frank, 'acme/widgets');
    assert.equal((await subscription(frank, 'Muted')).subscribed, true, 'watching the repository reaches the thread');
    await comment(issue.number, 'bob', 'pong');
    const watched = await thread(frank, 'Muted');
    assert.deepEqual([watched.unread, watched.reason], [true, 'subscribed']);
    await watch(frank, 'acme/widgets', { subscribed: false });
    await comment(issue.number, 'bob', '@frank please look');
    assert.equal(await reasonOf(frank, 'Muted'), 'mention');
    await markRead(frank, 'Muted');
    await comment(issue.number, 'bob', 'and again');
    assert.equal((await thread(frank, 'Muted')).unread, true, 'the mention subscribed frank again');
  });

  test('subscribing by hand gives `manual`', async () => {
    const issue = await open('Manual');
    const found = await thread('wally', 'Manual');
    assert.equal(found.reason, 'subscribed');
    const before = await server.api('GET', `/notifications/threads/${found.id}/subscription`, { token: tokens.wally });
    assert.deepEqual([before.body.subscribed, before.body.ignored, before.body.reason], [true, false, null], 'what watching gives');
    const set = await server.api('PUT', `/notifications/threads/${found.id}/subscription`, { token: tokens.wally, body: {} });
    assert.deepEqual([set.body.subscribed, set.body.ignored, set.body.reason], [true, false, 'manual']);
    await comment(issue.number, 'bob', 'something');
    assert.equal(await reasonOf('wally', 'Manual'), 'manual', 'manual beats subscribed');
  });
});

describe('watchers', () => {
  test('a repository watched with ignored gives nothing but direct participation', async () => {
    const ivan = await person('ivan');
    await server.admin('POST', '/orgs/acme/teams', { slug: 'ignorers', members: [ivan] });
    await watch(ivan, 'acme/widgets', { ignored: true });
    const issue = await open('Ignoring watcher', { body: 'cc @acme/ignorers' });
    await comment(issue.number, 'bob', 'a comment');
    assert.equal(await thread(ivan, 'Ignoring watcher'), undefined, 'neither watching nor a team mention');
    await comment(issue.number, 'bob', '@ivan you in particular');
    assert.equal(await reasonOf(ivan, 'Ignoring watcher'), 'mention');
    await markRead(ivan, 'Ignoring watcher');
    await comment(issue.number, 'carol', 'continuing');
    assert.equal((await thread(ivan, 'Ignoring watcher')).unread, true, 'the mention subscribed ivan: participation');
  });
});

describe('read and done threads', () => {
  test('a done thread leaves the lists and comes back with new activity', async () => {
    const issue = await open('Done', { body: '@bob' });
    const found = await thread('bob', 'Done');
    assert.equal((await server.api('DELETE', `/notifications/threads/${found.id}`, { token: tokens.bob })).status, 204);
    assert.equal(await thread('bob', 'Done'), undefined, 'not even with all=true');
    const direct = await server.api('GET', `/notifications/threads/${found.id}`, { token: tokens.bob });
    assert.deepEqual([direct.status, direct.body.unread], [200, false]);
    await server.advance(5);
    await comment(issue.number, 'carol', 'one more thing');
    const back = await thread('bob', 'Done');
    assert.equal(back.id, found.id, 'the same thread');
    assert.equal(back.unread, true);
    assert.ok(back.updated_at > found.updated_at, 'updated_at moved');
    const unread = await server.api('GET', '/notifications', { token: tokens.bob });
    assert.ok(unread.body.some((t: { id: string }) => t.id === found.id));
  });

  test('a read thread turns unread with new activity; last_read_at stays', async () => {
    const issue = await open('Read', { body: '@carol' });
    const read = await markRead('carol', 'Read');
    const afterRead = await thread('carol', 'Read');
    assert.equal(afterRead.unread, false);
    assert.match(afterRead.last_read_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    await server.advance(2);
    await comment(issue.number, 'bob', 'news');
    const again = await thread('carol', 'Read');
    assert.equal(again.id, read.id);
    assert.equal(again.unread, true);
    assert.equal(again.last_read_at, afterRead.last_read_at);
  });
});

describe('operator-made notifications', () => {
  test('POST /_admin/notifications creates, then updates, the thread of that subject', async () => {
    const subject = { type: 'CheckSuite', title: 'CI finished', url: `${server.apiUrl}/repos/acme/widgets/check-suites/1` };
    const created = await server.adminRaw('POST', '/notifications', { login: 'bob', repository: 'acme/widgets', subject, reason: 'ci_activity' });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.reason, 'ci_activity');
    assert.deepEqual(created.body.subject, { ...subject, latest_comment_url: subject.url });
    assert.equal(created.body.repository.full_name, 'acme/widgets');
    const listed = await thread('bob', 'CI finished');
    assert.equal(listed.id, created.body.id);

    await markRead('bob', 'CI finished');
    const updated = await server.admin('POST', '/notifications', { login: 'bob', repository: 'acme/widgets', subject: { ...subject, title: 'CI finished again' }, reason: 'approval_requested' });
    assert.equal(updated.id, created.body.id, 'same subject, same thread');
    assert.deepEqual([updated.reason, updated.unread, updated.subject.title], ['approval_requested', true, 'CI finished again']);

    for (const reason of ['invitation', 'member_feature_requested', 'security_alert']) {
      const other = await server.admin('POST', '/notifications', { login: 'bob', repository: 'acme/widgets', subject: { type: 'Other', title: reason, url: `https://example.com/${reason}` }, reason });
      assert.equal(other.reason, reason);
    }
  });

  test('unknown user or repository 404, a user who cannot read it or a bad body 422', async () => {
    const subject = { type: 'Release', title: 'v1', url: 'https://example.com/r/1' };
    const cases: [Record<string, unknown>, number][] = [
      [{ login: 'nobody', repository: 'acme/widgets', subject, reason: 'subscribed' }, 404],
      [{ login: 'bob', repository: 'acme/nothing', subject, reason: 'subscribed' }, 404],
      [{ login: 'olga', repository: 'acme/secret', subject, reason: 'subscribed' }, 422],
      [{ login: 'bob', repository: 'acme/widgets', subject, reason: 'because' }, 422],
      [{ login: 'bob', repository: 'widgets', subject, reason: 'subscribed' }, 422],
      [{ login: 'bob', repository: 'acme/widgets', subject: { type: 'Release', title: 'v1' }, reason: 'subscribed' }, 422],
    ];
    for (const [body, status] of cases) {
      const response = await server.adminRaw('POST', '/notifications', body);
      assert.equal(response.status, status, JSON.stringify(body));
      assert.equal(typeof response.body.message, 'string');
    }
    assert.equal(await thread('olga', 'v1'), undefined);
  });
});
