// An app as the ecosystem builds one: @octokit/auth-app and @octokit/core, unchanged but for the
// base URL. The app's JWT finds the app and its installation; auth-app mints an installation token
// itself (POST /app/installations/{id}/access_tokens) and drives the installation's repositories and
// an organization's code security configurations with it; an issue opened on the platform reaches
// the app's webhook receiver, and @octokit/webhooks-methods verifies its signature.
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createAppAuth } from '@octokit/auth-app';
import { Octokit } from '@octokit/core';
import { verify } from '@octokit/webhooks-methods';
import { startServer, type TestServer } from '../../helpers/server.ts';

const WEBHOOK_SECRET = 'octokit-app-webhook-secret';

let server: TestServer;
let receiver: Server;
let receiverUrl: string;
const received: { headers: IncomingHttpHeaders; body: string }[] = [];
let app: { id: number; slug: string; client_id: string; private_key: string };
let repositoryId: number;

before(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks`;

  server = await startServer();
  await server.admin('POST', '/users', { login: 'mona' });
  await server.admin('POST', '/orgs', { login: 'octo-org', owners: ['mona'] });
  repositoryId = (await server.admin('POST', '/repos', { owner: 'octo-org', name: 'vault', visibility: 'private' })).id;
  app = await server.admin('POST', '/apps', {
    slug: 'octo-app',
    name: 'Octo App',
    owner: 'mona',
    permissions: { organization_administration: 'write', issues: 'read', metadata: 'read' },
    events: ['issues'],
    webhook: { url: receiverUrl, secret: WEBHOOK_SECRET, content_type: 'json' },
  });
  await server.admin('POST', '/apps/octo-app/installations', { account: 'octo-org', repositories: 'all' });
});

after(async () => {
  await server.close();
  receiver.closeAllConnections();
  await new Promise((resolve) => receiver.close(resolve));
});

/** An Octokit as an app writes it: only the base URL points here. */
function appOctokit(installationId?: number) {
  return new Octokit({
    baseUrl: server.apiUrl,
    authStrategy: createAppAuth,
    auth: { appId: app.id, privateKey: app.private_key, ...(installationId ? { installationId } : {}) },
  });
}

describe('an app driven by @octokit/auth-app and @octokit/core', () => {
  let installationId: number;

  test('the app JWT: GET /app, its installations, the installation on the organization', async () => {
    const octokit = appOctokit();
    const { data: self } = await octokit.request('GET /app');
    assert.equal(self!.id, app.id);
    assert.equal(self!.slug, 'octo-app');
    assert.equal(self!.owner && 'login' in self!.owner ? self!.owner.login : null, 'mona');
    assert.deepEqual(self!.events, ['issues']);
    assert.equal(self!.installations_count, 1);

    const { data: installation } = await octokit.request('GET /orgs/{org}/installation', { org: 'octo-org' });
    installationId = installation.id;
    assert.equal(installation.app_id, app.id);
    assert.equal(installation.target_type, 'Organization');
    assert.equal(installation.account && 'login' in installation.account ? installation.account.login : null, 'octo-org');
    assert.deepEqual(installation.permissions, { organization_administration: 'write', issues: 'read', metadata: 'read' });

    const { data: list } = await octokit.request('GET /app/installations');
    assert.deepEqual(list.map((i) => i.id), [installationId]);
    const { data: one } = await octokit.request('GET /app/installations/{installation_id}', { installation_id: installationId });
    assert.equal(one.id, installationId);
    const { data: byRepo } = await octokit.request('GET /repos/{owner}/{repo}/installation', { owner: 'octo-org', repo: 'vault' });
    assert.equal(byRepo.id, installationId);
    const { data: publicApp } = await new Octokit({ baseUrl: server.apiUrl }).request('GET /apps/{app_slug}', { app_slug: 'octo-app' });
    assert.equal(publicApp!.id, app.id);
  });

  test('the installation token auth-app mints: repositories and an organization code security call', async () => {
    const octokit = appOctokit(installationId);
    const authentication = (await octokit.auth({ type: 'installation' })) as {
      token: string; expiresAt: string; permissions: Record<string, string>; repositorySelection: string; tokenType: string;
    };
    assert.equal(authentication.tokenType, 'installation');
    assert.equal(authentication.repositorySelection, 'all');
    assert.deepEqual(authentication.permissions, { organization_administration: 'write', issues: 'read', metadata: 'read' });
    const lifetime = Date.parse(authentication.expiresAt) - Date.now();
    assert.ok(lifetime > 59 * 60_000 && lifetime <= 60 * 60_000, `expires in ${lifetime} ms`);

    const { data: repositories } = await octokit.request('GET /installation/repositories');
    assert.equal(repositories.total_count, 1);
    assert.equal(repositories.repositories[0]!.id, repositoryId);
    assert.equal(repositories.repositories[0]!.full_name, 'octo-org/vault');
    assert.equal(repositories.repositories[0]!.private, true);

    const listed = await octokit.request('GET /orgs/{org}/code-security/configurations', { org: 'octo-org' });
    assert.equal(listed.status, 200);
    assert.ok(Array.isArray(listed.data));
    const created = await octokit.request('POST /orgs/{org}/code-security/configurations', { org: 'octo-org', name: 'Octo baseline', description: 'from an app' });
    assert.equal(created.status, 201);
    assert.equal(created.data.name, 'Octo baseline');
  });

  test('a narrowed token through auth-app, then DELETE /installation/token revokes it', async () => {
    const octokit = appOctokit(installationId);
    const narrowed = (await octokit.auth({ type: 'installation', repositoryNames: ['vault'], refresh: true })) as {
      token: string; repositorySelection: string; repositoryNames?: string[];
    };
    assert.equal(narrowed.repositorySelection, 'selected');
    assert.deepEqual(narrowed.repositoryNames, ['vault']);

    const { token } = (await octokit.auth({ type: 'installation', refresh: true })) as { token: string };
    const plain = new Octokit({ baseUrl: server.apiUrl, auth: token });
    assert.equal((await plain.request('GET /installation/repositories')).status, 200);
    assert.equal((await plain.request('DELETE /installation/token')).status, 204);
    await assert.rejects(plain.request('GET /installation/repositories'), (error: { status?: number }) => error.status === 401);
  });

  test('an issue opened on the platform reaches the webhook, signed', async () => {
    const issue = await server.admin('POST', '/repos/octo-org/vault/issues', { author: 'mona', title: 'Rotate the keys', body: 'private details' });
    await server.drain();
    const delivery = received.find((r) => r.headers['x-vendor-event'] === 'issues');
    assert.ok(delivery, `received: ${received.map((r) => r.headers['x-vendor-event']).join(', ')}`);
    const signature = delivery.headers['x-hub-signature-256'];
    assert.equal(typeof signature, 'string');
    assert.equal(await verify(WEBHOOK_SECRET, delivery.body, signature as string), true);
    assert.equal(await verify('another secret', delivery.body, signature as string), false);
    const payload = JSON.parse(delivery.body);
    assert.equal(payload.action, 'opened');
    assert.equal(payload.issue.number, issue.number);
    assert.equal(payload.repository.id, repositoryId);
    assert.equal(payload.installation.id, installationId);
  });
});
