// The full listing of git data (src/core/repositories/git-sweep.ts) judges a directory's age by real
// time: a test clock moved forward does not make a directory written a moment ago (a creation's,
// before its row commits) look old, so the sweep cannot delete the folder of a repository still
// being created.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startServer, type TestServer } from '../../helpers/server.ts';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(() => server?.close());

test('after the test clock moves a day forward, the sweep keeps a directory written just now, and removes it once it is really old', async () => {
  const dir = join(server.server.ctx.config.dataDir, 'git', '900777.git');
  mkdirSync(join(dir, 'objects'), { recursive: true });
  writeFileSync(join(dir, 'HEAD'), 'ref: refs/heads/main\n');
  await server.admin('POST', '/clock', { advance_seconds: 24 * 3600 });
  await server.admin('POST', '/jobs/drain', { timeout_seconds: 30 });
  assert.equal(existsSync(dir), true, 'a directory written a moment ago (by real time) is young, whatever the test clock says');

  const anHourAgo = new Date(Date.now() - 3_600_000);
  utimesSync(dir, anHourAgo, anHourAgo);
  await server.admin('POST', '/jobs/drain', { timeout_seconds: 30 });
  assert.equal(existsSync(dir), false, 'an hour old by real time, no row: removed');
});
