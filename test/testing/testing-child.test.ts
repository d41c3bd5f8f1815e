// `codehost/testing/child` (src/testing-child.js): the in-process helper's members, with the server
// in a child process on the pinned Node; on both databases (DATABASE_URL: the child makes its own
// database on that server and stop() drops it). A Node too old for `codehost/testing` is refused at
// import with one line (src/testing-entry.js); the child mode runs from it.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import pg from 'pg';
import { startCodehost as inProcess } from 'codehost/testing';
import { startCodehost } from 'codehost/testing/child';

const ROOT = new URL('../..', import.meta.url).pathname;
const run = promisify(execFile);
const databaseUrl = process.env.DATABASE_URL || undefined;

test('the same members as startCodehost; calls answer as they do in-process; stop ends the child and its database', async () => {
  const here = await inProcess({ databaseUrl });
  const there = await startCodehost({ databaseUrl, seed: { users: [{ login: 'mona' }], orgs: [{ login: 'acme', owners: ['mona'] }] } });
  try {
    assert.deepEqual(Object.keys(there).sort(), Object.keys(here).sort());
    for (const [key, value] of Object.entries(here)) assert.equal(typeof (there as any)[key], typeof value, key);
    assert.match(there.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(there.apiUrl, `${there.url}/api/v3`);
    assert.notEqual(there.url, here.url);
    assert.equal(there.databaseUrl === null, !databaseUrl);
    assert.equal((await fetch(`${there.apiUrl}/orgs/acme`, { headers: { 'x-vendor-api-version': '2022-11-28' } })).status, 200);
    assert.equal(await there.count({ path: '/orgs/acme', status: 200 }), 1);
    const [entry] = await there.requests({ path: '/orgs/acme' });
    assert.equal(entry.status, 200);
    await there.snapshot('seeded');
    await there.reset();
    assert.equal((await fetch(`${there.apiUrl}/orgs/acme`)).status, 404);
    await there.restore('seeded');
    assert.equal((await fetch(`${there.apiUrl}/orgs/acme`)).status, 200);
    await there.drain();
    // Members the helper gained are passed on as well.
    assert.deepEqual(await there.permissionsUsed({ path: '/orgs/acme' }), await there.admin('GET', '/requests/permissions-used?path=%2Forgs%2Facme'));
    await there.clearRequests();
    assert.equal(await there.count(), 0);
    // A failed call rejects with the message the in-process helper gives.
    const message = async (call: Promise<unknown>) => (await call.then(() => assert.fail('resolved'), (error: Error) => error)).message.replace(/:\d+/g, ':PORT');
    assert.equal(await message(there.admin('GET', '/apps/nobody/deliveries')), await message(here.admin('GET', '/apps/nobody/deliveries')));
    await assert.rejects(there.restore('never-saved'), /answered 404/);
    // The test clock is on, as in-process.
    const { now } = await there.admin('GET', '/clock');
    const moved = await there.admin('POST', '/clock', { advance_seconds: 3600 });
    assert.ok(Date.parse(moved.now) - Date.parse(now) >= 3600_000);
  } finally {
    await here.stop();
    await there.stop();
  }
  await assert.rejects(fetch(`${there.url}/healthz`));
  await assert.rejects(there.count(), /child process has ended/);
  if (there.databaseUrl) {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const name = new URL(there.databaseUrl).pathname.slice(1);
      assert.equal((await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount, 0, 'stop() dropped the database');
    } finally {
      await client.end();
    }
  }
});

test('a start that fails rejects with the helper\'s message', async () => {
  await assert.rejects(startCodehost({ demo: true, seed: 'users: []' }), /start with demo or with a seed, not both/);
  await assert.rejects(startCodehost({ seed: { users: [{ login: 'mona' }], repos: [{ owner: 'nobody', name: 'x' }] } }), /codehost/);
});

test('a suite that never calls stop() still ends, and its child with it', async () => {
  const script = `
    import { startCodehost } from 'codehost/testing/child';
    const codehost = await startCodehost();
    console.log(codehost.url);`;
  const started = Date.now();
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, timeout: 60_000, env: { PATH: process.env.PATH } });
  assert.ok(Date.now() - started < 60_000);
  const url = stdout.trim();
  for (let tries = 0; tries < 100 && (await fetch(`${url}/healthz`).then(() => true, () => false)); tries++) await new Promise((resolve) => setTimeout(resolve, 100));
  await assert.rejects(fetch(`${url}/healthz`), 'the child stopped when its parent ended');
});

// The machine's Node when it is older than 22.18 (Node 20 here); test/testing/another-project.test.ts
// runs an older Node everywhere (npm's node@20 when the machine's is newer).
const machine = spawnSync('sh', ['-c', 'PATH=$(printf %s "$PATH" | tr : "\\n" | grep -v node_modules | paste -sd:) node --version'], { encoding: 'utf8' }).stdout.trim();
const old = /^v(1[89]|2[01])\.|^v22\.(\d|1[0-7])\./.test(machine);
test('on an older Node, codehost/testing stops at import with one line and the child mode works', { skip: old ? false : `the machine's Node is ${machine || 'missing'}` }, async () => {
  const env = { PATH: (process.env.PATH ?? '').split(':').filter((dir) => !dir.includes('node_modules')).join(':') };
  const failed = await run('node', ['--input-type=module', '-e', "await import('codehost/testing')"], { cwd: ROOT, env }).then(() => null, (error: { stderr: string }) => error);
  assert.ok(failed);
  const lines = failed.stderr.split('\n').filter((line) => line.includes('codehost/testing'));
  assert.equal(lines.length, 1, failed.stderr);
  assert.ok(lines[0]!.includes(`this is Node.js ${machine}.`) && lines[0]!.includes('needs Node.js 22.18 or later') && lines[0]!.includes("'codehost/testing/child'"), lines[0]);
  const script = `
    import { startCodehost } from 'codehost/testing/child';
    const codehost = await startCodehost({ demo: true });
    const response = await fetch(codehost.apiUrl + '/users/mona');
    console.log(response.status, await codehost.count({ path: '/users/mona' }));
    await codehost.stop();`;
  const { stdout } = await run('node', ['--input-type=module', '-e', script], { cwd: ROOT, env, timeout: 60_000 });
  assert.equal(stdout.trim(), '200 1');
});

test('on an older Node without the pinned runtime, the child mode rejects with one line naming both Nodes', { skip: old ? false : `the machine's Node is ${machine || 'missing'}` }, async () => {
  const bare = mkdtempSync(join(tmpdir(), 'codehost-bare-child-'));
  try {
    mkdirSync(join(bare, 'src'));
    for (const file of ['runtime.js', 'testing-child.js']) copyFileSync(join(ROOT, 'src', file), join(bare, 'src', file));
    writeFileSync(join(bare, 'package.json'), '{"type":"module"}');
    const env = { PATH: (process.env.PATH ?? '').split(':').filter((dir) => !dir.includes('node_modules')).join(':') };
    const script = "const { startCodehost } = await import('./src/testing-child.js'); await startCodehost().catch((error) => { console.log(error.message); process.exit(3); });";
    const failed = await run('node', ['--input-type=module', '-e', script], { cwd: bare, env }).then(() => null, (error: { code: number; stdout: string }) => error);
    assert.equal(failed?.code, 3);
    const message = failed!.stdout.trim();
    assert.equal(message.split('\n').length, 1, message);
    assert.ok(message.includes(`this Node.js ${machine} cannot run it`) && message.includes('needs Node.js 22.18 or later') && message.includes('pinned Node.js 24'), message);
  } finally {
    rmSync(bare, { recursive: true, force: true });
  }
});
