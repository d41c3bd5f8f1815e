// /openapi.json as client generators need it: every operation has a unique operationId in the
// platform's style (`area/verb-noun`), tags by area, and an example for each response with a body;
// its `servers` entry is the API URL the server uses.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { operationId } from '../../src/http/openapi.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let document: { servers: { url: string }[]; paths: Record<string, Record<string, any>> };

before(async () => {
  server = await startServer();
  document = (await (await fetch(`${server.url}/openapi.json`)).json()) as typeof document;
});
after(() => server.close());

const operations = () => Object.entries(document.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op })));

test('every operation has a unique operationId of the form area/verb-noun, and a tag', () => {
  const seen = new Map<string, string>();
  assert.ok(operations().length > 50);
  for (const { path, method, op } of operations()) {
    const where = `${method.toUpperCase()} ${path}`;
    assert.match(op.operationId ?? '', /^[a-z-]+\/[a-z0-9-]+$/, where);
    assert.ok(!seen.has(op.operationId), `${op.operationId}: ${where} and ${seen.get(op.operationId)}`);
    seen.set(op.operationId, where);
    assert.ok(Array.isArray(op.tags) && op.tags.length, `${where} has a tag`);
    assert.equal(op.operationId.split('/')[0], op.tags[0], where);
  }
  assert.equal(document.paths['/notifications']!.get.operationId, 'activity/list-notifications-for-authenticated-user');
  assert.equal(document.paths['/user/migrations']!.post.operationId, 'migrations/start-user-migration');
});

test('operation ids are derived from the summary in the platform style', () => {
  assert.equal(operationId('activity', 'List notifications for the authenticated user'), 'activity/list-notifications-for-authenticated-user');
  assert.equal(operationId('repos', "Get a repository's subscription (the caller's; 404 when none)"), 'repos/get-repositorys-subscription');
  assert.equal(operationId('code-security', 'Attach a configuration: to repositories'), 'code-security/attach-configuration');
});

test('every response with a body has an example; errors show the platform body for their status', () => {
  let withBody = 0;
  for (const { path, method, op } of operations()) {
    for (const [status, response] of Object.entries<any>(op.responses)) {
      const media = response.content?.['application/json'];
      if (!media) continue;
      withBody++;
      assert.ok('example' in media || 'examples' in media, `${method.toUpperCase()} ${path} ${status} has an example`);
      if (Number(status) >= 400 && media.schema?.properties?.documentation_url) {
        assert.equal(media.example.status, status);
        assert.equal(typeof media.example.message, 'string');
      }
    }
  }
  assert.ok(withBody > 100);
  const list = document.paths['/notifications']!.get.responses['200'].content['application/json'].example;
  assert.ok(Array.isArray(list) && typeof list[0].id === 'string' && typeof list[0].unread === 'boolean');
});

test('the servers entry is the API URL the server uses; /docs reads the same document', async () => {
  assert.deepEqual(document.servers, [{ url: server.server.ctx.urls.api }]);
  assert.equal(server.server.ctx.urls.api, server.apiUrl);
  const docs = (await (await fetch(`${server.url}/docs/json`)).json()) as typeof document;
  assert.deepEqual(docs.servers, document.servers);
  assert.equal(docs.paths['/notifications']!.get.operationId, 'activity/list-notifications-for-authenticated-user');
});
