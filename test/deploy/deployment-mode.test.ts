// The documented deployment is a production server. `codehost serve` (the real CLI) starts with
// exactly the settings docs/deployment.md lists and deploy/codehost.service sets (the secrets made
// with the commands the docs name), behind where nginx would be: the banner says production, the
// demo data's public credentials (src/admin/demo.yaml: its tokens, its app's client secret and
// private key) open nothing, the console, the journal, reset, snapshots, faults and the clock are
// 404 even to the admin token, and /metrics asks for its token. The same settings without
// CODEHOST_MODE (the docs before it was written there) derive production mode and say why.
import assert from 'node:assert/strict';
import { createPrivateKey } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SignJWT, importPKCS8 } from 'jose';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config.ts';
import { createTestDatabase, engine, type TestDatabase } from '../helpers/database.ts';
import { freePort, runCli, startCli, stopped, type CliProcess } from '../helpers/process.ts';

const ROOT = new URL('../..', import.meta.url).pathname;

/**
 * docs/deployment.md's settings table: a literal value (`127.0.0.1`), or "the output of
 * `codehost … generate`", run here as written.
 */
async function documentedSettings(): Promise<Record<string, string>> {
  const text = readFileSync(join(ROOT, 'docs/deployment.md'), 'utf8');
  const table = text.slice(text.indexOf("and codehost's settings"), text.indexOf('What the test checks behind it'));
  const settings: Record<string, string> = {};
  for (const [, name, value] of table.matchAll(/^\| `(CODEHOST_[A-Z_]+)` \| ([^|]+) \|/gm)) {
    const literal = /^`([^`]+)`\s*$/.exec(value!);
    const generated = /^the output of `codehost ([a-z- ]+ generate)`\s*$/.exec(value!);
    assert.ok(literal || generated, `docs/deployment.md: ${name}'s value is neither \`value\` nor "the output of \`codehost … generate\`": ${value}`);
    if (literal) settings[name!] = literal[1]!;
    else {
      const made = await runCli(generated![1]!.split(' '), {});
      assert.equal(made.code, 0, made.output);
      settings[name!] = made.output.trim();
    }
  }
  return settings;
}

/** deploy/codehost.service's `Environment=CODEHOST_…` lines. */
function unitSettings(): Record<string, string> {
  const unit = readFileSync(join(ROOT, 'deploy/codehost.service'), 'utf8');
  return Object.fromEntries([...unit.matchAll(/^Environment=(CODEHOST_[A-Z_]+)=(.*)$/gm)].map(([, name, value]) => [name!, value!]));
}

const demo = parse(readFileSync(join(ROOT, 'src/admin/demo.yaml'), 'utf8')) as {
  tokens: { value: string }[];
  authorizations: { value: string }[];
  apps: { client_id: string; client_secret: string; private_key: string }[];
};

/** The demo app's JWT, signed with the private key everyone can read, naming the app by `issuer`. */
async function demoJwt(issuer: string): Promise<string> {
  const pkcs8 = createPrivateKey(demo.apps[0]!.private_key).export({ type: 'pkcs8', format: 'pem' }).toString();
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({}).setProtectedHeader({ alg: 'RS256' }).setIssuer(issuer).setIssuedAt(now - 30).setExpirationTime(now + 540).sign(await importPKCS8(pkcs8, 'RS256'));
}

let scratch: string;
before(() => {
  scratch = mkdtempSync(join(tmpdir(), 'codehost-deployment-'));
});
after(() => rmSync(scratch, { recursive: true, force: true }));

