// Durability of a user's deletion: `codehost serve` is killed with SIGKILL at random moments while
// deletions are under way; the database then holds, for each user, either the before (the user with
// their repository, org membership, token and their issue as theirs) or the after (none of it, and
// the issue written by ghost), never half. Rounds on the same database, each a new process.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { killAmid, killedServers } from '../../helpers/killed.ts';

const ADMIN_TOKEN = 'killed-admin-token-0123456789';
const USERS = 24;
const ROUNDS = 4;

const servers = killedServers(ADMIN_TOKEN);

test('a user deletion killed at any moment leaves the before or the after, never half', async (t) => {
  const first = await servers.start();
  const logins = Array.from({ length: USERS }, (_, i) => `leaver${i}`);
  await first.admin('POST', '/users', { login: 'boss' });
  await first.admin('POST', '/orgs', { login: 'acme', owners: ['boss'] });
  await first.admin('POST', '/repos', { owner: 'acme', name: 'shared' });
  for (const login of logins) {
    await first.admin('POST', '/users', { login });
    await first.admin('PUT', `/orgs/acme/members/${login}`, { role: 'member' });
    await first.admin('POST', '/repos', { owner: login, name: 'own', init_git: true });
    await first.admin('POST', '/tokens', { login, kind: 'classic', scopes: ['repo'] });
    await first.admin('POST', '/repos/acme/shared/issues', { author: login, title: `by ${login}` });
  }

  let remaining = [...logins];
  for (let round = 0; round < ROUNDS && remaining.length; round++) {
    const current = round === 0 ? first : await servers.start();
    // Every remaining user's deletion at once; the process dies a random moment (up to 40 ms) after
    // the first deletion has committed, among the others.
    await killAmid(current, remaining.map((login) => () => current.call('DELETE', `/users/${login}`)), 40);

    await servers.inspect(async (q) => {
      const ghost = await q.selectFrom('users').select('id').where('login', '=', 'ghost').executeTakeFirst();
      const next: string[] = [];
      for (const login of logins) {
        const user = await q.selectFrom('users').select('id').where('login', '=', login).executeTakeFirst();
        const issue = await q.selectFrom('issues').select('author_id').where('title', '=', `by ${login}`).executeTakeFirstOrThrow();
        if (user) {
          next.push(login);
          const repos = await q.selectFrom('repositories').select('id').where('owner_id', '=', user.id).execute();
          const memberships = await q.selectFrom('org_memberships').select('org_id').where('user_id', '=', user.id).execute();
          const tokens = await q.selectFrom('tokens').select('id').where('user_id', '=', user.id).execute();
          assert.deepEqual([repos.length, memberships.length, tokens.length, issue.author_id], [1, 1, 1, user.id], `${login}: the before, whole`);
        } else {
          assert.ok(ghost, `${login} is gone, so ghost exists`);
          assert.equal(issue.author_id, ghost.id, `${login}: the after, whole (their issue is ghost's)`);
        }
      }
      const orphans = await q.selectFrom('repositories').select('id').where('name', '=', 'own').execute();
      assert.equal(orphans.length, next.length, 'no repository outlives its owner');
      t.diagnostic(`round ${round}: ${remaining.length - next.length} of ${remaining.length} deleted before the kill`);
      remaining = remaining.filter((login) => next.includes(login));
    });
  }
  // A last process deletes whoever is left: the state each kill left is one deletion can go on from.
  if (remaining.length) {
    const last = await servers.start();
    for (const login of remaining) assert.equal((await last.call('DELETE', `/users/${login}`)).status, 204);
  }
  await servers.current!.kill();
});
