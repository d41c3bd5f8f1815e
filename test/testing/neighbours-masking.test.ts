// Masking beside the forms it was written for (issue 43): over HTTP, a row per place a secret sits in
// a real request or a real answer × the kind of secret there — Authorization in each form (token,
// Bearer, no scheme, Basic with an app's client secret), a query string, a JSON body, and on the
// answer's side the headers (a migration archive's Location carrying its signature) and the bodies
// (a minted token's `token`, a reset token, an app's client secret and private key, a redirect's
// text, an error echoing what was sent). Each row checks that the request or answer really carried
// the secret, then that it is nowhere whole in what the journal shows (GET /_admin/requests, the
// console's source), in what the count and permissions-used say of it, and that it is masked where
// it stood. Both databases.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { signAppJwt, type TestApp } from '../helpers/credentials.ts';
import { ADMIN_TOKEN, startServer, type Response, type TestServer } from '../helpers/server.ts';

const MONA = 'chp_DemoMonaClassicToken00000000013Mkcu6';
const MONA_FINE = 'chpat_DemoMonaFineGrainedToken0000010GGHiN';
const MONA_OAUTH = 'cho_DemoMonaOAuthToken0000000000010H4Nxz';
const DEMO_CLIENT_ID = 'Iv1.demoapp0000000001';
const DEMO_CLIENT_SECRET = 'demo-client-secret-0000000000000000000000';
const WEBHOOK_SECRET = 'neighbours-webhook-secret-5b7d9f';

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

interface Row {
  /** Where the secret sits × its kind. */
  row: string;
  /** The call; answers what it sent and got, and the secrets to look for (some only known once answered). */
  call: () => Promise<{ response: Response; secrets: string[] }>;
  /** Where in the raw exchange the secret was (proof the row exercises its place). */
  carried: (response: Response, secret: string) => boolean;
  /** The journal entry's field that held it, masked. */
  masked: (entry: any) => unknown;
  /** The entry's path. */
  path: string | RegExp;
}

