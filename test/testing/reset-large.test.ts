// A reset or a restore of a world with hundreds of repositories' git data does its file work in
// slices (src/testing/support.ts): /healthz, which does not wait at the gate, keeps answering
// meanwhile (it waited for the whole copy before: 16 s for 400 repositories on this machine), and a
// reset to empty removes the files in the background. Measured from another process.
import assert from 'node:assert/strict';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { slowestHealthz } from '../helpers/healthz.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const REPOSITORIES = 300;
const BOUND_MS = 3_000;
let server: TestServer;

before(async () => {
  server = await startServer({ CODEHOST_TEST_MODE: '1' });
  const db = server.server.ctx.db.kysely;
  const owner = await server.admin('POST', '/users', { login: 'owner' });
  const made = await server.admin('POST', '/repos', { owner: 'owner', name: 'with-git', init_git: true });
  const gitRoot = join(server.server.ctx.config.dataDir, 'git');
  const now = new Date().toISOString();
  for (let i = 0; i < REPOSITORIES; i++) {
    const row = await sql<{ id: number }>`insert into repositories (owner_id, name, name_lower, visibility, default_branch, topics, security_and_analysis, created_at, updated_at)
      values (${owner.id}, ${`g${i}`}, ${`g${i}`}, 'public', 'main', '[]', '{}', ${now}, ${now}) returning id`.execute(db);
    const id = row.rows[0]!.id;
    cpSync(join(gitRoot, `${made.id}.git`), join(gitRoot, `${id}.git`), { recursive: true });
    await sql`update repositories set git_path = ${`git/${id}.git`} where id = ${id}`.execute(db);
  }
});
after(() => server?.close());

test(`with ${REPOSITORIES} repositories' git data, /healthz answers within ${BOUND_MS} ms during a snapshot, a reset and a restore`, { timeout: 300_000 }, async (t) => {
  const ok = async (method: string, path: string, body: unknown = {}) => {
    const response = await server.adminRaw(method, path, body);
    assert.ok(response.status < 300, `${path}: ${response.status} ${response.text}`);
  };
  const slowest = async (run: () => Promise<void>) => (await slowestHealthz(server.url, run)).slowestMs;
  const snapshot = await slowest(() => ok('POST', '/snapshots', { name: 'many' }));
  const reset = await slowest(() => ok('POST', '/reset'));
  const restore = await slowest(() => ok('POST', '/snapshots/many/restore'));
  t.diagnostic(`/healthz slowest: snapshot ${snapshot} ms, reset ${reset} ms, restore ${restore} ms`);
  assert.ok(snapshot < BOUND_MS && reset < BOUND_MS && restore < BOUND_MS, `snapshot ${snapshot} ms, reset ${reset} ms, restore ${restore} ms`);
  // The world is back, git data included.
  assert.equal((await server.api('GET', `/repos/owner/g${REPOSITORIES - 1}`)).status, 200);
});
