// Storage that cannot grow without bound (issue 21): a user keeps at most so many finished archives
// (count and bytes; one more export is a 422 until one is deleted), expired tokens are swept (an app
// can mint 5,000 installation tokens an hour, each good for one), and the data directory and what
// codehost writes in it are readable by its own user only.
import assert from 'node:assert/strict';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { appJwt, classicToken, createApp } from '../helpers/credentials.ts';
import { createTestDatabase, engine } from '../helpers/database.ts';
import { startServer, type Response, type TestServer } from '../helpers/server.ts';

const servers: TestServer[] = [];
after(() => Promise.all(servers.map((server) => server.close())));

/** A server with these settings, closed when the file's tests are done. */
async function serverWith(env: Record<string, string>): Promise<TestServer> {
  const server = await startServer(env);
  servers.push(server);
  return server;
}

async function exporter(server: TestServer): Promise<(repository?: string) => Promise<Response>> {
  await server.admin('POST', '/users', { login: 'alice' });
  await server.admin('POST', '/repos', { owner: 'alice', name: 'alpha' });
  const token = await classicToken(server, 'alice', ['repo']);
  return (repository = 'alpha') => server.api('POST', '/user/migrations', { token, body: { repositories: [repository] } });
}

describe('finished archives kept per user', () => {
  test('beyond the count a start is a 422 that says so; deleting an archive makes room', async () => {
    const server = await serverWith({ CODEHOST_MIGRATION_ARCHIVES_PER_USER: '2' });
    const start = await exporter(server);
    const token = await classicToken(server, 'alice', ['repo']);
    const ids: number[] = [];
    for (let i = 0; i < 2; i++) {
      const started = await start();
      assert.equal(started.status, 201, started.text);
      ids.push(started.body.id);
      await server.drain();
    }
    const refused = await start();
    assert.equal(refused.status, 422, refused.text);
    assert.match(refused.body.message, /at most 2 archives/);
    assert.equal(refused.body.errors[0].resource, 'Migration');
    assert.equal((await server.api('DELETE', `/user/migrations/${ids[0]}/archive`, { token })).status, 204);
    assert.equal((await start()).status, 201, 'a deleted archive no longer counts');
  });

  test('beyond the bytes a start is a 422 too', async () => {
    const server = await serverWith({ CODEHOST_MIGRATION_ARCHIVE_BYTES_PER_USER: '100' });
    const start = await exporter(server);
    assert.equal((await start()).status, 201);
    await server.drain();
    const refused = await start();
    assert.equal(refused.status, 422, refused.text);
    assert.match(refused.body.message, /100 bytes of archives/);
  });

  test('the settings are checked at start', async () => {
    const { loadConfig } = await import('../../src/config.ts');
    const config = loadConfig({});
    assert.equal(config.migrations.archivesPerUser, 20);
    assert.equal(config.migrations.archiveBytesPerUser, 10 * 1024 ** 3);
    assert.throws(() => loadConfig({ CODEHOST_MIGRATION_ARCHIVES_PER_USER: '0' }), /CODEHOST_MIGRATION_ARCHIVES_PER_USER/);
    assert.throws(() => loadConfig({ CODEHOST_MIGRATION_ARCHIVE_BYTES_PER_USER: 'lots' }), /CODEHOST_MIGRATION_ARCHIVE_BYTES_PER_USER/);
  });
});

describe('expired tokens', () => {
  test('are swept: expired installation and personal tokens go, live ones stay', async () => {
    const server = await serverWith({});
    await server.admin('POST', '/users', { login: 'mona' });
    await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'] });
    const app = await createApp(server, 'minter', { metadata: 'read' });
    const installation = await server.admin('POST', '/apps/minter/installations', { account: 'acme', repositories: 'all' });
    const jwt = await appJwt(server, app);
    for (let i = 0; i < 5; i++) {
      assert.equal((await server.api('POST', `/app/installations/${installation.id}/access_tokens`, { token: jwt, body: {} })).status, 201);
    }
    const now = Date.parse((await server.admin('GET', '/clock')).now);
    await server.admin('POST', '/tokens', { login: 'mona', kind: 'classic', scopes: [], expires_at: new Date(now + 30 * 60_000).toISOString() });
    const lasting = await classicToken(server, 'mona', ['read:user']);
    const db = server.server.ctx.db.kysely;
    const count = async () => Number((await db.selectFrom('tokens').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    const before = await count();
    await server.drain();
    assert.equal(await count(), before, 'nothing expired yet');
    await server.advance(2 * 3600);
    await server.drain();
    assert.equal(await count(), before - 6, 'the five installation tokens and the expired classic token are gone');
    assert.equal((await server.api('GET', '/user', { token: lasting })).status, 200);
  });
});

describe('file modes', () => {
  test('the data directory is 0700 and what codehost writes in it is its user\'s only', { skip: process.platform === 'win32' }, async () => {
    const database = await createTestDatabase();
    const dataDir = join(database.dataDir, 'fresh');
    const server = await startServer({ CODEHOST_DATA_DIR: dataDir }, { database });
    try {
      await server.admin('POST', '/users', { login: 'alice' });
      await server.admin('POST', '/repos', { owner: 'alice', name: 'alpha', init_git: true });
      const token = await classicToken(server, 'alice', ['repo']);
      assert.equal((await server.api('POST', '/user/migrations', { token, body: { repositories: ['alpha'] } })).status, 201);
      await server.drain();
      assert.equal(statSync(dataDir).mode & 0o777, 0o700);
      const loose: string[] = [];
      for (const name of readdirSync(dataDir, { recursive: true, encoding: 'utf8' })) {
        // Every file is still there: the drain returns once the export thread has written its
        // compile cache (test/areas/user-migrations/user-migrations-threads.test.ts).
        const mode = statSync(join(dataDir, name)).mode;
        if (mode & 0o077) loose.push(`${name} ${(mode & 0o777).toString(8)}`);
      }
      assert.deepEqual(loose, []);
      const names = readdirSync(dataDir, { recursive: true, encoding: 'utf8' });
      if (engine === 'sqlite') assert.ok(names.includes('codehost.db'), names.join(' '));
      assert.ok(names.some((name) => name.startsWith('migration-archives')), names.join(' '));
    } finally {
      await server.close();
      await database.drop();
    }
  });
});
