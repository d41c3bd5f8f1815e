// The server in the test's own process: `codehost/testing` needs Node.js 22.18+ (24 is codehost's).
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { startCodehost } from 'codehost/testing';

const MONA = 'chp_DemoMonaClassicToken00000000013Mkcu6'; // mona, in the demo data
let codehost;
before(async () => {
  codehost = await startCodehost({ demo: true });
  await codehost.snapshot('demo-world');
});
beforeEach(() => codehost.restore('demo-world', { journal: 'clear' }));
after(() => codehost.stop());

const get = (path) => fetch(`${codehost.apiUrl}${path}`, {
  headers: { authorization: `Bearer ${MONA}`, 'x-vendor-api-version': '2022-11-28' },
});

test('my client reads a private repository once, with nothing to fix', async () => {
  assert.equal((await get('/repos/acme/secret-sauce')).status, 200);
  const calls = await codehost.requests({ operation: 'repos/get-repository', login: 'mona' });
  assert.deepEqual(calls.map((call) => [call.status, call.warnings]), [[200, []]]);
});

test('each test starts from the saved world', async () => {
  assert.equal(await codehost.count({ login: 'mona' }), 0);
});
