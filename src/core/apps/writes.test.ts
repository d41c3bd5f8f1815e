// An installation's lifecycle writes (InstallationWrites suspend / unsuspend / delete) on a real
// migrated database (SQLite, or PostgreSQL when DATABASE_URL is set), no server: two apps installed
// on the SAME account (acme), a second installation of one of them on another account (mona, a
// user), and a second app's. A row per (write, state it starts from, installation it names, app
// that asks): the state every installation is left in, and the `installation` activity recorded
// (its name, account, sender, the installation and its repositories as they were) — the others'
// rows unchanged, no activity for a write that changes nothing, 404 for another app's installation.
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/database.ts';
import { openDatabase, type Db } from '../../db/index.ts';
import { migrateToLatest } from '../../db/migrate.ts';
import type { Context } from '../../platform/context.ts';
import { ApiError } from '../../platform/errors.ts';
import { deleteInstallation, findApp, type AppRow } from './store.ts';
import { InstallationWrites } from './writes.ts';
import { StillClock } from '../../../test/helpers/unit.ts';

const clock = new StillClock();
const T0 = new Date(clock.ms).toISOString();
const T1 = new Date(clock.ms + 60_000).toISOString();

let testDatabase: TestDatabase;
let db: Db;
let ctx: Context;
const sent: unknown[] = [];
const id: Record<string, number> = {};
const apps: Record<string, AppRow> = {};

/** The installations: [app, account]. `one` and `two` are both on acme; `mine` is one's on mona. */
const INSTALLATIONS = { one: ['one', 'acme'], mine: ['one', 'mona'], two: ['two', 'acme'] } as const;
type Name = keyof typeof INSTALLATIONS;

before(async () => {
  testDatabase = await createTestDatabase();
  db = openDatabase({ databaseUrl: testDatabase.databaseUrl, sqlitePath: `${testDatabase.dataDir}/codehost.db` });
  await migrateToLatest(db);
  ctx = { clock, db, urls: { api: 'http://api.test', web: 'http://web.test' }, queue: { send: async (...args: unknown[]) => { sent.push(args); return 'job'; } } } as unknown as Context;
  const k = db.kysely;
  for (const [login, type] of [['mona', 'User'], ['acme', 'Organization']] as const) {
    id[login] = (await k.insertInto('users').values({ login, login_lower: login, type, site_admin: 0, created_at: T0, updated_at: T0 } as never).returning('id').executeTakeFirstOrThrow()).id;
  }
  await k.insertInto('organizations').values({ id: id.acme!, enterprise_id: null } as never).execute();
  for (const [owner, name] of [['acme', 'widgets'], ['acme', 'gadgets'], ['mona', 'dots']] as const) {
    id[name] = (await k.insertInto('repositories').values({ owner_id: id[owner]!, name, name_lower: name, visibility: 'private', created_at: T0, updated_at: T0 } as never)
      .returning('id').executeTakeFirstOrThrow()).id;
  }
  for (const slug of ['one', 'two']) {
    await k.insertInto('apps').values({
      slug, name: slug, owner_id: null, client_id: `Iv1.${slug}client`, client_secret_hash: 'x', public_key_pem: 'x', permissions: '{"metadata":"read"}', events: '["issues"]', created_at: T0, updated_at: T0,
    } as never).execute();
    apps[slug] = (await findApp(k, slug))!;
  }
});

after(async () => {
  await db?.close();
  await testDatabase?.drop();
});

/** Every installation afresh (active, `one` covering widgets alone), no activity recorded. */
beforeEach(async () => {
  const k = db.kysely;
  clock.ms = Date.parse(T0);
  await k.deleteFrom('installations').execute();
  await k.deleteFrom('activity_outbox').execute();
  sent.length = 0;
  for (const [name, [app, account]] of Object.entries(INSTALLATIONS)) {
    id[name] = (await k.insertInto('installations').values({
      app_id: apps[app]!.id, account_id: id[account]!, repository_selection: name === 'one' ? 'selected' : 'all', permissions: '{"metadata":"read"}', created_at: T0, updated_at: T0, suspended_at: null,
    } as never).returning('id').executeTakeFirstOrThrow()).id;
  }
  await k.insertInto('installation_repositories').values({ installation_id: id.one!, repository_id: id.widgets! } as never).execute();
});

