// App token management end to end: Basic authentication with the app's client id and secret,
// check / reset / delete token / delete grant, scoped tokens and installation tokens; driven by
// @octokit/core as a real client where it can express the call.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Octokit } from '@octokit/core';
import { SignJWT, importPKCS8 } from 'jose';
import { createPrivateKey } from 'node:crypto';
import { startServer, type TestServer } from '../../helpers/server.ts';

let server: TestServer;
let app: { id: number; client_id: string; client_secret: string; private_key: string };
let other: { id: number; client_id: string; client_secret: string };

const basic = (clientId: string, secret: string) => `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`;

/** The server's clock (the test clock moves), in epoch seconds. */
async function serverNow(): Promise<number> {
  return Math.floor(Date.parse((await server.admin('GET', '/clock')).now) / 1000);
}

async function appJwt(privateKeyPem: string, claims: { iss?: string | number; iat?: number; exp?: number } = {}, alg = 'RS256') {
  const now = await serverNow();
  const pkcs8 = createPrivateKey(privateKeyPem).export({ type: 'pkcs8', format: 'pem' }).toString();
  const key = await importPKCS8(pkcs8, alg);
  return new SignJWT({}).setProtectedHeader({ alg }).setIssuer(String(claims.iss ?? app.id)).setIssuedAt(claims.iat ?? now - 30).setExpirationTime(claims.exp ?? now + 540).sign(key);
}

async function authorize(login: string, options: Record<string, unknown> = {}) {
  return server.admin('POST', '/apps/token-app/authorizations', { login, scopes: ['repo', 'read:user'], ...options });
}

before(async () => {
  server = await startServer();
  await server.admin('POST', '/users', { login: 'mona' });
  await server.admin('POST', '/users', { login: 'hubot' });
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'] });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'gadgets', visibility: 'private' });
  app = await server.admin('POST', '/apps', { slug: 'token-app', permissions: { issues: 'write', metadata: 'read' } });
  other = await server.admin('POST', '/apps', { slug: 'other-app' });
  await server.admin('POST', '/apps/token-app/installations', { account: 'acme', repositories: 'all' });
});
after(() => server.close());

