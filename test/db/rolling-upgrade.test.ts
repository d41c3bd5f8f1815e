// A rolling upgrade on PostgreSQL (CONTRIBUTING.md, "Migrations expand"): two processes of the
// previous release serve under light load — reads, and issues opened that an app's webhook
// delivers — while this release's `migrate --check` says what is pending, `migrate` applies it, and
// a process of this release starts beside them; then the previous release's processes stop
// (SIGTERM). No answer of either release is a 5xx, and every issue opened is delivered once.
//
// The previous release is PREVIOUS, checked out from git: the last landed main before migrations
// 0024–0027 (reactions, check runs, locks, reviews). Until codehost cuts releases of its own (a
// version, a tag and a CHANGELOG section each), this is the release a deployment runs today.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, engine, type TestDatabase } from '../helpers/database.ts';
import { startServe, waitFor, type ServeChild } from '../helpers/process.ts';
import { Receiver } from '../helpers/receiver.ts';

const PREVIOUS = 'd8b030ac1c43d346cc551131272cd3819aa49d2b';
const ROOT = new URL('../..', import.meta.url).pathname.replace(/\/$/, '');
const CLI = join(ROOT, 'bin/codehost.js');
const ADMIN = 'a'.repeat(40);
const run = promisify(execFile);
// Budgets no load of this test reaches: what is measured is the status of every answer.
const SETTINGS = { CODEHOST_RATE_LIMIT_ANONYMOUS: '1000000', CODEHOST_LOG_LEVEL: 'fatal' };

/** SIGTERM, then the exit (a graceful stop: in-flight requests and jobs finish). */
async function stop(server: ServeChild): Promise<number | null> {
  if (server.child.exitCode !== null) return server.child.exitCode;
  const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
  server.child.kill('SIGTERM');
  return exited;
}

describe(`a rolling upgrade from the previous release (${PREVIOUS.slice(0, 7)})`, { skip: engine !== 'postgres' ? 'several processes on one database: PostgreSQL' : false, timeout: 10 * 60_000 }, () => {
  let database: TestDatabase;
  let receiver: Receiver;
  let checkout: string;
  const servers: ServeChild[] = [];

  before(async () => {
    database = await createTestDatabase();
    receiver = await new Receiver().start();
    checkout = join(mkdtempSync(join(tmpdir(), 'codehost-previous-')), 'previous');
    execFileSync('git', ['-C', ROOT, 'worktree', 'add', '--detach', '--quiet', checkout, PREVIOUS], { stdio: 'pipe' });
    // Its runtime dependencies are this release's (package.json's `dependencies` have not changed since).
    symlinkSync(join(ROOT, 'node_modules'), join(checkout, 'node_modules'));
  });

  after(async () => {
    for (const server of servers) await server.kill();
    if (checkout && existsSync(checkout)) execFileSync('git', ['-C', ROOT, 'worktree', 'remove', '--force', checkout], { stdio: 'ignore' });
    rmSync(join(checkout, '..'), { recursive: true, force: true });
    await receiver?.stop();
    await database?.drop();
  });

  test('the previous release keeps serving while this one migrates and starts beside it: no 5xx, every issue delivered once', async (t) => {
    const previous = [
      await startServe(database, ADMIN, { root: checkout, env: SETTINGS }),
      await startServe(database, ADMIN, { root: checkout, env: SETTINGS }),
    ];
    servers.push(...previous);
    await previous[0]!.admin('POST', '/users', { login: 'mona' });
    await previous[0]!.admin('POST', '/repos', { owner: 'mona', name: 'widgets' });
    await previous[0]!.admin('POST', '/apps', {
      slug: 'listener', owner: 'mona', permissions: { issues: 'read', metadata: 'read' }, events: ['issues'], webhook: { url: receiver.url('/listener') },
    });
    await previous[0]!.admin('POST', '/apps/listener/installations', { account: 'mona', repositories: 'all' });

    // The load: each round a read of the repository, of its issues and an issue opened, on every process serving.
    const serving = [...previous];
    const statuses: { release: string; status: number; what: string }[] = [];
    const opened: string[] = [];
    let loading = true;
    let round = 0;
    const load = (async () => {
      while (loading) {
        round++;
        await Promise.all(serving.map(async (server, i) => {
          const release = previous.includes(server) ? 'previous' : 'this';
          const record = (what: string, status: number) => statuses.push({ release, status, what });
          for (const path of ['/repos/mona/widgets', '/repos/mona/widgets/issues?state=all']) {
            const answer = await fetch(`${server.url}/api/v3${path}`).catch(() => null);
            record(`GET ${path}`, answer?.status ?? 599);
          }
          const title = `round ${round} on ${release} ${i}`;
          const created = await server.call('POST', '/repos/mona/widgets/issues', { author: 'mona', title });
          record('POST issue', created.status);
          if (created.status === 201) opened.push(title);
        }));
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const rounds = async (count: number) => {
      const until = round + count;
      await waitFor(`${count} rounds of load`, 60, async () => (round >= until ? true : undefined));
    };

    await rounds(5);
    const env = { ...process.env, DATABASE_URL: database.databaseUrl!, CODEHOST_DATA_DIR: database.dataDir, CODEHOST_ADMIN_TOKEN: ADMIN };
    const pending = await run(process.execPath, [CLI, 'migrate', '--check'], { env }).then(
      () => assert.fail('migrate --check exited 0 before this release migrated'),
      (error: { code: number; stderr: string }) => error,
    );
    assert.equal(pending.code, 1);
    assert.match(pending.stderr.trim(), /^4 migrations pending \(0024_reactions, 0025_commit_checks, 0026_issue_locks, 0027_pull_request_reviews\): run `codehost migrate`$/);
    const migrated = await run(process.execPath, [CLI, 'migrate'], { env });
    assert.match(migrated.stdout, /0027_pull_request_reviews/);
    await rounds(5);
    const current = await startServe(database, ADMIN, { env: SETTINGS });
    servers.push(current);
    serving.push(current);
    await rounds(5);
    // As a load balancer does: the old processes are taken out of the rotation, what was sent to them
    // is answered (the round in flight ends), then they stop.
    for (const server of previous) serving.splice(serving.indexOf(server), 1);
    await rounds(2);
    for (const server of previous) assert.equal(await stop(server), 0, 'a previous release process stops gracefully');
    await rounds(3);
    loading = false;
    await load;
    assert.equal((await run(process.execPath, [CLI, 'migrate', '--check'], { env })).stdout.trim(), 'the database is up to date');

    const failures = statuses.filter((s) => s.status >= 500);
    t.diagnostic(`${statuses.length} answers (${statuses.filter((s) => s.release === 'previous').length} of the previous release), ${opened.length} issues opened, ${round} rounds`);
    assert.deepEqual(failures, [], 'no 5xx from either release');
    assert.ok(statuses.some((s) => s.release === 'previous') && statuses.some((s) => s.release === 'this'));

    await current.admin('POST', '/jobs/drain', { timeout_seconds: 60 });
    const delivered = receiver.on('/listener').filter((d) => d.headers['x-vendor-event'] === 'issues' && d.json.action === 'opened');
    const titles = delivered.map((d) => d.json.issue.title as string);
    assert.deepEqual([...titles].sort(), [...opened].sort(), 'every issue opened delivered, once');
    assert.equal(new Set(delivered.map((d) => d.headers['x-vendor-delivery'])).size, delivered.length, 'no delivery posted twice');
  });
});
