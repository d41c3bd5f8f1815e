// Neighbours of a GET (issue 43): the methods a route answers beside the one the access tests send.
// - HEAD next to GET: for every GET route (the server's OpenAPI document, so a new route is a new row,
//   plus the /repositories/{repository_id}/... twins the router registers and the document hides),
//   and every caller below, a HEAD answers exactly as the GET: the same status, the same headers
//   (the access decision's, the rate limit's, the validators, Link, Content-Type, Cache-Control, ...)
//   and no body at all (read off the socket, not through a client that drops it).
// - The writes next to GET: a path that answers only GET (and HEAD) answers POST, PUT, PATCH and
//   DELETE with the API's 404 (the spec names no 405; the platform answers an unknown route 404).
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import { install, mintInstallationToken } from '../../helpers/app-credentials.ts';
import { appJwt, classicToken } from '../../helpers/credentials.ts';
import { Receiver } from '../../helpers/receiver.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

// --- The callers ---------------------------------------------------------------------------------
// ana owns acme (in acme-ent) and its private repository secret; olga has no relation to any of it;
// hv-app is installed on globex only, so its installation token does not reach acme/secret.
const CALLERS = ['anon', 'outsider', 'owner', 'instElsewhere', 'jwt'] as const;
type Caller = (typeof CALLERS)[number];
const credentials = {} as Record<Caller, string | null>;

let server: TestServer;
/** hv-app's webhook receiver: a delivery for the app's JWT to read. */
let receiver: Receiver;
/** The value of each path parameter: everything points at acme/secret and what is in it. */
const params: Record<string, string> = {};
/** GET paths of the OpenAPI document, and the by-id twins the router adds (hidden from the document). */
let getPaths: string[] = [];
/** Paths the document gives GET only. */
let getOnlyPaths: string[] = [];
/** Every documented operation as its method and a pattern of the paths it answers. */
let operations: { method: string; pattern: RegExp }[] = [];

const ALL_SCOPES = ['repo', 'admin:org', 'admin:enterprise', 'notifications', 'manage_billing:assistant', 'user'];

/** Headers that differ between any two answers (or belong to the connection), never to the resource or its access decision. */
const PER_ANSWER = new Set(['date', 'connection', 'keep-alive', 'x-vendor-request-id', 'transfer-encoding', 'x-ratelimit-remaining', 'x-ratelimit-used']);
/** Headers whose value follows the machine's load (the poll interval grows under load): on both answers or neither. */
const PRESENCE_ONLY = new Set(['x-poll-interval']);

interface RawAnswer {
  status: number;
  headers: Map<string, string>;
  /** Bytes after the header block. */
  body: Buffer;
}

/** One request on its own socket (Connection: close), the answer as the bytes that came back. */
function raw(method: string, path: string, authorization: string | null, extra: Record<string, string> = {}): Promise<RawAnswer> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const all = Buffer.concat(chunks);
      const split = all.indexOf('\r\n\r\n');
      if (split < 0) return reject(new Error(`${method} ${path}: no header block in ${JSON.stringify(all.toString())}`));
      const [statusLine, ...lines] = all.subarray(0, split).toString('latin1').split('\r\n');
      const headers = new Map<string, string>();
      for (const line of lines) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).trim().toLowerCase();
        const value = line.slice(colon + 1).trim();
        headers.set(name, headers.has(name) ? `${headers.get(name)}, ${value}` : value);
      }
      resolve({ status: Number(statusLine!.split(' ')[1]), headers, body: all.subarray(split + 4) });
    });
    socket.write([
      `${method} /api/v3${path} HTTP/1.1`, `Host: ${hostname}:${port}`, 'Accept: application/vnd.vendor+json', 'Connection: close',
      ...(authorization ? [`Authorization: ${authorization}`] : []), ...Object.entries(extra).map(([name, value]) => `${name}: ${value}`), '', '',
    ].join('\r\n'));
  });
}

/** The path with its parameters filled in (the configuration of the enterprise on its paths). */
function fill(template: string): string {
  return template.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const key = name === 'configuration_id' && template.startsWith('/enterprises/') ? 'enterprise_configuration_id' : name;
    const value = params[key];
    assert.ok(value !== undefined, `${template}: no value for {${name}} (add it to the world)`);
    return value;
  });
}

