// Orphaned git data is swept (issue 24), at a start's cost of what deletions left (issue 22).
// Deleting a repository or a user removes the rows and records the git data's paths
// (`git_data_removals`) in a transaction, and removes the git data (`{dataDir}/git/{id}.git`) after
// the commit: a kill -9 in between leaves the directory and its record. `codehost serve` is killed
// with SIGKILL at a random moment while repositories and users are being deleted; then, to be sure
// the state "committed, not yet removed" is there whatever moment the kill hit, the git data of a
// repository deleted before the round is put back with its record. The next start removes every
// recorded directory, however young, and keeps every live repository's data (git clones it) and a
// directory nothing records (what a creation killed before its commit leaves): the start lists no
// directory. The full listing (`POST /_admin/jobs/drain` runs it) keeps that one while it is young
// (a creation writes its directory before its row commits) and removes it once it is old.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { killAmid, killedServers } from '../../helpers/killed.ts';
import { waitFor } from '../../helpers/process.ts';

const run = promisify(execFile);
const ADMIN_TOKEN = 'killed-admin-token-0123456789';
const REPOSITORIES = 12;
const USERS = 6;
const LIVE = 3;

const servers = killedServers(ADMIN_TOKEN);

test('git data left by a deletion killed between its commit and its removal is removed at the next start; live data stay, and what nothing records waits for the full listing', { timeout: 240_000 }, async (t) => {
  const { dataDir } = servers.database;
  const gitRoot = join(dataDir, 'git');
  const directories = () => new Set(readdirSync(gitRoot).filter((name) => name.endsWith('.git')));
  const scratch = mkdtempSync(join(tmpdir(), 'codehost-sweep-'));
  t.after(() => rmSync(scratch, { recursive: true, force: true }));

  const first = await servers.start();
  await first.admin('POST', '/users', { login: 'boss' });
  await first.admin('POST', '/orgs', { login: 'acme', owners: ['boss'] });
  const live: { name: string; id: number }[] = [];
  for (let i = 0; i < LIVE; i++) live.push({ name: `live${i}`, id: (await first.admin('POST', '/repos', { owner: 'acme', name: `live${i}`, init_git: true })).id });
  const doomed = Array.from({ length: REPOSITORIES }, (_, i) => `gone${i}`);
  for (const name of doomed) await first.admin('POST', '/repos', { owner: 'acme', name, init_git: true });
  const leavers = Array.from({ length: USERS }, (_, i) => `leaver${i}`);
  for (const login of leavers) {
    await first.admin('POST', '/users', { login });
    await first.admin('POST', '/repos', { owner: login, name: 'own', init_git: true });
  }
  // Two repositories deleted now, their git data put back after the round: one with its record, one without.
  const putBack: string[] = [];
  for (const name of ['early-recorded', 'early-unrecorded']) {
    const { id } = await first.admin('POST', '/repos', { owner: 'acme', name, init_git: true });
    cpSync(join(gitRoot, `${id}.git`), join(scratch, `${id}.git`), { recursive: true });
    assert.equal((await first.call('DELETE', `/repos/acme/${name}`)).status, 204);
    assert.equal(existsSync(join(gitRoot, `${id}.git`)), false, 'a deletion that runs to its end removes the git data');
    putBack.push(`${id}.git`);
  }
  const [recordedOrphan, unrecordedOrphan] = putBack;

  // Every deletion at once; the process dies at a random moment after the first has answered.
  await killAmid(first, [
    ...doomed.map((name) => () => first.call('DELETE', `/repos/acme/${name}`)),
    ...leavers.map((login) => () => first.call('DELETE', `/users/${login}`)),
  ], 60);
  for (const name of putBack) cpSync(join(scratch, name), join(gitRoot, name), { recursive: true });
  const recorded = async () => servers.inspect(async (q) => (await q.selectFrom('git_data_removals').select('path').execute()).map((row) => row.path.replace(/^git\//, '')));
  await servers.inspect((q) => q.insertInto('git_data_removals').values({ path: `git/${recordedOrphan}`, recorded_at: new Date().toISOString() }).execute());

  const named = async () => servers.inspect(async (q) => new Set((await q.selectFrom('repositories').select('git_path').where('git_path', 'is not', null).execute()).map((row) => row.git_path!.replace(/^git\//, ''))));
  const before = await named();
  const orphans = [...directories()].filter((name) => !before.has(name));
  const records = await recorded();
  t.diagnostic(`after the kill: ${before.size} repositories with git data, ${orphans.length} directories without a row (${orphans.length - putBack.length} left by the kill itself), ${records.length} recorded`);
  assert.ok(orphans.includes(recordedOrphan) && orphans.includes(unrecordedOrphan));
  assert.deepEqual(orphans.filter((name) => name !== unrecordedOrphan).sort(), records.filter((name) => orphans.includes(name)).sort(), 'every directory a deletion left is recorded');

  // The next start removes what was recorded (young as it is), nothing else.
  const second = await servers.start();
  await waitFor('the start-up removal', 30, async () => ((await recorded()).length === 0 ? true : undefined));
  const after = await named();
  assert.deepEqual([...directories()].sort(), [...after, unrecordedOrphan].sort(), 'every row\'s git data and the unrecorded directory stay; every recorded directory went');
  for (const { name, id } of live) {
    assert.ok(after.has(`${id}.git`), `${name} has its git data`);
    const clone = join(scratch, `clone-${name}`);
    await run('git', ['clone', '--quiet', join(gitRoot, `${id}.git`), clone]);
    assert.match(readFileSync(join(clone, 'README.md'), 'utf8'), new RegExp(name), `${name}: a clone of its git data reads its README`);
  }
  // A repository whose deletion the kill cut before its commit is still whole: its deletion goes on.
  for (const name of doomed) {
    const response = await second.call('DELETE', `/repos/acme/${name}`);
    assert.ok([204, 404].includes(response.status), `${name}: ${response.status}`);
  }

  // The full listing keeps a directory no row names while it is young, and removes it once old.
  assert.equal((await second.call('POST', '/jobs/drain', { timeout_seconds: 30 })).status, 200);
  assert.equal(directories().has(unrecordedOrphan), true, 'the full listing keeps a young directory');
  const anHourAgo = new Date(Date.now() - 3_600_000);
  utimesSync(join(gitRoot, unrecordedOrphan), anHourAgo, anHourAgo);
  assert.equal((await second.call('POST', '/jobs/drain', { timeout_seconds: 30 })).status, 200);
  assert.equal(directories().has(unrecordedOrphan), false, 'the full listing removed the orphan once it was old');
  assert.deepEqual([...directories()].sort(), [...(await named())].sort());
  assert.deepEqual(await recorded(), []);
  await second.kill();
});
