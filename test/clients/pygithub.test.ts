// PyGithub, a client nobody here wrote, against `codehost serve` started with the defaults and the
// demo data: test/clients/pygithub_check.py walks the authenticated user, notifications (pages
// followed by their Link, all/participating/since/before, a thread, its issue and pull request, mark
// read one, a repository's and all) and user migrations (start, poll to exported, list, archive URL
// and download, delete, unlock), each step one test here. docs/clients.md's PyGithub lines run too.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { docExample, MONA_TOKEN } from './docs.ts';
import { pythonWithPyGithub, skipReason, startDemoServer, type DemoServer } from './tools.ts';

const run = promisify(execFile);
const CHECK = new URL('./pygithub_check.py', import.meta.url).pathname;
const python = pythonWithPyGithub();
const skip = skipReason(python, "PyGithub is not installed (Debian: apt-get install python3-github; .ci/run installs it): the PyGithub test is skipped");

interface Step {
  step: string;
  ok: boolean;
  detail: string;
  trace?: string;
}

/**
 * The steps of pygithub_check.py, in its order; a step that cannot pass without the clients
 * branch's fixes (merged by the lead) says which.
 */
const STEPS: string[] = [
  'user',
  // needs the clients branch: absolute URLs from the printed address (PyGithub asserts that a next page is on its base URL's host)
  'notifications: list and follow the pages',
  // needs the clients branch: boolean query leniency (PyGithub sends all=True)
  'notifications: all=True',
  // needs the clients branch: boolean query leniency (participating=True)
  'notifications: participating=True',
  'notifications: since and before',
  'notifications: read a thread',
  'notifications: the thread\'s issue and pull request',
  'notifications: mark a thread read',
  'notifications: a repository\'s threads',
  'notifications: mark a repository\'s threads read',
  'notifications: mark every thread read',
  'migrations: start one',
  'migrations: poll to exported',
  'migrations: list',
  // needs the clients branch: the archive 302's body is its signed URL (PyGithub's get_archive_url returns the body)
  'migrations: archive URL and download',
  'migrations: delete the archive',
  'migrations: unlock a repository',
  'rate limit headers',
  'rate limit: get_rate_limit()',
];

describe('PyGithub', { skip }, () => {
  let server: DemoServer;
  const results = new Map<string, Step>();
  let output = '';

  before(async () => {
    server = await startDemoServer();
    // Enough of mona's threads for several pages of two: one issue in another repository (the
    // oldest), hubot's issues that mention her, and a pull request that asks her review (the newest).
    await server.admin('POST', '/repos/mona/dotfiles/issues', { author: 'hubot', title: 'Tabs or spaces?', body: '@mona which?' });
    for (let i = 1; i <= 4; i++) {
      await server.admin('POST', '/repos/acme/widgets/issues', { author: 'hubot', title: `Wobble ${i}`, body: `@mona round ${i}` });
    }
    await server.admin('POST', '/repos/acme/widgets/issues', { author: 'hubot', title: 'Steadier widgets', pull_request: true, reviewers: ['mona'] });
    await server.admin('POST', '/jobs/drain', { timeout_seconds: 60 });

    const child = await run(python!, [CHECK, server.apiUrl, MONA_TOKEN, 'acme/widgets', 'dotfiles'], { timeout: 300_000 }).catch(
      (error: { stdout?: string; stderr?: string }) => ({ stdout: error.stdout ?? '', stderr: error.stderr ?? '' }),
    );
    output = `${child.stdout}${child.stderr}`;
    for (const line of child.stdout.split('\n').filter(Boolean)) {
      const parsed = JSON.parse(line) as Step;
      results.set(parsed.step, parsed);
    }
  });
  after(async () => {
    await server?.stop();
  });

  test('the server printed a loopback address and PyGithub ran every step', () => {
    assert.match(server.apiUrl, /^http:\/\/127\.0\.0\.1:\d+\/api\/v3$/);
    assert.deepEqual([...results.keys()], STEPS, output);
  });

  for (const name of STEPS) {
    test(name, () => {
      const result = results.get(name);
      assert.ok(result, `not run:\n${output}`);
      assert.ok(result.ok, `${result.detail}\n${result.trace ?? ''}`);
    });
  }

  test('docs/clients.md: the PyGithub lines', async () => {
    // needs the clients branch: absolute URLs from the printed address, and boolean query leniency (all=True)
    const { stdout } = await run(python!, ['-c', docExample('pygithub')], { env: { ...process.env, CODEHOST_URL: server.address }, timeout: 120_000 });
    const [login, ...threads] = stdout.trim().split('\n');
    assert.equal(login, 'mona');
    assert.ok(threads.length >= 3, stdout);
    for (const thread of threads) assert.match(thread, /^\d+ [a-z_]+ \S/);
  });
});
