// Hostile input of issue 11, one test per class of 500 the fuzzer (test/clients/fuzz.test.ts) found: each
// request must get the platform's 4xx, never a 5xx, on both databases.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { appJwt, classicToken, createApp, fineGrainedToken, type TestApp } from '../helpers/credentials.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;

before(async () => {
  server = await startServer();
  for (const login of ['mona', 'hubot']) await server.admin('POST', '/users', { login });
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'], members: ['hubot'] });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
});
after(() => server.close());

/** Asserts a 4xx (and, when given, exactly that status). */
function assert4xx(response: { status: number; text: string }, status?: number, label = ''): void {
  assert.ok(response.status >= 400 && response.status < 500, `${label} answered ${response.status}: ${response.text}`);
  if (status !== undefined) assert.equal(response.status, status, `${label}: ${response.text}`);
}

describe('scope and permission names that are Object.prototype members', () => {
  const names = ['__proto__', 'toString', 'constructor', 'hasOwnProperty'];

  test('a classic token with such a scope is read like any unknown scope', async () => {
    for (const name of names) {
      const token = await classicToken(server, 'mona', ['read:user', name]);
      const user = await server.api('GET', '/user', { token });
      assert.equal(user.status, 200, `${name}: ${user.text}`);
      // An endpoint that needs a scope the token lacks refuses it with a 403, not a 500.
      const configurations = await server.api('GET', '/orgs/acme/code-security/configurations', { token });
      assert4xx(configurations, 403, name);
    }
  });

  test('a fine-grained token or an app with such a permission name', async () => {
    for (const name of names) {
      const token = await fineGrainedToken(server, 'mona', 'acme', JSON.parse(`{"metadata":"read","${name}":"write"}`));
      assert.equal((await server.api('GET', '/repos/acme/widgets', { token })).status, 200, name);
      assert4xx(await server.api('GET', '/orgs/acme/code-security/configurations', { token }), 403, name);
    }
    const app: TestApp = await createApp(server, 'proto-app', JSON.parse('{"metadata":"read","toString":"read","__proto__":"write"}'));
    const installation = await server.admin('POST', `/apps/${app.slug}/installations`, { account: 'acme', repositories: 'all' });
    const jwt = await appJwt(server, app);
    for (const permissions of [{}, JSON.parse('{"toString":"read"}'), JSON.parse('{"constructor":"read"}'), JSON.parse('{"__proto__":"read"}')]) {
      const minted = await server.api('POST', `/app/installations/${installation.id}/access_tokens`, { authorization: `Bearer ${jwt}`, body: { permissions } });
      assert.ok(minted.status === 201 || minted.status === 422, `${JSON.stringify(permissions)}: ${minted.status} ${minted.text}`);
      if (minted.status === 201) {
        assert.equal(Object.hasOwn(minted.body.permissions, 'constructor'), false);
        const read = await server.api('GET', '/repos/acme/widgets', { token: minted.body.token });
        assert.equal(read.status, 200, read.text);
      }
    }
  });
});

