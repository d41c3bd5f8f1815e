// docs/testing.md, run as written: the node:test example with `codehost/testing`, the clock example, the vitest
// example (examples/vitest, run by `vitest run` with its own config), the warnings example, the CLI lines against a running server, and the pytest fixture for PyGithub; and the
// helper's webhook deliveries with a loopback receiver.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { startCodehost } from 'codehost/testing';
import { pythonWithPyGithub, skipReason } from '../clients/tools.ts';
import { Receiver } from '../helpers/receiver.ts';
import { ADMIN_TOKEN, startServer, type TestServer } from '../helpers/server.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
const run = promisify(execFile);

/** The code of the block of docs/testing.md tagged `name`. */
function example(name: string): string {
  const text = readFileSync(join(ROOT, 'docs/testing.md'), 'utf8');
  const blocks = [...text.matchAll(/^```[\w-]+ ([\w-]+)\n([\s\S]*?)^```$/gm)].filter((match) => match[1] === name);
  if (blocks.length !== 1) throw new Error(`docs/testing.md has ${blocks.length} blocks tagged ${name}`);
  return blocks[0]![2]!;
}

/** A JavaScript example as an ES module run from the repository root (where `codehost/testing` resolves). */
async function runModule(code: string): Promise<string> {
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', code], { cwd: ROOT, timeout: 240_000, env: { PATH: process.env.PATH, DATABASE_URL: '' } });
  return stdout;
}