describe('masking: every place a secret sits in a real exchange × its kind, nowhere whole in the journal', () => {
  let server: TestServer;
  let app: TestApp & { client_secret: string };
  let installationId: number;
  let migrationId: number;
  let archiveLocation: string;
  /** Every secret met, for the last sweep over the whole journal. */
  const all = new Set<string>([ADMIN_TOKEN, MONA, MONA_FINE, MONA_OAUTH, DEMO_CLIENT_SECRET, WEBHOOK_SECRET]);

  before(async () => {
    server = await startServer({ CODEHOST_TEST_MODE: '1' });
    await server.admin('POST', '/reset', { to: 'demo' });
  });
  after(() => server.close());

  const jwt = async () => signAppJwt(app, Math.floor(Date.parse((await server.admin('GET', '/clock')).now) / 1000));

  const ROWS: Row[] = [
    {
      row: 'request Authorization `token` × classic token', path: '/user',
      call: async () => ({ response: await server.api('GET', '/user', { authorization: `token ${MONA}` }), secrets: [MONA] }),
      carried: () => true, masked: (entry) => entry.request.headers.authorization,
    },
    {
      row: 'request Authorization `Bearer` × fine-grained token', path: '/repos/acme/widgets',
      call: async () => ({ response: await server.api('GET', '/repos/acme/widgets', { authorization: `Bearer ${MONA_FINE}` }), secrets: [MONA_FINE] }),
      carried: () => true, masked: (entry) => entry.request.headers.authorization,
    },
    {
      row: 'request Authorization with no scheme × OAuth token', path: '/user/repos',
      call: async () => ({ response: await server.api('GET', '/user/repos', { authorization: MONA_OAUTH }), secrets: [MONA_OAUTH] }),
      carried: () => true, masked: (entry) => entry.request.headers.authorization,
    },
    {
      row: 'request Authorization Basic × client secret; JSON body access_token × OAuth token', path: `/applications/${DEMO_CLIENT_ID}/token`,
      call: async () => ({ response: await server.api('POST', `/applications/${DEMO_CLIENT_ID}/token`, { authorization: basic(DEMO_CLIENT_ID, DEMO_CLIENT_SECRET), body: { access_token: MONA_OAUTH } }), secrets: [DEMO_CLIENT_SECRET, MONA_OAUTH] }),
      carried: (response) => response.status === 200, masked: (entry) => [entry.request.headers.authorization, entry.request.body.access_token],
    },
    {
      row: 'response body `token` × a reset OAuth token (only the answer holds it)', path: `/applications/${DEMO_CLIENT_ID}/token`,
      call: async () => {
        const response = await server.api('PATCH', `/applications/${DEMO_CLIENT_ID}/token`, { authorization: basic(DEMO_CLIENT_ID, DEMO_CLIENT_SECRET), body: { access_token: MONA_OAUTH } });
        return { response, secrets: [response.body?.token, DEMO_CLIENT_SECRET, MONA_OAUTH] };
      },
      carried: (response, secret) => response.status === 200 && (secret !== response.body.token || response.text.includes(secret)), masked: (entry) => entry.response.body.token,
    },
    {
      row: 'request JSON body webhook.secret; response body client_secret, private_key × an app\'s secrets', path: '/_admin/apps',
      call: async () => {
        const created = await fetch(`${server.url}/_admin/apps`, {
          method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ slug: 'masked-app', owner: 'acme', permissions: { metadata: 'read', issues: 'write' }, events: ['issues'], webhook: { url: 'http://127.0.0.1:9/hook', secret: WEBHOOK_SECRET } }),
        });
        const text = await created.text();
        app = JSON.parse(text);
        return { response: { status: created.status, headers: created.headers, body: app, text }, secrets: [WEBHOOK_SECRET, app.client_secret, app.private_key.split('\n')[1]!, ADMIN_TOKEN] };
      },
      carried: (response, secret) => response.status === 201 && (secret === WEBHOOK_SECRET || secret === ADMIN_TOKEN || response.text.includes(secret.replaceAll('\n', '\\n'))),
      masked: (entry) => [entry.request.body.webhook.secret, entry.response.body.client_secret, entry.response.body.private_key],
    },
    {
      row: 'request Authorization Bearer × app JWT; response body `token` × installation token', path: /^\/api\/v3\/app\/installations\/\d+\/access_tokens$|^\/app\/installations\/\d+\/access_tokens$/,
      call: async () => {
        const installation = await server.admin('POST', '/apps/masked-app/installations', { account: 'acme', repositories: 'all' });
        installationId = installation.id;
        const token = await jwt();
        const response = await server.api('POST', `/app/installations/${installationId}/access_tokens`, { authorization: `Bearer ${token}`, body: {} });
        return { response, secrets: [token, response.body?.token] };
      },
      carried: (response) => response.status === 201, masked: (entry) => [entry.request.headers.authorization, entry.response.body.token],
    },
    {
      row: 'query access_token × classic token', path: '/user',
      call: async () => ({ response: await server.api('GET', `/user?access_token=${MONA}`, { token: MONA }), secrets: [MONA] }),
      carried: () => true, masked: (entry) => entry.query.access_token,
    },
    {
      row: 'response Location and the redirect\'s body × a signed archive URL\'s signature', path: /\/user\/migrations\/\d+\/archive$/,
      call: async () => {
        await server.admin('POST', '/repos', { owner: 'mona', name: 'exported', init_git: true });
        const started = await server.api('POST', '/user/migrations', { token: MONA, body: { repositories: ['exported'] } });
        assert.equal(started.status, 201, started.text);
        migrationId = started.body.id;
        await server.drain();
        const response = await server.api('GET', `/user/migrations/${migrationId}/archive`, { token: MONA });
        archiveLocation = response.headers.get('location') ?? '';
        const signature = new URL(archiveLocation).searchParams.get('signature') ?? '';
        return { response, secrets: [signature, MONA] };
      },
      carried: (response, secret) => secret === MONA || (response.status === 302 && response.headers.get('location')!.includes(secret) && response.text.includes(secret)),
      masked: (entry) => [entry.response.headers.location, entry.response.body],
    },
    {
      row: 'response Location alone (HEAD: no body) × a signed archive URL\'s signature', path: /\/user\/migrations\/\d+\/archive$/,
      call: async () => {
        const response = await server.api('HEAD', `/user/migrations/${migrationId}/archive`, { token: MONA });
        const signature = new URL(response.headers.get('location') ?? 'http://127.0.0.1/').searchParams.get('signature') ?? '';
        return { response, secrets: [signature] };
      },
      carried: (response, secret) => response.status === 302 && response.headers.get('location')!.includes(secret) && response.text === '',
      masked: (entry) => entry.response.headers.location,
    },
    {
      row: 'query signature × the signed archive URL followed', path: /^\/_storage\/user-migrations\/\d+\/archive\.tar\.gz$/,
      call: async () => {
        const response = await fetch(archiveLocation);
        await response.arrayBuffer();
        return { response: { status: response.status, headers: response.headers, body: undefined, text: '' }, secrets: [new URL(archiveLocation).searchParams.get('signature')!] };
      },
      carried: (response) => response.status === 200, masked: (entry) => entry.query.signature,
    },
    {
      row: 'error body echoing the input × a token sent where a name goes (422)', path: '/user/repos',
      call: async () => {
        const response = await server.api('POST', '/user/repos', { token: MONA, body: { name: 'a'.repeat(200), description: MONA_FINE, private: 'not-a-boolean' } });
        return { response, secrets: [MONA, MONA_FINE] };
      },
      carried: (response) => response.status >= 400, masked: (entry) => entry.request.body.description,
    },
    {
      row: 'request JSON body secret × webhook secret (PATCH /app/hook/config)', path: '/app/hook/config',
      call: async () => {
        const token = await jwt();
        const response = await server.api('PATCH', '/app/hook/config', { authorization: `Bearer ${token}`, body: { secret: `${WEBHOOK_SECRET}-2` } });
        return { response, secrets: [token, `${WEBHOOK_SECRET}-2`] };
      },
      carried: (response) => response.status === 200, masked: (entry) => entry.request.body.secret,
    },
    {
      row: 'request Authorization Bearer × the admin token', path: '/_admin/clock',
      call: async () => ({ response: await server.adminRaw('GET', '/clock'), secrets: [ADMIN_TOKEN] }),
      carried: () => true, masked: (entry) => entry.request.headers.authorization,
    },
  ];

  for (const row of ROWS) {
    test(row.row, async () => {
      const { response, secrets } = await row.call();
      const found = secrets.filter((secret): secret is string => typeof secret === 'string' && secret.length >= 8);
      assert.equal(found.length, secrets.length, `${row.row}: every secret known (${response.status} ${response.text.slice(0, 300)})`);
      for (const secret of found) {
        all.add(secret);
        assert.ok(row.carried(response, secret), `${row.row}: the exchange carried ${secret.slice(0, 12)}… (${response.status} ${response.text.slice(0, 300)})`);
      }
      const entries = (await server.admin('GET', '/requests?per_page=20')) as any[];
      const entry = entries.find((candidate) => (typeof row.path === 'string' ? candidate.path === row.path || candidate.path === `/api/v3${row.path}` : row.path.test(candidate.path)));
      assert.ok(entry, `${row.row}: an entry for ${row.path} among ${entries.map((e) => e.path).join(', ')}`);
      const shown = JSON.stringify(entry);
      for (const secret of found) assert.ok(!shown.includes(secret) && !shown.includes(JSON.stringify(secret).slice(1, -1)), `${row.row}: ${secret.slice(0, 12)}… whole in ${shown.slice(0, 2000)}`);
      for (const value of [row.masked(entry)].flat()) assert.match(String(value), /\[masked\]/, `${row.row}: masked where it stood: ${shown.slice(0, 2000)}`);
    });
  }

  test('the whole journal, its count and permissions-used: no secret met above is anywhere whole', async () => {
    const views = [
      await server.admin('GET', '/requests?per_page=1000'),
      await server.admin('GET', '/requests/permissions-used'),
      await server.admin('POST', '/requests/count', { token: MONA }),
    ];
    assert.ok((views[0] as unknown[]).length >= ROWS.length);
    assert.ok((views[2] as { count: number }).count > 0, 'the token filter finds the calls by the token\'s last eight');
    const text = JSON.stringify(views);
    for (const secret of all) assert.ok(!text.includes(secret), `${secret.slice(0, 12)}… whole in the journal's views`);
  });
});
