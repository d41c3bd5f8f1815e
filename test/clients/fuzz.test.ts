// The fuzzer of test/fuzz/fuzzer.ts with a small seeded budget: every operation of /openapi.json and
// every admin operation (reset and snapshots included, some requests sent 2 to 4 times at once),
// with every kind of credential, hostile values included; no answer may be >= 500 and none may hang.
// `npm run fuzz -- --requests 100000` runs the big one (scripts/fuzz.ts).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ADMIN_LEFT_OUT, ADMIN_OPERATIONS, describeFailure, describeWedge, fuzz, FUZZ_SERVER_ENV } from '../fuzz/fuzzer.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;

before(async () => {
  server = await startServer(FUZZ_SERVER_ENV);
});
after(() => server.close());

/** Every admin route the source registers (`app.get('/_admin/…'`), as `METHOD /_admin/{param}/…`. */
function adminRoutesInSource(): string[] {
  const routes: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) {
        for (const match of readFileSync(path, 'utf8').matchAll(/\b(?:app|gated|ungated)\.(get|post|put|patch|delete)\(\s*'(\/_admin[^']*)'/g)) {
          routes.push(`${match[1]!.toUpperCase()} ${match[2]!.replace(/:([a-z_]+)/g, '{$1}')}`);
        }
      }
    }
  };
  walk(new URL('../../src', import.meta.url).pathname);
  return routes.sort();
}

test('the fuzzer sends every admin operation of the server, but those it names with why', () => {
  const sent = ADMIN_OPERATIONS.map((op) => `${op.method} ${op.path}`);
  assert.equal(new Set(sent).size, sent.length, 'an admin operation listed twice');
  assert.deepEqual([...sent, ...Object.keys(ADMIN_LEFT_OUT)].sort(), adminRoutesInSource());
});

test('a seeded fuzz of every operation, the admin ones too, answers no 5xx and never hangs', async () => {
  const report = await fuzz(server, { requests: 3000, seed: 11, concurrency: 4, timeoutMs: 15_000 });
  assert.equal(report.wedge, null, report.wedge ? describeWedge(server.url, report.wedge) : '');
  assert.equal(report.covered, report.operations, 'every operation got requests');
  assert.ok(report.raced > 0, 'some requests were sent several times at once');
  assert.ok(report.operations >= 80, `the OpenAPI document lists the operations (${report.operations})`);
  assert.ok((report.statuses['200'] ?? 0) > 100, `valid requests get through too: ${JSON.stringify(report.statuses)}`);
  assert.equal(report.failures.length, 0, report.failures.slice(0, 10).map((f) => describeFailure(server.url, f)).join('\n\n'));
});

test('a server that stops answering stops the run as a wedge, with the requests in flight and the last ones', async () => {
  const stuck = await startServer(FUZZ_SERVER_ENV);
  try {
    // Every GET /rate_limit waits 6 s: past the 2 s a request may be in flight before it is a wedge.
    await stuck.admin('POST', '/faults', { effect: 'delay', delay_ms: 6_000, match: { path: '/rate_limit' } });
    const report = await fuzz(stuck, { requests: 3000, seed: 11, concurrency: 4, timeoutMs: 15_000, wedgeSeconds: 2 });
    assert.ok(report.wedge, 'no wedge reported');
    assert.match(report.wedge.reason, /in flight for over 2 s/);
    assert.equal(report.wedge.healthz, 200);
    assert.ok(report.wedge.inFlight.some((sent) => sent.request.path.startsWith('/api/v3/rate_limit') && sent.ms > 2_000), describeWedge(stuck.url, report.wedge));
    assert.ok(report.wedge.recent.length > 0);
    assert.ok(report.requests < 3000, `the run went on: ${report.requests} requests`);
    assert.match(describeWedge(stuck.url, report.wedge), /^WEDGE: .*\nin flight \(\d+\):\n {2}\+[\d.]+ s in flight after \d+ ms: curl /);
  } finally {
    await stuck.close();
  }
});