describe('docs/testing.md', () => {
  test('the node:test example runs and passes', async () => {
    const stdout = await runModule(example('node-test'));
    assert.match(stdout, /pass 3\n/);
    assert.match(stdout, /fail 0\n/);
  });

  test('the vitest example is examples/vitest/issues.vitest.js; `vitest run` with its config runs it alone, and it passes', async () => {
    const file = 'examples/vitest/issues.vitest.js';
    assert.equal(example('vitest'), readFileSync(join(ROOT, file), 'utf8'), `docs/testing.md shows ${file} as it is`);
    const { stdout } = await run(join(ROOT, 'node_modules/.bin/node'), ['node_modules/vitest/vitest.mjs', 'run', '--config', 'examples/vitest/vitest.config.js', '--reporter=json'], {
      cwd: ROOT,
      timeout: 240_000,
      env: { PATH: process.env.PATH, DATABASE_URL: '', NO_COLOR: '1' },
    });
    const report = JSON.parse(stdout.slice(stdout.indexOf('{')));
    // The example only: none of the repository's node:test files.
    assert.deepEqual(report.testResults.map((result: { name: string }) => result.name), [join(ROOT, file)]);
    assert.equal(report.numPassedTests, 2);
    assert.equal(report.numFailedTests, 0);
    assert.equal(report.success, true);
  });

  test('the warnings example', async () => {
    await runModule(example('warnings'));
  });

  test('the permissions-used example', async () => {
    await runModule(example('permissions-used'));
  });

  test('the clock example: auth-app corrects its JWT from Date after a move; a mocked Date moves client and server', async () => {
    const stdout = await runModule(example('clock'));
    assert.match(stdout, /pass 2\n/);
    assert.match(stdout, /fail 0\n/);
  });

  describe('the CLI lines', () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ CODEHOST_TEST_MODE: '1' });
    });
    after(() => server.close());

    test('each line answers, and the snapshot list and journal say what happened', async () => {
      const outputs: string[] = [];
      for (const line of example('cli').trim().split('\n')) {
        // As the reader runs it: the line as written, from the checkout.
        const { stdout } = await run('sh', ['-c', line], {
          cwd: ROOT,
          timeout: 120_000,
          env: { PATH: `${dirname(process.execPath)}:${process.env.PATH}`, CODEHOST_URL: server.url, CODEHOST_ADMIN_TOKEN: ADMIN_TOKEN },
        });
        outputs.push(stdout);
      }
      const [, saved, , journal, count, , list] = outputs.map((out) => (/^[[{]/.test(out.trim()) ? JSON.parse(out) : out.trim()));
      assert.equal(saved.name, 'before-suite');
      assert.deepEqual(list.map((s: { name: string }) => s.name), ['before-suite']);
      assert.ok(journal.length >= 1 && journal.every((entry: { path: string; status: number }) => entry.path === '/_admin/users' && entry.status < 300));
      assert.ok(count.count >= 3);
      // The seed reset loaded the demo data's users.
      assert.equal((await server.api('GET', '/users/mona')).status, 200);
      assert.equal((await server.api('GET', '/users/temporary')).status, 404);
    });

    test('bad CLI use is one line, no request', async () => {
      for (const args of [['snapshot', 'save'], ['snapshot', 'rename', 'x'], ['reset', 'sideways'], ['requests', '--colour', 'blue'], ['reset', '--seed', 'no/such/file.yaml']]) {
        const failed = await run(process.execPath, ['src/main.ts', 'admin', ...args], {
          cwd: ROOT,
          env: { PATH: process.env.PATH, CODEHOST_URL: server.url, CODEHOST_ADMIN_TOKEN: ADMIN_TOKEN },
        }).then(() => null, (error: { code: number; stderr: string }) => error);
        assert.ok(failed, args.join(' '));
        assert.notEqual(failed.code, 0);
        assert.equal(failed.stderr.trim().split('\n').length, 1, failed.stderr);
      }
    });
  });

  const python = pythonWithPyGithub();
  test('the pytest fixture for PyGithub', { skip: skipReason(python, 'PyGithub is not installed (Debian: apt-get install python3-github): the pytest example is skipped') }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'codehost-pytest-'));
    try {
      writeFileSync(join(dir, 'test_codehost.py'), example('pytest'));
      const { stdout } = await run(python!, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', dir], {
        timeout: 240_000,
        env: { PATH: `${dirname(process.execPath)}:${process.env.PATH}`, CODEHOST_ROOT: ROOT },
      });
      assert.match(stdout, /2 passed/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the testing helper', () => {
  test('starts on a free port, gives its URLs and token; deliveries(app) after a drain; redelivery; stop removes its directory', async () => {
    const receiver = await new Receiver().start();
    const codehost = await startCodehost({
      databaseUrl: process.env.DATABASE_URL || undefined,
      seed: {
        users: [{ login: 'mona' }],
        orgs: [{ login: 'acme', owners: ['mona'] }],
        repos: [{ owner: 'acme', name: 'widgets' }],
        apps: [{ slug: 'hooked', permissions: { issues: 'read' }, events: ['issues'], webhook: { url: receiver.url('/hook'), secret: 'helper-secret-0123456789' } }],
        installations: [{ app: 'hooked', account: 'acme', repositories: 'all' }],
      },
    });
    try {
      assert.match(codehost.url, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.equal(codehost.apiUrl, `${codehost.url}/api/v3`);
      assert.equal((await fetch(`${codehost.url}/_admin/clock`, { headers: { authorization: `Bearer ${codehost.adminToken}` } })).status, 200);
      await codehost.admin('POST', '/repos/acme/widgets/issues', { author: 'mona', title: 'Hooked' });
      // Besides the seeded installation's `installation created`.
      const issues = async () => (await codehost.deliveries('hooked')).filter((d: any) => d.event === 'issues');
      const onHook = () => receiver.on('/hook').filter((r) => r.headers['x-vendor-event'] === 'issues');
      const deliveries = await issues();
      assert.equal(deliveries.length, 1);
      assert.equal(deliveries[0].event, 'issues');
      assert.equal(onHook().length, 1);
      const detail = await codehost.admin('GET', `/apps/hooked/deliveries/${deliveries[0].id}`);
      assert.equal(detail.request.payload.issue.title, 'Hooked');
      await codehost.admin('POST', `/apps/hooked/deliveries/${deliveries[0].id}/attempts`, {});
      assert.equal((await issues()).length, 2);
      assert.equal(onHook().length, 2);
      await assert.rejects(codehost.admin('GET', '/apps/nobody/deliveries'), /404/);
      assert.equal(await codehost.count({ path: '/_admin/apps/hooked/deliveries' }), 2);
    } finally {
      await codehost.stop();
      await receiver.stop();
    }
    await assert.rejects(fetch(`${codehost.url}/healthz`));
  });

  test('demo and seed together are refused', async () => {
    await assert.rejects(startCodehost({ demo: true, seed: 'users: []' }), /demo or with a seed/);
  });
});