type State = 'active' | 'suspended' | 'gone';

/** Each installation's state: `suspended` with its time, `active`, or `gone`. */
async function states(): Promise<Record<Name, string>> {
  const rows = await db.kysely.selectFrom('installations').select(['id', 'suspended_at', 'updated_at']).execute();
  return Object.fromEntries(Object.keys(INSTALLATIONS).map((name) => {
    const row = rows.find((r) => r.id === id[name]);
    return [name, !row ? 'gone' : row.suspended_at === null ? `active ${row.updated_at}` : `suspended ${row.suspended_at} ${row.updated_at}`];
  })) as Record<Name, string>;
}

async function activities() {
  const rows = await db.kysely.selectFrom('activity_outbox').selectAll().orderBy('id').execute();
  return rows.map((row) => {
    const payload = JSON.parse(row.payload as string) as { installation: { id: number; app_id: number; app_slug: string; account: { login: string }; suspended_at: string | null }; repositories: { full_name: string }[] };
    return {
      name: `${row.event}.${row.action}`, account: row.account_id, actor: row.actor_id, created: row.created_at,
      installation: payload.installation.id, app: payload.installation.app_slug, login: payload.installation.account.login,
      suspended: payload.installation.suspended_at, repositories: payload.repositories.map((r) => r.full_name),
    };
  });
}

const writes = () => new InstallationWrites(ctx);
const suspend = (app: string, name: Name | number) => writes().suspend(apps[app]!, typeof name === 'number' ? name : id[name]!);
const unsuspend = (app: string, name: Name | number) => writes().unsuspend(apps[app]!, typeof name === 'number' ? name : id[name]!);
const remove = (app: string, name: Name | number) => writes().delete(apps[app]!, typeof name === 'number' ? name : id[name]!);

const WRITES = { suspend, unsuspend, delete: remove } as const;
type Write = keyof typeof WRITES;

/** What a write leaves: the named installation's state, the activity recorded (or none). */
const ACTIVITY: Record<Write, string> = { suspend: 'installation.suspend', unsuspend: 'installation.unsuspend', delete: 'installation.deleted' };

interface Row {
  /** The state the named installation starts in (suspended at T0 by the write itself). */
  from: State;
  write: Write;
  target: Name;
  /** The state it ends in, or a 404. */
  to: State | 404;
  /** Whether an activity is recorded. */
  recorded: boolean;
}

const ROWS: Row[] = (Object.keys(INSTALLATIONS) as Name[]).flatMap((target): Row[] => [
  { from: 'active', write: 'suspend', target, to: 'suspended', recorded: true },
  { from: 'suspended', write: 'suspend', target, to: 'suspended', recorded: false },
  { from: 'active', write: 'unsuspend', target, to: 'active', recorded: false },
  { from: 'suspended', write: 'unsuspend', target, to: 'active', recorded: true },
  { from: 'active', write: 'delete', target, to: 'gone', recorded: true },
  { from: 'suspended', write: 'delete', target, to: 'gone', recorded: true },
  { from: 'gone', write: 'suspend', target, to: 404, recorded: false },
  { from: 'gone', write: 'unsuspend', target, to: 404, recorded: false },
  { from: 'gone', write: 'delete', target, to: 404, recorded: false },
]);

const appOf = (name: Name) => INSTALLATIONS[name][0];
const accountOf = (name: Name) => INSTALLATIONS[name][1];
const REPOSITORIES: Record<Name, string[]> = { one: ['acme/widgets'], mine: ['mona/dots'], two: ['acme/widgets', 'acme/gadgets'] };

