// `codehost secret-key rotate`, as an operator runs it with every process stopped: the database moves
// from CODEHOST_SECRET_KEY to CODEHOST_NEW_SECRET_KEY in one transaction. A webhook secret sealed with
// the old key still signs deliveries under the new one; a start with the old key then refuses with
// the fingerprint line; neither key is printed; a wrong current key, a weak new key or the same key
// change nothing.
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { keyFingerprint } from '../../src/platform/secrets.ts';
import { createTestDatabase, engine, type TestDatabase } from '../helpers/database.ts';
import { freePort, runCli, startCli, type CliProcess } from '../helpers/process.ts';
import { Receiver } from '../helpers/receiver.ts';

const ADMIN = 'secret-key-rotate-test-admin-token-0123456789';
const WEBHOOK_SECRET = 'the app keeps this one';
const OLD_KEY = randomBytes(32).toString('base64url');
const NEW_KEY = randomBytes(32).toString('base64url');

let database: TestDatabase;
let receiver: Receiver;

before(async () => {
  database = await createTestDatabase();
  receiver = await new Receiver().start();
});
after(async () => {
  await receiver.stop();
  await database.drop();
});

function env(extra: Record<string, string>): Record<string, string> {
  return {
    CODEHOST_DATA_DIR: database.dataDir,
    CODEHOST_DEMO: '0',
    CODEHOST_TEST_CLOCK: '1',
    CODEHOST_LOG_LEVEL: 'warn',
    CODEHOST_ADMIN_TOKEN: ADMIN,
    ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}),
    ...extra,
  };
}

async function serve(key: string): Promise<{ cli: CliProcess; url: string }> {
  const port = await freePort();
  const cli = startCli(['serve'], { env: env({ CODEHOST_PORT: String(port), CODEHOST_SECRET_KEY: key }) });
  await cli.waitFor(/codehost is listening/, 90);
  return { cli, url: `http://127.0.0.1:${port}` };
}

async function stop(cli: CliProcess): Promise<void> {
  cli.child.kill('SIGTERM');
  assert.equal(await cli.exited(), 0);
}

async function admin(url: string, method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${url}/_admin${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  assert.ok(response.ok, `${method} ${path}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** A push to acme/widgets, delivered: the request the receiver got. */
async function deliverPush(url: string, note: string) {
  const before = receiver.received.length;
  const { deliveries } = await admin(url, 'POST', '/events', { event: 'push', repository: 'acme/widgets', sender: 'mona', payload: { note } });
  assert.equal(deliveries, 1);
  await admin(url, 'POST', '/jobs/drain');
  const request = receiver.received.slice(before).find((r) => r.json?.note === note);
  assert.ok(request, `the push "${note}" was delivered`);
  return request;
}

function signedWith(secret: string, request: { bytes: Buffer; headers: Record<string, unknown> }): boolean {
  return request.headers['x-hub-signature-256'] === `sha256=${createHmac('sha256', secret).update(request.bytes).digest('hex')}`;
}

function rotate(extra: Record<string, string>) {
  return runCli(['secret-key', 'rotate'], env(extra));
}

test(`${engine}: secret-key rotate re-seals the webhook secret; the new key serves, the old one is refused`, async () => {
  // Before: a server with the old key, an app whose webhook has a secret; deliveries are signed.
  const first = await serve(OLD_KEY);
  try {
    await admin(first.url, 'POST', '/users', { login: 'mona' });
    await admin(first.url, 'POST', '/orgs', { login: 'acme', owners: ['mona'] });
    await admin(first.url, 'POST', '/repos', { owner: 'acme', name: 'widgets' });
    await admin(first.url, 'POST', '/apps', { slug: 'signed-app', permissions: { contents: 'read' }, events: ['push'], webhook: { url: receiver.url('/hook'), secret: WEBHOOK_SECRET } });
    await admin(first.url, 'POST', '/apps/signed-app/installations', { account: 'acme' });
    assert.ok(signedWith(WEBHOOK_SECRET, await deliverPush(first.url, 'before')));
  } finally {
    await stop(first.cli);
  }

  // Refusals change nothing: no new key, a weak one, the key in force, a current key that is not the database's.
  const missing = await rotate({ CODEHOST_SECRET_KEY: OLD_KEY });
  assert.equal(missing.code, 1);
  assert.match(missing.output, /CODEHOST_NEW_SECRET_KEY is not set/);
  const weak = await rotate({ CODEHOST_SECRET_KEY: OLD_KEY, CODEHOST_NEW_SECRET_KEY: 'k3k3k3' });
  assert.equal(weak.code, 1);
  assert.match(weak.output, /CODEHOST_NEW_SECRET_KEY has 6 characters/);
  const same = await rotate({ CODEHOST_SECRET_KEY: OLD_KEY, CODEHOST_NEW_SECRET_KEY: OLD_KEY });
  assert.equal(same.code, 1);
  assert.match(same.output, /is the key in force/);
  const wrong = await rotate({ CODEHOST_SECRET_KEY: randomBytes(32).toString('base64url'), CODEHOST_NEW_SECRET_KEY: NEW_KEY });
  assert.equal(wrong.code, 1);
  assert.match(wrong.output, /CODEHOST_SECRET_KEY is not the key this database is used with/);

  // The rotation: one secret sealed again; the fingerprints named, never the keys.
  const rotated = await rotate({ CODEHOST_SECRET_KEY: OLD_KEY, CODEHOST_NEW_SECRET_KEY: NEW_KEY });
  assert.equal(rotated.code, 0, rotated.output);
  assert.match(rotated.output, new RegExp(`1 sealed secret sealed again; the database's key is now fingerprint ${keyFingerprint(NEW_KEY)} \\(was ${keyFingerprint(OLD_KEY)}\\)`));
  assert.ok(!rotated.output.includes(OLD_KEY) && !rotated.output.includes(NEW_KEY), 'no key is printed');

  // The old key now refuses to start, with the fingerprint line.
  const port = await freePort();
  const old = startCli(['serve'], { env: env({ CODEHOST_PORT: String(port), CODEHOST_SECRET_KEY: OLD_KEY }) });
  assert.equal(await old.exited(), 1);
  assert.match(old.output(), new RegExp(`CODEHOST_SECRET_KEY is not the key this database is used with \\(this key's fingerprint is ${keyFingerprint(OLD_KEY)}, the database's ${keyFingerprint(NEW_KEY)}\\)`));

  // The new key serves, and the stored webhook secret still signs deliveries.
  const second = await serve(NEW_KEY);
  try {
    const request = await deliverPush(second.url, 'after');
    assert.ok(signedWith(WEBHOOK_SECRET, request), `signed with the app's secret: ${String(request.headers['x-hub-signature-256'])}`);
  } finally {
    await stop(second.cli);
  }
});
