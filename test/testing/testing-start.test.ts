// What makes the testing helper start quickly keeps its behaviour: on SQLite, a copy of the migrated
// template (src/db/template.ts) is a fully migrated database; schemas compiled on first use still
// refuse a bad request with the platform's status and body and still serialize answers by their
// schema; a database missing a migration the code knows still goes through Kysely's Migrator (one
// that has only a newer release's migrations besides is served as it is).
// On PostgreSQL each start makes a database of its own on the server it is given, a copy of a
// migrated template database, and stop drops it.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/index.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { migrations } from '../../src/db/migrations/index.ts';
import pg from 'pg';
import { copyMigratedTemplate, templateDatabaseName, templatePath } from '../../src/db/template.ts';
import { startCodehost, type Codehost } from '../../src/testing-helper.ts';

describe('the testing helper, started quickly', () => {
  let codehost: Codehost;
  before(async () => {
    codehost = await startCodehost({ databaseUrl: process.env.DATABASE_URL || undefined });
  });
  after(() => codehost.stop());

  test('schemas compiled on first use: a bad body is 422, a bad path id 404, an answer serialized by its schema', async () => {
    const bad = await fetch(`${codehost.url}/_admin/users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${codehost.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ login: 5 }),
    });
    assert.equal(bad.status, 422);
    const body = (await bad.json()) as any;
    assert.equal(body.message, 'Validation Failed');
    assert.equal(body.errors[0].field, 'login');
    // The same route again, now compiled: the same answer.
    const again = await fetch(`${codehost.url}/_admin/users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${codehost.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({}),
    });
    assert.equal(again.status, 422);
    assert.equal(((await again.json()) as any).errors[0].code, 'missing_field');

    await codehost.admin('POST', '/users', { login: 'mona' });
    const user = await fetch(`${codehost.apiUrl}/users/mona`);
    assert.equal(user.status, 200);
    const json = (await user.json()) as any;
    assert.equal(json.login, 'mona');
    assert.equal(json.type, 'User');
    const issue = await fetch(`${codehost.apiUrl}/repositories/0`);
    assert.equal(issue.status, 404);
    assert.equal(((await issue.json()) as any).message, 'Not Found');
  });

  test('ready: the database is migrated', async () => {
    const ready = await fetch(`${codehost.url}/readyz`);
    assert.equal(ready.status, 200, await ready.text());
  });
});

describe('the migrated SQLite template', () => {
  const dir = mkdtempSync(join(tmpdir(), 'codehost-template-test-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('a copy has every migration applied: nothing left for the Migrator', async () => {
    await copyMigratedTemplate(join(dir, 'copy.db'));
    assert.ok(existsSync(templatePath()));
    const db = openDatabase({ databaseUrl: null, sqlitePath: join(dir, 'copy.db') });
    try {
      assert.deepEqual(await migrateToLatest(db), []);
      // No setting (no secret key) comes with the template.
      assert.deepEqual((await sql`SELECT * FROM settings`.execute(db.kysely)).rows, []);
    } finally {
      await db.close();
    }
  });

  test('a database that recorded a migration this code does not know: served as it is when every one it knows is applied (a newer release migrated it), refused by the Migrator when one it knows is missing', async () => {
    await copyMigratedTemplate(join(dir, 'newer.db'));
    const db = openDatabase({ databaseUrl: null, sqlitePath: join(dir, 'newer.db') });
    try {
      await sql`INSERT INTO kysely_migration (name, timestamp) VALUES ('9999_from_the_future', '2030-01-01T00:00:00Z')`.execute(db.kysely);
      assert.deepEqual(await migrateToLatest(db), [], 'a newer release\'s migration: nothing to apply');
      const last = Object.keys(migrations).at(-1)!;
      await sql`DELETE FROM kysely_migration WHERE name = ${last}`.execute(db.kysely);
      await assert.rejects(migrateToLatest(db), /corrupted migrations|9999_from_the_future/);
    } finally {
      await db.close();
    }
  });
});

describe('the testing helper on PostgreSQL', { skip: !process.env.DATABASE_URL && 'PostgreSQL only (DATABASE_URL)' }, () => {
  const serverUrl = process.env.DATABASE_URL!;
  const databases = async () => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    try {
      return new Set((await client.query<{ datname: string }>('SELECT datname FROM pg_database')).rows.map((row) => row.datname));
    } finally {
      await client.end();
    }
  };

  test('each start gets a fresh database of its own, copied from the migrated template; stop drops it', async () => {
    const [one, two] = await Promise.all([startCodehost({ databaseUrl: serverUrl }), startCodehost({ databaseUrl: serverUrl })]);
    const names = [one, two].map((codehost) => new URL(codehost.databaseUrl!).pathname.slice(1));
    try {
      assert.notEqual(names[0], names[1]);
      const present = await databases();
      for (const name of names) assert.ok(present.has(name), name);
      assert.ok(present.has(templateDatabaseName(decodeURIComponent(new URL(serverUrl!).username) || 'postgres')));
      await one.admin('POST', '/users', { login: 'mona' });
      assert.equal((await fetch(`${one.apiUrl}/users/mona`)).status, 200);
      assert.equal((await fetch(`${two.apiUrl}/users/mona`)).status, 404);
      // Migrated, with the job queue: a demo reset loads, and its activity is delivered.
      await two.reset('demo');
      await two.drain();
      assert.equal((await fetch(`${two.apiUrl}/repos/acme/widgets`)).status, 200);
      // The copy's secret key is its own: none came with the template.
      const keys = await Promise.all([one, two].map(async (codehost) => {
        const own = new pg.Client({ connectionString: codehost.databaseUrl! });
        await own.connect();
        try {
          return (await own.query("SELECT value FROM settings WHERE key = 'secret_key'")).rows[0]?.value;
        } finally {
          await own.end();
        }
      }));
      assert.equal(keys.length, 2);
      assert.ok(keys[0] && keys[1] && keys[0] !== keys[1]);
    } finally {
      await Promise.all([one.stop(), two.stop()]);
    }
    const after = await databases();
    for (const name of names) assert.ok(!after.has(name), `${name} dropped`);
    // A new start is empty again.
    const three = await startCodehost({ databaseUrl: serverUrl });
    try {
      assert.equal((await fetch(`${three.apiUrl}/users/mona`)).status, 404);
    } finally {
      await three.stop();
    }
  });
});