for (const row of ROWS) {
  test(`${row.target} (${appOf(row.target)} on ${accountOf(row.target)}) ${row.from}, ${row.write}: ${row.to}${row.recorded ? `, ${ACTIVITY[row.write]}` : ', no activity'}; the others unchanged`, async () => {
    if (row.from === 'suspended') await suspend(appOf(row.target), row.target);
    if (row.from === 'gone') await remove(appOf(row.target), row.target);
    const before = await states();
    const recordedBefore = (await activities()).length;
    clock.ms = Date.parse(T1);

    const done = WRITES[row.write](appOf(row.target), row.target);
    if (row.to === 404) {
      await assert.rejects(done, (error: unknown) => error instanceof ApiError && error.status === 404);
    } else {
      await done;
    }

    const after = await states();
    for (const other of Object.keys(INSTALLATIONS) as Name[]) {
      if (other !== row.target) assert.equal(after[other], before[other], `${other} is untouched`);
    }
    const expected = row.to === 404 ? before[row.target]
      : row.to === 'gone' ? 'gone'
      : !row.recorded ? before[row.target]
      : row.to === 'suspended' ? `suspended ${T1} ${T1}` : `active ${T1}`;
    assert.equal(after[row.target], expected);

    const recorded = (await activities()).slice(recordedBefore);
    if (!row.recorded) {
      assert.deepEqual(recorded, []);
      return;
    }
    assert.deepEqual(recorded, [{
      name: ACTIVITY[row.write],
      account: id[accountOf(row.target)],
      // The sender is the account when it is a user.
      actor: accountOf(row.target) === 'mona' ? id.mona : null,
      created: T1,
      installation: id[row.target],
      app: appOf(row.target),
      login: accountOf(row.target),
      // The installation as it was before the write.
      suspended: row.from === 'suspended' ? T0.replace(/\.\d+Z$/, 'Z') : null,
      repositories: REPOSITORIES[row.target],
    }]);
    // Its dispatch is queued with it.
    assert.equal(sent.length, (row.from === 'active' ? 0 : 1) + 1);
  });
}

// Another app's installation, or no installation: 404, nothing changed, nothing recorded.
const FOREIGN: [app: string, target: Name | number][] = [
  ['two', 'one'], ['two', 'mine'], ['one', 'two'], ['one', 0], ['one', -1], ['one', 1.5], ['one', 2 ** 53],
];
for (const [app, target] of FOREIGN) {
  for (const write of Object.keys(WRITES) as Write[]) {
    test(`app ${app} ${write}s installation ${target}: 404, nothing changes`, async () => {
      if (write === 'unsuspend') for (const name of Object.keys(INSTALLATIONS) as Name[]) await suspend(appOf(name), name);
      const before = await states();
      const recordedBefore = (await activities()).length;
      clock.ms = Date.parse(T1);
      await assert.rejects(WRITES[write](app, target), (error: unknown) => error instanceof ApiError && error.status === 404);
      assert.deepEqual(await states(), before);
      assert.equal((await activities()).length, recordedBefore);
    });
  }
}

test('unsuspended, an installation can be suspended again: a second suspend activity at the new time', async () => {
  await suspend('one', 'one');
  await unsuspend('one', 'one');
  clock.ms = Date.parse(T1);
  await suspend('one', 'one');
  assert.deepEqual((await activities()).map((a) => `${a.name} ${a.created}`), [`installation.suspend ${T0}`, `installation.unsuspend ${T0}`, `installation.suspend ${T1}`]);
  assert.equal((await states()).one, `suspended ${T1} ${T1}`);
});

test('deleteInstallation answers whether it was there: a second delete (another request\'s, since) finds none', async () => {
  assert.equal(await deleteInstallation(db.kysely, id.one!), true);
  assert.equal(await deleteInstallation(db.kysely, id.one!), false);
  assert.equal((await states()).two, `active ${T0}`);
});