before(async () => {
  server = await startServer({
    CODEHOST_RATE_LIMIT: '1000000',
    CODEHOST_RATE_LIMIT_CONTENT_PER_MINUTE: '1000000',
    CODEHOST_RATE_LIMIT_CONTENT_PER_HOUR: '1000000',
    CODEHOST_RATE_LIMIT_ANONYMOUS: '1000000',
    CODEHOST_MIGRATION_EXPORTS_PER_USER: '1000000',
    CODEHOST_ASSISTANT_METRICS_SUNSET: 'never',
  });
  for (const login of ['ana', 'olga']) await server.admin('POST', '/users', { login });
  await server.admin('POST', '/enterprises', { slug: 'acme-ent', owners: ['ana'] });
  await server.admin('POST', '/orgs', { login: 'acme', enterprise: 'acme-ent', owners: ['ana'] });
  await server.admin('POST', '/orgs', { login: 'globex', owners: ['ana'] });
  await server.admin('POST', '/repos', { owner: 'globex', name: 'plans', visibility: 'private' });
  await server.admin('POST', '/orgs/acme/teams', { slug: 'devs', members: ['ana'] });
  const secret = await server.admin('POST', '/repos', { owner: 'acme', name: 'secret', visibility: 'private', init_git: true });
  await server.admin('POST', '/repos', { owner: 'ana', name: 'diary', visibility: 'private', init_git: true });
  await server.admin('PUT', '/orgs/acme/assistant', { metrics_policy: 'enabled' });
  const owner = await classicToken(server, 'ana', ALL_SCOPES);
  const as = async (method: string, path: string, body?: unknown) => {
    const response = await server.api(method, path, { token: owner, body });
    assert.ok(response.status < 300, `${method} ${path}: ${response.status} ${response.text}`);
    return response.body;
  };

  receiver = await new Receiver().start();
  const app = await server.admin('POST', '/apps', {
    slug: 'hv-app', events: ['issues'], webhook: { url: receiver.url('/hook'), content_type: 'json' },
    permissions: { organization_administration: 'write', administration: 'read', organization_issue_types: 'write', members: 'read', metadata: 'read', issues: 'read', pull_requests: 'read' },
  });
  const installation = await install(server, app, 'globex');
  Object.assign(credentials, {
    anon: null,
    outsider: `Bearer ${await classicToken(server, 'olga', ALL_SCOPES)}`,
    owner: `Bearer ${owner}`,
    instElsewhere: `Bearer ${await mintInstallationToken(server, app, installation)}`,
    jwt: `Bearer ${await appJwt(server, app)}`,
  } satisfies Record<Caller, string | null>);

  const issue = await server.admin('POST', '/repos/acme/secret/issues', { author: 'ana', title: 'An issue' });
  const pull = await server.admin('POST', '/repos/acme/secret/issues', { author: 'ana', title: 'A pull request', pull_request: true });
  const comment = await server.admin('POST', `/repos/acme/secret/issues/${issue.number}/comments`, { author: 'ana', body: 'A comment' });
  await server.admin('PATCH', `/repos/acme/secret/issues/${issue.number}`, { actor: 'ana', assignees: ['ana'] });
  const thread = await server.admin('POST', '/notifications', {
    login: 'ana', repository: 'acme/secret', reason: 'mention', subject: { type: 'Issue', title: 'A thread', url: `${server.apiUrl}/repos/acme/secret/issues/${issue.number}` },
  });
  const configuration = await as('POST', '/orgs/acme/code-security/configurations', { name: 'Baseline' });
  const enterpriseConfiguration = await as('POST', '/enterprises/acme-ent/code-security/configurations', { name: 'Enterprise baseline' });
  await as('POST', `/orgs/acme/code-security/configurations/${configuration.id}/attach`, { scope: 'selected', selected_repository_ids: [secret.id] });
  const migration = await as('POST', '/user/migrations', { repositories: ['diary'], exclude_attachments: true });
  await server.admin('POST', '/events', { event: 'issues', action: 'opened', repository: 'globex/plans', sender: 'ana', payload: {} });
  await server.drain();
  const deliveries = await server.api('GET', '/app/hook/deliveries', { authorization: credentials.jwt! });
  assert.ok(deliveries.status === 200 && deliveries.body.length > 0, `a delivery of hv-app: ${deliveries.status} ${deliveries.text}`);
  // A check run on acme/secret's main, by an app installed on acme.
  const checker = await server.admin('POST', '/apps', { slug: 'hv-checks', owner: 'acme', permissions: { checks: 'write', metadata: 'read' } });
  const run = await server.api('POST', '/repos/acme/secret/check-runs', { token: await mintInstallationToken(server, checker, await install(server, checker, 'acme')), body: { name: 'build', head_sha: 'main' } });
  assert.equal(run.status, 201, run.text);
  const events = await as('GET', `/repos/acme/secret/issues/${issue.number}/events`);
  assert.ok(events.length > 0, 'an issue event');
  const reaction = await as('POST', `/repos/acme/secret/issues/${issue.number}/reactions`, { content: 'eyes' });
  const review = await as('POST', `/repos/acme/secret/pulls/${pull.number}/reviews`, { event: 'COMMENT', body: 'A review' });

  Object.assign(params, {
    owner: 'acme', repo: 'secret', repository_id: String(secret.id), username: 'ana', org: 'acme', team_slug: 'devs', enterprise: 'acme-ent',
    app_slug: 'hv-app', installation_id: String(installation), issue_number: String(issue.number), pull_number: String(pull.number),
    comment_id: String(comment.id), event_id: String(events[0].id), thread_id: String(thread.id), migration_id: String(migration.id),
    configuration_id: String(configuration.id), enterprise_configuration_id: String(enterpriseConfiguration.id),
    delivery_id: String(deliveries.body[0].id), assignee: 'ana', name: 'bug', reaction_id: String(reaction.id), ref: 'main', branch: 'main', sha: 'main', check_run_id: String(run.body.id),
    review_id: String(review.id),
  });

  const document = (await fetch(`${server.url}/openapi.json`).then((r) => r.json())) as { paths: Record<string, Record<string, unknown>> };
  const documented = Object.entries(document.paths).filter(([, methods]) => 'get' in methods).map(([path]) => path);
  // The router's hidden twins: every /repos/{owner}/{repo}/... GET answers at /repositories/{repository_id}/... too.
  const twins = documented.filter((path) => path.startsWith('/repos/{owner}/{repo}/')).map((path) => path.replace('/repos/{owner}/{repo}/', '/repositories/{repository_id}/'))
    .filter((path) => !documented.includes(path));
  for (const twin of twins) assert.ok(server.server.app.hasRoute({ method: 'GET', url: `/api/v3${twin.replace(/\{([^}]+)\}/g, ':$1')}` }) || server.server.app.hasRoute({ method: 'GET', url: twin.replace(/\{([^}]+)\}/g, ':$1') }), `the router serves ${twin}`);
  getPaths = [...documented, ...twins];
  operations = Object.entries(document.paths).flatMap(([path, methods]) => Object.keys(methods).map((method) => ({
    method: method.toUpperCase(), pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
  })));
  const documentedGetOnly = Object.entries(document.paths)
    .filter(([, methods]) => Object.keys(methods).filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m)).join() === 'get')
    .map(([path]) => path);
  const twinOf = (path: string) => path.replace('/repos/{owner}/{repo}/', '/repositories/{repository_id}/');
  // The twins' writes too: PUT /repositories/{repository_id}/notifications is the PUT of /repos/{owner}/{repo}/notifications.
  operations.push(...Object.entries(document.paths).filter(([path]) => twinOf(path) !== path).flatMap(([path, methods]) => Object.keys(methods).map((method) => ({
    method: method.toUpperCase(), pattern: new RegExp(`^${twinOf(path).replace(/\{[^}]+\}/g, '[^/]+')}$`),
  }))));

  getOnlyPaths = [...documentedGetOnly, ...documentedGetOnly.filter((path) => twinOf(path) !== path && twins.includes(twinOf(path))).map(twinOf)];
});

