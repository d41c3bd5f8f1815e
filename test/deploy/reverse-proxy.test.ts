// deploy/nginx.conf as written (its port and upstream replaced), run by Debian's nginx as a child
// process (own prefix, pid and logs in a temporary directory, a free port; never the system service)
// in front of `codehost serve` with CODEHOST_TRUST_PROXY=loopback and CODEHOST_WEB_URL naming nginx:
// url fields and Link headers name the proxy, X-Forwarded-For names the client (one the client
// sends cannot pick its rate-limit bucket), and the body limits answer 413.
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { NGINX, NGINX_MISSING, nginxConfiguration, nginxPrefix } from '../helpers/nginx.ts';
import { createTestDatabase, engine, type TestDatabase } from '../helpers/database.ts';
import { eventually, freePort, portOpen, startCli, type CliProcess } from '../helpers/process.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
const ADMIN = 'reverse-proxy-test-admin-token-0123456789';
const MONA = 'chp_DemoMonaClassicToken00000000013Mkcu6';

let database: TestDatabase;
let server: CliProcess;
let nginx: ChildProcess;
let prefix: string;
let proxy: string;

before(async () => {
  if (!NGINX) return;
  database = await createTestDatabase();
  const [codehostPort, nginxPort] = [await freePort(), await freePort()];
  proxy = `http://127.0.0.1:${nginxPort}`;
  server = startCli(['serve', ...(database.databaseUrl ? ['--seed', join(ROOT, 'src/admin/demo.yaml')] : [])], {
    env: {
      CODEHOST_DATA_DIR: database.dataDir,
      CODEHOST_PORT: String(codehostPort),
      CODEHOST_ADMIN_TOKEN: ADMIN,
      CODEHOST_LOG_LEVEL: 'warn',
      CODEHOST_TRUST_PROXY: 'loopback',
      CODEHOST_WEB_URL: proxy,
      // nginx's behaviour, with the demo data's credentials: laptop mode, chosen (the proxy would
      // make it production; test/deploy/deployment-mode.test.ts starts the documented production settings).
      CODEHOST_MODE: 'laptop',
      ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}),
    },
  });
  await server.waitFor(/codehost is listening on/, 90);

  prefix = nginxPrefix('codehost-nginx');
  const site = readFileSync(join(ROOT, 'deploy/nginx.conf'), 'utf8')
    .replace(/^(\s*)listen 80;$/m, `$1listen 127.0.0.1:${nginxPort};`)
    .replace('server 127.0.0.1:3000;', `server 127.0.0.1:${codehostPort};`);
  assert.match(site, new RegExp(`listen 127\\.0\\.0\\.1:${nginxPort};`));
  const args = nginxConfiguration(prefix, site);
  execFileSync(NGINX, ['-t', '-q', ...args]);
  nginx = spawn(NGINX, args, { stdio: ['ignore', 'inherit', 'inherit'] });
  assert.ok(await eventually(() => portOpen(nginxPort), 20), 'nginx listens');
});

after(async () => {
  if (nginx && nginx.exitCode === null) {
    nginx.kill('SIGQUIT');
    await new Promise((resolve) => nginx.once('exit', resolve));
  }
  if (server) {
    server.child.kill('SIGTERM');
    await server.exited();
  }
  if (prefix) rmSync(prefix, { recursive: true, force: true });
  await database?.drop();
});

const skip = NGINX ? false : NGINX_MISSING;

/** A request to nginx from a chosen loopback address (127.0.0.x: Linux routes the whole range). */
function send(options: { path: string; from?: string; method?: string; headers?: Record<string, string>; body?: Buffer }) {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }>((resolve, reject) => {
    const url = new URL(options.path, proxy);
    const req = request({
      host: url.hostname,
      port: url.port,
      path: `${url.pathname}${url.search}`,
      method: options.method ?? 'GET',
      localAddress: options.from ?? '127.0.0.1',
      headers: { accept: 'application/json', ...options.headers, ...(options.body ? { 'content-length': String(options.body.length) } : {}) },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
    });
    // nginx may answer 413 and close before the whole body is sent.
    req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'EPIPE' || error.code === 'ECONNRESET' ? undefined : reject(error)));
    req.end(options.body);
  });
}

test(`${engine}: behind nginx, url fields and Link headers name the proxy's address`, { skip }, async () => {
  const repo = await send({ path: '/api/v3/repos/acme/widgets' });
  assert.equal(repo.status, 200, repo.text);
  const body = JSON.parse(repo.text) as { url: string; html_url: string; issues_url: string };
  assert.equal(body.url, `${proxy}/api/v3/repos/acme/widgets`);
  assert.equal(body.html_url, `${proxy}/acme/widgets`);
  const repos = await send({ path: '/api/v3/orgs/acme/repos?per_page=1', headers: { authorization: `Bearer ${MONA}` } });
  assert.equal(repos.status, 200, repos.text);
  const links = String(repos.headers.link).split(', ');
  assert.ok(links.length >= 2, String(repos.headers.link));
  for (const link of links) assert.ok(link.startsWith(`<${proxy}/api/v3/`), link);
});

test(`${engine}: X-Forwarded-For from nginx names the client; a client's own cannot pick its bucket`, { skip }, async () => {
  const remaining = async (from: string, headers: Record<string, string> = {}) => {
    const answer = await send({ path: '/api/v3/repos/acme/widgets', from, headers });
    assert.equal(answer.status, 200, answer.text);
    return Number(answer.headers['x-ratelimit-remaining']);
  };
  // Two clients (127.0.0.2 and 127.0.0.3) through the same proxy are counted apart.
  const first = await remaining('127.0.0.2');
  assert.equal(await remaining('127.0.0.2'), first - 1);
  const other = await remaining('127.0.0.3');
  assert.equal(other, first, 'another client has its own count');
  // A client naming another address in X-Forwarded-For is still counted as itself.
  assert.equal(await remaining('127.0.0.2', { 'x-forwarded-for': '203.0.113.7' }), first - 2);
  assert.equal(await remaining('127.0.0.3', { 'x-forwarded-for': '127.0.0.2' }), other - 1);
});

test(`${engine}: body limits behind nginx: over 5 MB is codehost's 413 JSON, over 6 MB nginx's 413`, { skip }, async () => {
  const json = (size: number) => Buffer.from(JSON.stringify({ login: 'big', name: 'x'.repeat(size) }));
  const admin = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
  // codehost answers before nginx has passed on the whole body; it reads and discards the rest
  // (src/http/input.ts), so nginx gets the 413 every time, never a reset it would answer 502.
  // Sent several times: the reset was a race that lost now and then.
  for (let attempt = 0; attempt < 5; attempt++) {
    const over = await send({ path: '/_admin/users', method: 'POST', headers: admin, body: json(5.5 * 1024 * 1024) });
    assert.equal(over.status, 413, `attempt ${attempt}: ${over.text.slice(0, 200)}`);
    assert.match(String(over.headers['content-type']), /application\/json/);
    assert.equal((JSON.parse(over.text) as { message: string }).message, 'Payload Too Large', over.text);
  }
  const far = await send({ path: '/_admin/users', method: 'POST', headers: admin, body: json(7 * 1024 * 1024) });
  assert.equal(far.status, 413);
  // A small body goes through.
  const created = await send({ path: '/_admin/users', method: 'POST', headers: admin, body: Buffer.from('{"login":"behind-proxy"}') });
  assert.equal(created.status, 201, created.text);
});
