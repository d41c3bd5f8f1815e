// `security_and_analysis` in a repository object, as the platform shows it: only to callers who may
// read the repository's code security configuration — a repository administrator or a security
// manager of its organization, through a credential that reads configurations (`repo`; the
// `administration` permission) — and to the operator. Every other reader gets no such member.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { classicToken, createApp, fineGrainedToken, installationToken } from '../../helpers/credentials.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

let server: TestServer;
const t: Record<string, string | undefined> = {};

before(async () => {
  server = await startServer();
  for (const login of ['mona', 'lisa', 'sam', 'ada']) await server.admin('POST', '/users', { login });
  await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'], members: ['lisa'], security_managers: ['sam'] });
  await server.admin('POST', '/repos', { owner: 'acme', name: 'widgets', visibility: 'public' });
  await server.admin('PUT', '/repos/acme/widgets/collaborators/ada', { permission: 'admin' });
  Object.assign(t, {
    anonymous: undefined,
    owner: await classicToken(server, 'mona', ['repo']),
    ownerPublicOnly: await classicToken(server, 'mona', ['public_repo']),
    member: await classicToken(server, 'lisa', ['repo']),
    securityManager: await classicToken(server, 'sam', ['repo']),
    repositoryAdmin: await classicToken(server, 'ada', ['repo']),
    ownerFineGrained: await fineGrainedToken(server, 'mona', 'acme', { administration: 'read' }),
    ownerFineGrainedMetadata: await fineGrainedToken(server, 'mona', 'acme', { metadata: 'read' }),
    installationAdministration: await installationToken(server, await createApp(server, 'admin-reader', { administration: 'read' }), 'acme'),
    installationMetadata: await installationToken(server, await createApp(server, 'metadata-reader', { metadata: 'read' }), 'acme'),
  });
});
after(() => server.close());

const shown = ['owner', 'securityManager', 'repositoryAdmin', 'ownerFineGrained', 'installationAdministration'];
const hidden = ['anonymous', 'ownerPublicOnly', 'member', 'ownerFineGrainedMetadata', 'installationMetadata'];

describe('security_and_analysis', () => {
  test('the single read: for those who may read the configuration only', async () => {
    for (const name of [...shown, ...hidden]) {
      const response = await server.api('GET', '/repos/acme/widgets', { token: t[name] });
      assert.equal(response.status, 200, `${name}: ${response.text}`);
      assert.equal('security_and_analysis' in response.body, shown.includes(name), name);
    }
    const owner = await server.api('GET', '/repos/acme/widgets', { token: t.owner });
    assert.deepEqual(owner.body.security_and_analysis.secret_scanning, { status: 'disabled' });
  });

  test('the lists: the same rule', async () => {
    for (const name of [...shown, ...hidden]) {
      const response = await server.api('GET', '/orgs/acme/repos', { token: t[name] });
      assert.equal(response.status, 200, `${name}: ${response.text}`);
      assert.equal(response.body.length, 1, name);
      assert.equal('security_and_analysis' in response.body[0], shown.includes(name), name);
    }
  });

  test('the operator sees it', async () => {
    assert.ok((await server.admin('GET', '/repos/acme/widgets')).security_and_analysis);
    assert.ok((await server.admin('GET', '/repos'))[0].security_and_analysis);
  });
});