describe('ids beyond the largest row id, NUL bytes and huge pages', () => {
  test('a path id >= 2^31 (or 0) is a 404, like any id that names nothing', async () => {
    const token = await classicToken(server, 'mona', ['repo', 'notifications', 'admin:org', 'user']);
    for (const id of ['0', '2147483648', '123456789012345', '99999999999999999999']) {
      for (const path of [`/notifications/threads/${id}`, `/orgs/acme/code-security/configurations/${id}`, `/user/migrations/${id}`, `/orgs/acme/issue-types/${id}`]) {
        const method = path.includes('issue-types') ? 'DELETE' : 'GET';
        assert4xx(await server.api(method, path, { token }), 404, path);
      }
    }
    const app = await createApp(server, 'ids-app', { metadata: 'read' });
    const jwt = await appJwt(server, app);
    for (const path of ['/app/installations/0', '/app/installations/2147483648', '/app/hook/deliveries/2147483648']) {
      assert4xx(await server.api('GET', path, { authorization: `Bearer ${jwt}` }), 404, path);
    }
    assert4xx(await server.api('POST', '/app/installations/2147483648/access_tokens', { authorization: `Bearer ${jwt}`, body: {} }), 404);
  });

  test('a 15-digit delivery cursor is an invalid cursor (422)', async () => {
    const app = await createApp(server, 'cursor-app', { metadata: 'read' });
    const jwt = await appJwt(server, app);
    for (const position of ['before:999999999999999', 'after:123456789012345', 'before:2147483648']) {
      const cursor = Buffer.from(`v1:${position}`).toString('base64url');
      assert4xx(await server.api('GET', `/app/hook/deliveries?cursor=${cursor}`, { authorization: `Bearer ${jwt}` }), 422, position);
    }
  });

  test('?page=1e20 (and other huge pages) answers an empty page', async () => {
    const token = await classicToken(server, 'mona', ['repo', 'notifications', 'read:org', 'user']);
    for (const path of ['/user/migrations', '/orgs/acme/repos', '/users/mona/orgs', '/notifications', '/repos/acme/widgets/subscribers']) {
      for (const page of ['1e20', '2147483648', '9007199254740993']) {
        const response = await server.api('GET', `${path}?page=${page}&per_page=100`, { token });
        assert.equal(response.status, 200, `${path}?page=${page}: ${response.text}`);
        assert.deepEqual(response.body, []);
      }
    }
  });

  test('a NUL byte in a path segment is a 404, in a query or body value a 422', async () => {
    const token = await classicToken(server, 'mona', ['repo', 'admin:org', 'user']);
    for (const path of ['/users/mona%00', '/orgs/acme%00', '/repos/acme/widgets%00', '/repos/acme%00x/widgets', '/orgs/acme%00/issue-types']) {
      assert4xx(await server.api('GET', path, { token }), 404, path);
    }
    assert4xx(await server.api('GET', '/orgs/acme/code-security/configurations?before=a%00b', { token }), 422);
    const body = await server.api('POST', '/orgs/acme/code-security/configurations', { token, body: { name: 'nul\u0000name' } });
    assert4xx(body, 422, 'body');
    assert.equal(body.body.errors[0].field, 'name');
    assert4xx(await server.api('POST', '/orgs/acme/issue-types', { token, body: { name: 'Bug', description: 'x\u0000', is_enabled: true } }), 422, 'issue type');
    assert4xx(await server.api('POST', '/orgs/acme/issue-types', { token, body: JSON.parse('{"name":"Bug","is_enabled":true,"\\u0000":1}') }), 422, 'key');
  });
});

describe('forged credentials', () => {
  const unsigned = (payload: object) =>
    `Bearer ${Buffer.from(JSON.stringify({ alg: 'RS256', typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.c2ln`;

  test("an app JWT whose iss is a huge number, holds a NUL, or is not a string or integer is a 401", async () => {
    const app = await createApp(server, 'jwt-app', { metadata: 'read' });
    const now = Math.floor(Date.parse((await server.admin('GET', '/clock')).now) / 1000);
    for (const iss of [1e21, 2 ** 31, 123456789012345, '99999999999999999999', '1\u0000', `${app.client_id}\u0000`, [app.id], [String(app.id)], { id: app.id }, 1.5, true]) {
      const response = await server.api('GET', '/app', { authorization: unsigned({ iss, iat: now - 30, exp: now + 300 }) });
      assert4xx(response, 401, JSON.stringify(iss));
    }
  });

  test('an array iss is refused even when the JWT is signed with the app key', async () => {
    const app = await createApp(server, 'array-iss-app', { metadata: 'read' });
    const { SignJWT, importPKCS8 } = await import('jose');
    const { createPrivateKey } = await import('node:crypto');
    const key = await importPKCS8(createPrivateKey(app.private_key).export({ type: 'pkcs8', format: 'pem' }).toString(), 'RS256');
    const now = Math.floor(Date.parse((await server.admin('GET', '/clock')).now) / 1000);
    const signed = await new SignJWT({ iss: [String(app.id)] } as never).setProtectedHeader({ alg: 'RS256' }).setIssuedAt(now - 30).setExpirationTime(now + 300).sign(key);
    assert4xx(await server.api('GET', '/app', { authorization: `Bearer ${signed}` }), 401);
    assert.equal((await server.api('GET', '/app', { authorization: `Bearer ${await appJwt(server, app)}` })).status, 200);
  });

  test('a NUL in a Basic-auth client id is a 404 (unknown client), not a 500', async () => {
    const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
    for (const user of ['\u0000', 'Iv1.x\u0000', '__proto__']) {
      const response = await server.api('POST', `/applications/${encodeURIComponent('Iv1.x')}/token`, { authorization: basic(user, 'secret'), body: { access_token: 'x' } });
      assert4xx(response, undefined, JSON.stringify(user));
      assert.ok([401, 404].includes(response.status), response.text);
    }
  });
});

