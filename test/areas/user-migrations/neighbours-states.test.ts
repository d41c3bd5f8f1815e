// Neighbours of a state (issue 43): every operation of the user-migrations area from every state a
// migration can be in — pending, exporting, exported, failed, exported with its archive deleted, with
// its archive expired, and exported with its repository unlocked — by its owner and by another user.
// A row per state (what each operation answers its owner), a row per operation; another user's
// migration is a 404 on every operation, and is in no list of theirs. The spec: download (302) only
// once `exported`, 404 when not exported, deleted or expired; delete 204, 404 when there is no
// archive; unlock 204 once exported (422 before), 404 when the repository is not locked by it.
//
// The states are made as the other migration tests make them: an API process without a worker takes
// the starts, a worker process on the same database runs the exports (a repository whose git data is
// broken fails), the test clock ages an archive past its seven days, an exporting run is the row a
// worker leaves while it exports.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { classicToken } from '../../helpers/credentials.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { repositoryWithBrokenGitData } from '../../helpers/migrations.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

const STATES = ['pending', 'exporting', 'exported', 'failed', 'deleted', 'expired', 'unlocked'] as const;
type State = (typeof STATES)[number];

/**
 * What each operation answers the owner in each state: the state the migration shows, the archive
 * download (GET and HEAD), the archive's deletion, the unlock of its repository.
 */
const OWNER: Record<State, { shows: string; archive: 302 | 404; deleteArchive: 204 | 404; unlock: 204 | 404 | 422 }> = {
  pending: { shows: 'pending', archive: 404, deleteArchive: 404, unlock: 422 },
  exporting: { shows: 'exporting', archive: 404, deleteArchive: 404, unlock: 422 },
  exported: { shows: 'exported', archive: 302, deleteArchive: 204, unlock: 204 },
  // A failed migration released its repositories: nothing is locked by it.
  failed: { shows: 'failed', archive: 404, deleteArchive: 404, unlock: 404 },
  deleted: { shows: 'exported', archive: 404, deleteArchive: 404, unlock: 204 },
  expired: { shows: 'exported', archive: 404, deleteArchive: 404, unlock: 204 },
  unlocked: { shows: 'exported', archive: 302, deleteArchive: 204, unlock: 404 },
};

const DAY = 86_400;
let database: TestDatabase;
let api: TestServer;
let alice: string;
let bob: string;
/** Each state's migration id, and the repository it exports (and locked at start). */
const migrations = {} as Record<State, { id: number; repository: string }>;

before(async () => {
  database = await createTestDatabase();
  api = await startServer({ CODEHOST_WORKER: '0' }, { database });
  await api.admin('POST', '/users', { login: 'alice' });
  await api.admin('POST', '/users', { login: 'bob' });
  for (const state of STATES) {
    if (state === 'failed') await repositoryWithBrokenGitData(api, 'alice', `r-${state}`);
    else await api.admin('POST', '/repos', { owner: 'alice', name: `r-${state}`, init_git: true });
  }
  // bob has a repository named as alice's and a migration of his own.
  await api.admin('POST', '/repos', { owner: 'bob', name: 'r-exported', init_git: true });
  alice = await classicToken(api, 'alice', ['repo']);
  bob = await classicToken(api, 'bob', ['repo']);
  const start = async (state: State, token = alice, repository = `r-${state}`) => {
    const started = await api.api('POST', '/user/migrations', { token, body: { repositories: [repository], lock_repositories: true } });
    assert.equal(started.status, 201, started.text);
    assert.equal(started.body.state, 'pending');
    return { id: started.body.id as number, repository };
  };
  /** A worker process on the same database, its clock `ahead` seconds on, runs the exports queued. */
  const exportQueued = async (ahead: number) => {
    const worker = await startServer({}, { database });
    try {
      if (ahead) await worker.advance(ahead);
      await worker.drain();
    } finally {
      await worker.close();
    }
  };
  // Exported eight days ago by the clock the API process will have.
  migrations.expired = await start('expired');
  await exportQueued(0);
  await api.advance(8 * DAY);
  for (const state of ['exported', 'failed', 'deleted', 'unlocked'] as const) migrations[state] = await start(state);
  const bobs = await start('exported', bob);
  await exportQueued(8 * DAY);
  assert.equal((await api.api('DELETE', `/user/migrations/${migrations.deleted.id}/archive`, { token: alice })).status, 204);
  assert.equal((await api.api('DELETE', `/user/migrations/${migrations.unlocked.id}/repos/r-unlocked/lock`, { token: alice })).status, 204);
  // No worker runs from here: these stay pending, and one is as a worker leaves it while it exports.
  migrations.pending = await start('pending');
  migrations.exporting = await start('exporting');
  await api.server.ctx.db.kysely.updateTable('user_migrations').set({ state: 'exporting', export_run: 'a-live-run' }).where('id', '=', migrations.exporting.id).execute();
  for (const state of STATES) {
    const view = await api.admin('GET', `/migrations/${migrations[state].id}`);
    assert.equal(view.state, OWNER[state].shows, state);
  }
  assert.equal((await api.admin('GET', `/migrations/${bobs.id}`)).state, 'exported');
});

