// The same helper with the server in a child process on codehost's pinned Node.js 24: this file
// runs on any Node 18+ (Node 20's `node --test` included) and with any test runner.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startCodehost } from 'codehost/testing/child';

let codehost;
before(async () => {
  codehost = await startCodehost({ seed: { users: [{ login: 'mona' }], orgs: [{ login: 'acme', owners: ['mona'] }] } });
});
after(() => codehost.stop());

test('the seeded world answers, and the journal says who asked', async () => {
  const response = await fetch(`${codehost.apiUrl}/orgs/acme`, { headers: { 'x-vendor-api-version': '2022-11-28' } });
  assert.equal(response.status, 200);
  assert.equal(await codehost.count({ path: '/orgs/acme', status: 200 }), 1);
});

test('a failed admin call rejects with its answer', async () => {
  await assert.rejects(codehost.admin('GET', '/repos/acme/nothing-here/issues'), /answered 404/);
});
