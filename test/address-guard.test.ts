// The webhook address guard end to end: every spelling of a loopback address reaches a loopback
// receiver when private targets are allowed and is refused (in the configuration and at delivery)
// when they are not; link-local and metadata addresses are refused in every spelling, always, and
// never connected to. The default follows where the server listens.
//
// Only loopback receivers are used. The cases that would open a connection to a link-local or
// non-loopback address if the guard were wrong run only after the pure classifier has classed
// those very spellings correctly, with a short delivery timeout.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { addressClass } from '../src/areas/app-webhooks/sender.ts';
import { loadConfig, refusals } from '../src/config.ts';
import { appJwt, type TestApp } from './helpers/credentials.ts';
import { startServer, type TestServer } from './helpers/server.ts';

/** Set once the classifier has classed every spelling the delivery cases below would connect to. */
let classifierOk = false;

const LINK_LOCAL_SPELLINGS = [
  'http://169.254.169.254/latest/meta-data/',
  'http://[::169.254.169.254]/',
  'http://[::ffff:169.254.169.254]/',
  'http://[::ffff:a9fe:a9fe]/',
  'http://[64:ff9b::169.254.169.254]/',
  'http://[2002:a9fe:a9fe::1]/',
  'http://0xa9fea9fe/',
  'http://2852039166/',
  'http://0251.0376.0251.0376/',
  'http://169.254.1/',
  'http://[fe80::1]/',
  'http://100.100.100.200/',
  'http://[fd00:ec2::254]/',
];

describe('the classifier reads every spelling', () => {
  const hostOf = (url: string) => new URL(url).hostname;
  test('link-local and metadata spellings', () => {
    for (const url of LINK_LOCAL_SPELLINGS) assert.match(addressClass(hostOf(url)), /^(link-local|metadata)$/, url);
  });
  test('loopback spellings', () => {
    for (const host of ['127.1', '2130706433', '0x7f000001', '0177.0.0.1', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]', '[::127.0.0.1]', '[::1]', '[2002:7f00:1::]']) {
      assert.equal(addressClass(hostOf(`http://${host}:8080/`)), 'loopback', host);
    }
    classifierOk = true;
  });
});

describe('the default follows the address the server listens on', () => {
  const allowed = (env: Record<string, string>) => loadConfig(env).webhooks.allowPrivateAddresses;
  test('loopback listeners may deliver to private and loopback addresses', () => {
    for (const host of ['127.0.0.1', '127.0.0.2', '::1', 'localhost']) assert.equal(allowed({ CODEHOST_HOST: host }), true, host);
    assert.equal(allowed({}), true, 'the default host is 127.0.0.1');
  });
  test('a server on a network may not; CODEHOST_WEBHOOK_ALLOW_PRIVATE=1 there is refused at start', () => {
    for (const host of ['0.0.0.0', '::', '192.168.1.5', 'code.example.com']) assert.equal(allowed({ CODEHOST_HOST: host }), false, host);
    assert.match(refusals(loadConfig({ CODEHOST_HOST: '0.0.0.0', CODEHOST_WEBHOOK_ALLOW_PRIVATE: '1' })).join('\n'), /^CODEHOST_WEBHOOK_ALLOW_PRIVATE=1: .*in production mode/m);
    assert.equal(allowed({ CODEHOST_HOST: '127.0.0.1', CODEHOST_WEBHOOK_ALLOW_PRIVATE: '0' }), false);
  });
});

