// The webhook address guard end to end: every spelling of a loopback address reaches a loopback
// receiver when private targets are allowed and is refused (in the configuration and at delivery)
// when they are not; link-local and metadata addresses are refused in every spelling, always, and
// never connected to. The default follows where the server listens.
//
// Only loopback receivers are used. The cases that would open a connection to a link-local or
// non-loopback address if the guard were wrong run only after the pure classifier has classed
// those very spellings correctly, with a short delivery timeout.
import assert from 'node:assert/strict';
import { lookup } from 'node:dns/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { addressClass } from '../../../src/areas/app-webhooks/sender.ts';
import { ConfigError, loadConfig, refusals } from '../../../src/config.ts';
import { appJwt, type TestApp } from '../../helpers/credentials.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

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

type Receiver = { server: Server; port: number; paths: string[]; deliveries: { path: string; event: string; guid: string }[] };

/** A receiver on a loopback address that answers 200 and counts what it got. */
async function receiver(host: '127.0.0.1' | '::1'): Promise<Receiver> {
  const paths: string[] = [];
  const deliveries: Receiver['deliveries'] = [];
  const server = createServer((req, res) => {
    paths.push(req.url ?? '');
    deliveries.push({ path: req.url ?? '', event: String(req.headers['x-vendor-event']), guid: String(req.headers['x-vendor-delivery']) });
    req.resume();
    req.on('end', () => res.writeHead(200).end('{"ok":true}'));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { server, port: (server.address() as AddressInfo).port, paths, deliveries };
}

/**
 * The events delivered to `path`, one per delivery GUID: a post whose answer came after the short
 * timeout is posted again with its GUID, which a busy machine may cause and is one delivery still.
 */
function eventsAt(receivers: Receiver[], path: string): string[] {
  const byGuid = new Map(receivers.flatMap((r) => r.deliveries).filter((d) => d.path === path).map((d) => [d.guid, d.event]));
  return [...byGuid.values()].sort();
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
  // The installation's own activity is consumed now, while the app has no URL, not later at one a test set.
  await server.drain();
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
  let v4: Receiver;
  let v6: Receiver;

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
      assert.deepEqual(eventsAt([target], path), ['ping', 'push'], url);
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
  let v4: Receiver;
  let v6: Receiver;

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

// --- Allowed networks: a company's receivers on its own network, in production mode ----------------

describe('CODEHOST_WEBHOOK_ALLOW_NETWORKS: private and loopback networks, checked at start', () => {
  const networks = (value: string, env: Record<string, string> = {}) => loadConfig({ ...env, CODEHOST_WEBHOOK_ALLOW_NETWORKS: value }).webhooks.allowNetworks;
  test('CIDRs and addresses inside the private and loopback ranges', () => {
    assert.deepEqual(loadConfig({}).webhooks.allowNetworks, []);
    assert.deepEqual(networks(''), [], 'empty is unset, as for every setting');
    assert.deepEqual(networks('10.20.0.0/16, 192.168.7.10,127.0.0.0/8 , fd12:3456::/32,::1'), ['10.20.0.0/16', '192.168.7.10/32', '127.0.0.0/8', 'fd12:3456::/32', '::1/128']);
    assert.deepEqual(networks('172.16.0.0/12,100.64.0.0/10,198.18.0.0/15,fc00::/7,fec0::/10'), ['172.16.0.0/12', '100.64.0.0/10', '198.18.0.0/15', 'fc00::/7', 'fec0::/10']);
  });
  test('anything else is refused, naming the value and why', () => {
    const cases: [string, RegExp][] = [
      ['10.0.0.0/33', /"10\.0\.0\.0\/33"/],
      ['10.0.0.0/8/8', /"10\.0\.0\.0\/8\/8"/],
      ['10.0.0.0/255.0.0.0', /"10\.0\.0\.0\/255\.0\.0\.0"/],
      ['loopback', /"loopback"/],
      ['127.1', /"127\.1"/],
      ['0x7f000001', /"0x7f000001"/],
      ['internal.example.com', /"internal\.example\.com"/],
      [',', /at least one network/],
      // Wider than a private range, or outside every one: they would open more than the receivers' network.
      ['0.0.0.0/0', /"0\.0\.0\.0\/0" is not inside a private or loopback range/],
      ['10.0.0.0/7', /"10\.0\.0\.0\/7" is not inside/],
      ['::/0', /"::\/0" is not inside/],
      ['169.254.0.0/16', /"169\.254\.0\.0\/16" is not inside/],
      ['8.8.8.0/24', /"8\.8\.8\.0\/24" is not inside .*public addresses need no allowing/],
      ['::ffff:10.0.0.0/104', /"::ffff:10\.0\.0\.0\/104" is not inside/],
      ['fe80::/10', /"fe80::\/10" is not inside/],
    ];
    for (const [value, message] of cases) {
      assert.throws(() => networks(value), (error: Error) => error instanceof ConfigError && /^CODEHOST_WEBHOOK_ALLOW_NETWORKS[ :]/.test(error.message) && message.test(error.message), value);
    }
  });
  test('production mode accepts them (it refuses CODEHOST_WEBHOOK_ALLOW_PRIVATE=1)', () => {
    const production = {
      CODEHOST_MODE: 'production', CODEHOST_DEMO: '0', CODEHOST_ADMIN_TOKEN: 'chadm_8fK2pQ9xL4mZ7tR1wV6yB3nH5sJ0cD2gE4aU9iO1',
      CODEHOST_SECRET_KEY: 'Jq3v9TzX2mB7wKc5Ld8Rf1Hs6Np4Gy0UeAoViWxZbQ7', CODEHOST_METRICS_TOKEN: 'metrics-7Yc2Kq9Lm4Px8Rt1Vw6Zb3Nh5Sj0Df2Ga',
    };
    assert.deepEqual(refusals(loadConfig({ ...production, CODEHOST_WEBHOOK_ALLOW_NETWORKS: '10.20.0.0/16,127.0.0.0/8' })), []);
    assert.equal(loadConfig({ ...production, CODEHOST_WEBHOOK_ALLOW_NETWORKS: '10.20.0.0/16' }).webhooks.allowPrivateAddresses, false);
    assert.match(refusals(loadConfig({ ...production, CODEHOST_WEBHOOK_ALLOW_PRIVATE: '1' })).join('\n'), /^CODEHOST_WEBHOOK_ALLOW_PRIVATE=1: .*in production mode.*CODEHOST_WEBHOOK_ALLOW_NETWORKS/m);
  });
});

/** A production server (CODEHOST_MODE=production) with `networks` allowed, or none. */
function productionGuard(networks: string | null) {
  return setUp({ CODEHOST_MODE: 'production', ...(networks === null ? {} : { CODEHOST_WEBHOOK_ALLOW_NETWORKS: networks }) });
}

for (const [networks, reachable] of [['127.0.0.0/8', 'v4'], ['::1/128', 'v6'], ['127.0.0.0/8,::1/128', 'both'], [null, 'none']] as const) {
  describe(`production mode, allowed networks: ${networks ?? '(none)'}`, () => {
    let server: TestServer;
    let app: TestApp;
    let idle: TestApp;
    let v4: Receiver;
    let v6: Receiver;

    before(async () => {
      v4 = await receiver('127.0.0.1');
      v6 = await receiver('::1');
      ({ server, app, idle } = await productionGuard(networks));
    });
    after(async () => {
      await server.close();
      await stop(v4.server);
      await stop(v6.server);
    });

    // Every spelling of 127.0.0.1 that is the IPv4 address itself (an IPv4-mapped IPv6 address is what
    // a dual-stack socket reports for it); ::1; and IPv6 forms that only embed 127.0.0.1 (compatible,
    // 6to4): other addresses, allowed by no IPv4 network.
    const ipv4 = () => ['127.1', '2130706433', '0x7f000001', '0177.0.0.1', '0x7f.1', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]'].map((host) => `http://${host}:${v4.port}/${encodeURIComponent(host)}`);
    const ipv6 = () => [`http://[::1]:${v6.port}/v6`, `http://[0:0:0:0:0:0:0:1]:${v6.port}/v6-long`];
    const embedded = () => [`http://[::127.0.0.1]:${v4.port}/`, `http://[2002:7f00:1::]:${v4.port}/`];
    const allowed = () => [...(reachable === 'v4' || reachable === 'both' ? ipv4() : []), ...(reachable === 'v6' || reachable === 'both' ? ipv6() : [])];
    const refused = () => [...(reachable === 'v4' || reachable === 'both' ? [] : ipv4()), ...(reachable === 'v6' || reachable === 'both' ? [] : ipv6()), ...embedded()];

    test('an allowed loopback receiver is reached in every spelling of its address', async () => {
      for (const url of allowed()) {
        assert.equal((await patchUrl(server, app, url)).status, 200, url);
        assert.deepEqual(await deliverPush(server, app), ['OK', 200], url);
        const path = new URL(url).pathname;
        assert.deepEqual(eventsAt([v4, v6], path), ['ping', 'push'], `${url}: the ping and the push`);
      }
    });

    test('any other loopback address is refused in the configuration, in every spelling', async () => {
      for (const url of refused()) {
        const answer = await patchUrl(server, idle, url);
        assert.equal(answer.status, 422, `${url}: ${answer.text}`);
        assert.equal(answer.body.errors[0].message, 'url must not point to a loopback address', url);
      }
    });

    test('and at delivery, before any connection: nothing reaches the receivers', { timeout: 20_000 }, async (t) => {
      if (!classifierOk) return t.skip('the classifier failed: delivering would reach the network');
      const before = v4.paths.length + v6.paths.length;
      for (const url of refused()) {
        await storeUrl(server, app, url);
        assert.deepEqual(await deliverPush(server, app), ['blocked: refused to connect to a loopback address', 0], url);
      }
      assert.equal(v4.paths.length + v6.paths.length, before);
    });

    test('a host name is checked on every address it resolves to, at delivery', { timeout: 20_000 }, async () => {
      const resolved = (await lookup('localhost', { all: true })).map(({ family }) => (family === 4 ? 'v4' : 'v6'));
      const open = resolved.every((family) => reachable === 'both' || reachable === family);
      await storeUrl(server, app, `http://localhost:${v4.port}/by-name`);
      const [status] = await deliverPush(server, app);
      // Allowed, localhost reaches the receiver on 127.0.0.1 (Node tries each address it resolved to).
      assert.equal(status, open ? 'OK' : 'blocked: refused to connect to a loopback address', `localhost is ${resolved.join(', ')}`);
      assert.equal(v4.paths.includes('/by-name'), open);
    });
  });
}
