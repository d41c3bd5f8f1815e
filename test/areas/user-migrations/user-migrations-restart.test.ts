// A server process killed in the middle of an export: nothing half-written becomes visible, and once
// a server runs again the queue re-runs the job, which starts over and finishes the export.
// The server is a real child process (`node src/main.ts serve`), killed with SIGKILL.
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { openDatabase } from '../../../src/db/index.ts';
import { insertSyntheticActivity } from '../../fixtures/migration-data.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { freePort, spawnServe, waitFor } from '../../helpers/process.ts';

const ADMIN_TOKEN = 'restart-admin-token';
const ISSUES = 20_000;
const COMMENTS_PER_ISSUE = 4;

let database: TestDatabase;
let child: ChildProcess | null = null;

after(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  await database?.drop();
});

async function serve(port: number): Promise<ChildProcess> {
  const process_ = spawnServe({ port, database, adminToken: ADMIN_TOKEN });
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (process_.exitCode !== null) throw new Error(`the server exited with ${process_.exitCode}`);
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false);
    if (ready) return process_;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the server did not become ready');
}

test('an export cut short by a killed process is re-run from scratch and finishes', { timeout: 240_000 }, async () => {
  database = await createTestDatabase();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const admin = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${base}/_admin${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return response.json() as Promise<any>;
  };

  child = await serve(port);
  const user = await admin('POST', '/users', { login: 'erin' });
  const repository = await admin('POST', '/repos', { owner: 'erin', name: 'big', init_git: true });
  const { token } = await admin('POST', '/tokens', { login: 'erin', kind: 'classic', scopes: [] });
  const db = openDatabase({ databaseUrl: database.databaseUrl, sqlitePath: `${database.dataDir}/codehost.db`, poolSize: 1 });
  try {
    await insertSyntheticActivity(db.kysely, { repositoryId: repository.id, authorId: user.id, issues: ISSUES, commentsPerIssue: COMMENTS_PER_ISSUE });
  } finally {
    await db.close();
  }

  const started = await fetch(`${base}/api/v3/user/migrations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ repositories: ['big'] }),
  });
  assert.equal(started.status, 201);
  const { id } = (await started.json()) as { id: number };

  // Killed once the export is under way: some records written, the archive not finished.
  const midway = await waitFor('the export to be under way', 60, async () => {
    const view = await admin('GET', `/migrations/${id}`);
    return view.state === 'exporting' && view.records_exported >= 2000 ? view : undefined;
  });
  child.kill('SIGKILL');
  await new Promise((r) => child!.once('exit', r));
  assert.ok(midway.records_exported < ISSUES * (1 + COMMENTS_PER_ISSUE), 'killed before the end');

  const folder = join(database.dataDir, 'migration-archives', String(id));
  const leftovers = existsSync(folder) ? readdirSync(folder) : [];
  assert.ok(leftovers.every((name) => name.endsWith('.partial')), `only an unfinished file is left: ${leftovers}`);

  child = await serve(port);
  const apiGet = (path: string) => fetch(`${base}/api/v3${path}`, { headers: { authorization: `Bearer ${token}` }, redirect: 'manual' });
  // While the dead run's job waits out its lease, the migration is still exporting and nothing is downloadable.
  const during = (await (await apiGet(`/user/migrations/${id}`)).json()) as { state: string };
  if (during.state !== 'exported') assert.equal((await apiGet(`/user/migrations/${id}/archive`)).status, 404);

  // `codehost admin GET /migrations/ID --follow` is how an operator follows the export to its end.
  const cli = spawn(process.execPath, ['src/main.ts', 'admin', 'GET', `/migrations/${id}`, '--follow'], {
    cwd: new URL('../../..', import.meta.url).pathname,
    env: { PATH: process.env.PATH, CODEHOST_URL: base, CODEHOST_ADMIN_TOKEN: ADMIN_TOKEN },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  cli.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exitCode = await new Promise<number | null>((resolve) => cli.once('exit', resolve));
  assert.equal(exitCode, 0, output);
  const done = JSON.parse(output.slice(output.indexOf('{'))) as { state: string; records_exported: number };
  assert.equal(done.state, 'exported');
  assert.match(output, /^state: exporting/m, 'progress lines before the final answer');
  assert.equal(done.records_exported, 2 + ISSUES * (1 + COMMENTS_PER_ISSUE), 'users, repositories, issues and comments, each once');
  assert.deepEqual(readdirSync(folder).filter((name) => !name.endsWith('.tar.gz')), [], 'the dead run\'s leftovers are gone');

  const redirect = await apiGet(`/user/migrations/${id}/archive`);
  assert.equal(redirect.status, 302);
  const archive = await fetch(redirect.headers.get('location')!);
  assert.equal(archive.status, 200);
  const file = join(database.dataDir, 'download.tar.gz');
  writeFileSync(file, Buffer.from(await archive.arrayBuffer()));
  const entries = execFileSync('tar', ['-tzf', file], { maxBuffer: 64 * 1024 * 1024 }).toString().trim().split('\n');
  assert.equal(entries.filter((e) => e.startsWith('issues_')).length, ISSUES / 1000);
  assert.equal(entries.filter((e) => e.startsWith('issue_comments_')).length, (ISSUES * COMMENTS_PER_ISSUE) / 1000);
  assert.ok(entries.includes('repositories/erin/big.git/HEAD'));

  child.kill('SIGTERM');
  await new Promise((r) => child!.once('exit', r));
});
