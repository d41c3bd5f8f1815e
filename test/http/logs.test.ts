// Nothing sensitive in the log: request lines carry the path without its query string (the signed
// archive URL's signature, a token in the query), never Authorization or Cookie; and a start on
// PostgreSQL without CODEHOST_SECRET_KEY warns that the key is kept beside the data (never the key).
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createServer, type Server } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createTestDatabase, engine, type TestDatabase } from '../helpers/database.ts';
import { freePort, startCli, type CliProcess } from '../helpers/process.ts';

const ADMIN_TOKEN = 'logs-test-admin-token';

describe('request logging', () => {
  let database: TestDatabase;
  let server: Server;
  let url: string;
  const lines: string[] = [];

  const admin = async (method: string, path: string, body: unknown = {}) => {
    const response = await fetch(`${url}/_admin${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    assert.ok(response.ok, `${method} ${path}: ${response.status} ${await response.clone().text()}`);
    return response.json() as Promise<any>;
  };

  before(async () => {
    database = await createTestDatabase();
    const config = loadConfig({
      CODEHOST_PORT: String(await freePort()),
      CODEHOST_HOST: '127.0.0.1',
      CODEHOST_DATA_DIR: database.dataDir,
      CODEHOST_ADMIN_TOKEN: ADMIN_TOKEN,
      CODEHOST_DEMO: '0',
      CODEHOST_LOG_LEVEL: 'info',
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

  test('the signed archive URL is logged without its signature; tokens and cookies never', async () => {
    await admin('POST', '/users', { login: 'alice' });
    await admin('POST', '/repos', { owner: 'alice', name: 'alpha', init_git: true });
    const { token } = await admin('POST', '/tokens', { login: 'alice', kind: 'classic', scopes: ['repo'] });
    const headers = { authorization: `Bearer ${token}`, accept: 'application/vnd.vendor+json', cookie: 'session=cookie-secret-value' };
    const started = await fetch(`${url}/api/v3/user/migrations`, { method: 'POST', headers, body: JSON.stringify({ repositories: ['alpha'] }) });
    assert.equal(started.status, 201);
    const { id } = (await started.json()) as { id: number };
    await admin('POST', '/jobs/drain', { timeout_seconds: 60 });

    const redirect = await fetch(`${url}/api/v3/user/migrations/${id}/archive`, { headers, redirect: 'manual' });
    assert.equal(redirect.status, 302);
    const signed = new URL(redirect.headers.get('location')!);
    const signature = signed.searchParams.get('signature')!;
    assert.ok(signature.length >= 16, signed.href);
    const archive = await fetch(signed);
    assert.equal(archive.status, 200);
    await archive.arrayBuffer();
    // A token in a query string (which some clients send) and a bad Basic secret.
    await (await fetch(`${url}/api/v3/user?access_token=query-token-value`)).arrayBuffer();
    await (await fetch(`${url}/api/v3/user`, { headers: { authorization: `Basic ${Buffer.from('Iv1.x:basic-secret-value').toString('base64')}` } })).arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 100));

    const log = lines.join('');
    const entries = lines.map((line) => JSON.parse(line) as { msg: string; req?: { url: string } });
    const logged = entries.flatMap((entry) => (entry.req ? [entry.req.url] : []));
    // The request is logged, by its path.
    assert.ok(logged.includes(signed.pathname), logged.join('\n'));
    assert.ok(logged.every((path) => !path.includes('?')), logged.join('\n'));
    for (const secret of [signature, token, ADMIN_TOKEN, 'cookie-secret-value', 'query-token-value', 'basic-secret-value', Buffer.from('Iv1.x:basic-secret-value').toString('base64')]) {
      assert.equal(log.includes(secret), false, `logged: ${secret}`);
    }
  });

  test('a client that drops its connection while sending a body is no database outage: no 503 and no database line, in the log or /metrics', async () => {
    const before = lines.length;
    const { port } = new URL(url);
    for (let i = 0; i < 6; i++) {
      await new Promise<void>((resolve) => {
        const socket = connect(Number(port), '127.0.0.1', () => {
          socket.write(`POST /_admin/users HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${ADMIN_TOKEN}\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n{"login": "half`);
          setTimeout(() => socket.destroy(), 50 + i * 20);
        });
        socket.on('error', () => {});
        socket.on('close', () => resolve());
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    const entries = lines.slice(before).map((line) => JSON.parse(line) as { msg: string; reason?: string });
    assert.deepEqual(entries.filter((entry) => /database/i.test(entry.msg) || /database/i.test(entry.reason ?? '')), [], 'no database line');
    const metrics = await (await fetch(`${url}/metrics`)).text();
    assert.equal(/codehost_http_requests_total\{[^}]*status_code="503"/.test(metrics), false, metrics.split('\n').filter((line) => line.includes('status_code="5')).join('\n'));
    // The server is fine: the next request is answered.
    assert.equal((await admin('POST', '/users', { login: 'after-drops' })).login, 'after-drops');
  });
});

describe('CODEHOST_SECRET_KEY', () => {
  let database: TestDatabase;
  before(async () => {
    database = await createTestDatabase();
  });
  after(async () => database.drop());

  async function bannerOf(env: Record<string, string>): Promise<string> {
    const port = await freePort();
    const cli: CliProcess = startCli(['serve'], {
      env: {
        CODEHOST_DATA_DIR: database.dataDir,
        CODEHOST_PORT: String(port),
        CODEHOST_DEMO: '0',
        CODEHOST_ADMIN_TOKEN: ADMIN_TOKEN,
        CODEHOST_LOG_LEVEL: 'warn',
        ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}),
        ...env,
      },
    });
    try {
      await cli.waitFor(/codehost is listening/);
      await new Promise((resolve) => setTimeout(resolve, 100));
      return cli.output();
    } finally {
      cli.child.kill('SIGKILL');
      await cli.exited();
    }
  }

  test(`unset on ${engine}: ${engine === 'postgres' ? 'the start warns, without the key' : 'no warning (the key lives in the data directory)'}`, async () => {
    const output = await bannerOf({});
    if (engine === 'postgres') {
      assert.match(output, /warning: CODEHOST_SECRET_KEY is not set/);
      const stored = await storedSecretKey(database);
      assert.ok(stored && !output.includes(stored), 'the key is never printed');
    } else {
      assert.doesNotMatch(output, /CODEHOST_SECRET_KEY is not set/);
    }
  });

  test('set: no warning, and the key is never printed', async () => {
    // A database of its own: the one above is used with its generated key, and a set key is refused there.
    await database.drop();
    database = await createTestDatabase();
    const key = 'a-secret-key-chosen-by-the-operator-0123456789';
    const output = await bannerOf({ CODEHOST_SECRET_KEY: key });
    assert.doesNotMatch(output, /CODEHOST_SECRET_KEY is not set/);
    assert.equal(output.includes(key), false);
  });
});

/** The generated key the server stored (PostgreSQL only). */
async function storedSecretKey(database: TestDatabase): Promise<string | null> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: database.databaseUrl! });
  await client.connect();
  try {
    const result = await client.query<{ value: string }>("SELECT value FROM settings WHERE key = 'secret_key'");
    return result.rows[0]?.value ?? null;
  } finally {
    await client.end();
  }
}
