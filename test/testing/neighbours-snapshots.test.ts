// A second snapshot, a second reset, a second clock move (issue 43): snapshots A then B, restored
// A, B, A again, each restore exact (the rows, the clock, the faults, the queued jobs and what the
// clock decides: an installation token's expiry, a migration archive's); two resets in a row; the
// clock moved forward twice (the moves add up, docs/testing.md "Faults and the clock"), never back,
// its bounds each an exact status and error; after each move the effects that read the clock (a
// token's expiry, a signed archive URL's, an archive's `expires_at` and its removal after
// CODEHOST_MIGRATION_ARCHIVE_DAYS). Both databases.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { LATEST_CLOCK_MS } from '../../src/platform/clock.ts';
import { createApp, signAppJwt, type TestApp } from '../helpers/credentials.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

/** What a restore must give back exactly, read over HTTP. */
interface World {
  users: Record<string, number>;
  faults: string[];
  /** The clock's lead over the wall clock, in seconds (rounded). */
  lead: number;
  /** The installation token made in A: 200 while the clock is within its hour, 401 after. */
  tokenStatus: number;
  /** The migration exported in B: in A beta's token is unknown (401), in B its state. */
  migration: number | string;
  /** Its archive (file state in the data directory): 302 to a signed URL that downloads it whole (200), in B. */
  archive: number;
}