after(async () => {
  await server?.close();
  await receiver?.stop();
});

// --- HEAD next to GET ----------------------------------------------------------------------------

test('the table has rows: every GET route of the document and the twins', () => {
  assert.ok(getPaths.length >= 60, `${getPaths.length} GET paths`);
  assert.ok(getPaths.includes('/repos/{owner}/{repo}') && getPaths.includes('/repositories/{repository_id}/issues/{issue_number}'));
});

/** The differences between a GET's answer and the HEAD's of the same caller after it (`again`: a GET after the HEAD), as sentences. */
function differences(get: RawAnswer, head: RawAnswer, again: RawAnswer): string[] {
  const problems: string[] = [];
  if (head.status !== get.status) problems.push(`status ${head.status}, GET ${get.status}`);
  if (head.body.length) problems.push(`a body of ${head.body.length} bytes: ${JSON.stringify(head.body.subarray(0, 80).toString())}`);
  const names = new Set([...get.headers.keys(), ...head.headers.keys()]);
  for (const name of names) {
    if (PER_ANSWER.has(name)) continue;
    if (PRESENCE_ONLY.has(name)) {
      if (head.headers.has(name) !== get.headers.has(name)) problems.push(`${name} on one method only`);
      continue;
    }
    // A HEAD may leave the length out; where it gives one, it is the GET's.
    if (name === 'content-length' && !head.headers.has(name)) continue;
    if (head.headers.get(name) !== get.headers.get(name)) problems.push(`${name}: ${JSON.stringify(head.headers.get(name) ?? null)}, GET ${JSON.stringify(get.headers.get(name) ?? null)}`);
  }
  // The rate limit: the HEAD counts (or not: GET /rate_limit is free) as the GET does, the GET after it as the one before.
  const count = (answer: RawAnswer, name: string) => (answer.headers.has(name) ? Number(answer.headers.get(name)) : null);
  for (const name of ['x-ratelimit-used', 'x-ratelimit-remaining']) {
    const [before, during, after] = [count(get, name), count(head, name), count(again, name)];
    if ((before === null) !== (during === null)) problems.push(`${name} on one method only`);
    else if (before !== null && during! - before !== after! - during!) problems.push(`${name}: GET ${before}, HEAD ${during}, GET ${after}: the HEAD does not count as the GET`);
  }
  return problems;
}

