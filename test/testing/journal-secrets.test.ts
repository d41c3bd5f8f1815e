// Every secret the server knows, in every form it can arrive, is found nowhere it keeps or writes:
// not in the request journal (what the console shows is the same admin API), not in a snapshot
// (which carries the journal: the SQLite file, or the PostgreSQL schema's saved state), not in the
// log. Kinds: classic, fine-grained, OAuth and installation tokens, an app's JWT, client secret,
// private key and webhook secret, the admin token, a password-like field. Forms: Authorization with
// a scheme, without one, Basic; a query parameter; a JSON field; YAML in a seed (block, flow and
// quoted); a form-encoded body; form-encoded and YAML text inside a JSON string.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { createServer, type Server } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { signAppJwt } from '../helpers/credentials.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { freePort } from '../helpers/process.ts';

const ADMIN_TOKEN = 'journal-secrets-admin-token-0123456789abcdef';
const WEBHOOK_SECRET = 'whsec-journal-secrets-4d7e2a9c';
const SEED_CLIENT_SECRET = 'seed-client-secret-8f3b1c5d7e9a';
const SEED_WEBHOOK_SECRET = 'seed-webhook-secret-2b4d6f8h0j';
const FLOW_SECRET = 'flow-style-secret-7k9m1p3r5t';
const QUOTED_SECRET = 'quoted-yaml-secret-6y8u0i2o4p';
const PASSWORD = 'hunter2-but-longer-5c7e9g1i3k';
const FORM_SECRET = 'form-body-secret-3x5z7b9d1f';

