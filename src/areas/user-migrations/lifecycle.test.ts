// The user migrations' move rule (UserMigrationService refuseLockedMove, applied in a transfer's or a
// rename's transaction): a repository a migration locked does not move (403, the message of every
// write to a locked repository); one that is not locked moves, whatever its neighbours' locks. On a
// real migrated database (SQLite, or PostgreSQL when DATABASE_URL is set, where the lock is read
// FOR UPDATE, which a spy records on either), no server. Two of mona's repositories, each locked or
// not by one of two migrations.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/database.ts';
import { openDatabase, type Db } from '../../db/index.ts';
import { migrateToLatest } from '../../db/migrate.ts';
import { Clock } from '../../platform/clock.ts';
import type { Context } from '../../platform/context.ts';
import { ApiError } from '../../platform/errors.ts';
import { UserMigrationService } from './service.ts';
import { LockSpy } from '../../../test/helpers/unit.ts';

const NOW = '2026-06-01T12:00:00.000Z';

let testDatabase: TestDatabase;
let db: Db;
let ctx: Context;
const id: Record<string, number> = {};

before(async () => {
  testDatabase = await createTestDatabase();
  db = openDatabase({ databaseUrl: testDatabase.databaseUrl, sqlitePath: `${testDatabase.dataDir}/codehost.db` });
  await migrateToLatest(db);
  ctx = { clock: new Clock(), db, config: { dataDir: testDatabase.dataDir } } as unknown as Context;
  const k = db.kysely;
  id.mona = (await k.insertInto('users').values({ login: 'mona', login_lower: 'mona', type: 'User', site_admin: 0, created_at: NOW, updated_at: NOW } as never).returning('id').executeTakeFirstOrThrow()).id;
  for (const name of ['first', 'second']) {
    id[name] = (await k.insertInto('user_migrations').values({
      guid: `guid-${name}`, owner_id: id.mona, state: 'exported', lock_repositories: 1, exclude_metadata: 0, exclude_git_data: 0, exclude_attachments: 0, exclude_releases: 0, exclude_owner_projects: 0, org_metadata_only: 0, created_at: NOW, updated_at: NOW,
    } as never).returning('id').executeTakeFirstOrThrow()).id;
  }
  for (const name of ['moving', 'neighbour']) {
    id[name] = (await k.insertInto('repositories').values({ owner_id: id.mona!, name, name_lower: name, visibility: 'private', created_at: NOW, updated_at: NOW } as never).returning('id').executeTakeFirstOrThrow()).id;
  }
});

after(async () => {
  await db?.close();
  await testDatabase?.drop();
});

type Lock = 'first' | 'second' | null;
const ROWS: [moving: Lock, neighbour: Lock, refused: boolean][] = [
  [null, null, false],
  [null, 'first', false],
  [null, 'second', false],
  ['first', null, true],
  ['second', 'second', true],
  ['first', 'second', true],
];

for (const [moving, neighbour, refused] of ROWS) {
  for (const kind of ['transfer', 'rename'] as const) {
    test(`a ${kind} of a repository locked by ${moving ?? 'no migration'} (its neighbour by ${neighbour ?? 'none'}): ${refused ? '403' : 'moves'}`, async () => {
      const k = db.kysely;
      for (const [name, lock] of [['moving', moving], ['neighbour', neighbour]] as const) {
        await k.updateTable('repositories').set({ locked_by_migration_id: lock && id[lock]! } as never).where('id', '=', id[name]!).execute();
      }
      const move = { repositoryId: id.moving!, fromOwnerId: id.mona!, toOwnerId: id.mona!, name: 'moving', transferred: kind === 'transfer', renamed: kind === 'rename' };
      const done = k.transaction().execute((trx) => new UserMigrationService(ctx).refuseLockedMove(trx, move));
      if (refused) {
        await assert.rejects(done, (error: unknown) => error instanceof ApiError && error.status === 403 && error.message === 'Repository is locked for migration');
      } else {
        await done;
      }
    });
  }
}

test('a repository that is not there (deleted since) is not refused', async () => {
  const move = { repositoryId: 2 ** 31 - 1, fromOwnerId: id.mona!, toOwnerId: id.mona!, name: 'gone', transferred: true, renamed: false };
  await db.kysely.transaction().execute((trx) => new UserMigrationService(ctx).refuseLockedMove(trx, move));
});

for (const dialect of ['postgres', 'sqlite'] as const) {
  test(`on ${dialect}, the lock is read ${dialect === 'postgres' ? 'FOR UPDATE (a concurrent unlock waits for the move)' : 'plainly'}`, async () => {
    const spy = new LockSpy();
    await db.kysely.updateTable('repositories').set({ locked_by_migration_id: id.first! } as never).where('id', '=', id.moving!).execute();
    const service = new UserMigrationService({ ...ctx, db: { ...db, dialect } } as Context);
    const move = { repositoryId: id.moving!, fromOwnerId: id.mona!, toOwnerId: id.mona!, name: 'moving', transferred: true, renamed: false };
    await assert.rejects(db.kysely.withPlugin(spy).transaction().execute((trx) => service.refuseLockedMove(trx, move)), (error: unknown) => error instanceof ApiError && error.status === 403);
    assert.deepEqual(spy.locks, dialect === 'postgres' ? ['ForUpdate'] : []);
  });
}