describe('check a token', () => {
  test('answers the app authorization through @octokit/core', async () => {
    const { token } = await authorize('mona');
    const octokit = new Octokit({ baseUrl: server.apiUrl, auth: undefined, request: { fetch } });
    const response = await octokit.request('POST /applications/{client_id}/token', {
      client_id: app.client_id,
      access_token: token,
      headers: { authorization: basic(app.client_id, app.client_secret), 'x-vendor-api-version': '2022-11-28' },
    });
    assert.equal(response.status, 200);
    const body = response.data as Record<string, any>;
    assert.equal(body.token, token);
    assert.equal(body.token_last_eight, token.slice(-8));
    assert.match(body.hashed_token, /^[A-Za-z0-9+/]{43}=$/);
    assert.deepEqual(body.scopes, ['repo', 'read:user']);
    assert.equal(body.app.client_id, app.client_id);
    assert.equal(body.user.login, 'mona');
    assert.match(body.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    assert.deepEqual(Object.keys(body).sort(), [
      'app', 'created_at', 'expires_at', 'fingerprint', 'hashed_token', 'id', 'installation', 'note', 'note_url', 'scopes', 'token',
      'token_last_eight', 'updated_at', 'url', 'user',
    ]);
  });

  test('an unknown, malformed or foreign token is a 404', async () => {
    const foreign = await server.admin('POST', '/tokens', { login: 'mona', kind: 'classic', scopes: ['repo'] });
    for (const accessToken of ['cho_unknown', 'x', foreign.token]) {
      const response = await server.api('POST', `/applications/${app.client_id}/token`, {
        authorization: basic(app.client_id, app.client_secret),
        body: { access_token: accessToken },
      });
      assert.equal(response.status, 404, accessToken);
      assert.equal(response.body.message, 'Not Found');
    }
  });

  test('a token of another app is a 404', async () => {
    const { token } = await server.admin('POST', '/apps/other-app/authorizations', { login: 'mona' });
    const response = await server.api('POST', `/applications/${app.client_id}/token`, {
      authorization: basic(app.client_id, app.client_secret),
      body: { access_token: token },
    });
    assert.equal(response.status, 404);
  });

  test('an expired token is a 404', async () => {
    const { token } = await authorize('hubot', { expires_at: new Date(Date.now() + 3600_000).toISOString() });
    const ok = await server.api('POST', `/applications/${app.client_id}/token`, { authorization: basic(app.client_id, app.client_secret), body: { access_token: token } });
    assert.equal(ok.status, 200);
    assert.ok(ok.body.expires_at);
    await server.advance(7200);
    const expired = await server.api('POST', `/applications/${app.client_id}/token`, { authorization: basic(app.client_id, app.client_secret), body: { access_token: token } });
    assert.equal(expired.status, 404);
  });

  test('a missing or empty access_token is a 422 with errors', async () => {
    for (const body of [{}, { access_token: '' }, { access_token: 5 }, undefined]) {
      const response = await server.api('POST', `/applications/${app.client_id}/token`, { authorization: basic(app.client_id, app.client_secret), body });
      assert.equal(response.status, 422, JSON.stringify(body));
      assert.equal(response.body.message, 'Validation Failed');
      assert.equal(response.body.errors[0].field, 'access_token');
    }
  });

  test('malformed JSON is a 400, a body that is not an object too', async () => {
    const auth = basic(app.client_id, app.client_secret);
    const broken = await server.api('POST', `/applications/${app.client_id}/token`, { authorization: auth, rawBody: '{"access_token":', headers: { 'content-type': 'application/json' } });
    assert.equal(broken.status, 400);
    assert.equal(broken.body.message, 'Problems parsing JSON');
    const array = await server.api('POST', `/applications/${app.client_id}/token`, { authorization: auth, rawBody: '["x"]' });
    assert.equal(array.status, 400);
    assert.equal(array.body.message, 'Body should be a JSON object');
  });

  test('a wrong secret, an unknown client id or a path client_id of another app is a 404', async () => {
    const { token } = await authorize('mona');
    const cases = [
      [app.client_id, basic(app.client_id, 'wrong-secret')],
      ['Iv1.nope', basic('Iv1.nope', app.client_secret)],
      [other.client_id, basic(app.client_id, app.client_secret)],
    ] as const;
    for (const [path, authorization] of cases) {
      const response = await server.api('POST', `/applications/${path}/token`, { authorization, body: { access_token: token } });
      assert.equal(response.status, 404);
    }
  });

  test('no credentials is a 401; a user token is refused', async () => {
    const anonymous = await server.api('POST', `/applications/${app.client_id}/token`, { body: { access_token: 'x' } });
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.body.message, 'Requires authentication');
    const pat = await server.admin('POST', '/tokens', { login: 'mona', kind: 'classic', scopes: ['repo'] });
    const refused = await server.api('POST', `/applications/${app.client_id}/token`, { token: pat.token, body: { access_token: 'x' } });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.message, 'Resource not accessible by personal access token');
  });

  test('the tokens a check finds invalid do not count toward the failed-login limit; bad credentials do', async () => {
    const limited = await startServer({ CODEHOST_RATE_LIMIT_FAILED_LOGINS: '2' });
    try {
      const created = await limited.admin('POST', '/apps', { slug: 'limited' });
      const right = basic(created.client_id, created.client_secret);
      for (let i = 0; i < 4; i++) {
        const response = await limited.api('POST', `/applications/${created.client_id}/token`, { authorization: right, body: { access_token: 'cho_x' } });
        assert.equal(response.status, 404);
      }
      for (let i = 0; i < 2; i++) {
        const response = await limited.api('POST', '/app/installations/1/access_tokens', { token: 'chp_000000000000000000000000000000000000' });
        assert.equal(response.status, 401);
      }
      const blocked = await limited.api('POST', '/app/installations/1/access_tokens', { token: 'chp_000000000000000000000000000000000000' });
      assert.equal(blocked.status, 403);
      assert.match(blocked.body.message, /Maximum number of login attempts exceeded/);
      // A wrong client secret is a failed login too (issue 11): refused while the address is over the limit.
      const wrong = await limited.api('POST', `/applications/${created.client_id}/token`, { authorization: basic(created.client_id, 'wrong'), body: { access_token: 'cho_x' } });
      assert.equal(wrong.status, 403);
    } finally {
      await limited.close();
    }
  });
});