/** A receiver on a loopback address that answers 200 and counts what it got. */
async function receiver(host: '127.0.0.1' | '::1'): Promise<{ server: Server; port: number; paths: string[] }> {
  const paths: string[] = [];
  const server = createServer((req, res) => {
    paths.push(req.url ?? '');
    req.resume();
    req.on('end', () => res.writeHead(200).end('{"ok":true}'));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { server, port: (server.address() as AddressInfo).port, paths };
}

async function stop(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

/** A server with one app installed on mona, subscribed to push, whose webhook URL the tests set. */
async function setUp(env: Record<string, string>) {
  const server = await startServer({ CODEHOST_WEBHOOK_TIMEOUT_MS: '300', ...env });
  await server.admin('POST', '/users', { login: 'mona' });
  await server.admin('POST', '/repos', { owner: 'mona', name: 'inside' });
  const app: TestApp = await server.admin('POST', '/apps', { slug: 'guarded', permissions: { contents: 'read' }, events: ['push'] });
  await server.admin('POST', '/apps/guarded/installations', { account: 'mona' });
  // Not installed anywhere: its configuration is checked, nothing is ever delivered to it.
  const idle: TestApp = await server.admin('POST', '/apps', { slug: 'idle', permissions: { contents: 'read' }, events: ['push'] });
  return { server, app, idle };
}

async function patchUrl(server: TestServer, app: TestApp, url: string) {
  return server.api('PATCH', '/app/hook/config', { token: await appJwt(server, app), body: { url } });
}

/** Stores a URL as it is, past the configuration's check (a URL saved before the policy changed). */
async function storeUrl(server: TestServer, app: TestApp, url: string): Promise<void> {
  await server.server.ctx.db.kysely.updateTable('app_webhooks').set({ url }).where('app_id', '=', app.id).execute();
}

/** One push delivered; answers the newest delivery's status and code. */
async function deliverPush(server: TestServer, app: TestApp): Promise<[string, number]> {
  await server.admin('POST', '/events', { event: 'push', repository: 'mona/inside' });
  await server.drain();
  const list = await server.api('GET', '/app/hook/deliveries?per_page=1', { token: await appJwt(server, app) });
  assert.equal(list.status, 200, list.text);
  return [list.body[0].status, list.body[0].status_code];
}

describe('private targets allowed (a loopback server, the default)', () => {
  let server: TestServer;
  let app: TestApp;
  let idle: TestApp;
  let v4: Awaited<ReturnType<typeof receiver>>;
  let v6: Awaited<ReturnType<typeof receiver>>;

  before(async () => {
    v4 = await receiver('127.0.0.1');
    v6 = await receiver('::1');
    ({ server, app, idle } = await setUp({}));
  });
  after(async () => {
    await server.close();
    await stop(v4.server);
    await stop(v6.server);
  });

  test('every spelling of a loopback address is delivered to the loopback receiver', async () => {
    const spellings: [string, typeof v4][] = [
      ['127.1', v4], ['2130706433', v4], ['0x7f000001', v4], ['0177.0.0.1', v4], ['[::ffff:127.0.0.1]', v4], ['[::ffff:7f00:1]', v4], ['[::1]', v6],
    ];
    for (const [host, target] of spellings) {
      const path = `/${encodeURIComponent(host)}`;
      const url = `http://${host}:${target.port}${path}`;
      assert.equal((await patchUrl(server, app, url)).status, 200, url);
      assert.deepEqual(await deliverPush(server, app), ['OK', 200], url);
      // The new URL's ping, then the push.
      assert.deepEqual(target.paths.filter((p) => p === path), [path, path], url);
    }
  });

  test('link-local and metadata addresses are refused in the configuration, in every spelling', async () => {
    for (const url of LINK_LOCAL_SPELLINGS) {
      const answer = await patchUrl(server, idle, url);
      assert.equal(answer.status, 422, `${url}: ${answer.text}`);
      assert.equal(answer.body.errors[0].field, 'url');
      assert.match(answer.body.errors[0].message, /^url must not point to a (link-local|metadata) address$/);
    }
    const created = await server.adminRaw('POST', '/apps', { slug: 'metadata-app', webhook: { url: 'http://[::169.254.169.254]/' } });
    assert.equal(created.status, 422, created.text);
  });

  test('and refused at delivery, before any connection', { timeout: 20_000 }, async (t) => {
    if (!classifierOk) return t.skip('the classifier failed: delivering would reach the network');
    for (const url of ['http://[::169.254.169.254]/', 'http://[::ffff:a9fe:a9fe]/', 'http://0xa9fea9fe/', 'http://[2002:a9fe:a9fe::1]/', 'http://[fd00:ec2::254]/']) {
      await storeUrl(server, app, url);
      const [status, code] = await deliverPush(server, app);
      // "refused to connect": the guard before connecting, not the check on the connected socket.
      assert.match(status, /^blocked: refused to connect to a (link-local|metadata) address$/, url);
      assert.equal(code, 0);
    }
  });
});

describe('private targets refused (CODEHOST_WEBHOOK_ALLOW_PRIVATE=0)', () => {
  let server: TestServer;
  let app: TestApp;
  let idle: TestApp;
  let v4: Awaited<ReturnType<typeof receiver>>;
  let v6: Awaited<ReturnType<typeof receiver>>;

  before(async () => {
    v4 = await receiver('127.0.0.1');
    v6 = await receiver('::1');
    ({ server, app, idle } = await setUp({ CODEHOST_WEBHOOK_ALLOW_PRIVATE: '0' }));
  });
  after(async () => {
    await server.close();
    await stop(v4.server);
    await stop(v6.server);
  });

  const spellings = () => [
    `http://127.1:${v4.port}/`, `http://2130706433:${v4.port}/`, `http://0x7f000001:${v4.port}/`, `http://[::ffff:127.0.0.1]:${v4.port}/`,
    `http://[::ffff:7f00:1]:${v4.port}/`, `http://[::1]:${v6.port}/`, `http://[::127.0.0.1]:${v4.port}/`, `http://[2002:7f00:1::]:${v4.port}/`,
  ];

  test('every spelling of a loopback address is refused in the configuration', async () => {
    for (const url of spellings()) {
      const answer = await patchUrl(server, idle, url);
      assert.equal(answer.status, 422, `${url}: ${answer.text}`);
      assert.equal(answer.body.errors[0].message, 'url must not point to a loopback address');
    }
    assert.equal((await patchUrl(server, idle, 'http://10.0.0.8/hook')).status, 422);
  });

  test('and at delivery, before any connection: the receivers get nothing', { timeout: 20_000 }, async (t) => {
    if (!classifierOk) return t.skip('the classifier failed: delivering would reach the network');
    for (const url of spellings()) {
      await storeUrl(server, app, url);
      assert.deepEqual(await deliverPush(server, app), ['blocked: refused to connect to a loopback address', 0], url);
    }
    assert.deepEqual([...v4.paths, ...v6.paths], []);
  });
});
