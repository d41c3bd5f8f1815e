// The fuzzer of test/fuzz/fuzzer.ts with a small seeded budget: every operation of /openapi.json,
// with every kind of credential, hostile values included; no answer may be >= 500 and none may hang.
// `npm run fuzz -- --requests 100000` runs the big one (scripts/fuzz.ts).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { describeFailure, fuzz, FUZZ_SERVER_ENV } from './fuzz/fuzzer.ts';
import { startServer, type TestServer } from './helpers/server.ts';

let server: TestServer;

before(async () => {
  server = await startServer(FUZZ_SERVER_ENV);
});
after(() => server.close());

test('a seeded fuzz of every operation answers no 5xx and never hangs', async () => {
  const report = await fuzz(server, { requests: 3000, seed: 11, concurrency: 4, timeoutMs: 15_000 });
  assert.equal(report.covered, report.operations, 'every operation got requests');
  assert.ok(report.operations >= 80, `the OpenAPI document lists the operations (${report.operations})`);
  assert.ok((report.statuses['200'] ?? 0) > 100, `valid requests get through too: ${JSON.stringify(report.statuses)}`);
  assert.equal(report.failures.length, 0, report.failures.slice(0, 10).map((f) => describeFailure(server.url, f)).join('\n\n'));
});
