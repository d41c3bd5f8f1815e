// Code security on a transfer (CodeSecurityService onTransferred, in the move's transaction, the row
// already moved), on a real migrated database (SQLite, or PostgreSQL when DATABASE_URL is set), no
// server. The old owner acme's configuration holds the moving repository and its neighbour, each
// with a license seat and a paid feature on. A row per destination (an organization with its own
// default, one whose enterprise has one, one with neither, a user) and the moving repository's
// visibility and seat: the attachment it is left with (the new owner's default, attaching, its apply
// job queued) or none, its seat released and paid features off — the neighbour untouched.
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/database.ts';
import { openDatabase, type Db } from '../../db/index.ts';
import { migrateToLatest } from '../../db/migrate.ts';
import { Clock } from '../../platform/clock.ts';
import type { Context } from '../../platform/context.ts';
import { CodeSecurityService } from './service.ts';

const NOW = '2026-06-01T12:00:00.000Z';
/** Paid (secret scanning, code security) and free (dependency graph) features, as a repository keeps them. */
const SETTINGS = '{"secret_scanning":"enabled","code_security":"disabled","dependency_graph":"enabled","not_a_value":"not_set"}';
const WITHOUT_PAID = { secret_scanning: 'disabled', code_security: 'disabled', dependency_graph: 'enabled' };
const KEPT = { secret_scanning: 'enabled', code_security: 'disabled', dependency_graph: 'enabled', not_a_value: 'not_set' };

let testDatabase: TestDatabase;
let db: Db;
let ctx: Context;
const queued: unknown[] = [];
const id: Record<string, number> = {};
const names = new Map<number, string>();

before(async () => {
  testDatabase = await createTestDatabase();
  db = openDatabase({ databaseUrl: testDatabase.databaseUrl, sqlitePath: `${testDatabase.dataDir}/codehost.db` });
  await migrateToLatest(db);
  ctx = { clock: new Clock(), db, queue: { send: async (_name: string, data: unknown) => { queued.push(data); return 'job'; } } } as unknown as Context;
  const k = db.kysely;
  id.big = (await k.insertInto('enterprises').values({ slug: 'big', slug_lower: 'big', name: 'big', created_at: NOW, updated_at: NOW } as never).returning('id').executeTakeFirstOrThrow()).id;
  // acme and beta in the enterprise, gamma too, delta in none.
  const ORGS = { acme: id.big, beta: id.big, gamma: id.big, delta: null };
  for (const login of ['mona', ...Object.keys(ORGS)]) {
    id[login] = (await k.insertInto('users').values({ login, login_lower: login, type: login === 'mona' ? 'User' : 'Organization', site_admin: 0, created_at: NOW, updated_at: NOW } as never).returning('id').executeTakeFirstOrThrow()).id;
  }
  for (const [org, enterprise] of Object.entries(ORGS)) await k.insertInto('organizations').values({ id: id[org]!, enterprise_id: enterprise } as never).execute();
  const configuration = async (name: string, owner: 'organization' | 'enterprise', ownerId: number) => {
    id[name] = (await k.insertInto('code_security_configurations').values({
      target_type: owner, org_id: owner === 'organization' ? ownerId : null, enterprise_id: owner === 'enterprise' ? ownerId : null, name, name_lower: name, description: name, settings: '{}', enforcement: 'enforced', created_at: NOW, updated_at: NOW,
    } as never).returning('id').executeTakeFirstOrThrow()).id;
    names.set(id[name]!, name);
  };
  await configuration('acme-conf', 'organization', id.acme!);
  await configuration('beta-private', 'organization', id.beta!);
  await configuration('beta-public', 'organization', id.beta!);
  await configuration('big-private', 'enterprise', id.big!);
  // beta's own defaults win over its enterprise's; gamma has only the enterprise's (for private ones).
  // And a row naming mona's id as an organization's: a user is given no default whatever rows name it.
  const defaults = [['organization', id.mona, 'private_and_internal', 'beta-private'], ['organization', id.beta, 'private_and_internal', 'beta-private'], ['organization', id.beta, 'public', 'beta-public'], ['enterprise', id.big, 'private_and_internal', 'big-private']] as const;
  await k.insertInto('code_security_defaults').values(defaults.map(([owner_type, owner_id, repository_type, name]) => ({ owner_type, owner_id, repository_type, configuration_id: id[name]! })) as never).execute();
  for (const name of ['moving', 'neighbour']) {
    id[name] = (await k.insertInto('repositories').values({ owner_id: id.acme!, name, name_lower: name, visibility: 'private', created_at: NOW, updated_at: NOW } as never).returning('id').executeTakeFirstOrThrow()).id;
  }
});

