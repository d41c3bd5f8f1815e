// Durability of a user's deletion: `codehost serve` is killed with SIGKILL at random moments while
// deletions are under way; the database then holds, for each user, either the before (the user with
// their repository, org membership, token and their issue as theirs) or the after (none of it, and
// the issue written by ghost), never half. Rounds on the same database, each a new process.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openDatabase } from '../src/db/index.ts';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';
import { startServe, type ServeChild } from './helpers/process.ts';

const ADMIN_TOKEN = 'killed-admin-token-0123456789';
const USERS = 24;
const ROUNDS = 4;

let database: TestDatabase;
let server: ServeChild | null = null;

async function start(): Promise<ServeChild> {
  server = await startServe(database, ADMIN_TOKEN);
  return server;
}

before(async () => {
  database = await createTestDatabase();
});
after(async () => {
  await server?.kill();
  await database.drop();
});

test('a user deletion killed at any moment leaves the before or the after, never half', async (t) => {
  const first = await start();
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
    const current = round === 0 ? first : await start();
    // Every remaining user's deletion at once; the process dies a random moment later.
    let answered!: () => void;
    const firstAnswer = new Promise<void>((resolve) => (answered = resolve));
    const requests = remaining.map((login) => current.call('DELETE', `/users/${login}`).then((r) => (answered(), r.status)).catch(() => 'cut'));
    // Once the first deletion has committed, at a random moment among the others.
    await firstAnswer;
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 40));
    await current.kill();
    await Promise.all(requests);

    const db = openDatabase({ databaseUrl: database.databaseUrl, sqlitePath: `${database.dataDir}/codehost.db`, poolSize: 1 });
    try {
      const ghost = await db.kysely.selectFrom('users').select('id').where('login', '=', 'ghost').executeTakeFirst();
      const next: string[] = [];
      for (const login of logins) {
        const user = await db.kysely.selectFrom('users').select('id').where('login', '=', login).executeTakeFirst();
        const issue = await db.kysely.selectFrom('issues').select('author_id').where('title', '=', `by ${login}`).executeTakeFirstOrThrow();
        if (user) {
          next.push(login);
          const repos = await db.kysely.selectFrom('repositories').select('id').where('owner_id', '=', user.id).execute();
          const memberships = await db.kysely.selectFrom('org_memberships').select('org_id').where('user_id', '=', user.id).execute();
          const tokens = await db.kysely.selectFrom('tokens').select('id').where('user_id', '=', user.id).execute();
          assert.deepEqual([repos.length, memberships.length, tokens.length, issue.author_id], [1, 1, 1, user.id], `${login}: the before, whole`);
        } else {
          assert.ok(ghost, `${login} is gone, so ghost exists`);
          assert.equal(issue.author_id, ghost.id, `${login}: the after, whole (their issue is ghost's)`);
        }
      }
      const orphans = await db.kysely.selectFrom('repositories').select('id').where('name', '=', 'own').execute();
      assert.equal(orphans.length, next.length, 'no repository outlives its owner');
      t.diagnostic(`round ${round}: ${remaining.length - next.length} of ${remaining.length} deleted before the kill`);
      remaining = remaining.filter((login) => next.includes(login));
    } finally {
      await db.close();
    }
  }
  // A last process deletes whoever is left: the state each kill left is one deletion can go on from.
  if (remaining.length) {
    const last = await start();
    for (const login of remaining) assert.equal((await last.call('DELETE', `/users/${login}`)).status, 204);
  }
  await server!.kill();
});