describe('reset, delete token, delete grant', () => {
  test('reset gives a new token at once; the old one stops working', async () => {
    const { token } = await authorize('mona');
    const auth = basic(app.client_id, app.client_secret);
    const reset = await server.api('PATCH', `/applications/${app.client_id}/token`, { authorization: auth, body: { access_token: token } });
    assert.equal(reset.status, 200);
    assert.notEqual(reset.body.token, token);
    assert.match(reset.body.token, /^cho_[0-9A-Za-z]{36}$/);
    assert.equal(reset.body.token_last_eight, reset.body.token.slice(-8));
    const old = await server.api('POST', `/applications/${app.client_id}/token`, { authorization: auth, body: { access_token: token } });
    assert.equal(old.status, 404);
    const fresh = await server.api('POST', `/applications/${app.client_id}/token`, { authorization: auth, body: { access_token: reset.body.token } });
    assert.equal(fresh.status, 200);
    const again = await server.api('PATCH', `/applications/${app.client_id}/token`, { authorization: auth, body: { access_token: token } });
    assert.equal(again.status, 404);
  });

  test('delete token revokes one token; it no longer authenticates', async () => {
    const first = await authorize('mona');
    const second = await authorize('mona');
    const auth = basic(app.client_id, app.client_secret);
    const deleted = await server.api('DELETE', `/applications/${app.client_id}/token`, { authorization: auth, body: { access_token: first.token } });
    assert.equal(deleted.status, 204);
    assert.equal(deleted.text, '');
    assert.equal((await server.api('POST', `/applications/${app.client_id}/token`, { authorization: auth, body: { access_token: first.token } })).status, 404);
    assert.equal((await server.api('POST', `/applications/${app.client_id}/token`, { authorization: auth, body: { access_token: second.token } })).status, 200);
    assert.equal((await server.api('DELETE', `/applications/${app.client_id}/token`, { authorization: auth, body: { access_token: first.token } })).status, 404);
    assert.equal((await server.api('DELETE', `/applications/${app.client_id}/token`, { authorization: auth, body: {} })).status, 422);
  });

  test("delete grant revokes every token of the app for that user, and only those", async () => {
    const auth = basic(app.client_id, app.client_secret);
    const a = await authorize('hubot');
    const b = await authorize('hubot', { kind: 'app_user' });
    const mona = await authorize('mona');
    const foreign = await server.admin('POST', '/apps/other-app/authorizations', { login: 'hubot' });
    const response = await server.api('DELETE', `/applications/${app.client_id}/grant`, { authorization: auth, body: { access_token: a.token } });
    assert.equal(response.status, 204);
    for (const token of [a.token, b.token]) {
      assert.equal((await server.api('POST', `/applications/${app.client_id}/token`, { authorization: auth, body: { access_token: token } })).status, 404);
    }
    assert.equal((await server.api('POST', `/applications/${app.client_id}/token`, { authorization: auth, body: { access_token: mona.token } })).status, 200);
    const otherAuth = basic(other.client_id, other.client_secret);
    assert.equal((await server.api('POST', `/applications/${other.client_id}/token`, { authorization: otherAuth, body: { access_token: foreign.token } })).status, 200);
    assert.equal((await server.api('DELETE', `/applications/${app.client_id}/grant`, { authorization: auth, body: { access_token: a.token } })).status, 404);
  });
});

describe('scoped tokens', () => {
  test('narrows an app user token to a target, repositories and permissions', async () => {
    const auth = basic(app.client_id, app.client_secret);
    const { token } = await authorize('mona', { kind: 'app_user' });
    const scoped = await server.api('POST', `/applications/${app.client_id}/token/scoped`, {
      authorization: auth,
      body: { access_token: token, target: 'acme', repositories: ['widgets'], permissions: { issues: 'read' } },
    });
    assert.equal(scoped.status, 200);
    assert.notEqual(scoped.body.token, token);
    assert.match(scoped.body.token, /^chu_/);
    const wider = await server.api('POST', `/applications/${app.client_id}/token/scoped`, {
      authorization: auth,
      body: { access_token: token, target: 'acme', permissions: { administration: 'write' } },
    });
    assert.equal(wider.status, 422);
    const noTarget = await server.api('POST', `/applications/${app.client_id}/token/scoped`, { authorization: auth, body: { access_token: token } });
    assert.equal(noTarget.status, 422);
    const notInstalled = await server.api('POST', `/applications/${app.client_id}/token/scoped`, { authorization: auth, body: { access_token: token, target: 'hubot' } });
    assert.equal(notInstalled.status, 422);
    const oauth = await authorize('mona');
    const notUserToken = await server.api('POST', `/applications/${app.client_id}/token/scoped`, { authorization: auth, body: { access_token: oauth.token, target: 'acme' } });
    assert.equal(notUserToken.status, 422);
  });
});