after(async () => {
  await db?.close();
  await testDatabase?.drop();
});

/** Both repositories in acme's configuration, each with a seat and the settings; moving owned by acme again. */
beforeEach(async () => {
  const k = db.kysely;
  queued.length = 0;
  await k.deleteFrom('code_security_attachments').execute();
  await k.deleteFrom('code_security_license_seats').execute();
  for (const name of ['moving', 'neighbour']) {
    await k.updateTable('repositories').set({ owner_id: id.acme!, visibility: 'private', security_and_analysis: SETTINGS } as never).where('id', '=', id[name]!).execute();
    await k.insertInto('code_security_attachments').values({ repository_id: id[name]!, configuration_id: id['acme-conf']!, status: 'attached', created_at: NOW, updated_at: NOW } as never).execute();
    await k.insertInto('code_security_license_seats').values({ repository_id: id[name]!, owner_type: 'organization', owner_id: id.acme!, created_at: NOW } as never).execute();
  }
});

async function stateOf(name: 'moving' | 'neighbour') {
  const k = db.kysely;
  const attachment = await k.selectFrom('code_security_attachments').selectAll().where('repository_id', '=', id[name]!).executeTakeFirst();
  const seat = await k.selectFrom('code_security_license_seats').selectAll().where('repository_id', '=', id[name]!).executeTakeFirst();
  const repository = await k.selectFrom('repositories').select('security_and_analysis').where('id', '=', id[name]!).executeTakeFirstOrThrow();
  return {
    attachment: attachment ? `${names.get(attachment.configuration_id)} ${attachment.status}` : null,
    seat: seat ? `${seat.owner_type} ${seat.owner_id === id.acme ? 'acme' : seat.owner_id}` : null,
    settings: JSON.parse(repository.security_and_analysis) as Record<string, string>,
  };
}

interface Row {
  to: string;
  visibility?: 'public' | 'private' | 'internal';
  /** The moving repository holds no seat (its settings hold no paid feature it pays for). */
  seatless?: boolean;
  /** The configuration it is left attaching to, or none. */
  attaches: string | null;
}

const ROWS: Row[] = [
  { to: 'beta', attaches: 'beta-private' },
  { to: 'beta', visibility: 'internal', attaches: 'beta-private' },
  { to: 'beta', visibility: 'public', attaches: 'beta-public' },
  { to: 'gamma', attaches: 'big-private' },
  { to: 'gamma', visibility: 'public', attaches: null },
  { to: 'delta', attaches: null },
  { to: 'mona', attaches: null },
  { to: 'beta', seatless: true, attaches: 'beta-private' },
  { to: 'mona', seatless: true, attaches: null },
];

for (const row of ROWS) {
  test(`transferred to ${row.to}${row.visibility ? ` (${row.visibility})` : ''}${row.seatless ? ' without a seat' : ''}: ${row.attaches ?? 'no configuration'}; the neighbour untouched`, async () => {
    const k = db.kysely;
    const neighbour = await stateOf('neighbour');
    if (row.seatless) await k.deleteFrom('code_security_license_seats').where('repository_id', '=', id.moving!).execute();
    await k.updateTable('repositories').set({ owner_id: id[row.to]!, visibility: row.visibility ?? 'private' } as never).where('id', '=', id.moving!).execute();
    await k.transaction().execute((trx) => new CodeSecurityService(ctx).onTransferred(trx, id.moving!));
    assert.deepEqual(await stateOf('moving'), {
      attachment: row.attaches && `${row.attaches} attaching`,
      seat: null,
      // Its seat's paid features go with the seat; without one, its settings stay as they were.
      settings: row.seatless ? KEPT : WITHOUT_PAID,
    });
    assert.deepEqual(queued, row.attaches ? [{ configurationId: id[row.attaches] }] : []);
    assert.deepEqual(await stateOf('neighbour'), neighbour);
  });
}

test('a repository that is not there (deleted since): nothing attached, nothing queued', async () => {
  await db.kysely.transaction().execute((trx) => new CodeSecurityService(ctx).onTransferred(trx, 2 ** 31 - 1));
  assert.deepEqual(queued, []);
  assert.equal((await stateOf('moving')).attachment, 'acme-conf attached');
});