after(async () => {
  await api?.close();
  await database?.drop();
});

/** The read operations: path of a migration, and the status its owner gets in a state. */
const READS: [string, (id: number, repository: string) => string, (state: State) => number][] = [
  ['GET one', (id) => `/user/migrations/${id}`, () => 200],
  ['GET one, without its repositories', (id) => `/user/migrations/${id}?exclude=repositories`, () => 200],
  ['GET its repositories', (id) => `/user/migrations/${id}/repositories`, () => 200],
  ['GET its archive', (id) => `/user/migrations/${id}/archive`, (state) => OWNER[state].archive],
];

test('another user\'s migration: 404 on every operation in every state, in none of their lists, and nothing changes', async (t) => {
  const list = await api.api('GET', '/user/migrations', { token: bob });
  assert.equal(list.status, 200);
  const listed = (list.body as { id: number; owner: { login: string } }[]);
  assert.equal(listed.length, 1);
  assert.equal(listed[0]!.owner.login, 'bob');
  for (const state of STATES) await t.test(state, async () => {
    const { id, repository } = migrations[state];
    assert.ok(!listed.some((m) => m.id === id), `${state}: not in bob's list`);
    for (const [what, path] of READS) {
      for (const method of ['GET', 'HEAD']) {
        const response = await api.api(method, path(id, repository), { token: bob });
        assert.equal(response.status, 404, `${state}: bob ${method} ${what}`);
        if (method === 'GET') assert.equal(response.body.message, 'Not Found', `${state}: bob ${what}`);
        else assert.equal(response.text, '', `${state}: bob HEAD ${what}`);
      }
    }
    // bob has a repository named r-exported: still alice's migration is not his to unlock.
    for (const name of [repository, 'r-exported']) {
      const unlock = await api.api('DELETE', `/user/migrations/${id}/repos/${name}/lock`, { token: bob });
      assert.equal(unlock.status, 404, `${state}: bob unlocks ${name}`);
    }
    assert.equal((await api.api('DELETE', `/user/migrations/${id}/archive`, { token: bob })).status, 404, `${state}: bob deletes the archive`);
  });
  // Nothing bob did changed alice's migrations.
  for (const state of STATES) {
    const view = await api.admin('GET', `/migrations/${migrations[state].id}`);
    assert.equal(view.state, OWNER[state].shows, state);
    assert.equal(view.archive !== null, OWNER[state].archive === 302, `${state}: the archive is still there (or still not)`);
    assert.deepEqual(view.locked_repositories, OWNER[state].unlock === 404 ? [] : [`alice/${migrations[state].repository}`], state);
  }
});