// As documented, and without the CODEHOST_MODE line (the docs before it was written there): the
// other settings alone make it production.
for (const variant of ['as documented', 'without CODEHOST_MODE'] as const) describe(`the documented deployment ${variant} starts in production mode (${engine})`, () => {
  let database: TestDatabase;
  let cli: CliProcess;
  let url: string;
  let settings: Record<string, string>;

  before(async () => {
    settings = { ...(await documentedSettings()), ...unitSettings() };
    if (variant === 'without CODEHOST_MODE') delete settings.CODEHOST_MODE;
    database = await createTestDatabase();
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    // The unit's data directory (/var/lib/codehost) is systemd's; the port is one nginx's upstream would name.
    cli = startCli(['serve'], {
      env: { ...settings, CODEHOST_DATA_DIR: database.dataDir, CODEHOST_PORT: String(port), ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}) },
    });
    await cli.waitFor(/^admin token/m, 60);
  });
  after(async () => {
    await stopped(cli);
    await database.drop();
  });

  test('the settings are the ones the docs give', () => {
    assert.equal(settings.CODEHOST_HOST, '127.0.0.1');
    assert.equal(settings.CODEHOST_TRUST_PROXY, 'loopback');
    assert.equal(settings.CODEHOST_WEB_URL, 'https://codehost.example.com');
    assert.equal(settings.CODEHOST_MODE, variant === 'as documented' ? 'production' : undefined);
    for (const name of ['CODEHOST_SECRET_KEY', 'CODEHOST_ADMIN_TOKEN', 'CODEHOST_METRICS_TOKEN']) assert.ok(settings[name], name);
  });

  test('the banner says production, and no secret', () => {
    const banner = cli.output();
    assert.match(banner, /^mode: production \(a server others use/m);
    if (variant === 'without CODEHOST_MODE') assert.match(banner, /^ {2}CODEHOST_MODE=production \(CODEHOST_TRUST_PROXY=loopback: a proxy forwards to it\)$/m);
    else assert.doesNotMatch(banner, /CODEHOST_MODE=/);
    assert.match(banner, /^admin token: CODEHOST_ADMIN_TOKEN /m);
    assert.doesNotMatch(banner, /Try the demo data/);
    for (const name of ['CODEHOST_SECRET_KEY', 'CODEHOST_ADMIN_TOKEN', 'CODEHOST_METRICS_TOKEN']) assert.equal(banner.includes(settings[name]!), false, name);
  });

  test('the demo data\'s public credentials open nothing', async () => {
    for (const { value } of [...demo.tokens, ...demo.authorizations]) {
      const answer = await fetch(`${url}/api/v3/user`, { headers: { authorization: `Bearer ${value}` } });
      assert.equal(answer.status, 401, value);
    }
    const { client_id: clientId, client_secret: clientSecret } = demo.apps[0]!;
    const basic = await fetch(`${url}/api/v3/applications/${clientId}/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ access_token: demo.authorizations[0]!.value }),
    });
    // No such app: 404, as for any client id it does not know (a demo database would answer 200).
    assert.equal(basic.status, 404, await basic.text());
    // The app's JWT names it by its id (the demo app is the first app: 1) or its client id.
    for (const issuer of ['1', clientId]) {
      const answer = await fetch(`${url}/api/v3/app`, { headers: { authorization: `Bearer ${await demoJwt(issuer)}` } });
      assert.equal(answer.status, 401, issuer);
    }
  });

  test('the console, the journal, reset, snapshots, faults and the clock are 404, even to the admin token', async () => {
    assert.equal((await fetch(`${url}/_console`)).status, 404);
    assert.equal((await fetch(`${url}/_console/`)).status, 404);
    const headers = { authorization: `Bearer ${settings.CODEHOST_ADMIN_TOKEN}`, 'content-type': 'application/json' };
    assert.equal((await fetch(`${url}/_admin/users`, { headers })).status, 200, 'the admin token works');
    for (const [method, path, body] of [
      ['GET', '/requests'], ['POST', '/reset', {}], ['POST', '/snapshots', { name: 'x' }], ['GET', '/snapshots'],
      ['POST', '/faults', { effect: 'drop' }], ['GET', '/faults'], ['GET', '/clock'], ['POST', '/clock', { advance_seconds: 60 }],
    ] as const) {
      const answer = await fetch(`${url}/_admin${path}`, { method, headers, body: body ? JSON.stringify(body) : undefined });
      assert.equal(answer.status, 404, `${method} ${path}: ${answer.status}`);
    }
  });

  test('/metrics asks for its token', async () => {
    assert.equal((await fetch(`${url}/metrics`)).status, 401);
    assert.equal((await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${settings.CODEHOST_ADMIN_TOKEN}` } })).status, 401);
    const answer = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${settings.CODEHOST_METRICS_TOKEN}` } });
    assert.equal(answer.status, 200);
  });
});

describe('what makes a server production by default: listening beyond loopback, a trusted proxy, a public URL', () => {
  const cases: [string, Record<string, string>, string][] = [
    ['listening beyond loopback', { CODEHOST_HOST: '0.0.0.0' }, 'CODEHOST_HOST=0.0.0.0 listens beyond loopback'],
    ['a proxy trusted', { CODEHOST_TRUST_PROXY: 'loopback' }, 'CODEHOST_TRUST_PROXY=loopback: a proxy forwards to it'],
    ['a hop count trusted', { CODEHOST_TRUST_PROXY: '1' }, 'CODEHOST_TRUST_PROXY=1: a proxy forwards to it'],
    ['a public web URL', { CODEHOST_WEB_URL: 'https://codehost.example.com' }, 'CODEHOST_WEB_URL=https://codehost.example.com is not loopback'],
    ['a public API URL', { CODEHOST_API_URL: 'https://api.example.com/v3' }, 'CODEHOST_API_URL=https://api.example.com/v3 is not loopback'],
  ];
  for (const [what, env, from] of cases) {
    test(`${what}: production mode, and the banner says why`, () => {
      const config = loadConfig(env);
      assert.equal(config.mode, 'production');
      assert.deepEqual(config.derived.find(({ name }) => name === 'CODEHOST_MODE'), { name: 'CODEHOST_MODE', value: 'production', from });
      assert.equal(config.reachedBy, from);
    });
  }
  test('loopback everywhere: laptop mode', () => {
    for (const env of [{}, { CODEHOST_HOST: '::1', CODEHOST_WEB_URL: 'http://localhost:3000' }, { CODEHOST_API_URL: 'http://127.0.0.1:3000/api/v3', CODEHOST_TRUST_PROXY: '0' }]) {
      const config = loadConfig(env);
      assert.equal(config.mode, 'laptop', JSON.stringify(env));
      assert.equal(config.reachedBy, null);
    }
  });

  test('as a process: the start is refused for the missing secrets, the admin token among them', async () => {
    for (const [what, env] of cases) {
      const dataDir = join(scratch, what.replace(/\W+/g, '-'));
      const { code, output } = await runCli(['serve'], { ...env, CODEHOST_DATA_DIR: dataDir, CODEHOST_PORT: String(await freePort()) });
      assert.equal(code, 1, output);
      assert.match(output, /^CODEHOST_ADMIN_TOKEN is not set: production mode generates none/m, what);
      assert.match(output, /^CODEHOST_SECRET_KEY is not set: production mode/m, what);
      assert.equal(existsSync(dataDir), false, 'nothing is created');
    }
  });

  test('CODEHOST_MODE=laptop may still be chosen: the banner says in one line what reaches it', async () => {
    const port = await freePort();
    const cli = startCli(['serve'], { env: { CODEHOST_MODE: 'laptop', CODEHOST_TRUST_PROXY: 'loopback', CODEHOST_DEMO: '0', CODEHOST_DATA_DIR: join(scratch, 'laptop-chosen'), CODEHOST_PORT: String(port) } });
    try {
      await cli.waitFor(/^admin token/m, 60);
      const lines = cli.output().split('\n').filter((line) => line.startsWith('mode: '));
      assert.deepEqual(lines, ['mode: laptop, chosen by CODEHOST_MODE=laptop although CODEHOST_TRUST_PROXY=loopback: a proxy forwards to it: demo data, generated secrets and test support are open to whoever reaches it']);
    } finally {
      await stopped(cli);
    }
  });
});
