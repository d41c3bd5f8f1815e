// The user-migration state machine, no server: its pure rules (service.ts: the expiry cutoff and date,
// "archive downloadable", "unlockable", "owned by"), and its state changes in SQL (store.ts: a run
// begins, records progress, finishes or fails; an archive is dropped or expires; what counts as in
// progress and kept; repository locks) from every state — pending, exporting (this run or another),
// exported, exported with its archive deleted, failed — on a real migrated database (SQLite, or
// PostgreSQL when DATABASE_URL is set).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/database.ts';
import { openDatabase, type Db } from '../../db/index.ts';
import { migrateToLatest } from '../../db/migrate.ts';
import { archiveDownloadable, archiveExpiresAt, expiryCutoff, ownedBy, unlockable } from './service.ts';
import * as store from './store.ts';

const at = (day: number, hour = 0) => new Date(Date.UTC(2026, 5, day, hour)).toISOString();
const STATES = ['pending', 'exporting', 'exported', 'failed'] as const;

test('expiryCutoff and archiveExpiresAt: the archive days before now, and after the export', () => {
  const now = Date.parse('2026-06-10T12:00:00.000Z');
  assert.equal(expiryCutoff(now, 7), '2026-06-03T12:00:00.000Z');
  assert.equal(expiryCutoff(now, 1), '2026-06-09T12:00:00.000Z');
  assert.equal(expiryCutoff(now + 1, 30), '2026-05-11T12:00:00.001Z');
  assert.equal(archiveExpiresAt('2026-06-03T12:00:00.000Z', 7)?.toISOString(), '2026-06-10T12:00:00.000Z');
  assert.equal(archiveExpiresAt('2026-06-03T12:00:00.500Z', 2)?.toISOString(), '2026-06-05T12:00:00.500Z');
  assert.equal(archiveExpiresAt(null, 7), null);
  assert.equal(archiveExpiresAt('', 7), null);
});

test('archiveDownloadable: a row per archive state; the cutoff itself has expired', () => {
  const cutoff = '2026-06-03T12:00:00.000Z';
  const rows: [string, { archive_key: string | null; exported_at: string | null }, boolean][] = [
    ['exported, fresh', { archive_key: '1/run.tar.gz', exported_at: '2026-06-09T00:00:00.000Z' }, true],
    ['exported a millisecond after the cutoff', { archive_key: '1/run.tar.gz', exported_at: '2026-06-03T12:00:00.001Z' }, true],
    ['exported at the cutoff: expired', { archive_key: '1/run.tar.gz', exported_at: cutoff }, false],
    ['exported before the cutoff: expired', { archive_key: '1/run.tar.gz', exported_at: '2026-06-01T00:00:00.000Z' }, false],
    ['archive deleted (no key), fresh', { archive_key: null, exported_at: '2026-06-09T00:00:00.000Z' }, false],
    ['pending or exporting or failed: neither key nor export time', { archive_key: null, exported_at: null }, false],
    ['a key without an export time', { archive_key: '1/run.tar.gz', exported_at: null }, false],
  ];
  for (const [what, row, downloadable] of rows) assert.equal(archiveDownloadable(row, cutoff), downloadable, what);
});

test('unlockable: once the export finished (exported or failed), never while pending or exporting', () => {
  const rows: [string, boolean][] = [['pending', false], ['exporting', false], ['exported', true], ['failed', true]];
  for (const [state, expected] of rows) assert.equal(unlockable(state), expected, state);
  assert.deepEqual(rows.map(([state]) => state), [...STATES]);
});

test('ownedBy: the owner only; an unknown migration nobody', () => {
  assert.equal(ownedBy({ owner_id: 7 }, 7), true);
  assert.equal(ownedBy({ owner_id: 7 }, 8), false);
  assert.equal(ownedBy(undefined, 7), false);
});

// --- The state changes in SQL ------------------------------------------------------------------------

let testDatabase: TestDatabase;
let db: Db;
const id: Record<string, number> = {};

