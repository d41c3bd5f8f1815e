// Git data and its removal (src/core/repositories/git-sweep.ts): a deletion records the paths of the
// git data it leaves in its transaction and removes them, and their records, after its commit; what a
// killed process left recorded is removed by the next run (at every start) without listing the git
// folder; the full listing (a rare fallback) removes old directories no row names; a creation clears
// what a creation that never committed left at its path.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { removeRecordedGitData, sweepOrphanedGitData } from '../../../src/core/repositories/git-sweep.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

let server: TestServer;
const ctx = () => server.server.ctx;
const gitRoot = () => join(ctx().config.dataDir, 'git');
const records = async () => (await ctx().db.kysely.selectFrom('git_data_removals').select('path').orderBy('path').execute()).map((row) => row.path);
const record = (path: string) => ctx().db.kysely.insertInto('git_data_removals').values({ path, recorded_at: new Date().toISOString() }).execute();
/** A directory as a creation or a deletion leaves it, `hoursOld` hours old. */
function leftover(name: string, hoursOld: number): string {
  const dir = join(gitRoot(), name);
  mkdirSync(join(dir, 'objects'), { recursive: true });
  writeFileSync(join(dir, 'leftover'), 'x');
  const then = new Date(Date.now() - hoursOld * 3_600_000);
  utimesSync(dir, then, then);
  return dir;
}

before(async () => {
  server = await startServer();
  await server.admin('POST', '/users', { login: 'boss' });
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['boss'] });
});
after(() => server.close());

test('a deletion removes its git data and leaves no record; so does a user\'s', async () => {
  const repo = await server.admin('POST', '/repos', { owner: 'acme', name: 'doomed', init_git: true });
  await server.admin('POST', '/users', { login: 'leaver' });
  const own = await server.admin('POST', '/repos', { owner: 'leaver', name: 'own', init_git: true });
  assert.ok(existsSync(join(gitRoot(), `${repo.id}.git`)) && existsSync(join(gitRoot(), `${own.id}.git`)));
  assert.equal((await server.adminRaw('DELETE', '/repos/acme/doomed')).status, 204);
  assert.equal((await server.adminRaw('DELETE', '/users/leaver')).status, 204);
  assert.equal(existsSync(join(gitRoot(), `${repo.id}.git`)), false);
  assert.equal(existsSync(join(gitRoot(), `${own.id}.git`)), false);
  assert.deepEqual(await records(), []);
});

test('what deletions recorded is removed, however young, and nothing else: no listing', async () => {
  const live = await server.admin('POST', '/repos', { owner: 'acme', name: 'live', init_git: true });
  const recorded = leftover('900001.git', 0);
  await record('git/900001.git');
  await record('git/900002.git'); // removed already (killed between the removal and forgetting it)
  const unrecorded = leftover('900003.git', 2);
  assert.deepEqual(await removeRecordedGitData(ctx()), ['git/900001.git', 'git/900002.git']);
  assert.equal(existsSync(recorded), false);
  assert.deepEqual(await records(), []);
  assert.equal(existsSync(unrecorded), true, 'an old directory nothing records stays: the removal lists no directory');
  assert.ok(existsSync(join(gitRoot(), `${live.id}.git`)));
  assert.deepEqual(await removeRecordedGitData(ctx()), []);

  // The full listing removes it (old, no row), keeps a young one and every repository's data.
  const young = leftover('900004.git', 0);
  assert.deepEqual(await sweepOrphanedGitData(ctx()), [900003]);
  assert.equal(existsSync(unrecorded), false);
  assert.equal(existsSync(young), true);
  assert.ok(existsSync(join(gitRoot(), `${live.id}.git`)));
  rmSync(young, { recursive: true });
});

test('a creation clears what a creation that never committed left at its path', async () => {
  const first = await server.admin('POST', '/repos', { owner: 'acme', name: 'first' });
  // The next id's directory, as a creation killed before its commit leaves it (on SQLite that id is given again).
  const dir = leftover(`${first.id + 1}.git`, 2);
  const next = await server.admin('POST', '/repos', { owner: 'acme', name: 'next', init_git: true });
  assert.equal(next.id, first.id + 1);
  assert.equal(existsSync(join(dir, 'leftover')), false, 'nothing of the leftover stays');
  const clone = mkdtempSync(join(tmpdir(), 'codehost-clone-'));
  try {
    execFileSync('git', ['clone', '--quiet', dir, join(clone, 'w')]);
    assert.equal(readFileSync(join(clone, 'w', 'README.md'), 'utf8'), '# next\n');
  } finally {
    rmSync(clone, { recursive: true, force: true });
  }
  assert.ok(readdirSync(gitRoot()).includes(`${next.id}.git`));
});