describe('snapshots A and B, restored A, B, A; resets twice; the clock moved twice', () => {
  let server: TestServer;
  let app: TestApp;
  let installationToken: string;
  let migrationId: number;
  const token: Record<string, string> = {};

  const lead = async () => Math.round((Date.parse((await server.admin('GET', '/clock')).now) - Date.now()) / 1000);
  const world = async (): Promise<World> => {
    const users: Record<string, number> = {};
    for (const login of ['alpha', 'beta']) users[login] = (await server.api('GET', `/users/${login}`)).status;
    const faults = ((await server.admin('GET', '/faults')) as { match: { path: string } }[]).map((fault) => fault.match.path);
    const tokenStatus = (await server.api('GET', '/installation/repositories', { token: installationToken })).status;
    const migration = await server.api('GET', `/user/migrations/${migrationId}`, { token: token.beta }).then((answer) => (answer.status === 200 ? answer.body.state : answer.status));
    let archive = (await server.api('GET', `/user/migrations/${migrationId}/archive`, { token: token.beta })).status;
    if (archive === 302) {
      const location = (await server.api('GET', `/user/migrations/${migrationId}/archive`, { token: token.beta })).headers.get('location')!;
      const download = await fetch(location);
      const bytes = Buffer.from(await download.arrayBuffer());
      if (download.status !== 200 || bytes.length < 100) archive = download.status === 200 ? -bytes.length : download.status;
    }
    return { users, faults, lead: await lead(), tokenStatus, migration, archive };
  };

  /** A's world and B's, as each was saved. */
  const A: World = { users: { alpha: 200, beta: 404 }, faults: [], lead: 600, tokenStatus: 200, migration: 401, archive: 401 };
  const B: World = { users: { alpha: 200, beta: 200 }, faults: ['/only-in-b'], lead: 600 + 3000, tokenStatus: 401, migration: 'exported', archive: 302 };

  const assertWorld = async (expected: World, what: string) => {
    const actual = await world();
    assert.ok(Math.abs(actual.lead - expected.lead) <= 5, `${what}: the clock leads by ${actual.lead} s, ${expected.lead} s expected`);
    assert.deepEqual({ ...actual, lead: expected.lead }, expected, what);
  };

  before(async () => {
    server = await startServer({ CODEHOST_TEST_MODE: '1' });
    await server.admin('POST', '/reset', {});
    // A: alpha, an app installed on alpha with an hour-long token, the clock 10 minutes on.
    await server.admin('POST', '/users', { login: 'alpha' });
    token.alpha = (await server.admin('POST', '/tokens', { login: 'alpha', kind: 'classic', scopes: ['repo'] })).token;
    app = await createApp(server, 'snap-app', { metadata: 'read' });
    const installation = await server.admin('POST', `/apps/${app.slug}/installations`, { account: 'alpha', repositories: 'all' });
    const jwt = await signAppJwt(app, Math.floor(Date.parse((await server.admin('GET', '/clock')).now) / 1000));
    installationToken = (await server.api('POST', `/app/installations/${installation.id}/access_tokens`, { authorization: `Bearer ${jwt}`, body: {} })).body.token;
    await server.advance(600);
    await server.admin('POST', '/snapshots', { name: 'a' });
    // B: beta with an exported migration (its archive a file), a fault, the clock 50 minutes further (the token's hour is over).
    await server.admin('POST', '/users', { login: 'beta' });
    token.beta = (await server.admin('POST', '/tokens', { login: 'beta', kind: 'classic', scopes: ['repo'] })).token;
    await server.admin('POST', '/repos', { owner: 'beta', name: 'exported', init_git: true });
    const started = await server.api('POST', '/user/migrations', { token: token.beta, body: { repositories: ['exported'] } });
    assert.equal(started.status, 201, started.text);
    migrationId = started.body.id;
    await server.drain();
    await server.admin('POST', '/faults', { effect: 'status', status: 500, match: { path: '/only-in-b' } });
    await server.advance(3000);
    await server.admin('POST', '/snapshots', { name: 'b' });
  });
  after(() => server.close());

  // Each step a row: what is done, then the world it must leave.
  const STEPS: [string, () => Promise<unknown>, World][] = [
    ['B as saved', async () => {}, B],
    ['restore A (after B)', () => server.admin('POST', '/snapshots/a/restore', {}), A],
    ['restore B (after A)', () => server.admin('POST', '/snapshots/b/restore', {}), B],
    ['restore A again', () => server.admin('POST', '/snapshots/a/restore', {}), A],
    ['restore A twice in a row', () => server.admin('POST', '/snapshots/a/restore', {}), A],
    ['restore B again', () => server.admin('POST', '/snapshots/b/restore', {}), B],
  ];
  for (const [step, act, expected] of STEPS) {
    test(`snapshots: ${step}`, async () => {
      await act();
      await assertWorld(expected, step);
    });
  }

  test('snapshots: what was changed and moved after a restore of A is gone at A\'s next restore; B\'s archive deleted after B comes back with B', async () => {
    await server.admin('POST', '/snapshots/a/restore', {});
    await server.admin('POST', '/users', { login: 'beta' });
    await server.admin('POST', '/faults', { effect: 'status', status: 500, match: { path: '/after-a' } });
    await server.advance(7200);
    await server.admin('POST', '/snapshots/a/restore', {});
    await assertWorld(A, 'A after changes and a move');
    await server.admin('POST', '/snapshots/b/restore', {});
    const deleted = await server.api('DELETE', `/user/migrations/${migrationId}/archive`, { token: token.beta });
    assert.equal(deleted.status, 204, deleted.text);
    assert.equal((await server.api('GET', `/user/migrations/${migrationId}/archive`, { token: token.beta })).status, 404);
    await server.admin('POST', '/snapshots/a/restore', {});
    await assertWorld(A, 'A after B\'s archive was deleted');
    await server.admin('POST', '/snapshots/b/restore', {});
    await assertWorld(B, 'B with its archive again');
  });

  test('snapshots: the list holds both, newest first, each created_at on the test clock when saved', async () => {
    const list = (await server.admin('GET', '/snapshots')) as { name: string; created_at: string }[];
    assert.deepEqual(list.map((snapshot) => snapshot.name), ['b', 'a']);
    const [b, a] = list.map((snapshot) => Date.parse(snapshot.created_at));
    assert.ok(b! - a! >= 3000_000 && b! - a! < 3060_000, `B ${3000} s after A on the clock: ${(b! - a!) / 1000}`);
  });

  test('two resets in a row: each empties the rows, the faults and the clock; ids start again each time', async () => {
    for (const round of [1, 2]) {
      await server.admin('POST', '/reset', {});
      assert.equal((await server.api('GET', '/users/alpha')).status, 404, `round ${round}`);
      assert.deepEqual(await server.admin('GET', '/faults'), [], `round ${round}`);
      assert.ok(Math.abs(await lead()) <= 5, `round ${round}: the clock back to now`);
      const user = await server.admin('POST', '/users', { login: `round-${round}` });
      assert.equal(user.id, 1, `round ${round}`);
      await server.admin('POST', '/faults', { effect: 'status', status: 500, match: { path: '/between-resets' } });
      await server.advance(900);
    }
    // The snapshots outlive both resets: A restores over the emptied world.
    await server.admin('POST', '/snapshots/a/restore', {});
    await assertWorld(A, 'A after two resets');
  });
});

