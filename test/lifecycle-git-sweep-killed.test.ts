// Orphaned git data is swept (issue 24). Deleting a repository or a user removes the rows in a
// transaction and the git data (`{dataDir}/git/{id}.git`) after the commit: a kill -9 in between left
// the directory forever. `codehost serve` is killed with SIGKILL at a random moment while repositories
// and users are being deleted; then, to be sure the state "committed, not yet removed" is there
// whatever moment the kill hit, the git data of two repositories deleted before the round is put back
// as it was. The next start's sweep removes every directory older than ten minutes (the test makes
// them so: mtime an hour back) that no repository row names, and keeps every live repository's data
// (git clones it) and a young orphan (a creation writes its directory before its row commits); a
// sweep once it is old (POST /_admin/jobs/drain runs the sweeps) removes that one too.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { killAmid, killedServers } from './helpers/killed.ts';
import { waitFor } from './helpers/process.ts';

const run = promisify(execFile);
const ADMIN_TOKEN = 'killed-admin-token-0123456789';
const REPOSITORIES = 12;
const USERS = 6;
const LIVE = 3;

const servers = killedServers(ADMIN_TOKEN);

test('git data left by a deletion killed between its commit and its removal is swept; live and young data stay', { timeout: 240_000 }, async (t) => {
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
  // Two repositories deleted now, their git data put back after the round: one to be old, one young.
  const putBack: string[] = [];
  for (const name of ['early-old', 'early-young']) {
    const { id } = await first.admin('POST', '/repos', { owner: 'acme', name, init_git: true });
    cpSync(join(gitRoot, `${id}.git`), join(scratch, `${id}.git`), { recursive: true });
    assert.equal((await first.call('DELETE', `/repos/acme/${name}`)).status, 204);
    assert.equal(existsSync(join(gitRoot, `${id}.git`)), false, 'a deletion that runs to its end removes the git data');
    putBack.push(`${id}.git`);
  }
  const [oldOrphan, youngOrphan] = putBack;

  // Every deletion at once; the process dies at a random moment after the first has answered.
  await killAmid(first, [
    ...doomed.map((name) => () => first.call('DELETE', `/repos/acme/${name}`)),
    ...leavers.map((login) => () => first.call('DELETE', `/users/${login}`)),
  ], 60);
  for (const name of putBack) cpSync(join(scratch, name), join(gitRoot, name), { recursive: true });

  const named = async () => servers.inspect(async (q) => new Set((await q.selectFrom('repositories').select('git_path').where('git_path', 'is not', null).execute()).map((row) => row.git_path!.replace(/^git\//, ''))));
  const before = await named();
  const orphans = [...directories()].filter((name) => !before.has(name));
  t.diagnostic(`after the kill: ${before.size} repositories with git data, ${orphans.length} directories without a row (${orphans.length - putBack.length} left by the kill itself)`);
  assert.ok(orphans.includes(oldOrphan) && orphans.includes(youngOrphan));
  // Every directory an hour old but the young orphan.
  const anHourAgo = new Date(Date.now() - 3_600_000);
  for (const name of directories()) if (name !== youngOrphan) utimesSync(join(gitRoot, name), anHourAgo, anHourAgo);

  // The next start sweeps.
  const second = await servers.start();
  await waitFor('the start-up sweep', 30, async () => (orphans.every((name) => name === youngOrphan || !directories().has(name)) ? true : undefined));
  const after = await named();
  assert.deepEqual([...directories()].sort(), [...after, youngOrphan].sort(), 'every row\'s git data and the young orphan stay; every old orphan went');
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

  // Once old, the young orphan goes with the next sweep.
  utimesSync(join(gitRoot, youngOrphan), anHourAgo, anHourAgo);
  assert.equal((await second.call('POST', '/jobs/drain', { timeout_seconds: 30 })).status, 200);
  assert.equal(directories().has(youngOrphan), false, 'the sweep removed the orphan once it was old');
  assert.deepEqual([...directories()].sort(), [...(await named())].sort());
  await second.kill();
});