describe('admin API: repository and branch names', () => {
  test('branch names git refuses (or reads as an option) are a 422 and leave nothing behind', async () => {
    const { readdirSync, existsSync } = await import('node:fs');
    const { join } = await import('node:path');
    const gitDir = join(server.server.ctx.config.dataDir, 'git');
    const before = existsSync(gitDir) ? readdirSync(gitDir).length : 0;
    const names = ['-x', '--upload-pack=x', 'a..b', 'a b', 'a.lock', 'a/.b', '.a', 'a/', '/a', 'a//b', 'a.', 'HEAD', 'a~1', 'a^', 'a:b', 'a@{1}', 'a\\b', 'x\u0000'];
    for (const [index, default_branch] of names.entries()) {
      const response = await server.adminRaw('POST', '/repos', { owner: 'acme', name: `branchy-${index}`, default_branch, init_git: true });
      assert4xx(response, 422, JSON.stringify(default_branch));
      assert.ok(!/\/tmp|\/work|codehost-test|\.git\b/.test(response.text), `no path in the message: ${response.text}`);
      assert.equal((await server.api('GET', `/repos/acme/branchy-${index}`)).status, 404);
    }
    assert.equal(existsSync(gitDir) ? readdirSync(gitDir).length : 0, before, 'no orphan git directory');
    // Names git accepts still work.
    for (const default_branch of ['main', 'release/1.x', 'feature-a_b.c']) {
      const created = await server.adminRaw('POST', '/repos', { owner: 'acme', name: `ok-${default_branch.replace(/\W/g, '')}`, default_branch, init_git: true });
      assert.equal(created.status, 201, created.text);
    }
  });

  test("repository names '.' and '..' are refused", async () => {
    for (const name of ['.', '..']) assert4xx(await server.adminRaw('POST', '/repos', { owner: 'acme', name }), 422, name);
    assert.equal((await server.adminRaw('POST', '/repos', { owner: 'acme', name: '.dotfiles' })).status, 201);
  });
});

describe('backstop: a value the database refuses is a 422, never a 500', () => {
  /** A bare Fastify app with the platform's conventions, whose routes run statements that fail on a value. */
  async function conventionsApp() {
    const Fastify = (await import('fastify')).default;
    const { installConventions } = await import('../../src/http/conventions.ts');
    const { sql } = await import('kysely');
    const ctx = server.server.ctx;
    const db = ctx.db.kysely;
    const app = Fastify();
    installConventions(app, ctx);
    const postgres = ctx.db.dialect === 'postgres';
    const statements: Record<string, () => Promise<unknown>> = {
      duplicate: async () => db.insertInto('users').values({ ...(await db.selectFrom('users').selectAll().where('login', '=', 'mona').executeTakeFirstOrThrow()), id: undefined } as never).execute(),
      not_null: () => db.insertInto('users').values({ login: null } as never).execute(),
      out_of_range: () => (postgres ? sql`select cast(${'2147483648'} as integer)` : sql`insert into fuzz_ints (id) values (${'abc'})`).execute(db),
      nul: () => (postgres ? sql`select ${'a\u0000b'}::text` : sql`insert into fuzz_ints (id) values (${'x'})`).execute(db),
      malformed: () => (postgres ? sql`select cast(${'1e'} as integer)` : sql`insert into fuzz_ints (id) values (${'1.5'})`).execute(db),
    };
    if (!postgres) await sql`create temp table if not exists fuzz_ints (id integer primary key)`.execute(db);
    app.get('/statement/:name', async (request) => statements[(request.params as { name: string }).name]!());
    await app.ready();
    return app;
  }

  test('unique, not null, out of range, NUL and malformed values', async () => {
    const app = await conventionsApp();
    try {
      for (const name of ['duplicate', 'not_null', 'out_of_range', 'nul', 'malformed']) {
        const response = await app.inject({ method: 'GET', url: `/statement/${name}` });
        assert.equal(response.statusCode, 422, `${name}: ${response.body}`);
        const body = JSON.parse(response.body);
        assert.equal(body.status, '422');
        assert.ok(!/select|insert|users|fuzz_ints|\/tmp|2147483648|\bat\b/i.test(response.body), `${name}: no SQL, value or stack: ${response.body}`);
      }
    } finally {
      await app.close();
    }
  });
});

describe('URLs the router cannot take', () => {
  test("malformed percent-encoding and over-long path values answer the platform's error body", async () => {
    for (const [path, status] of [['/repos/%c0%80/x', 400], ['/users/%ff', 400], ['/repos/acme/%e2%82', 400], [`/users/${'x'.repeat(300)}`, 414]] as const) {
      const response = await server.api('GET', path);
      assert.equal(response.status, status, `${path}: ${response.text}`);
      assert.equal(response.body.status, String(status), response.text);
      assert.equal(typeof response.body.documentation_url, 'string', response.text);
      assert.equal(response.body.code, undefined, response.text);
    }
  });
});
