// The testing helper's migrated templates (src/db/template.ts) come only from a place that is the
// user's own: on SQLite a directory the user owns with mode 0700, on PostgreSQL a template database
// the connecting role owns. Another user of a shared CI host who plants a database where a template
// would be (the old `$TMPDIR/codehost-migrated-<hash>.db`, a directory of the right name made by
// them, a template database of the right name owned by another role) plants nothing: the helper
// rebuilds its own, and a user or a setting put there never reaches a server the helper starts.
import assert from 'node:assert/strict';
import { chmodSync, chownSync, copyFileSync, lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { startThrowawayPostgres, throwawayPostgresUnavailable, type ThrowawayPostgres } from '../helpers/throwaway-postgres.ts';
import { copyMigratedTemplate, migrationsHash, templatePath } from '../../src/db/template.ts';
import { startCodehost } from '../../src/testing-helper.ts';

const NOBODY = 65534;
const postgresUrl = process.env.DATABASE_URL;

/** Writes a migrated database at `path` holding a user `planted`: what another user would leave there. */
async function plant(path: string): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), 'codehost-plant-'));
  try {
    await copyMigratedTemplate(join(scratch, 'made.db'));
    const db = new DatabaseSync(join(scratch, 'made.db'));
    db.exec("INSERT INTO users (login, login_lower, type, site_admin, created_at, updated_at) VALUES ('planted', 'planted', 'User', 1, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')");
    db.close();
    copyFileSync(join(scratch, 'made.db'), path);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

describe('the SQLite template is taken only from a directory of the user\'s own', { skip: postgresUrl ? 'SQLite only' : false }, () => {
  const realTmp = process.env.TMPDIR;
  let tmp: string;
  before(() => {
    tmp = mkdtempSync(join(tmpdir(), 'codehost-shared-tmp-'));
    chmodSync(tmp, 0o1777);
    process.env.TMPDIR = tmp;
  });
  after(() => {
    if (realTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = realTmp;
    rmSync(tmp, { recursive: true, force: true });
  });

  test('the template lives in a directory the user owns, mode 0700, out of reach of others', async () => {
    await copyMigratedTemplate(join(mkdtempSync(join(tmp, 'x-')), 'copy.db'));
    const dir = join(templatePath(), '..');
    assert.notEqual(dir, tmp, 'not straight in the shared temporary directory');
    const stat = lstatSync(dir);
    assert.ok(stat.isDirectory() && !stat.isSymbolicLink());
    assert.equal(stat.uid, process.getuid!());
    assert.equal(stat.mode & 0o777, 0o700);
    assert.equal(lstatSync(templatePath()).mode & 0o077, 0, 'the template file is the user\'s alone');
    rmSync(dir, { recursive: true, force: true });
  });

  test('a database planted where the old helper looked, and a directory of the right name made by another user, are not used', async () => {
    await plant(join(tmp, `codehost-migrated-${migrationsHash()}.db`));
    // Another user makes the directory the helper would use, open to all, with a template inside.
    const dir = join(templatePath(), '..');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { mode: 0o777 });
    chmodSync(dir, 0o777);
    await plant(templatePath());
    chownSync(templatePath(), NOBODY, NOBODY);
    chownSync(dir, NOBODY, NOBODY);
    const codehost = await startCodehost();
    try {
      assert.equal((await fetch(`${codehost.apiUrl}/users/planted`)).status, 404, 'the planted user is not in the helper\'s world');
      assert.equal((await fetch(`${codehost.url}/readyz`)).status, 200);
    } finally {
      await codehost.stop();
    }
  });

  test('a planted file in a directory of the user\'s own but open to others is not used', async () => {
    rmSync(join(templatePath(), '..'), { recursive: true, force: true });
    const dir = join(templatePath(), '..');
    mkdirSync(dir, { mode: 0o700 });
    chmodSync(dir, 0o777);
    await plant(templatePath());
    const codehost = await startCodehost();
    try {
      assert.equal((await fetch(`${codehost.apiUrl}/users/planted`)).status, 404);
    } finally {
      await codehost.stop();
    }
  });

  test('a template file replaced by a symbolic link is not followed', async () => {
    rmSync(join(templatePath(), '..'), { recursive: true, force: true });
    await copyMigratedTemplate(join(mkdtempSync(join(tmp, 'y-')), 'copy.db'));
    const elsewhere = join(tmp, 'elsewhere.db');
    await plant(elsewhere);
    rmSync(templatePath());
    symlinkSync(elsewhere, templatePath());
    const codehost = await startCodehost();
    try {
      assert.equal((await fetch(`${codehost.apiUrl}/users/planted`)).status, 404);
    } finally {
      await codehost.stop();
    }
  });
});

describe('the PostgreSQL template is used only when the connecting role owns it', { skip: postgresUrl ? throwawayPostgresUnavailable() ?? false : 'PostgreSQL only' }, () => {
  // A throwaway server of its own: the shared one's templates serve the other test files meanwhile.
  let server: ThrowawayPostgres;
  const other = 'codehost_other_user';
  const sql = async (query: string, values: unknown[] = [], database = 'postgres') => {
    const url = new URL(server.databaseUrl);
    url.pathname = `/${database}`;
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    try {
      return (await client.query(query, values)).rows;
    } finally {
      await client.end();
    }
  };

  before(async () => {
    server = await startThrowawayPostgres();
  });
  after(() => server?.destroy());

  test('a template database of the helper\'s names, made by another role and open to copy, is not copied', async () => {
    // The helper's own world on this server, to copy the planted databases from.
    const first = await startCodehost({ databaseUrl: server.databaseUrl });
    await first.admin('POST', '/users', { login: 'planted' });
    const made = new URL(first.databaseUrl!).pathname.slice(1);
    const names = (await sql("SELECT datname FROM pg_database WHERE datname LIKE 'codehost_template_%'")).map((row) => row.datname as string);
    await sql(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [made]);
    await sql(`CREATE DATABASE planted TEMPLATE "${made}"`);
    await first.stop();
    // Another role takes every name the helper uses (and the one older helpers used), open to copy.
    await sql(`CREATE ROLE ${other} LOGIN CREATEDB`);
    for (const name of new Set([...names, `codehost_template_${migrationsHash()}`])) {
      await sql(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await sql(`CREATE DATABASE "${name}" TEMPLATE planted OWNER ${other} IS_TEMPLATE true`);
    }
    const codehost = await startCodehost({ databaseUrl: server.databaseUrl });
    try {
      assert.equal((await fetch(`${codehost.apiUrl}/users/planted`)).status, 404, 'the planted user is not in the helper\'s world');
    } finally {
      await codehost.stop();
    }
  });
});