before(async () => {
  testDatabase = await createTestDatabase();
  db = openDatabase({ databaseUrl: testDatabase.databaseUrl, sqlitePath: `${testDatabase.dataDir}/codehost.db` });
  await migrateToLatest(db);
  const k = db.kysely;
  for (const login of ['ana', 'bob', 'cid', 'dee']) {
    id[login] = (await k.insertInto('users').values({ login, login_lower: login, type: 'User', site_admin: 0, created_at: at(1), updated_at: at(1) } as never)
      .returning('id').executeTakeFirstOrThrow()).id;
  }
});

after(async () => {
  await db?.close();
  await testDatabase?.drop();
});

type State = (typeof STATES)[number] | 'deleted';
let repositories = 0;

/** A migration of `owner` in `state` (deleted: exported, its archive deleted), exporting by run `r1`, with a repository it locks. */
async function migration(state: State, owner = 'ana', extra: Partial<store.MigrationRow> = {}): Promise<{ id: number; repository: number }> {
  const k = db.kysely;
  const exported = state === 'exported' || state === 'deleted';
  const row = await store.insertMigration(k, {
    guid: `guid-${++repositories}`, owner_id: id[owner]!, state: state === 'deleted' ? 'exported' : state,
    lock_repositories: 1, exclude_metadata: 0, exclude_git_data: 0, exclude_attachments: 0, exclude_releases: 0, exclude_owner_projects: 0, org_metadata_only: 0,
    export_run: state === 'pending' ? null : 'r1', archive_key: state === 'exported' ? `${repositories}/r1.tar.gz` : null, archive_size: exported ? 100 : null,
    records_exported: state === 'pending' ? 0 : 5, failure: state === 'failed' ? 'broken' : null, exported_at: exported ? at(2) : null,
    archive_deleted_at: state === 'deleted' ? at(3) : null, created_at: at(1), updated_at: at(1), ...extra,
  }, []);
  const repository = (await k.insertInto('repositories').values({
    owner_id: id[owner]!, name: `repo${repositories}`, name_lower: `repo${repositories}`, visibility: 'public', created_at: at(1), updated_at: at(1),
  } as never).returning('id').executeTakeFirstOrThrow()).id;
  assert.equal(await store.lockRepositories(k, row.id, id[owner]!, [repository]), 1);
  return { id: row.id, repository };
}

/** What a migration is now: state, run, archive, failure, records, times, and whether its repository is still locked by it. */
async function now(m: { id: number; repository: number }) {
  const row = (await store.findMigration(db.kysely, m.id))!;
  const lock = await store.repositoryLock(db.kysely, m.repository, false);
  return {
    state: row.state, run: row.export_run, key: row.archive_key, size: row.archive_size === null ? null : Number(row.archive_size), failure: row.failure,
    records: row.records_exported, exported_at: row.exported_at, deleted_at: row.archive_deleted_at, updated_at: row.updated_at, locked: lock === m.id,
  };
}

const T = at(20);

