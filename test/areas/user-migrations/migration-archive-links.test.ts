// Migration archives hold git data as directories and regular files only: a hard link in a
// repository's git directory is stored as a regular file with its content, never as a link entry
// (which an unpacking tool would resolve against whatever path it names).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { linkSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { classicToken } from '../../helpers/credentials.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

let server: TestServer;
let token: string;
const scratch = mkdtempSync(join(tmpdir(), 'codehost-archive-links-'));

before(async () => {
  server = await startServer();
  await server.admin('POST', '/users', { login: 'alice' });
  await server.admin('POST', '/repos', { owner: 'alice', name: 'linked', init_git: true });
  token = await classicToken(server, 'alice', ['repo']);
});
after(async () => {
  await server.close();
  rmSync(scratch, { recursive: true, force: true });
});

test('a hard link in the git data is archived as a regular file with its content', async () => {
  const { git_path } = await server.server.ctx.db.kysely.selectFrom('repositories').select('git_path').where('name', '=', 'linked').executeTakeFirstOrThrow();
  const gitDir = join(server.server.ctx.config.dataDir, git_path!);
  writeFileSync(join(gitDir, 'description'), 'linked twice\n');
  linkSync(join(gitDir, 'description'), join(gitDir, 'description-link'));
  linkSync(join(gitDir, 'HEAD'), join(gitDir, 'HEAD-link'));
  assert.equal(statSync(join(gitDir, 'description')).nlink, 2);

  const started = await server.api('POST', '/user/migrations', { token, body: { repositories: ['linked'] } });
  assert.equal(started.status, 201, started.text);
  await server.drain();
  const redirect = await server.api('GET', `/user/migrations/${started.body.id}/archive`, { token });
  assert.equal(redirect.status, 302, redirect.text);
  const response = await fetch(redirect.headers.get('location')!);
  assert.equal(response.status, 200);
  const file = join(scratch, 'archive.tar.gz');
  writeFileSync(file, Buffer.from(await response.arrayBuffer()));

  const listing = execFileSync('tar', ['-tvzf', file], { encoding: 'utf8' }).trim().split('\n');
  const entries = listing.filter((line) => line.includes('repositories/alice/linked.git/'));
  assert.ok(entries.length > 5, listing.join('\n'));
  // Only directories (d) and regular files (-): no hard (h) or symbolic (l) links, nothing else.
  assert.deepEqual(listing.filter((line) => !/^[-d]/.test(line)), []);
  assert.equal(listing.some((line) => / link to /.test(line)), false);

  const dir = join(scratch, 'unpacked');
  execFileSync('mkdir', ['-p', dir]);
  execFileSync('tar', ['-xzf', file, '-C', dir]);
  const unpacked = join(dir, 'repositories/alice/linked.git');
  for (const name of ['description', 'description-link']) assert.equal(readFileSync(join(unpacked, name), 'utf8'), 'linked twice\n');
  assert.equal(readFileSync(join(unpacked, 'HEAD-link'), 'utf8'), readFileSync(join(gitDir, 'HEAD'), 'utf8'));
  assert.equal(statSync(join(unpacked, 'description-link')).nlink, 1);
});