describe('the clock: moves add up, never back; its bounds; what reads it after each move', () => {
  let server: TestServer;
  let app: TestApp;
  let mona: string;

  before(async () => {
    server = await startServer({ CODEHOST_TEST_MODE: '1' });
    await server.admin('POST', '/users', { login: 'mona' });
    mona = (await server.admin('POST', '/tokens', { login: 'mona', kind: 'classic', scopes: ['repo'] })).token;
    app = await createApp(server, 'clock-app', { metadata: 'read' });
  });
  after(() => server.close());

  const now = async () => Date.parse((await server.admin('GET', '/clock')).now);

  test('bounds: each refusal an exact status and error, and none moves the clock', async () => {
    const before = await now();
    const past = { advance_seconds: Math.ceil((LATEST_CLOCK_MS - before) / 1000) + 3600 };
    const ROWS: [string, unknown, number, (body: any) => void][] = [
      ['backwards', { advance_seconds: -60 }, 422, (body) => assert.deepEqual(body.errors.map((e: { field: string }) => e.field), ['advance_seconds'])],
      ['a string', { advance_seconds: 'an hour' }, 422, (body) => assert.deepEqual(body.errors.map((e: { field: string }) => e.field), ['advance_seconds'])],
      ['missing', {}, 422, (body) => assert.match(JSON.stringify(body), /advance_seconds/)],
      ['null', { advance_seconds: null }, 422, (body) => assert.match(JSON.stringify(body), /advance_seconds/)],
      ['past the latest time', past, 422, (body) => assert.deepEqual(body.errors, [{
        resource: 'Clock', field: 'advance_seconds', code: 'custom',
        message: `advance_seconds would move the clock past ${new Date(LATEST_CLOCK_MS).toISOString()}, the latest time every database codehost runs on can hold`,
      }])],
    ];
    for (const [row, body, status, check] of ROWS) {
      const answer = await server.adminRaw('POST', '/clock', body);
      assert.equal(answer.status, status, `${row}: ${answer.text}`);
      check(answer.body);
      assert.ok(Math.abs((await now()) - before) < 5_000, `${row}: the clock did not move`);
    }
    assert.ok((await now()) - before < 5_000, 'no refusal moved the clock');
  });

  test('two moves add up; after each, a token\'s expiry, a signed URL\'s and an archive\'s follow the clock', async () => {
    const start = await now();
    const installation = await server.admin('POST', `/apps/${app.slug}/installations`, { account: 'mona', repositories: 'all' });
    const jwt = await signAppJwt(app, Math.floor(start / 1000));
    const minted = await server.api('POST', `/app/installations/${installation.id}/access_tokens`, { authorization: `Bearer ${jwt}`, body: {} });
    assert.equal(minted.status, 201, minted.text);
    const expiresAt = Date.parse(minted.body.expires_at);
    assert.ok(Math.abs(expiresAt - start - 3_600_000) < 5_000, `an hour on the clock: ${minted.body.expires_at}`);
    await server.admin('POST', '/repos', { owner: 'mona', name: 'exported', init_git: true });
    const started = await server.api('POST', '/user/migrations', { token: mona, body: { repositories: ['exported'] } });
    await server.drain();
    const migration = await server.api('GET', `/user/migrations/${started.body.id}`, { token: mona });
    assert.equal(migration.body.state, 'exported', migration.text);
    const operator = await server.admin('GET', `/migrations/${started.body.id}`);
    assert.ok(operator.archive, JSON.stringify(operator));
    const archiveExpires = Date.parse(operator.archive.expires_at);
    assert.ok(Math.abs(archiveExpires - start - 7 * 86_400_000) < 60_000, `seven days on the clock: ${operator.archive.expires_at}`);
    const signed = (await server.api('GET', `/user/migrations/${started.body.id}/archive`, { token: mona })).headers.get('location')!;

    const tokenStatus = async () => (await server.api('GET', '/installation/repositories', { token: minted.body.token })).status;
    const urlStatus = async () => { const answer = await fetch(signed); await answer.arrayBuffer(); return answer.status; };
    const archiveStatus = async () => (await server.api('GET', `/user/migrations/${started.body.id}/archive`, { token: mona })).status;

    // A row per move: the seconds moved, the lead expected (the sum), and what reads the clock then.
    const MOVES: [number, number, { token: number; url: number; archive: number }][] = [
      [0, 0, { token: 200, url: 200, archive: 302 }],
      [200, 200, { token: 200, url: 200, archive: 302 }],
      // 200 + 200 = 400 s: past the signed URL's 300 s, within the token's hour.
      [200, 400, { token: 200, url: 403, archive: 302 }],
      // 400 + 3300 = 3700 s: past the token's hour.
      [3300, 3700, { token: 401, url: 403, archive: 302 }],
      // Past seven days: the archive has expired.
      [7 * 86_400, 3700 + 7 * 86_400, { token: 401, url: 403, archive: 404 }],
    ];
    for (const [seconds, total, expected] of MOVES) {
      const answer = await server.admin('POST', '/clock', { advance_seconds: seconds });
      const moved = Date.parse(answer.now);
      // The lead over the wall clock (the wall clock goes on meanwhile, however slowly the machine runs).
      const lead = moved - Date.now();
      assert.ok(Math.abs(lead - total * 1000) < 5_000, `after +${seconds} s the clock leads by ${lead / 1000} s, ${total} s expected`);
      assert.ok(Math.abs((await now()) - moved) < 5_000, `GET /clock after +${seconds}`);
      assert.deepEqual({ token: await tokenStatus(), url: await urlStatus(), archive: await archiveStatus() }, expected, `after the move to +${total} s`);
    }
  });
});