describe('the state changes: every operation from every state (a test per row), what it answers and the state it leaves', () => {
  // The database is open once the tests run (before()): each row reads it then.
  let k: Db['kysely'];
  type Now = Awaited<ReturnType<typeof now>>;
  // [from, operation, its answer, what changes]
  const rows: [State, string, (m: { id: number; repository: number }) => Promise<unknown>, unknown, (before: Now) => Now][] = [
    ['pending', 'begin', (m) => store.beginExport(k, m.id, 'r2', T).then((r) => r?.export_run), 'r2', (b) => ({ ...b, state: 'exporting', run: 'r2', records: 0, updated_at: T })],
    ['exporting', 'begin (a dead run taken over)', (m) => store.beginExport(k, m.id, 'r2', T).then((r) => r?.state), 'exporting', (b) => ({ ...b, run: 'r2', records: 0, updated_at: T })],
    ['exported', 'begin', (m) => store.beginExport(k, m.id, 'r2', T), undefined, (b) => b],
    ['deleted', 'begin', (m) => store.beginExport(k, m.id, 'r2', T), undefined, (b) => b],
    ['failed', 'begin', (m) => store.beginExport(k, m.id, 'r2', T), undefined, (b) => b],

    ['exporting', 'progress of its run', (m) => store.recordProgress(k, m.id, 'r1', 42), undefined, (b) => ({ ...b, records: 42 })],
    ['exporting', 'progress of another run', (m) => store.recordProgress(k, m.id, 'r9', 42), undefined, (b) => b],

    ['pending', 'finish', (m) => store.finishExport(k, m.id, 'r1', { key: 'k', size: 9 }, T), false, (b) => b],
    ['exporting', 'finish by its run', (m) => store.finishExport(k, m.id, 'r1', { key: 'k', size: 9 }, T), true, (b) => ({ ...b, state: 'exported', key: 'k', size: 9, exported_at: T, updated_at: T })],
    ['exporting', 'finish by another run', (m) => store.finishExport(k, m.id, 'r2', { key: 'k', size: 9 }, T), false, (b) => b],
    ['exported', 'finish again', (m) => store.finishExport(k, m.id, 'r1', { key: 'k', size: 9 }, T), false, (b) => b],
    ['failed', 'finish', (m) => store.finishExport(k, m.id, 'r1', { key: 'k', size: 9 }, T), false, (b) => b],

    ['pending', 'fail by a run', (m) => store.failExport(k, m.id, 'r1', 'why', T), false, (b) => b],
    ['exporting', 'fail by its run', (m) => store.failExport(k, m.id, 'r1', 'why', T), true, (b) => ({ ...b, state: 'failed', failure: 'why', updated_at: T, locked: false })],
    ['exporting', 'fail by another run', (m) => store.failExport(k, m.id, 'r2', 'why', T), false, (b) => b],
    ['exported', 'fail by its run', (m) => store.failExport(k, m.id, 'r1', 'why', T), false, (b) => b],
    ['failed', 'fail by its run', (m) => store.failExport(k, m.id, 'r1', 'why', T), false, (b) => b],
    ['pending', 'fail, out of attempts', (m) => store.failExport(k, m.id, null, 'why', T), true, (b) => ({ ...b, state: 'failed', failure: 'why', updated_at: T, locked: false })],
    ['exporting', 'fail, out of attempts', (m) => store.failExport(k, m.id, null, 'why', T), true, (b) => ({ ...b, state: 'failed', failure: 'why', updated_at: T, locked: false })],
    ['exported', 'fail, out of attempts', (m) => store.failExport(k, m.id, null, 'why', T), false, (b) => b],
    ['deleted', 'fail, out of attempts', (m) => store.failExport(k, m.id, null, 'why', T), false, (b) => b],
    ['failed', 'fail, out of attempts', (m) => store.failExport(k, m.id, null, 'why', T), false, (b) => b],

    ['pending', 'drop the archive', (m) => store.dropArchive(k, m.id, T), null, (b) => b],
    ['exporting', 'drop the archive', (m) => store.dropArchive(k, m.id, T), null, (b) => b],
    ['exported', 'drop the archive', (m) => store.dropArchive(k, m.id, T).then((key) => key?.endsWith('/r1.tar.gz')), true, (b) => ({ ...b, key: null, deleted_at: T })],
    ['deleted', 'drop the archive', (m) => store.dropArchive(k, m.id, T), null, (b) => b],
    ['failed', 'drop the archive', (m) => store.dropArchive(k, m.id, T), null, (b) => b],
    ['exported', 'drop the archive of an unknown migration', () => store.dropArchive(k, 999_999, T), null, (b) => b],

    ['pending', 'unlock', (m) => store.unlockRepository(k, m.id, m.repository), true, (b) => ({ ...b, locked: false })],
    ['exported', 'unlock', (m) => store.unlockRepository(k, m.id, m.repository), true, (b) => ({ ...b, locked: false })],
    ['exported', 'unlock another migration\'s repository', (m) => store.unlockRepository(k, m.id + 1000, m.repository), false, (b) => b],
  ];
  for (const [from, operation, run, answer, change] of rows) {
    test(`${from}: ${operation}`, async () => {
      k = db.kysely;
      const m = await migration(from);
      const before = await now(m);
      assert.deepEqual(await run(m), answer);
      assert.deepEqual(await now(m), change(before));
    });
  }
});

