// URLs that match where the server is: with CODEHOST_API_URL and CODEHOST_WEB_URL unset, every
// absolute URL a client receives (url and html_url fields, Link headers, the root document, the
// OpenAPI `servers` entry) is built from the one address the server prints, so a client that checks
// each next page's host against its base URL (PyGithub) follows the pages. Started as a new user
// does: `codehost serve` with the defaults, on a free port and on port 0; on a wildcard address the
// banner says how to set the public URL.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig, publicUrls } from '../../src/config.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { freePort, startCli, type CliProcess } from '../helpers/process.ts';

const ADMIN = 'urls-admin-token';
let database: TestDatabase;

before(async () => {
  database = await createTestDatabase();
});
after(() => database.drop());

/** Starts `codehost serve` with the defaults (no CODEHOST_API_URL / CODEHOST_WEB_URL) and reads the address it prints. */
async function serve(env: Record<string, string>): Promise<{ cli: CliProcess; address: string; banner: string }> {
  const cli = startCli(['serve'], {
    env: {
      CODEHOST_DATA_DIR: database.dataDir,
      CODEHOST_DEMO: '0',
      CODEHOST_ADMIN_TOKEN: ADMIN,
      CODEHOST_LOG_LEVEL: 'warn',
      ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}),
      ...env,
    },
  });
  const match = await cli.waitFor(/codehost is listening on (http:\/\/\S+) /);
  await new Promise((r) => setTimeout(r, 100)); // the banner is one write; slack for the pipe
  return { cli, address: match[1]!, banner: cli.output() };
}

async function stop(cli: CliProcess): Promise<void> {
  cli.child.kill('SIGTERM');
  assert.equal(await cli.exited(), 0);
}

async function adminCall(address: string, method: string, path: string, body: unknown): Promise<any> {
  const response = await fetch(`${address}/_admin${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  assert.ok(response.status < 300, `${method} ${path}: ${response.status} ${text}`);
  return JSON.parse(text);
}

/** Every absolute URL a client meets, for a user with three repositories: all start with `address`. */
async function checkUrls(address: string, login: string): Promise<void> {
  await adminCall(address, 'POST', '/users', { login });
  for (const name of ['one', 'two', 'three']) await adminCall(address, 'POST', '/repos', { owner: login, name });
  const { token } = await adminCall(address, 'POST', '/tokens', { login, kind: 'classic', scopes: ['repo', 'read:user'] });

  const api = `${address}/api/v3`;
  const headers = { authorization: `Bearer ${token}` };
  const page = await fetch(`${api}/users/${login}/repos?per_page=1`, { headers });
  assert.equal(page.status, 200);
  const repos = (await page.json()) as any[];
  assert.equal(repos[0].url, `${api}/repos/${login}/${repos[0].name}`);
  assert.equal(repos[0].html_url, `${address}/${login}/${repos[0].name}`);
  assert.equal(repos[0].owner.url, `${api}/users/${login}`);
  const link = page.headers.get('link') ?? '';
  const targets = [...link.matchAll(/<([^>]+)>/g)].map((m) => m[1]!);
  assert.ok(targets.length >= 2, link);
  for (const target of targets) assert.equal(new URL(target).origin, new URL(address).origin, link);
  // A client follows the next page where the Link header says.
  const next = /<([^>]+)>; rel="next"/.exec(link)![1]!;
  assert.equal((await fetch(next, { headers })).status, 200);

  const user = (await (await fetch(`${api}/user`, { headers })).json()) as any;
  assert.equal(user.url, `${api}/users/${login}`);
  const root = (await (await fetch(`${address}/`)).json()) as Record<string, string>;
  for (const [key, value] of Object.entries(root)) assert.ok(value.startsWith(address), `${key}: ${value}`);
  const openapi = (await (await fetch(`${address}/openapi.json`)).json()) as { servers: { url: string }[] };
  assert.deepEqual(openapi.servers, [{ url: api }]);
}

describe('with CODEHOST_API_URL and CODEHOST_WEB_URL unset', () => {
  test('every URL is built from the address the server prints (a free port)', async () => {
    const port = await freePort();
    const { cli, address, banner } = await serve({ CODEHOST_PORT: String(port) });
    try {
      assert.equal(address, `http://127.0.0.1:${port}`, banner);
      await checkUrls(address, 'urlie');
    } finally {
      await stop(cli);
    }
  });

  test('CODEHOST_PORT=0: the real port is printed and used in every URL', async () => {
    const { cli, address, banner } = await serve({ CODEHOST_PORT: '0' });
    try {
      assert.match(address, /^http:\/\/127\.0\.0\.1:\d+$/, banner);
      assert.notEqual(new URL(address).port, '0');
      await checkUrls(address, 'porty');
    } finally {
      await stop(cli);
    }
  });

  test('on 0.0.0.0 the banner names the loopback address it uses and how to set the public URL', async () => {
    // Laptop mode said out loud: on 0.0.0.0 the default is production, which refuses this test's
    // short admin token, missing secret key and open /metrics.
    const { cli, address, banner } = await serve({ CODEHOST_PORT: '0', CODEHOST_HOST: '0.0.0.0', CODEHOST_MODE: 'laptop' });
    try {
      assert.match(address, /^http:\/\/127\.0\.0\.1:\d+$/, banner);
      assert.match(banner, /every network interface \(0\.0\.0\.0\)/);
      assert.match(banner, /set CODEHOST_WEB_URL/);
      await checkUrls(address, 'wildy');
    } finally {
      await stop(cli);
    }
  });
});

test('the settings, when set, win over the address', () => {
  const base = { CODEHOST_PORT: '0', CODEHOST_DATA_DIR: '/tmp' };
  const address = 'http://127.0.0.1:4321';
  assert.deepEqual(publicUrls(loadConfig(base), address), { api: `${address}/api/v3`, web: address });
  assert.deepEqual(publicUrls(loadConfig({ ...base, CODEHOST_WEB_URL: 'https://code.example.com' }), address), {
    api: 'https://code.example.com/api/v3',
    web: 'https://code.example.com',
  });
  assert.deepEqual(publicUrls(loadConfig({ ...base, CODEHOST_API_URL: 'https://api.example.com/v3' }), address), {
    api: 'https://api.example.com/v3',
    web: address,
  });
  // Without a port 0, the settings already name the address the server will print.
  assert.equal(loadConfig({ CODEHOST_PORT: '3000' }).apiUrl, 'http://127.0.0.1:3000/api/v3');
  assert.equal(loadConfig({ CODEHOST_PORT: '3000', CODEHOST_HOST: '::1' }).webUrl, 'http://[::1]:3000');
});
