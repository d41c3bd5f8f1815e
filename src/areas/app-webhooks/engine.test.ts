// The webhook signer on its own (no server): the request an attempt becomes is posted to a real local
// receiver, and the signatures are checked over the exact bytes the receiver got, by HMAC with the
// secret and by @octokit/webhooks-methods `verify` (what a receiver runs). The secret is sealed and
// opened by the real Secrets.
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { verify } from '@octokit/webhooks-methods';
import { Secrets } from '../../platform/secrets.ts';
import { vendorNames } from '../../platform/vendor.ts';
import { buildRequest, storedPayloads, type AttemptRequestFacts } from './engine.ts';
import { postWebhook } from './sender.ts';
import { messagePayload } from './store.ts';

const SECRET = 'It’s a secret to everybody';
const secrets = new Secrets('engine test server key');
const ctx = { secrets, perServer: new Map(), vendor: vendorNames('Vendor') };

/** A payload as stored: JSON text with characters that encode to several bytes, and some a form must escape. */
const PAYLOAD = JSON.stringify({ action: 'opened', issue: { title: 'Café & crème: 100% ☕ + "quotes" =?/' }, n: 1 });

const attemptOf = (changes: Partial<AttemptRequestFacts> = {}): AttemptRequestFacts => ({
  content_type: 'json',
  payload: PAYLOAD,
  guid: '0b9c6d5e-1f2a-4b3c-8d4e-5f6a7b8c9d0e',
  event: 'issues',
  hook_id: 41,
  app_id: 7,
  secret: secrets.encrypt(SECRET),
  insecure_ssl: '0',
  ...changes,
});

interface Received {
  headers: IncomingHttpHeaders;
  bytes: Buffer;
}

let url: string;
const received: Received[] = [];
const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    received.push({ headers: request.headers, bytes: Buffer.concat(chunks) });
    response.end('ok');
  });
});

before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
});