test('a failed run releases only its own migration\'s repositories', async () => {
  const k = db.kysely;
  const failing = await migration('exporting', 'bob');
  const other = await migration('exporting', 'bob');
  assert.equal(await store.failExport(k, failing.id, 'r1', 'why', T), true);
  assert.equal((await now(failing)).locked, false);
  assert.equal((await now(other)).locked, true);
  assert.deepEqual((await store.lockedRepositories(k, other.id)).map((r) => r.id), [other.repository]);
  assert.deepEqual(await store.lockedRepositories(k, failing.id), []);
});

test('locks: only the owner\'s repositories no migration holds; a lock is read back', async () => {
  const k = db.kysely;
  const held = await migration('pending', 'cid');
  const second = await migration('pending', 'cid');
  const bobs = await migration('pending', 'bob');
  // Another migration's lock, and another owner's repository, are not taken.
  assert.equal(await store.lockRepositories(k, second.id, id.cid!, [held.repository, bobs.repository]), 0);
  assert.equal(await store.lockRepositories(k, second.id, id.cid!, []), 0);
  assert.equal(await store.repositoryLock(k, held.repository, false), held.id);
  assert.equal(await store.unlockRepository(k, held.id, held.repository), true);
  assert.equal(await store.repositoryLock(k, held.repository, false), null);
  assert.equal(await store.repositoryLock(k, 999_999, false), null);
  assert.equal(await store.lockRepositories(k, second.id, id.cid!, [held.repository, bobs.repository]), 1);
  assert.equal(await store.repositoryLock(k, held.repository, false), second.id);
  assert.equal(await store.unlockRepository(k, held.id, held.repository), false, 'unlocked by another migration: nothing');
});

test('in progress and kept: which states count, per owner; the running exports and the expired archives', async () => {
  const k = db.kysely;
  const dee = (state: State, extra: Partial<store.MigrationRow> = {}) => migration(state, 'dee', extra);
  assert.equal(await store.countExportsInProgress(k, id.dee!), 0);
  assert.deepEqual(await store.keptArchives(k, id.dee!), { count: 0, bytes: 0 });
  const made: Record<string, number> = {};
  for (const state of ['pending', 'exporting', 'exported', 'deleted', 'failed'] as const) made[state] = (await dee(state)).id;
  const old = (await dee('exported', { exported_at: at(1), archive_size: 50 })).id;
  const older = (await dee('exported', { exported_at: at(1, 0), archive_size: 1, created_at: at(1) })).id;
  const gone = (await dee('deleted', { exported_at: at(1) })).id;
  assert.equal(await store.countExportsInProgress(k, id.dee!), 2, 'pending and exporting');
  // Kept: the exports in progress and the exported archives not deleted (with their bytes).
  assert.deepEqual(await store.keptArchives(k, id.dee!), { count: 5, bytes: 100 + 50 + 1 });
  assert.equal(await store.countExportsInProgress(k, id.ana!) >= 0, true);
  // Expired: exported at or before the cutoff, archive still there, oldest first, a limited page.
  const expired = await store.expiredArchives(k, at(1), 100);
  assert.deepEqual(expired.filter((i) => [old, older, gone, made.exported].includes(i)).sort(), [old, older].sort());
  assert.deepEqual(await store.expiredArchives(k, new Date(Date.parse(at(1)) - 1).toISOString(), 100), []);
  assert.equal((await store.expiredArchives(k, at(1), 1)).length, 1);
  assert.ok((await store.expiredArchives(k, at(2), 100)).includes(made.exported!), 'at the cutoff itself');
  const byAge = await store.expiredArchives(k, at(2), 100);
  assert.ok(byAge.indexOf(old) < byAge.indexOf(made.exported!), 'oldest first');
  // The runs of those exporting now.
  assert.deepEqual([...(await store.exportingRuns(k, [made.pending!, made.exporting!, made.exported!, made.failed!]))], [[made.exporting!, 'r1']]);
  assert.deepEqual([...(await store.exportingRuns(k, []))], []);
  const noRun = (await dee('exporting', { export_run: null })).id;
  assert.deepEqual([...(await store.exportingRuns(k, [noRun]))], []);
});
