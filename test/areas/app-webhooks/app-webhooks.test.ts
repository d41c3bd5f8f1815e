// App webhooks end to end: the configuration (JWT only), deliveries to a real receiver on a local
// port (signatures, json and form, failures of every kind), which activity reaches which app, the
// deliveries API (pagination, status filter, redelivery, retention), throttling, automatic
// retries and the address guard.
import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import {
  appJwt, appUserToken, classicToken, fineGrainedToken, installationToken, oauthToken, type TestApp,
} from '../../helpers/credentials.ts';
import { Secrets } from '../../../src/platform/secrets.ts';
import { startServer, type Response, type TestServer } from '../../helpers/server.ts';
import { type Answer, Receiver } from '../../helpers/receiver.ts';

const SECRET = 'It’s a Secret to Everybody';

/**
 * The webhook receiver's answers by path: /ok 200, /fail 500, /redirect 302 (to /target), /hang
 * never answers, /big a large body, /nul a body with a NUL byte.
 */
const answer: Answer = (path, res, receiver) => {
  if (path.startsWith('/hang')) return;
  if (path.startsWith('/fail')) return void res.writeHead(500, { 'content-type': 'text/plain' }).end('receiver broke');
  if (path.startsWith('/redirect')) return void res.writeHead(302, { location: receiver.url('/target') }).end();
  if (path.startsWith('/big')) return void res.writeHead(200).end('y'.repeat(5000));
  if (path.startsWith('/nul')) return void res.writeHead(200).end('a\0b');
  res.writeHead(200, { 'content-type': 'application/json', 'x-receiver': 'test' }).end('{"ok":true}');
};

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** The receiver's side of signatures: HMAC of the exact body bytes, compared in constant time. */
function verifySignature(secret: string, body: Buffer, header: string | string[] | undefined, algorithm: 'sha1' | 'sha256'): boolean {
  if (typeof header !== 'string') return false;
  const expected = Buffer.from(`${algorithm}=${createHmac(algorithm, secret).update(body).digest('hex')}`);
  const given = Buffer.from(header);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The app's delivery list (one page of up to 100), with a fresh JWT. */
async function deliveries(server: TestServer, app: TestApp, query = ''): Promise<any[]> {
  const response = await server.api('GET', `/app/hook/deliveries?per_page=100${query}`, { token: await appJwt(server, app) });
  assert.equal(response.status, 200, response.text);
  return response.body;
}

async function patchConfig(server: TestServer, app: TestApp, body: unknown) {
  return server.api('PATCH', '/app/hook/config', { token: await appJwt(server, app), body });
}

describe('app webhooks', () => {
  let server: TestServer;
  let receiver: Receiver;
  let hooks: TestApp;
  let quiet: TestApp;
  let bystander: TestApp;

  /** Records a raw event; answers how many deliveries it produced. */
  async function event(body: Record<string, unknown>): Promise<number> {
    return (await server.admin('POST', '/events', body)).deliveries;
  }

  /** One push to acme/widgets, delivered, and its delivery as the API shows it (newest first). */
  async function deliverOne(payload: Record<string, unknown> = {}): Promise<any> {
    assert.equal(await event({ event: 'push', repository: 'acme/widgets', sender: 'mona', payload }), 1);
    await server.drain();
    return (await deliveries(server, hooks))[0];
  }

  before(async () => {
    receiver = await new Receiver(answer).start();
    server = await startServer({ CODEHOST_WEBHOOK_TIMEOUT_MS: '400', CODEHOST_WEBHOOK_RESPONSE_BODY_LIMIT: '1024' });
    await server.admin('POST', '/users', { login: 'mona' });
    await server.admin('POST', '/users', { login: 'hubot' });
    await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'] });
    await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets' });
    await server.admin('POST', '/repos', { owner: 'acme', name: 'gadgets', visibility: 'private' });
    await server.admin('POST', '/repos', { owner: 'hubot', name: 'elsewhere' });
    hooks = await server.admin('POST', '/apps', {
      slug: 'hooks-app',
      permissions: { issues: 'write', pull_requests: 'write', contents: 'read', metadata: 'read' },
      events: ['push', 'issues', 'issue_comment', 'pull_request', 'installation_target'],
      webhook: { url: receiver.url('/ok'), secret: SECRET },
    });
    // Covers widgets only.
    await server.admin('POST', '/apps/hooks-app/installations', { account: 'acme', repositories: ['widgets'] });
    // Subscribed to push too, but its webhook is inactive; another app has no URL at all.
    quiet = await server.admin('POST', '/apps', { slug: 'quiet-app', permissions: { contents: 'read' }, events: ['push'], webhook: { url: receiver.url('/quiet'), active: false } });
    await server.admin('POST', '/apps/quiet-app/installations', { account: 'acme' });
    await server.admin('POST', '/apps', { slug: 'no-url-app', permissions: { contents: 'read' }, events: ['push'] });
    await server.admin('POST', '/apps/no-url-app/installations', { account: 'acme' });
    // Subscribed to issues only, installed everywhere on acme.
    bystander = await server.admin('POST', '/apps', { slug: 'bystander', permissions: { issues: 'read' }, events: ['issues'], webhook: { url: receiver.url('/bystander') } });
    await server.admin('POST', '/apps/bystander/installations', { account: 'acme' });
  });
  after(async () => {
    await server.close();
    await receiver.stop();
  });

  describe('configuration', () => {
    test('answers the configuration with the secret masked; PATCH changes what it names', async () => {
      const jwt = await appJwt(server, hooks);
      const got = await server.api('GET', '/app/hook/config', { token: jwt });
      assert.equal(got.status, 200);
      assert.deepEqual(got.body, { url: receiver.url('/ok'), content_type: 'json', secret: '********', insecure_ssl: '0' });
      assert.equal(got.headers.get('x-accepted-oauth-scopes'), null);

      const changed = await patchConfig(server, hooks, { content_type: 'form', insecure_ssl: 1 });
      assert.equal(changed.status, 200);
      assert.deepEqual(changed.body, { url: receiver.url('/ok'), content_type: 'form', secret: '********', insecure_ssl: '1' });
      const back = await patchConfig(server, hooks, { content_type: 'json', insecure_ssl: '0', url: receiver.url('/ok') });
      assert.deepEqual(back.body, { url: receiver.url('/ok'), content_type: 'json', secret: '********', insecure_ssl: '0' });
      // An empty PATCH changes nothing.
      assert.deepEqual((await patchConfig(server, hooks, {})).body, back.body);
    });

    test('the secret is stored encrypted, never echoed; an empty secret removes it', async () => {
      const row = await server.server.ctx.db.kysely.selectFrom('app_webhooks').selectAll().where('app_id', '=', hooks.id).executeTakeFirstOrThrow();
      assert.ok(row.secret && !row.secret.includes(SECRET), 'sealed at rest');
      assert.equal(server.server.ctx.secrets.decrypt(row.secret), SECRET);

      const removed = await patchConfig(server, hooks, { secret: '' });
      assert.equal(removed.status, 200);
      assert.equal(removed.body.secret, undefined);
      const restored = await patchConfig(server, hooks, { secret: SECRET });
      assert.equal(restored.body.secret, '********');
      assert.ok(!restored.text.includes(SECRET));
    });

    test('an app created without a webhook has an empty configuration', async () => {
      const app = await server.admin('POST', '/apps', { slug: 'bare-app' });
      const got = await server.api('GET', '/app/hook/config', { token: await appJwt(server, app) });
      assert.deepEqual(got.body, { url: '', content_type: 'json', insecure_ssl: '0' });
    });

    test('bad values are 422 naming the field; nothing is changed', async () => {
      const cases: [unknown, string][] = [
        [{ url: 'ftp://example.com/hook' }, 'url'],
        [{ url: 'not a url' }, 'url'],
        [{ url: '' }, 'url'],
        [{ url: 'http://169.254.169.254/latest/meta-data' }, 'url'],
        [{ url: 'http://[fe80::1]/hook' }, 'url'],
        [{ url: `https://example.com/${'a'.repeat(2100)}` }, 'url'],
        [{ url: 42 }, 'url'],
        [{ content_type: 'xml' }, 'content_type'],
        [{ content_type: 'JSON' }, 'content_type'],
        [{ insecure_ssl: '2' }, 'insecure_ssl'],
        [{ insecure_ssl: 2 }, 'insecure_ssl'],
        [{ insecure_ssl: 0.5 }, 'insecure_ssl'],
        [{ insecure_ssl: true }, 'insecure_ssl'],
        [{ secret: 7 }, 'secret'],
        [{ secret: 'x'.repeat(1025) }, 'secret'],
        [{ url: 'https://example.com/new', content_type: 'xml' }, 'content_type'],
      ];
      for (const [body, field] of cases) {
        const response = await patchConfig(server, hooks, body);
        assert.equal(response.status, 422, JSON.stringify(body));
        assert.equal(response.body.message, 'Validation Failed');
        assert.equal(response.body.errors[0].field, field, JSON.stringify(body));
      }
      const malformed = await server.api('PATCH', '/app/hook/config', { token: await appJwt(server, hooks), rawBody: '{"url":', headers: { 'content-type': 'application/json' } });
      assert.equal(malformed.status, 400);
      assert.equal(malformed.body.message, 'Problems parsing JSON');
      const notObject = await server.api('PATCH', '/app/hook/config', { token: await appJwt(server, hooks), body: ['url'] });
      assert.equal(notObject.status, 400);
      const unchanged = await server.api('GET', '/app/hook/config', { token: await appJwt(server, hooks) });
      assert.deepEqual(unchanged.body, { url: receiver.url('/ok'), content_type: 'json', secret: '********', insecure_ssl: '0' });
    });

    test('a bad webhook on the operator surface is a 422 and no app is left behind', async () => {
      for (const webhook of [{ url: 'gopher://x' }, { content_type: 'yaml' }, { insecure_ssl: 'yes' }, { url: 'http://169.254.169.254/' }]) {
        const response = await server.adminRaw('POST', '/apps', { slug: 'broken-app', webhook });
        assert.equal(response.status, 422, JSON.stringify(webhook));
      }
      const fine = await server.adminRaw('POST', '/apps', { slug: 'broken-app', webhook: { url: 'https://example.com/hook', insecure_ssl: 1, content_type: 'form' } });
      assert.equal(fine.status, 201);
    });
  });

  describe('access: an app JWT only', () => {
    const routes: [string, string, unknown?][] = [
      ['GET', '/app/hook/config'],
      ['PATCH', '/app/hook/config', { content_type: 'json' }],
      ['GET', '/app/hook/deliveries'],
      ['GET', '/app/hook/deliveries/1'],
      ['POST', '/app/hook/deliveries/1/attempts'],
    ];

    test('every other credential is refused: 401 without or with bad credentials, 403 for other token kinds', async () => {
      const other: TestApp & { client_secret: string } = await server.admin('POST', '/apps', { slug: 'matrix-app', permissions: { metadata: 'read' } });
      const tokens: [string, string][] = [
        ['classic with scopes', await classicToken(server, 'mona', ['repo', 'admin:org', 'admin:repo_hook'])],
        ['classic without scopes', await classicToken(server, 'mona', [])],
        ['fine-grained', await fineGrainedToken(server, 'mona', 'acme', { administration: 'write', metadata: 'read' })],
        ['fine-grained for another owner', await fineGrainedToken(server, 'mona', 'mona', { administration: 'write' })],
        ['oauth', await oauthToken(server, other, 'mona', ['repo'])],
        ['app user', await appUserToken(server, other, 'mona')],
        ['installation', await installationToken(server, other, 'acme')],
      ];
      const jwt = await appJwt(server, hooks);
      for (const [method, path, body] of routes) {
        for (const [kind, token] of tokens) {
          const response = await server.api(method, path, { token, body });
          assert.equal(response.status, 403, `${kind} ${method} ${path}`);
          assert.match(response.body.message, /^Resource not accessible by (personal access token|integration)$/);
        }
        const anonymous = await server.api(method, path, { body });
        assert.equal(anonymous.status, 401, `anonymous ${method} ${path}`);
        assert.equal(anonymous.body.message, 'Requires authentication');
        // A JWT needs the Bearer scheme; a forged one is not accepted.
        assert.equal((await server.api(method, path, { authorization: `token ${jwt}`, body })).status, 401);
        const [head, claims] = jwt.split('.');
        assert.equal((await server.api(method, path, { authorization: `Bearer ${head}.${claims}.c2lnbmF0dXJl`, body })).status, 401);
        // Basic client credentials are for the token endpoints only.
        const basic = `Basic ${Buffer.from(`${other.client_id}:${other.client_secret}`).toString('base64')}`;
        assert.equal((await server.api(method, path, { authorization: basic, body })).status, 401);
      }
    });

    test('an app sees only its own deliveries', async () => {
      const mine = await deliverOne();
      const jwt = await appJwt(server, bystander);
      assert.equal((await server.api('GET', `/app/hook/deliveries/${mine.id}`, { token: jwt })).status, 404);
      assert.equal((await server.api('POST', `/app/hook/deliveries/${mine.id}/attempts`, { token: jwt })).status, 422);
      assert.ok(!(await deliveries(server, bystander)).some((d) => d.id === mine.id));
    });
  });

  describe('deliveries', () => {
    test('a json delivery carries the headers and both signatures of the exact body', async () => {
      receiver.received.length = 0;
      const delivery = await deliverOne({ ref: 'refs/heads/main', note: 'ünïcode ✓' });
      const [request] = receiver.on('/ok');
      assert.ok(request);
      const h = request.headers;
      assert.equal(h['x-vendor-delivery'], delivery.guid);
      assert.equal(h['x-vendor-event'], 'push');
      assert.match(String(h['x-vendor-hook-id']), /^\d+$/);
      assert.equal(h['x-vendor-hook-installation-target-id'], String(hooks.id));
      assert.equal(h['x-vendor-hook-installation-target-type'], 'integration');
      assert.match(String(h['user-agent']), /^Vendor-Hookshot\/[0-9a-f]{7}$/);
      assert.equal(h.accept, '*/*');
      assert.equal(h['content-type'], 'application/json');
      assert.ok(verifySignature(SECRET, request.bytes, h['x-hub-signature-256'], 'sha256'));
      assert.ok(verifySignature(SECRET, request.bytes, h['x-hub-signature'], 'sha1'));
      assert.ok(!verifySignature('wrong secret', request.bytes, h['x-hub-signature-256'], 'sha256'));

      const payload = JSON.parse(request.body);
      assert.equal(payload.ref, 'refs/heads/main');
      assert.equal(payload.note, 'ünïcode ✓');
      assert.equal(payload.repository.full_name, 'acme/widgets');
      assert.equal(payload.sender.login, 'mona');
      const installations = await server.server.ctx.db.kysely.selectFrom('installations').select('id').where('app_id', '=', hooks.id).executeTakeFirstOrThrow();
      assert.equal(payload.installation.id, installations.id);
      assert.equal(typeof payload.installation.node_id, 'string');

      assert.deepEqual(Object.keys(delivery).sort(), [
        'action', 'delivered_at', 'duration', 'event', 'guid', 'id', 'installation_id', 'redelivery', 'repository_id', 'status', 'status_code', 'throttled_at',
      ]);
      assert.equal(delivery.status, 'OK');
      assert.equal(delivery.status_code, 200);
      assert.equal(delivery.event, 'push');
      assert.equal(delivery.action, null);
      assert.equal(delivery.redelivery, false);
      assert.equal(delivery.throttled_at, null);
      assert.equal(delivery.installation_id, installations.id);
      assert.match(delivery.delivered_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
      assert.equal(typeof delivery.duration, 'number');

      const detail = await server.api('GET', `/app/hook/deliveries/${delivery.id}`, { token: await appJwt(server, hooks) });
      assert.equal(detail.status, 200);
      assert.equal(detail.body.url, receiver.url('/ok'));
      assert.equal(detail.body.guid, delivery.guid);
      assert.deepEqual(detail.body.request.payload, payload);
      assert.equal(detail.body.request.headers['x-hub-signature-256'], h['x-hub-signature-256']);
      assert.equal(detail.body.request.headers['x-vendor-delivery'], delivery.guid);
      assert.equal(detail.body.response.headers['x-receiver'], 'test');
      assert.equal(detail.body.response.payload, '{"ok":true}');
      assert.ok(!detail.text.includes(SECRET));
    });

    test('a form delivery posts payload=<url-encoded JSON>, signed as sent', async () => {
      await patchConfig(server, hooks, { content_type: 'form' });
      try {
        receiver.received.length = 0;
        const delivery = await deliverOne({ form: 'a&b=c' });
        const [request] = receiver.on('/ok');
        assert.equal(request!.headers['content-type'], 'application/x-www-form-urlencoded');
        assert.ok(verifySignature(SECRET, request!.bytes, request!.headers['x-hub-signature-256'], 'sha256'));
        assert.ok(verifySignature(SECRET, request!.bytes, request!.headers['x-hub-signature'], 'sha1'));
        const payload = JSON.parse(new URLSearchParams(request!.body).get('payload')!);
        assert.equal(payload.form, 'a&b=c');
        assert.equal(delivery.status, 'OK');
      } finally {
        await patchConfig(server, hooks, { content_type: 'json' });
      }
    });

    test('without a secret no signature is sent', async () => {
      await patchConfig(server, hooks, { secret: '' });
      try {
        receiver.received.length = 0;
        await deliverOne();
        const [request] = receiver.on('/ok');
        assert.equal(request!.headers['x-hub-signature-256'], undefined);
        assert.equal(request!.headers['x-hub-signature'], undefined);
      } finally {
        await patchConfig(server, hooks, { secret: SECRET });
      }
    });

    test('failures are recorded: 500, a timeout, a redirect (not followed), a closed port, a capped body', async () => {
      const closed = await closedPort();
      const cases: [string, string, number][] = [
        [receiver.url('/fail'), 'Invalid HTTP Response: 500', 500],
        [receiver.url('/hang'), 'timed out', 0],
        [receiver.url('/redirect'), 'Invalid HTTP Response: 302', 302],
        [`http://127.0.0.1:${closed}/hook`, 'failed to connect to host', 0],
      ];
      try {
        for (const [url, status, code] of cases) {
          await patchConfig(server, hooks, { url });
          receiver.received.length = 0;
          const delivery = await deliverOne();
          assert.deepEqual([delivery.status, delivery.status_code], [status, code], url);
          const detail = (await server.api('GET', `/app/hook/deliveries/${delivery.id}`, { token: await appJwt(server, hooks) })).body;
          assert.equal(detail.url, url);
          assert.equal(detail.request.headers['x-vendor-delivery'], delivery.guid);
          if (code === 0) assert.deepEqual(detail.response, { headers: {}, payload: null });
          if (code === 500) assert.equal(detail.response.payload, 'receiver broke');
          if (code === 302) {
            assert.equal(detail.response.headers.location, receiver.url('/target'));
            assert.deepEqual(receiver.on('/target'), [], 'the redirect was not followed');
          }
          if (status === 'timed out') assert.ok(delivery.duration >= 0.39 && delivery.duration < 5, String(delivery.duration));
        }
        await patchConfig(server, hooks, { url: receiver.url('/big') });
        const big = await deliverOne();
        const detail = (await server.api('GET', `/app/hook/deliveries/${big.id}`, { token: await appJwt(server, hooks) })).body;
        assert.equal(big.status, 'OK');
        assert.equal(detail.response.payload, 'y'.repeat(1024));
        // Any bytes are stored (PostgreSQL text cannot hold NUL: it becomes U+FFFD).
        await patchConfig(server, hooks, { url: receiver.url('/nul') });
        const nul = await deliverOne();
        const nulDetail = (await server.api('GET', `/app/hook/deliveries/${nul.id}`, { token: await appJwt(server, hooks) })).body;
        assert.equal(nulDetail.response.payload, 'a\uFFFDb');
      } finally {
        await patchConfig(server, hooks, { url: receiver.url('/ok') });
      }
    });
  });

  test('a secret sealed with another server key is a recorded failure, not an unsigned post', async () => {
    // What a changed CODEHOST_SECRET_KEY leaves behind.
    const foreign = new Secrets('some other key').encrypt(SECRET);
    await server.server.ctx.db.kysely.updateTable('app_webhooks').set({ secret: foreign }).where('app_id', '=', hooks.id).execute();
    try {
      receiver.received.length = 0;
      const delivery = await deliverOne();
      assert.deepEqual([delivery.status, delivery.status_code], ['not signed: the webhook secret cannot be decrypted (was CODEHOST_SECRET_KEY changed?)', 0]);
      assert.deepEqual(receiver.received, []);
    } finally {
      await patchConfig(server, hooks, { secret: SECRET });
    }
  });

  describe('which activity reaches which app', () => {
    test('only subscribed events, on covered repositories, to active webhooks with a URL', async () => {
      receiver.received.length = 0;
      // push: hooks-app (widgets covered); quiet-app inactive, no-url-app without URL, bystander not subscribed.
      assert.equal(await event({ event: 'push', repository: 'acme/widgets', sender: 'mona' }), 1);
      // gadgets is not among hooks-app's repositories.
      assert.equal(await event({ event: 'push', repository: 'acme/gadgets', sender: 'mona' }), 0);
      // Nobody is installed on hubot's account.
      assert.equal(await event({ event: 'push', repository: 'hubot/elsewhere', sender: 'hubot' }), 0);
      // Nobody subscribes to star.
      assert.equal(await event({ event: 'star', action: 'created', repository: 'acme/widgets', sender: 'mona' }), 0);
      // issues on gadgets: bystander only (installed on all of acme).
      assert.equal(await event({ event: 'issues', action: 'opened', repository: 'acme/gadgets', sender: 'mona' }), 1);
      // An event without a repository reaches the installations on its account.
      assert.equal(await event({ event: 'installation_target', action: 'renamed', account: 'acme', sender: 'mona', payload: { target_type: 'Organization' } }), 1);
      await server.drain();
      assert.deepEqual(receiver.received.map((r) => [r.path, r.headers['x-vendor-event']]).sort(), [
        ['/bystander', 'issues'],
        ['/ok', 'installation_target'],
        ['/ok', 'push'],
      ]);
      const accountEvent = (await deliveries(server, hooks)).find((d) => d.event === 'installation_target');
      assert.equal(accountEvent.repository_id, null);
      assert.equal(accountEvent.action, 'renamed');
      const body = JSON.parse(receiver.on('/ok').find((r) => r.headers['x-vendor-event'] === 'installation_target')!.body);
      assert.deepEqual([body.action, body.target_type, body.repository, body.sender.login], ['renamed', 'Organization', undefined, 'mona']);
      assert.deepEqual(await deliveries(server, quiet), []);
    });

    test('the operator event endpoint checks its input', async () => {
      const cases: [unknown, number][] = [
        [{}, 422],
        [{ event: '' }, 422],
        [{ event: 'Push!' }, 422],
        [{ event: 'push', repository: 'no-slash' }, 422],
        [{ event: 'push', repository: 'acme/nope' }, 404],
        [{ event: 'push', repository: 'acme/widgets', sender: 'ghost' }, 404],
        [{ event: 'push', account: 'ghost' }, 404],
        [{ event: 'push' }, 422],
        [{ event: 'push', repository: 'acme/widgets', payload: 'text' }, 422],
      ];
      for (const [body, status] of cases) {
        assert.equal((await server.adminRaw('POST', '/events', body)).status, status, JSON.stringify(body));
      }
      // The names are read together; each one not found is a 404 naming it, the repository's first.
      const notFound: [Record<string, unknown>, string][] = [
        [{ event: 'push', repository: 'acme/nope', sender: 'ghost' }, 'Repository not found: acme/nope'],
        [{ event: 'push', repository: 'hubot/widgets', sender: 'mona' }, 'Repository not found: hubot/widgets'],
        [{ event: 'push', repository: 'ghost/widgets' }, 'Repository not found: ghost/widgets'],
        [{ event: 'push', repository: 'acme/widgets', sender: 'ghost', account: 'ghost' }, 'User not found: ghost'],
        [{ event: 'push', sender: 'mona', account: 'ghost' }, 'Account not found: ghost'],
      ];
      for (const [body, message] of notFound) {
        const refused = await server.adminRaw('POST', '/events', body);
        assert.deepEqual([refused.status, refused.body.message], [404, message], JSON.stringify(body));
      }
      // As in every route: the case of each name and a `.git` suffix are ignored (nobody subscribes to star).
      for (const body of [{ event: 'star', action: 'created', repository: 'ACME/Widgets.git', sender: 'MONA' }, { event: 'star', action: 'created', account: 'Acme' }, { event: 'star', action: 'created', sender: 'hubot' }]) {
        const accepted = await server.adminRaw('POST', '/events', body);
        assert.deepEqual([accepted.status, accepted.body.deliveries], [201, 0], JSON.stringify(body));
      }
    });

    test('issue, comment and pull request activity carries the platform payloads', async () => {
      receiver.received.length = 0;
      await server.admin('POST', '/repos/acme/widgets/issues', { author: 'mona', title: 'Broken widget', body: 'It broke' });
      await server.admin('POST', '/repos/acme/widgets/issues/1/comments', { author: 'hubot', body: 'Same here' });
      await server.admin('PATCH', '/repos/acme/widgets/issues/1', { actor: 'mona', assignees: ['hubot'] });
      await server.admin('POST', '/repos/acme/widgets/issues', { author: 'hubot', title: 'Fix', pull_request: true, reviewers: ['mona'] });
      await server.admin('PATCH', '/repos/acme/widgets/issues/2', { actor: 'mona', state: 'merged' });
      await server.drain();
      const hooked = receiver.on('/ok').map((r) => ({ event: r.headers['x-vendor-event'], body: JSON.parse(r.body) }));
      const find = (event: string, action: string) => hooked.find((h) => h.event === event && h.body.action === action)?.body;

      const opened = find('issues', 'opened');
      assert.equal(opened.issue.number, 1);
      assert.equal(opened.issue.title, 'Broken widget');
      assert.equal(opened.issue.user.login, 'mona');
      assert.equal(opened.repository.full_name, 'acme/widgets');
      assert.equal(opened.sender.login, 'mona');
      assert.equal(typeof opened.installation.id, 'number');

      const commented = find('issue_comment', 'created');
      assert.equal(commented.comment.body, 'Same here');
      assert.equal(commented.comment.user.login, 'hubot');
      assert.equal(commented.issue.number, 1);
      assert.equal(commented.sender.login, 'hubot');

      const assigned = find('issues', 'assigned');
      assert.equal(assigned.assignee.login, 'hubot');
      assert.deepEqual(assigned.issue.assignees.map((u: any) => u.login), ['hubot']);

      const pull = find('pull_request', 'opened');
      assert.equal(pull.number, 2);
      assert.equal(pull.pull_request.merged, false);
      assert.deepEqual(pull.pull_request.requested_reviewers.map((u: any) => u.login), ['mona']);

      const merged = find('pull_request', 'closed');
      assert.equal(merged.pull_request.merged, true);
      assert.equal(merged.pull_request.state, 'closed');
      assert.match(merged.pull_request.merged_at, /Z$/);

      // bystander subscribes to issues only: the issue events, not the comment or the pull request.
      const theirs = receiver.on('/bystander').map((r) => `${r.headers['x-vendor-event']} ${JSON.parse(r.body).action}`);
      assert.deepEqual(theirs.sort(), ['issues assigned', 'issues opened']);
      const listed = await deliveries(server, hooks);
      assert.ok(listed.some((d) => d.event === 'pull_request' && d.action === 'closed'));
    });
  });

  describe('the deliveries list', () => {
    test('pages newest first through cursors in the Link header, both ways', async () => {
      for (let i = 0; i < 7; i++) {
        assert.equal(await event({ event: 'push', repository: 'acme/widgets', sender: 'mona', payload: { seq: i } }), 1);
      }
      await server.drain();
      const all = await deliveries(server, hooks);
      const jwt = await appJwt(server, hooks);
      const seen: number[] = [];
      let path: string | null = '/app/hook/deliveries?per_page=3';
      const pages: number[][] = [];
      const prevLinks: string[] = [];
      while (path) {
        const response: Response = await server.api('GET', path, { token: jwt });
        assert.equal(response.status, 200);
        pages.push(response.body.map((d: any) => d.id));
        seen.push(...response.body.map((d: any) => d.id));
        const link = response.headers.get('link') ?? '';
        const next = /<([^>]+)>; rel="next"/.exec(link)?.[1];
        const prev = /<([^>]+)>; rel="prev"/.exec(link)?.[1];
        if (pages.length === 1) assert.equal(prev, undefined);
        else prevLinks.push(prev!);
        if (next) {
          const url = new URL(next);
          assert.equal(url.searchParams.get('per_page'), '3');
          assert.ok(url.href.startsWith(server.server.ctx.urls.api));
        }
        path = next ? next.slice(server.server.ctx.urls.api.length) : null;
      }
      assert.deepEqual(seen, all.map((d) => d.id));
      assert.ok(pages.every((p) => p.length <= 3));
      assert.deepEqual([...seen].sort((a, b) => b - a), seen, 'newest first');
      // `prev` of the second page leads back to the first.
      const back = await server.api('GET', prevLinks[0]!.slice(server.server.ctx.urls.api.length), { token: jwt });
      assert.deepEqual(back.body.map((d: any) => d.id), pages[0]);
    });

    test('per_page: default 30, capped at 100, below 1 or not an integer is a 422; a bad cursor is a 422', async () => {
      for (let i = 0; i < 12; i++) await event({ event: 'push', repository: 'acme/widgets', sender: 'mona', payload: { more: i } });
      await server.drain();
      const jwt = await appJwt(server, hooks);
      const total = (await deliveries(server, hooks)).length;
      assert.ok(total > 30, String(total));
      assert.equal((await server.api('GET', '/app/hook/deliveries', { token: jwt })).body.length, 30);
      assert.equal((await server.api('GET', '/app/hook/deliveries?per_page=500', { token: jwt })).body.length, Math.min(total, 100));
      for (const query of ['per_page=0', 'per_page=-1', 'per_page=abc', 'per_page=2.5', 'cursor=garbage', `cursor=${Buffer.from('v1:sideways:3').toString('base64url')}`, 'status=bogus']) {
        const response = await server.api('GET', `/app/hook/deliveries?${query}`, { token: jwt });
        assert.equal(response.status, 422, query);
        assert.equal(response.body.message, 'Validation Failed');
      }
      assert.equal((await server.api('GET', '/app/hook/deliveries/abc', { token: jwt })).status, 422);
      for (const [method, path] of [['GET', '/app/hook/deliveries'], ['GET', '/app/hook/deliveries/1'], ['POST', '/app/hook/deliveries/1/attempts'], ['GET', '/app/hook/config'], ['PATCH', '/app/hook/config']] as const) {
        const versioned = await server.api(method, path, { token: jwt, body: method === 'PATCH' ? {} : undefined, headers: { 'x-vendor-api-version': '1999-01-01' } });
        assert.equal(versioned.status, 400, `${method} ${path}`);
      }
    });

    test('status filters success (200-399) and failure', async () => {
      const all = await deliveries(server, hooks);
      const success = await deliveries(server, hooks, '&status=success');
      const failure = await deliveries(server, hooks, '&status=failure');
      assert.ok(success.length > 0 && failure.length > 0);
      assert.ok(success.every((d) => d.status_code >= 200 && d.status_code < 400));
      assert.ok(failure.every((d) => d.status_code < 200 || d.status_code >= 400));
      assert.ok(success.some((d) => d.status_code === 302), 'a redirect answer counts as success');
      assert.ok(failure.some((d) => d.status_code === 0) && failure.some((d) => d.status_code === 500));
      assert.equal(success.length + failure.length, all.length);
    });

    test('redelivery is a new attempt: 202, same guid, new id, redelivery true', async () => {
      receiver.received.length = 0;
      const original = await deliverOne({ redeliver: 'me' });
      const jwt = await appJwt(server, hooks);
      const accepted = await server.api('POST', `/app/hook/deliveries/${original.id}/attempts`, { token: jwt });
      assert.equal(accepted.status, 202);
      await server.drain();
      const [again] = await deliveries(server, hooks);
      assert.notEqual(again.id, original.id);
      assert.equal(again.guid, original.guid);
      assert.equal(again.redelivery, true);
      assert.equal(again.status, 'OK');
      const sent = receiver.on('/ok');
      assert.equal(sent.length, 2);
      assert.equal(sent[1]!.headers['x-vendor-delivery'], original.guid);
      assert.equal(sent[1]!.body, sent[0]!.body, 'the same payload');
      assert.ok(verifySignature(SECRET, sent[1]!.bytes, sent[1]!.headers['x-hub-signature-256'], 'sha256'));
      // The original is still there, unchanged.
      const first = await server.api('GET', `/app/hook/deliveries/${original.id}`, { token: jwt });
      assert.equal(first.body.redelivery, false);

      assert.equal((await server.api('POST', '/app/hook/deliveries/999999/attempts', { token: jwt })).status, 422);
      assert.equal((await server.api('GET', '/app/hook/deliveries/999999', { token: jwt })).status, 404);
    });

    test('deliveries older than the retention period are gone: 404 on get, 422 on redeliver, then swept', async () => {
      const listed = await deliveries(server, hooks);
      const newest = listed[0];
      await server.advance(3 * 86_400 - 60);
      assert.equal((await server.api('GET', `/app/hook/deliveries/${newest.id}`, { token: await appJwt(server, hooks) })).status, 200);
      await server.advance(120);
      const jwt = await appJwt(server, hooks);
      assert.deepEqual(await deliveries(server, hooks), []);
      assert.equal((await server.api('GET', `/app/hook/deliveries/${newest.id}`, { token: jwt })).status, 404);
      const redeliver = await server.api('POST', `/app/hook/deliveries/${newest.id}/attempts`, { token: jwt });
      assert.equal(redeliver.status, 422);
      await server.drain();
      const db = server.server.ctx.db.kysely;
      const left = await db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      const messages = await db.selectFrom('webhook_messages').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      const payloads = await db.selectFrom('webhook_event_payloads').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      assert.deepEqual([Number(left.n), Number(messages.n), Number(payloads.n)], [0, 0, 0]);
      // New activity is listed again.
      const fresh = await deliverOne();
      assert.equal(fresh.status, 'OK');
    });
  });
});

describe('throttling and automatic retries', () => {
  let server: TestServer;
  let receiver: Receiver;
  let app: TestApp;

  before(async () => {
    receiver = await new Receiver(answer).start();
    server = await startServer({ CODEHOST_WEBHOOK_RATE_PER_SECOND: '4', CODEHOST_WEBHOOK_RETRIES: '2', CODEHOST_WEBHOOK_RETRY_BASE_SECONDS: '1' });
    await server.admin('POST', '/users', { login: 'mona' });
    await server.admin('POST', '/repos', { owner: 'mona', name: 'busy' });
    app = await server.admin('POST', '/apps', { slug: 'busy-app', permissions: { contents: 'read' }, events: ['push'], webhook: { url: receiver.url('/ok') } });
    await server.admin('POST', '/apps/busy-app/installations', { account: 'mona' });
    // Its `installation created` delivery goes before the tests'.
    await server.drain();
    receiver.received.length = 0;
  });
  after(async () => {
    await server.close();
    await receiver.stop();
  });

  test('deliveries over the rate wait and carry throttled_at', async () => {
    const count = 10;
    for (let i = 0; i < count; i++) await server.admin('POST', '/events', { event: 'push', repository: 'mona/busy', payload: { seq: i } });
    const listed = await until('every throttled delivery', async () => {
      const list = (await deliveries(server, app)).filter((d) => d.event === 'push');
      return list.length === count ? list : undefined;
    });
    assert.ok(listed.every((d) => d.status === 'OK'));
    const throttled = listed.filter((d) => d.throttled_at !== null);
    // The events came faster than one per 250 ms: most deliveries waited for their slot.
    assert.ok(throttled.length >= count / 2, `${throttled.length} throttled`);
    assert.ok(throttled.every((d) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/.test(d.throttled_at)));
    const times = receiver.on('/ok').map((r) => r.at).sort((a, b) => a - b);
    // Slots 250 ms apart: never more than 4 in a second, so the 10 spread over at least 1.8 s (2.25 s
    // when every post leaves on its slot; a first post that a busy machine sends late shortens it).
    assert.ok(times.at(-1)! - times[0]! >= 1800, `spread over ${times.at(-1)! - times[0]!} ms`);
    for (let i = 4; i < times.length; i++) assert.ok(times[i]! - times[i - 4]! >= 900, `4 deliveries within ${times[i]! - times[i - 4]!} ms`);
  });

  test('a failed delivery is retried with backoff: new attempts, same guid', async () => {
    await patchConfig(server, app, { url: receiver.url('/fail') });
    receiver.received.length = 0;
    await server.admin('POST', '/events', { event: 'push', repository: 'mona/busy', payload: { retry: true } });
    // The new URL's ping fails (and is retried) too: only the push's attempts are counted.
    const attempts = await until('the original and two retries', async () => {
      const list = (await deliveries(server, app)).filter((d) => d.status_code === 500 && d.event === 'push');
      return list.length === 3 ? list : undefined;
    });
    assert.equal(new Set(attempts.map((d) => d.guid)).size, 1);
    assert.equal(new Set(attempts.map((d) => d.id)).size, 3);
    assert.deepEqual(attempts.map((d) => d.redelivery), [true, true, false]);
    const pushes = () => receiver.on('/fail').filter((r) => r.headers['x-vendor-event'] === 'push');
    const times = pushes().map((r) => r.at);
    assert.equal(times.length, 3);
    // Backoff: about 1 s, then about 2 s.
    assert.ok(times[1]! - times[0]! >= 900, `first retry after ${times[1]! - times[0]!} ms`);
    assert.ok(times[2]! - times[1]! >= 1900, `second retry after ${times[2]! - times[1]!} ms`);
    // No third retry.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.equal(pushes().length, 3);
  });
});

describe('refusing private addresses', () => {
  let server: TestServer;
  let receiver: Receiver;

  before(async () => {
    receiver = await new Receiver(answer).start();
    server = await startServer({ CODEHOST_WEBHOOK_ALLOW_PRIVATE: '0' });
    await server.admin('POST', '/users', { login: 'mona' });
    await server.admin('POST', '/repos', { owner: 'mona', name: 'inside' });
  });
  after(async () => {
    await server.close();
    await receiver.stop();
  });

  test('a private literal is refused in the configuration; a name that resolves to one is refused at delivery', async () => {
    const literal = await server.adminRaw('POST', '/apps', { slug: 'literal-app', permissions: { contents: 'read' }, events: ['push'], webhook: { url: receiver.url('/ok') } });
    assert.equal(literal.status, 422);
    assert.equal(literal.body.errors[0].field, 'url');
    const app = await server.admin('POST', '/apps', { slug: 'named-app', permissions: { contents: 'read' }, events: ['push'], webhook: { url: receiver.url('/ok', 'localhost') } });
    await server.admin('POST', '/apps/named-app/installations', { account: 'mona' });
    assert.equal((await patchConfig(server, app, { url: 'http://10.0.0.8/hook' })).status, 422);
    await server.admin('POST', '/events', { event: 'push', repository: 'mona/inside' });
    await server.drain();
    const [delivery] = await deliveries(server, app);
    assert.deepEqual([delivery.status, delivery.status_code], ['blocked: refused to connect to a loopback address', 0]);
    assert.deepEqual(receiver.received, []);
  });
});
