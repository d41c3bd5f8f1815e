// The sender on its own: the address guard (literal addresses and names resolved by DNS), the
// deadline, redirects, the response body cap and TLS verification, against real local servers.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { addressClass, blockedReason, postWebhook, type SenderSettings } from './sender.ts';

// Answers that come are given time to come on a loaded machine (a first request under load took
// over 300 ms); the timeout tests use `hurried`.
const settings: SenderSettings = { timeoutMs: 5000, allowPrivateAddresses: true, allowNetworks: [], responseBodyLimit: 64 };
const hurried: SenderSettings = { ...settings, timeoutMs: 300 };
const request = (url: string, insecureSsl = false) => ({ url, headers: { 'content-type': 'application/json' }, body: Buffer.from('{"a":1}'), insecureSsl });

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

describe('address classes', () => {
  const cases: [string, string][] = [
    ['8.8.8.8', 'public'],
    ['2606:4700::1111', 'public'],
    ['169.254.169.254', 'link-local'],
    ['169.254.1.2', 'link-local'],
    ['fe80::1', 'link-local'],
    ['febf::1', 'link-local'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['100.100.100.200', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['0.0.0.0', 'reserved'],
    ['::', 'reserved'],
    ['224.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['127.0.0.1', 'loopback'],
    ['127.8.9.10', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', 'public'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['fd12:3456::1', 'private'],
    // Other spellings of the same addresses: IPv4-compatible, IPv4-mapped in hex, 6to4, NAT64 (both
    // prefixes), the legacy IPv4 forms (decimal, hex, octal, short), zone ids; Teredo is refused whole.
    ['::7f00:1', 'loopback'],
    ['::127.0.0.1', 'loopback'],
    ['::a9fe:a9fe', 'link-local'],
    ['::169.254.169.254', 'link-local'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:a9fe:a9fe', 'link-local'],
    ['0:0:0:0:0:ffff:a9fe:a9fe', 'link-local'],
    ['::ffff:0:a9fe:a9fe', 'link-local'],
    ['2002:a9fe:a9fe::1', 'link-local'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:a00:1::', 'private'],
    ['64:ff9b:1::a9fe:a9fe', 'link-local'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['::a00:1', 'private'],
    ['::808:808', 'reserved'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'reserved'],
    ['2130706433', 'loopback'],
    ['0x7f000001', 'loopback'],
    ['0177.0.0.1', 'loopback'],
    ['127.1', 'loopback'],
    ['0251.0376.0251.0376', 'link-local'],
    ['0xa9fea9fe', 'link-local'],
    ['2852039166', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['[::1]', 'loopback'],
    ['fec0::1', 'private'],
    ['not an address', 'reserved'],
  ];
  for (const [address, kind] of cases) {
    test(`${address} is ${kind}`, () => assert.equal(addressClass(address), kind));
  }

  const open = { allowPrivateAddresses: true, allowNetworks: [] };
  const closed = { allowPrivateAddresses: false, allowNetworks: [] };
  test('private and loopback are refused only when the setting says so; link-local and metadata always', () => {
    assert.equal(blockedReason('127.0.0.1', open), null);
    assert.equal(blockedReason('127.0.0.1', closed), 'loopback');
    assert.equal(blockedReason('10.0.0.1', closed), 'private');
    assert.equal(blockedReason('169.254.169.254', open), 'link-local');
    assert.equal(blockedReason('100.100.100.200', open), 'metadata');
    assert.equal(blockedReason('8.8.8.8', closed), null);
  });

  test('allowed networks open their private and loopback addresses only, in every spelling', () => {
    const company = { allowPrivateAddresses: false, allowNetworks: ['10.20.0.0/16', '100.64.0.0/10', 'fd12:3456::/32', '127.0.0.1/32'] };
    for (const address of ['10.20.0.1', '10.20.255.255', '0x0a140001', '169082881', '::ffff:10.20.0.1', '::ffff:a14:1', 'fd12:3456::1', 'FD12:3456:0:0::9', '127.0.0.1', '127.1', '100.64.0.1']) {
      assert.equal(blockedReason(address, company), null, address);
    }
    for (const [address, kind] of [
      ['10.21.0.1', 'private'], ['10.19.255.255', 'private'], ['192.168.0.1', 'private'], ['fd12:3457::1', 'private'], ['127.0.0.2', 'loopback'], ['::1', 'loopback'],
      // Forms that only embed an allowed IPv4 address are other addresses.
      ['::10.20.0.1', 'private'], ['64:ff9b::10.20.0.1', 'private'], ['2002:a14:1::', 'private'], ['::127.0.0.1', 'loopback'],
      // Inside 100.64.0.0/10, but a metadata service: never.
      ['100.100.100.200', 'metadata'], ['169.254.169.254', 'link-local'], ['0.0.0.0', 'reserved'],
    ] as const) {
      assert.equal(blockedReason(address, company), kind, address);
    }
  });
});

describe('posting', () => {
  const received: string[] = [];
  let port: number;
  let tlsPort: number;
  let closedPort: number;
  const plain = createServer((req: IncomingMessage, res: ServerResponse) => {
    received.push(req.url ?? '');
    req.resume();
    if (req.url === '/hang') return;
    if (req.url === '/slow-body') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('partial');
      return;
    }
    if (req.url === '/redirect') {
      res.writeHead(302, { location: `http://127.0.0.1:${port}/target` });
      return res.end();
    }
    if (req.url === '/big') {
      res.writeHead(200, { 'x-reply': 'big' });
      return res.end('x'.repeat(10_000));
    }
    res.writeHead(req.url === '/fail' ? 503 : 204);
    res.end();
  });
  const tls = createTlsServer(
    { key: readFileSync(new URL('../../../test/fixtures/webhook-tls.key', import.meta.url)), cert: readFileSync(new URL('../../../test/fixtures/webhook-tls.crt', import.meta.url)) },
    (req, res) => {
      req.resume();
      res.end('secure');
    },
  );

  before(async () => {
    port = await listen(plain);
    tlsPort = await listen(tls);
    const probe = createServer();
    closedPort = await listen(probe);
    await new Promise((resolve) => probe.close(resolve));
  });
  after(() => {
    plain.closeAllConnections();
    plain.close();
    tls.closeAllConnections();
    tls.close();
  });

  test('a 2xx is OK with the response recorded', async () => {
    const result = await postWebhook(request(`http://127.0.0.1:${port}/ok`), settings);
    assert.equal(result.status, 'OK');
    assert.equal(result.statusCode, 204);
    assert.deepEqual(result.responseBody, '');
    assert.ok(result.responseHeaders?.date);
  });

  test('another status is an invalid response; a redirect is not followed', async () => {
    const failed = await postWebhook(request(`http://127.0.0.1:${port}/fail`), settings);
    assert.deepEqual([failed.status, failed.statusCode], ['Invalid HTTP Response: 503', 503]);
    received.length = 0;
    const redirected = await postWebhook(request(`http://127.0.0.1:${port}/redirect`), settings);
    assert.deepEqual([redirected.status, redirected.statusCode], ['Invalid HTTP Response: 302', 302]);
    assert.equal(redirected.responseHeaders?.location, `http://127.0.0.1:${port}/target`);
    assert.deepEqual(received, ['/redirect']);
  });

  test('a receiver that does not answer in time has timed out; one that stops mid-body keeps what came', async () => {
    const hung = await postWebhook(request(`http://127.0.0.1:${port}/hang`), hurried);
    assert.deepEqual([hung.status, hung.statusCode, hung.responseBody], ['timed out', 0, null]);
    assert.ok(hung.durationSeconds >= 0.29 && hung.durationSeconds < 2, String(hung.durationSeconds));
    const slow = await postWebhook(request(`http://127.0.0.1:${port}/slow-body`), hurried);
    assert.deepEqual([slow.status, slow.statusCode, slow.responseBody], ['OK', 200, 'partial']);
  });

  test('a closed port fails to connect; an unknown host fails to resolve', async () => {
    const closed = await postWebhook(request(`http://127.0.0.1:${closedPort}/`), settings);
    assert.deepEqual([closed.status, closed.statusCode], ['failed to connect to host', 0]);
    const unknown = await postWebhook(request('http://no-such-host.invalid/'), settings);
    assert.deepEqual([unknown.status, unknown.statusCode], ['failed to resolve host', 0]);
  });

  test('the response body is capped', async () => {
    const big = await postWebhook(request(`http://127.0.0.1:${port}/big`), settings);
    assert.equal(big.status, 'OK');
    assert.equal(big.responseBody, 'x'.repeat(64));
    assert.equal(big.responseHeaders?.['x-reply'], 'big');
  });

  test('link-local and metadata addresses are never connected to; private ones only when allowed, also by name', async () => {
    received.length = 0;
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://[fe80::1]/', 'http://[::ffff:169.254.169.254]/', 'http://100.100.100.200/']) {
      const result = await postWebhook(request(url), settings);
      assert.match(result.status, /^blocked: refused to connect to a (link-local|metadata) address$/, url);
      assert.equal(result.statusCode, 0);
    }
    const strict = { ...settings, allowPrivateAddresses: false };
    const literal = await postWebhook(request(`http://127.0.0.1:${port}/ok`), strict);
    assert.equal(literal.status, 'blocked: refused to connect to a loopback address');
    // A name is checked after DNS resolution, on the address the socket connects to.
    const named = await postWebhook(request(`http://localhost:${port}/ok`), strict);
    assert.equal(named.status, 'blocked: refused to connect to a loopback address');
    assert.deepEqual(received, []);
    const allowed = await postWebhook(request(`http://localhost:${port}/ok`), settings);
    assert.equal(allowed.status, 'OK');
  });

  test('TLS is verified unless insecure_ssl is 1', async () => {
    const verified = await postWebhook(request(`https://127.0.0.1:${tlsPort}/`), settings);
    assert.equal(verified.statusCode, 0);
    assert.match(verified.status, /^TLS certificate not accepted \(/);
    const insecure = await postWebhook(request(`https://localhost:${tlsPort}/`, true), settings);
    assert.deepEqual([insecure.status, insecure.responseBody], ['OK', 'secure']);
  });
});
