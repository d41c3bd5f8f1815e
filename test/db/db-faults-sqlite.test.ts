// SQLite whose writes fail (the disk full or read-only): reads are still served (the rate-limit
// counter they write is skipped), writes answer 503 with Retry-After, /readyz says not ready and
// why, errors name their cause; everything works again once the disk does.
//
// Making the database read-only for root: chmod does not stop root, so the database file and its
// WAL are made immutable (`chattr +i`, which root obeys; not the -shm file, which SQLite maps into
// memory). SQLite then fails every write with SQLITE_IOERR, as on a disk that went read-only.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import { unavailable } from '../helpers/skips.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

let t: TestServer;
let files: string[] = [];
let skip: string | false = process.env.DATABASE_URL ? 'SQLite only: DATABASE_URL is set' : false;

function chattr(flag: '+i' | '-i'): void {
  execFileSync('chattr', [flag, ...files], { stdio: 'ignore' });
}

before(async () => {
  if (skip) return;
  // Every request leases its own count (no block of quota in hand): the read below cannot be counted.
  t = await startServer({ CODEHOST_RATE_LIMIT_BLOCK: '1' });
  const path = `${t.server.ctx.config.dataDir}/codehost.db`;
  files = [path, `${path}-wal`];
  try {
    chattr('+i');
    chattr('-i');
  } catch {
    skip = unavailable('chattr +i is not available here (needs root and a file system with the immutable flag)');
  }
});

after(async () => {
  if (!t) return;
  try {
    chattr('-i');
  } catch {
    // not set
  }
  await t.close();
});

test('SQLite that cannot write: reads served, writes 503, /readyz not ready with the cause, service back after', async (context) => {
  if (skip) return context.skip(skip);
  await t.admin('POST', '/users', { login: 'alice' });
  const before = await t.api('GET', '/users/alice');
  assert.equal(before.status, 200);
  assert.equal((await t.server.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);

  chattr('+i');
  try {
    // A read still answers, uncounted: the counter is not written, its last state is shown.
    const read = await t.api('GET', '/users/alice');
    assert.equal(read.status, 200, read.text);
    assert.equal(read.body.login, 'alice');
    assert.equal(read.headers.get('x-ratelimit-used'), before.headers.get('x-ratelimit-used'));
    assert.equal((await t.api('GET', '/users/alice')).status, 200);

    // A write answers 503 with Retry-After and the platform's body.
    const write = await t.adminRaw('POST', '/users', { login: 'bob' });
    assert.equal(write.status, 503, write.text);
    assert.ok(write.headers.get('retry-after'));
    assert.equal(write.body.status, '503');

    // The failure in a transaction names its cause, not "cannot rollback".
    await assert.rejects(
      t.server.ctx.db.kysely.transaction().execute(async (trx) => {
        await trx.insertInto('settings').values({ key: 'fault-test', value: 'x' }).execute();
      }),
      (error: Error) => {
        assert.doesNotMatch(error.message, /cannot rollback/);
        assert.match(error.message, /disk I\/O error|readonly|full/);
        return true;
      },
    );

    await new Promise((resolve) => setTimeout(resolve, 1_000)); // past the cached readiness answer
    const ready = await fetch(`${t.url}/readyz`);
    assert.equal(ready.status, 503);
    const body = (await ready.json()) as { status: string; reason: string };
    assert.equal(body.status, 'database not writable');
    assert.match(body.reason, /SQLite: a disk I\/O error/);
    assert.equal((await fetch(`${t.url}/healthz`)).status, 200);
  } finally {
    chattr('-i');
  }

  await new Promise((resolve) => setTimeout(resolve, 1_000));
  assert.equal((await fetch(`${t.url}/readyz`)).status, 200);
  assert.equal((await t.adminRaw('POST', '/users', { login: 'bob' })).status, 201);
  const read = await t.api('GET', '/users/bob');
  assert.equal(read.status, 200);
  assert.equal(Number(read.headers.get('x-ratelimit-used')), Number(before.headers.get('x-ratelimit-used')) + 1);
});