/** Every file under `dir`, read whole. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path));
    else out.push(readFileSync(path).toString('latin1'));
  }
  return out;
}

describe('secrets in every form are kept nowhere whole', () => {
  let database: TestDatabase;
  let server: Server;
  let url: string;
  const lines: string[] = [];
  const secrets: string[] = [ADMIN_TOKEN, WEBHOOK_SECRET, SEED_CLIENT_SECRET, SEED_WEBHOOK_SECRET, FLOW_SECRET, QUOTED_SECRET, PASSWORD, FORM_SECRET];

  const call = async (method: string, path: string, init: { headers?: Record<string, string>; body?: string } = {}) => {
    const response = await fetch(`${url}${path}`, { method, headers: { accept: 'application/vnd.vendor+json', ...init.headers }, body: init.body, redirect: 'manual' });
    return { status: response.status, text: await response.text() };
  };
  const admin = async (method: string, path: string, body: unknown = {}) => {
    const response = await call(method, `/_admin${path}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: method === 'GET' ? undefined : JSON.stringify(body) });
    assert.ok(response.status < 300, `${method} ${path}: ${response.status} ${response.text}`);
    return response.text ? JSON.parse(response.text) : undefined;
  };

  before(async () => {
    database = await createTestDatabase();
    const config = loadConfig({
      CODEHOST_PORT: String(await freePort()),
      CODEHOST_HOST: '127.0.0.1',
      CODEHOST_DATA_DIR: database.dataDir,
      CODEHOST_ADMIN_TOKEN: ADMIN_TOKEN,
      CODEHOST_DEMO: '0',
      CODEHOST_TEST_MODE: '1',
      CODEHOST_LOG_LEVEL: 'debug',
      CODEHOST_JOB_POLL_MS: '20',
      CODEHOST_DATABASE_POOL_SIZE: '4',
      ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}),
    });
    server = await createServer(config, { logStream: { write: (line: string) => void lines.push(line) } });
    url = await server.listen();
  });
  after(async () => {
    await server.close();
    await database.drop();
  });

  test('each kind in each form: not in the journal, a snapshot or the log', async () => {
    const seed = [
      'users:',
      '  - login: mona',
      'orgs:',
      '  - login: acme',
      '    owners: [mona]',
      'repos:',
      '  - { owner: acme, name: widgets, visibility: private }',
      'apps:',
      '  - slug: seeded-app',
      `    client_secret: ${SEED_CLIENT_SECRET}`,
      '    permissions: { issues: write }',
      '    webhook:',
      '      url: http://127.0.0.1:9/hook',
      `      secret: ${SEED_WEBHOOK_SECRET}`,
      '  - slug: flow-app',
      `    webhook: { url: "http://127.0.0.1:9/flow", secret: ${FLOW_SECRET} }`,
      '  - slug: quoted-app',
      `    "client_secret": "${QUOTED_SECRET}"`,
    ].join('\n');
    await admin('POST', '/reset', { to: 'seed', seed });
    const classic = (await admin('POST', '/tokens', { login: 'mona', kind: 'classic', scopes: ['repo', 'read:org'] })).token as string;
    const fine = (await admin('POST', '/tokens', { login: 'mona', kind: 'fine_grained', resource_owner: 'acme', repositories: 'all', permissions: { issues: 'read' } })).token as string;
    const app = await admin('POST', '/apps', { slug: 'journal-app', permissions: { issues: 'write' }, webhook: { url: 'http://127.0.0.1:9/hook', secret: WEBHOOK_SECRET } });
    const oauth = (await admin('POST', '/apps/journal-app/authorizations', { login: 'mona' })).token as string;
    await admin('POST', '/apps/journal-app/installations', { account: 'acme', repositories: 'all' });
    const jwt = await signAppJwt(app);
    const installations = JSON.parse((await call('GET', '/app/installations', { headers: { authorization: `Bearer ${jwt}` } })).text);
    const minted = JSON.parse((await call('POST', `/app/installations/${installations[0].id}/access_tokens`, { headers: { authorization: `Bearer ${jwt}` } })).text);
    const installationToken = minted.token as string;
    secrets.push(classic, fine, oauth, installationToken, jwt, app.client_secret, ...String(app.private_key).split('\n').filter((line) => line.length > 8 && !line.startsWith('-----')));

    for (const token of [classic, fine, oauth, installationToken, jwt]) {
      await call('GET', '/api/v3/user', { headers: { authorization: `Bearer ${token}` } });
      await call('GET', '/api/v3/user', { headers: { authorization: `token ${token}` } });
      // Without a scheme: the platform answers 401; the journal keeps nothing of the value.
      await call('GET', '/api/v3/user', { headers: { authorization: token } });
      await call('GET', `/api/v3/user?access_token=${encodeURIComponent(token)}`);
      await call('POST', `/api/v3/applications/${app.client_id}/token`, {
        headers: { authorization: `Basic ${Buffer.from(`${app.client_id}:${app.client_secret}`).toString('base64')}`, 'content-type': 'application/json' },
        body: JSON.stringify({ access_token: token }),
      });
    }
    await call('GET', `/api/v3/user?client_secret=${encodeURIComponent(app.client_secret)}&password=${PASSWORD}`);
    await call('GET', '/_admin/requests', { headers: { authorization: ADMIN_TOKEN } });
    await call('GET', '/_admin/requests', { headers: { authorization: `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}` } });
    await call('POST', '/api/v3/user/migrations', { headers: { authorization: `Bearer ${classic}`, 'content-type': 'application/x-www-form-urlencoded' }, body: `client_secret=${FORM_SECRET}&password=${PASSWORD}` });
    // Form-encoded and YAML text inside a JSON string (a value the server refuses, so it is stored nowhere but the journal).
    await call('POST', '/api/v3/user/migrations', {
      headers: { authorization: `Bearer ${classic}`, 'content-type': 'application/json' },
      body: JSON.stringify({ repositories: [`client_secret=${FORM_SECRET}&password=${PASSWORD}`, `secret: ${FORM_SECRET}`] }),
    });
    await admin('POST', '/snapshots', { name: 'with-journal' });

    const journal = JSON.stringify(await admin('GET', '/requests?per_page=1000'));
    assert.ok(journal.includes('/user/migrations'), 'the journal recorded the requests');
    let snapshot: string;
    if (database.databaseUrl) {
      const client = new pg.Client({ connectionString: database.databaseUrl });
      await client.connect();
      try {
        const schemas = (await client.query("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'codehost_snap_%'")).rows.map((row) => row.nspname as string);
        assert.ok(schemas.length > 0, 'a snapshot schema');
        snapshot = (await Promise.all(schemas.map(async (schema) => JSON.stringify((await client.query(`SELECT * FROM "${schema}"._snapshot`)).rows)))).join('\n');
      } finally {
        await client.end();
      }
    } else {
      snapshot = filesUnder(database.dataDir).join('\n');
      // A snapshot no longer keeps the journal (it outlives restores): its files hold no secret all the same.
    }
    const log = lines.join('');
    for (const [where, text] of [['journal', journal], ['snapshot', snapshot], ['log', log]] as const) {
      for (const secret of secrets) assert.ok(!text.includes(secret), `a secret is in the ${where}: ${secret.slice(0, 10)}…`);
    }
  });
});