for (const caller of CALLERS) {
  test(`HEAD answers as GET, every GET route, caller ${caller}`, async (t) => {
    const statuses = new Set<number>();
    for (const template of getPaths) {
      await t.test(`HEAD ${template} as ${caller}`, async () => {
        const path = fill(template);
        const get = await raw('GET', path, credentials[caller]);
        const head = await raw('HEAD', path, credentials[caller]);
        const again = await raw('GET', path, credentials[caller]);
        statuses.add(get.status);
        assert.deepEqual(differences(get, head, again), [], `HEAD ${path} as ${caller} (GET answered ${get.status})`);
        // The validators of a 200 work on both methods: the copy the GET gave is current for a HEAD too (a 304, no body, the same tag).
        for (const [validator, condition] of [['etag', 'If-None-Match'], ['last-modified', 'If-Modified-Since']] as const) {
          const value = get.status === 200 ? get.headers.get(validator) : undefined;
          if (!value) continue;
          const conditionalGet = await raw('GET', path, credentials[caller], { [condition]: value });
          const conditionalHead = await raw('HEAD', path, credentials[caller], { [condition]: value });
          assert.equal(conditionalGet.status, 304, `GET ${path} with ${condition}`);
          assert.deepEqual({ status: conditionalHead.status, body: conditionalHead.body.length, [validator]: conditionalHead.headers.get(validator) },
            { status: 304, body: 0, [validator]: conditionalGet.headers.get(validator) }, `HEAD ${path} as ${caller} with ${condition}`);
        }
      });
    }
    // The rows reach the access decisions, not only successes (per caller: a 404, a 403 or a 401 among them).
    assert.ok([...statuses].some((status) => status >= 400), `${caller}: some refusal among ${[...statuses]}`);
  });
}

test('the rows see every kind of access decision', async () => {
  const seen = new Map<Caller, Set<number>>();
  for (const caller of CALLERS) {
    seen.set(caller, new Set());
    for (const template of getPaths) seen.get(caller)!.add((await raw('HEAD', fill(template), credentials[caller])).status);
  }
  assert.ok(seen.get('anon')!.has(401) && seen.get('anon')!.has(404), 'anonymous: 401 and 404');
  assert.ok(seen.get('outsider')!.has(404), 'outsider: 404 (the hidden private repository)');
  assert.ok(seen.get('owner')!.has(200), 'owner: 200');
  assert.ok(seen.get('instElsewhere')!.has(404) && seen.get('instElsewhere')!.has(403), 'installation elsewhere: 404 and 403');
  assert.ok(seen.get('jwt')!.has(200) && seen.get('jwt')!.has(403), 'JWT: 200 and 403');
});

// --- The writes next to GET ----------------------------------------------------------------------

const WRITES = ['POST', 'PUT', 'PATCH', 'DELETE'] as const;
for (const method of WRITES) {
  test(`${method} on a path that answers GET only: the API's 404`, async (t) => {
    assert.ok(getOnlyPaths.length >= 30, `${getOnlyPaths.length} GET-only paths`);
    for (const template of getOnlyPaths) {
      // A write another operation answers at the same path (PATCH .../configurations/defaults is the PATCH of
      // configuration "defaults") is that operation's, not this path's.
      if (operations.some((operation) => operation.method === method && operation.pattern.test(fill(template)))) continue;
      for (const caller of ['anon', 'owner'] as const) {
        await t.test(`${method} ${template} as ${caller}`, async () => {
          const path = fill(template);
          const response = await server.api(method, path, { ...(credentials[caller] ? { authorization: credentials[caller]! } : {}), body: {} });
          assert.equal(response.status, 404, `${method} ${path}: ${response.text}`);
          assert.equal(response.body?.message, 'Not Found');
          assert.equal(response.headers.get('allow'), null, 'no Allow header: not a 405');
          assert.ok(response.headers.has('x-ratelimit-limit'), 'the 404 carries the rate limit, as any API answer');
        });
      }
    }
  });
}