after(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** Builds the attempt's request, posts it, and answers what the receiver got. */
async function send(attempt: AttemptRequestFacts, on = ctx): Promise<Received> {
  const before = received.length;
  const result = await postWebhook(buildRequest(on, attempt, url), { timeoutMs: 5000, allowPrivateAddresses: true, allowNetworks: [], responseBodyLimit: 64 });
  assert.equal(result.statusCode, 200, result.status);
  assert.equal(received.length, before + 1);
  return received.at(-1)!;
}

const hmac = (algorithm: 'sha1' | 'sha256', secret: string, bytes: Buffer | string) => `${algorithm}=${createHmac(algorithm, secret).update(bytes).digest('hex')}`;

test('json: the body is the stored payload\'s UTF-8 bytes, signed with the secret (SHA-256 and SHA-1)', async () => {
  const got = await send(attemptOf());
  assert.deepEqual(got.bytes, Buffer.from(PAYLOAD, 'utf8'));
  assert.equal(got.headers['content-type'], 'application/json');
  assert.equal(got.headers['x-hub-signature-256'], hmac('sha256', SECRET, got.bytes));
  assert.equal(got.headers['x-hub-signature'], hmac('sha1', SECRET, got.bytes));
  assert.equal(await verify(SECRET, got.bytes.toString('utf8'), got.headers['x-hub-signature-256'] as string), true);
  assert.equal(await verify('another secret', got.bytes.toString('utf8'), got.headers['x-hub-signature-256'] as string), false);
});

test('form: the body is `payload=` and the payload URL-encoded, and the signatures are of those bytes, not of the payload', async () => {
  const got = await send(attemptOf({ content_type: 'form' }));
  assert.equal(got.bytes.toString('latin1'), `payload=${encodeURIComponent(PAYLOAD)}`);
  assert.equal(new URLSearchParams(got.bytes.toString('utf8')).get('payload'), PAYLOAD);
  assert.equal(got.headers['content-type'], 'application/x-www-form-urlencoded');
  assert.equal(got.headers['x-hub-signature-256'], hmac('sha256', SECRET, got.bytes));
  assert.equal(got.headers['x-hub-signature'], hmac('sha1', SECRET, got.bytes));
  assert.equal(await verify(SECRET, got.bytes.toString('utf8'), got.headers['x-hub-signature-256'] as string), true);
  assert.equal(await verify(SECRET, PAYLOAD, got.headers['x-hub-signature-256'] as string), false);
});

test('the delivery headers: agent, accept, delivery id, event, hook, target', async () => {
  const version = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  const agent = `Vendor-Hookshot/${createHash('sha1').update(`codehost ${version}`).digest('hex').slice(0, 7)}`;
  const got = await send(attemptOf());
  const { host: _host, connection: _connection, 'content-length': length, ...headers } = got.headers;
  assert.equal(length, String(got.bytes.length));
  assert.deepEqual(headers, {
    'user-agent': agent,
    accept: '*/*',
    'content-type': 'application/json',
    'x-vendor-delivery': '0b9c6d5e-1f2a-4b3c-8d4e-5f6a7b8c9d0e',
    'x-vendor-event': 'issues',
    'x-vendor-hook-id': '41',
    'x-vendor-hook-installation-target-id': '7',
    'x-vendor-hook-installation-target-type': 'integration',
    'x-hub-signature': hmac('sha1', SECRET, got.bytes),
    'x-hub-signature-256': hmac('sha256', SECRET, got.bytes),
  });
});

test('under another vendor word (CODEHOST_VENDOR_WORD): the agent and the delivery headers carry it; the signatures keep their names', async () => {
  const got = await send(attemptOf(), { ...ctx, vendor: vendorNames('GitHub') });
  assert.match(String(got.headers['user-agent']), /^GitHub-Hookshot\/[0-9a-f]{7}$/);
  assert.equal(got.headers['x-github-delivery'], '0b9c6d5e-1f2a-4b3c-8d4e-5f6a7b8c9d0e');
  assert.equal(got.headers['x-github-event'], 'issues');
  assert.equal(got.headers['x-github-hook-id'], '41');
  assert.equal(got.headers['x-github-hook-installation-target-id'], '7');
  assert.equal(got.headers['x-github-hook-installation-target-type'], 'integration');
  assert.equal(got.headers['x-vendor-event'], undefined);
  assert.equal(got.headers['x-hub-signature-256'], hmac('sha256', SECRET, got.bytes));
});

test('no secret: no signature headers', async () => {
  const got = await send(attemptOf({ secret: null }));
  assert.equal(got.headers['x-hub-signature-256'], undefined);
  assert.equal(got.headers['x-hub-signature'], undefined);
  assert.deepEqual(got.bytes, Buffer.from(PAYLOAD, 'utf8'));
});

test('each delivery is signed with its own webhook\'s secret', async () => {
  const first = await send(attemptOf({ secret: secrets.encrypt('first secret') }));
  const second = await send(attemptOf({ secret: secrets.encrypt('second secret') }));
  assert.equal(first.headers['x-hub-signature-256'], hmac('sha256', 'first secret', first.bytes));
  assert.equal(second.headers['x-hub-signature-256'], hmac('sha256', 'second secret', second.bytes));
});

test('a secret sealed with another server key is not signed with: the request is refused, saying why', () => {
  const sealedElsewhere = new Secrets('another server key').encrypt(SECRET);
  assert.throws(() => buildRequest(ctx, attemptOf({ secret: sealedElsewhere }), url), {
    message: 'not signed: the webhook secret cannot be decrypted (was CODEHOST_SECRET_KEY changed?)',
  });
});

test('insecure_ssl "1" alone turns certificate checks off', () => {
  assert.equal(buildRequest(ctx, attemptOf({ insecure_ssl: '1' }), url).insecureSsl, true);
  assert.equal(buildRequest(ctx, attemptOf({ insecure_ssl: '0' }), url).insecureSsl, false);
  assert.equal(buildRequest(ctx, attemptOf(), url).url, url);
});

test('the stored payloads compose to the bytes of { ...body, ...installation }, the body stored once unless it has an installation member', () => {
  const installation = (id: number) => ({ installation: { id, node_id: `MDIz${id}`, note: 'ü "q" \\ \u0000\u001f\u2028 ☕ 𝄞' } });
  const bodies: Record<string, unknown>[] = [
    {},
    { action: 'opened', issue: { title: 'Café & crème: "quotes", \\back\\, \n\t\u0001\u007f\ud800 end', body: null }, n: -0, big: 1e21, list: [1, 'two', { three: 3 }] },
    { '0': 'integer-like key first', b: 1, a: { installation: 'nested, not a member' } },
    // A member of its own: the spread replaces it in place (first, middle, last), whatever its value.
    { installation: { id: 1, account: { login: 'whole' } }, action: 'created', sender: { login: 'mona' } },
    { action: 'created', installation: 'x', sender: { login: 'mona' } },
    { action: 'created', installation: undefined, sender: { login: 'mona' } },
    { action: 'created', skipped: undefined, installation: null },
    { only: undefined },
  ];
  const fanOuts = [[installation(1), installation(2), null, installation(3)], [null], [installation(9)], [null, null]];
  for (const body of bodies) {
    for (const members of fanOuts) {
      const stored = storedPayloads(body, members);
      assert.equal(stored.messages.length, members.length);
      members.forEach((member, i) => {
        const message = stored.messages[i]!;
        assert.equal(messagePayload(stored.bodies[message.body]!, message.installation), JSON.stringify({ ...body, ...member }), `${JSON.stringify(body)} with ${JSON.stringify(member)}`);
      });
      // Stored once for every app, unless the body has an installation member of its own.
      if (!Object.hasOwn(body, 'installation')) assert.equal(stored.bodies.length, 1);
      else assert.equal(stored.bodies.length, members.filter((m) => m !== null).length + (members.includes(null) ? 1 : 0));
    }
  }
});

test('a message without an installation sends its body as stored, whatever it is (a payload moved by the migration)', () => {
  assert.equal(messagePayload(PAYLOAD, null), PAYLOAD);
  assert.equal(messagePayload('{"installation":{"id":1},"a":1}', null), '{"installation":{"id":1},"a":1}');
});