describe('installation access tokens and app JWTs', () => {
  test('an app JWT mints a 60-minute installation token, narrowed on request', async () => {
    const jwt = await appJwt(app.private_key);
    const minted = await server.api('POST', '/app/installations/1/access_tokens', { token: jwt, body: {} });
    assert.equal(minted.status, 201, minted.text);
    assert.match(minted.body.token, /^chs_/);
    assert.equal(minted.body.repository_selection, 'all');
    assert.deepEqual(minted.body.permissions, { issues: 'write', metadata: 'read' });
    const clock = await server.admin('GET', '/clock');
    const minutes = (Date.parse(minted.body.expires_at) - Date.parse(clock.now)) / 60_000;
    assert.ok(minutes > 59 && minutes <= 60, String(minutes));

    const narrowed = await server.api('POST', '/app/installations/1/access_tokens', { token: jwt, body: { repositories: ['widgets'], permissions: { issues: 'read' } } });
    assert.equal(narrowed.status, 201);
    assert.equal(narrowed.body.repository_selection, 'selected');
    assert.deepEqual(narrowed.body.repositories.map((r: { name: string }) => r.name), ['widgets']);

    const wider = await server.api('POST', '/app/installations/1/access_tokens', { token: jwt, body: { permissions: { administration: 'read' } } });
    assert.equal(wider.status, 422);
    const unknownRepo = await server.api('POST', '/app/installations/1/access_tokens', { token: jwt, body: { repositories: ['nope'] } });
    assert.equal(unknownRepo.status, 422);
    const missing = await server.api('POST', '/app/installations/999/access_tokens', { token: jwt, body: {} });
    assert.equal(missing.status, 404);
    const probe = await server.admin('POST', '/apps', { slug: 'probe' });
    const otherJwt = await appJwt(probe.private_key, { iss: probe.id });
    const notItsOwn = await server.api('POST', '/app/installations/1/access_tokens', { token: otherJwt, body: {} });
    assert.equal(notItsOwn.status, 404);
    const notAnInteger = await server.api('POST', '/app/installations/abc/access_tokens', { token: jwt, body: {} });
    assert.equal(notAnInteger.status, 422);
  });

  test('repositories, repository_ids and permissions only narrow what a selected installation grants', async () => {
    await server.admin('POST', '/orgs', { login: 'initech', owners: ['mona'] });
    const ids: Record<string, number> = {};
    for (const name of ['alpha', 'beta', 'gamma']) ids[name] = (await server.admin('POST', '/repos', { owner: 'initech', name, visibility: 'private' })).id;
    const installation = await server.admin('POST', '/apps/token-app/installations', { account: 'initech', repositories: ['alpha', 'beta'], permissions: { issues: 'read', metadata: 'read' } });
    const jwt = await appJwt(app.private_key);
    const mint = (body: Record<string, unknown>) => server.api('POST', `/app/installations/${installation.id}/access_tokens`, { token: jwt, body });
    const names = (body: { repositories: { name: string }[] }) => body.repositories.map((r) => r.name);

    const whole = await mint({});
    assert.equal(whole.status, 201, whole.text);
    assert.deepEqual(Object.keys(whole.body).sort(), ['expires_at', 'permissions', 'repositories', 'repository_selection', 'token']);
    assert.match(whole.body.expires_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    assert.equal(whole.body.repository_selection, 'selected');
    assert.deepEqual(names(whole.body), ['alpha', 'beta']);
    assert.deepEqual(whole.body.permissions, { issues: 'read', metadata: 'read' }, 'the grant, not what the app requests');

    const byId = await mint({ repository_ids: [ids.beta] });
    assert.equal(byId.status, 201, byId.text);
    assert.deepEqual(names(byId.body), ['beta']);
    const both = await mint({ repositories: ['ALPHA'], repository_ids: [ids.beta, ids.alpha] });
    assert.deepEqual(names(both.body), ['alpha', 'beta']);
    const readOnly = await mint({ permissions: { metadata: 'read' } });
    assert.deepEqual(readOnly.body.permissions, { metadata: 'read' });

    for (const [label, body] of [
      ['a repository the installation does not cover', { repositories: ['gamma'] }],
      ['an id the installation does not cover', { repository_ids: [ids.gamma] }],
      ['an unknown id', { repository_ids: [999999] }],
      ['a repository of another account', { repositories: ['widgets'] }],
      ['a higher level than granted', { permissions: { issues: 'write' } }],
      ['a permission not granted', { permissions: { administration: 'read' } }],
    ] as const) {
      const response = await mint(body);
      assert.equal(response.status, 422, label);
      assert.equal(response.body.message, 'Validation Failed', label);
    }

    // The narrowed token reaches only its repositories.
    const token = byId.body.token as string;
    assert.equal((await server.api('GET', '/repos/initech/beta/issue-types', { token })).status, 200);
    assert.equal((await server.api('GET', '/repos/initech/alpha/issue-types', { token })).status, 404);
    assert.equal((await server.api('GET', '/repos/initech/gamma/issue-types', { token: whole.body.token })).status, 404);
  });

  test('the installation token authenticates, and expires after 60 minutes', async () => {
    const jwt = await appJwt(app.private_key);
    const minted = await server.api('POST', '/app/installations/1/access_tokens', { token: jwt, body: {} });
    const live = await server.api('POST', '/app/installations/1/access_tokens', { token: minted.body.token, body: {} });
    assert.equal(live.status, 403); // authenticated, but an installation token may not mint tokens
    assert.equal(live.body.message, 'Resource not accessible by integration');
    await server.advance(3601);
    const expired = await server.api('POST', '/app/installations/1/access_tokens', { token: minted.body.token, body: {} });
    assert.equal(expired.status, 401);
    assert.equal(expired.body.message, 'Bad credentials');
  });

  test('JWTs that are not acceptable are 401s', async () => {
    const now = await serverNow();
    const { privateKey: wrongKey } = await import('node:crypto').then((c) => c.generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs1', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } }));
    const header = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const none = `${header({ alg: 'none', typ: 'JWT' })}.${header({ iss: String(app.id), iat: now - 10, exp: now + 300 })}.`;
    const hs256 = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setIssuer(String(app.id)).setIssuedAt(now - 10).setExpirationTime(now + 300).sign(new TextEncoder().encode(app.client_secret));
    const cases: [string, string][] = [
      ['alg none', none],
      ['HS256', hs256],
      ['wrong key', await appJwt(wrongKey, { iat: now - 10, exp: now + 300 })],
      ['expired', await appJwt(app.private_key, { iat: now - 700, exp: now - 100 })],
      ['exp more than 10 minutes after iat', await appJwt(app.private_key, { iat: now - 10, exp: now + 660 })],
      ['iat in the future', await appJwt(app.private_key, { iat: now + 120, exp: now + 300 })],
      ['unknown issuer', await appJwt(app.private_key, { iss: 999, iat: now - 10, exp: now + 300 })],
      ['garbage', 'aaa.bbb.ccc'],
    ];
    for (const [label, jwt] of cases) {
      const response = await server.api('POST', '/app/installations/1/access_tokens', { token: jwt, body: {} });
      assert.equal(response.status, 401, label);
    }
    const byClientId = await server.api('POST', '/app/installations/1/access_tokens', { token: await appJwt(app.private_key, { iss: app.client_id, iat: now - 10, exp: now + 300 }), body: {} });
    assert.equal(byClientId.status, 201);
    const tokenScheme = await server.api('POST', '/app/installations/1/access_tokens', { authorization: `token ${await appJwt(app.private_key, { iat: now - 10, exp: now + 300 })}`, body: {} });
    assert.equal(tokenScheme.status, 401);
  });

  test('other credential kinds are refused on the JWT endpoint', async () => {
    const classic = await server.admin('POST', '/tokens', { login: 'mona', kind: 'classic', scopes: ['repo'] });
    const fine = await server.admin('POST', '/tokens', { login: 'mona', kind: 'fine_grained', resource_owner: 'acme', permissions: { metadata: 'read' } });
    const oauth = await authorize('mona');
    const appUser = await authorize('mona', { kind: 'app_user' });
    const expectations: [string, string, string][] = [
      [classic.token, 'classic', 'Resource not accessible by personal access token'],
      [fine.token, 'fine-grained', 'Resource not accessible by personal access token'],
      [oauth.token, 'oauth', 'Resource not accessible by integration'],
      [appUser.token, 'app user', 'Resource not accessible by integration'],
    ];
    for (const [token, label, message] of expectations) {
      const response = await server.api('POST', '/app/installations/1/access_tokens', { token, body: {} });
      assert.equal(response.status, 403, label);
      assert.equal(response.body.message, message, label);
    }
    assert.equal((await server.api('POST', '/app/installations/1/access_tokens', { body: {} })).status, 401);
  });
});