test('the owner: every read in every state (GET and HEAD answer alike), and the list shows each state', async (t) => {
  const list = await api.api('GET', '/user/migrations', { token: alice });
  assert.equal(list.status, 200);
  const shown = new Map((list.body as { id: number; state: string; repositories: { full_name: string }[] }[]).map((m) => [m.id, m]));
  assert.equal(shown.size, STATES.length);
  for (const state of STATES) await t.test(state, async () => {
    const { id, repository } = migrations[state];
    assert.equal(shown.get(id)?.state, OWNER[state].shows, `${state}: in the list`);
    assert.deepEqual(shown.get(id)?.repositories.map((r) => r.full_name), [`alice/${repository}`], `${state}: its repositories in the list`);
    for (const [what, path, status] of READS) {
      const get = await api.api('GET', path(id, repository), { token: alice });
      assert.equal(get.status, status(state), `${state}: GET ${what}: ${get.text}`);
      const head = await api.api('HEAD', path(id, repository), { token: alice });
      assert.equal(head.status, status(state), `${state}: HEAD ${what}`);
      assert.equal(head.text, '');
      assert.equal(head.headers.get('location') === null, get.headers.get('location') === null, `${state}: HEAD ${what} redirects as GET does`);
    }
    const one = await api.api('GET', `/user/migrations/${id}`, { token: alice });
    assert.equal(one.body.state, OWNER[state].shows, state);
    assert.deepEqual(one.body.repositories.map((r: { full_name: string }) => r.full_name), [`alice/${repository}`], state);
    const repositories = await api.api('GET', `/user/migrations/${id}/repositories`, { token: alice });
    assert.deepEqual(repositories.body.map((r: { full_name: string }) => r.full_name), [`alice/${repository}`], `${state}: its repositories`);
    if (OWNER[state].archive === 302) {
      // The signed URL serves the archive (GET and HEAD).
      const redirect = await api.api('GET', `/user/migrations/${id}/archive`, { token: alice });
      const location = redirect.headers.get('location')!;
      assert.match(location, new RegExp(`/_storage/user-migrations/${id}/archive\\.tar\\.gz\\?expires=\\d+&signature=`));
      for (const method of ['GET', 'HEAD']) {
        const archive = await fetch(location, { method });
        assert.equal(archive.status, 200, `${state}: ${method} the signed URL`);
        assert.equal(archive.headers.get('content-type'), 'application/gzip');
        await archive.arrayBuffer();
      }
    }
  });
});

test('the owner: the writes in every state (unlock, then delete the archive), then what is left', async (t) => {
  for (const state of STATES) await t.test(state, async () => {
    const { id, repository } = migrations[state];
    const unlock = await api.api('DELETE', `/user/migrations/${id}/repos/${repository}/lock`, { token: alice });
    assert.equal(unlock.status, OWNER[state].unlock, `${state}: unlock: ${unlock.text}`);
    if (unlock.status === 422) assert.equal(unlock.body.errors[0].message, 'Repositories can be unlocked once the migration has been exported', state);
    const again = await api.api('DELETE', `/user/migrations/${id}/repos/${repository}/lock`, { token: alice });
    assert.equal(again.status, OWNER[state].unlock === 422 ? 422 : 404, `${state}: unlock again`);

    const deleted = await api.api('DELETE', `/user/migrations/${id}/archive`, { token: alice });
    assert.equal(deleted.status, OWNER[state].deleteArchive, `${state}: delete the archive`);
    assert.equal((await api.api('DELETE', `/user/migrations/${id}/archive`, { token: alice })).status, 404, `${state}: delete it again`);
    // Afterwards: no archive in any state, the migration and its repositories still readable.
    for (const method of ['GET', 'HEAD']) {
      assert.equal((await api.api(method, `/user/migrations/${id}/archive`, { token: alice })).status, 404, `${state}: ${method} the archive after`);
    }
    const after = await api.api('GET', `/user/migrations/${id}`, { token: alice });
    assert.equal(after.status, 200);
    assert.equal(after.body.state, OWNER[state].shows);
    const view = await api.admin('GET', `/migrations/${id}`);
    assert.equal(view.archive, null, state);
    assert.deepEqual(view.locked_repositories, OWNER[state].unlock === 422 ? [`alice/${repository}`] : [], `${state}: locked after`);
  });
});
