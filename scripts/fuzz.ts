// `npm run fuzz -- --requests 100000 [--seed N] [--concurrency N] [--max-seconds N] [--wedge-seconds N]
// [--worker] [--sqlite | --postgres]`: the fuzzer of test/fuzz/fuzzer.ts against a fresh server (the demo data
// loaded), the public operations and the admin ones (races among them). The database is PostgreSQL
// when DATABASE_URL is set (or with --postgres, which then needs DATABASE_URL), SQLite otherwise or
// with --sqlite. Prints the statuses and every answer >= 500 or hang with a replay line; exits 1 if
// there was any. A wedge (a request in flight past --wedge-seconds, or a hang while /healthz does
// not answer) stops the run and prints the requests in flight and the last ones; so does an error
// that would end the process. --max-seconds bounds the run.
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '10000' },
    seed: { type: 'string', default: '1' },
    concurrency: { type: 'string', default: '4' },
    'timeout-ms': { type: 'string', default: '15000' },
    'max-seconds': { type: 'string' },
    'wedge-seconds': { type: 'string', default: '30' },
    // The background jobs run in the server too (deliveries, fan-out, exports, sweeps); off by default.
    worker: { type: 'boolean', default: false },
    sqlite: { type: 'boolean', default: false },
    postgres: { type: 'boolean', default: false },
  },
});
if (values.sqlite) delete process.env.DATABASE_URL;
if (values.postgres && !process.env.DATABASE_URL) {
  console.error('--postgres needs DATABASE_URL (a PostgreSQL server where a database may be created), e.g. postgres://postgres@127.0.0.1:5432/postgres');
  process.exit(2);
}
// Imported after DATABASE_URL is settled: the test helpers read it.
const { startServer } = await import('../test/helpers/server.ts');
const { FUZZ_SERVER_ENV, describeFailure, describeSent, describeWedge, fuzz, inFlightNow, journal } = await import('../test/fuzz/fuzzer.ts');

const requests = Number(values.requests);
const seed = Number(values.seed);
const engine = process.env.DATABASE_URL ? 'PostgreSQL' : 'SQLite';
const server = await startServer({ ...FUZZ_SERVER_ENV, ...(values.worker ? { CODEHOST_WORKER: '1' } : {}) });
// Interrupted: the server still closes, so its PostgreSQL database is dropped.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void server.close().finally(() => process.exit(130)));
}
// An error that would end the process (the server runs in it): what was sent last, then the end.
for (const event of ['uncaughtException', 'unhandledRejection'] as const) {
  process.on(event, (error: unknown) => {
    console.log(`\nTHE PROCESS IS ENDING: ${event}: ${(error as Error)?.stack ?? String(error)}`);
    console.log(`in flight:\n${inFlightNow().map((sent) => describeSent(server.url, sent)).join('\n')}`);
    console.log(`the last requests that ended:\n${journal.recent.map((sent) => describeSent(server.url, sent)).join('\n')}`);
    process.exit(1);
  });
}
console.log(`fuzzing ${server.url} on ${engine}: ${requests} requests, seed ${seed}, concurrency ${values.concurrency}, worker ${values.worker ? 'on' : 'off'}`);
// Memory of this process (the server and the fuzzer), in MB: rss, the V8 heap used and held, and
// memory outside the heap (buffers); sampled every second for the peak. Run with
// `node --expose-gc scripts/fuzz.ts` for a forced GC at the end.
const mb = (bytes: number) => Math.round(bytes / 2 ** 20);
const memory = () => {
  const m = process.memoryUsage();
  return `rss ${mb(m.rss)}, heapUsed ${mb(m.heapUsed)}, heapTotal ${mb(m.heapTotal)}, external ${mb(m.external)}, arrayBuffers ${mb(m.arrayBuffers)}`;
};
const rssMb = () => mb(process.memoryUsage().rss);
const rssBefore = rssMb();
const memoryBefore = memory();
let rssPeak = rssBefore;
const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssMb())), 1000);
sampler.unref();
try {
  const report = await fuzz(server, {
    requests,
    seed,
    concurrency: Number(values.concurrency),
    timeoutMs: Number(values['timeout-ms']),
    wedgeSeconds: Number(values['wedge-seconds']),
    ...(values['max-seconds'] ? { maxSeconds: Number(values['max-seconds']) } : {}),
    progressEvery: 5000,
    progress: (done, r) => console.log(`  ${done} requests, ${r.failures.length} failures`),
  });
  for (const failure of report.failures.slice(0, 50)) console.log(`\n${describeFailure(server.url, failure)}`);
  if (report.failures.length > 50) console.log(`\n… and ${report.failures.length - 50} more`);
  const byOperation = new Map<string, number>();
  for (const failure of report.failures) {
    const key = `${failure.outcome} ${failure.request.operation}`;
    byOperation.set(key, (byOperation.get(key) ?? 0) + 1);
  }
  if (byOperation.size) {
    console.log('\nfailures by operation:');
    for (const [key, count] of [...byOperation].sort((a, b) => b[1] - a[1])) console.log(`  ${String(count).padStart(6)}  ${key}`);
  }
  const statuses = Object.entries(report.statuses).sort(([a], [b]) => a.localeCompare(b)).map(([s, n]) => `${s}: ${n}`).join(', ');
  if (report.wedge) console.log(`\n${describeWedge(server.url, report.wedge)}`);
  console.log(`\n${engine}: ${report.requests} requests over ${report.covered}/${report.operations} operations in ${report.seconds.toFixed(1)} s${report.wedge ? ' (stopped: WEDGED)' : report.stoppedAtDeadline ? ' (stopped at --max-seconds)' : ''}`);
  console.log(`raced: ${report.raced} requests sent 2 to 4 at once; the fuzzer's snapshot restored ${report.restores} times`);
  console.log(`statuses: ${statuses}`);
  console.log('admin operations:');
  for (const [operation, counts] of Object.entries(report.adminStatuses).sort(([a], [b]) => a.localeCompare(b))) {
    console.log(`  ${operation}: ${Object.entries(counts).map(([s, n]) => `${s}: ${n}`).join(', ')}`);
  }
  const fivexx = report.failures.filter((f) => typeof f.outcome === 'number').length;
  console.log(`answers >= 500: ${fivexx}; hangs and resets: ${report.failures.length - fivexx}; resets answered on retry: ${report.resetsRetried}`);
  // The server runs in this process: its memory after the burst, and after a pause with the garbage collected.
  clearInterval(sampler);
  const rssAfter = rssMb();
  const memoryAfter = memory();
  await new Promise((resolve) => setTimeout(resolve, 5000));
  const memoryIdle = memory();
  const rssIdle = rssMb();
  globalThis.gc?.();
  console.log(`memory (rss): ${rssBefore} MB before, ${Math.max(rssPeak, rssAfter)} MB peak, ${rssAfter} MB right after, ${rssIdle} MB after 5 s idle${globalThis.gc ? `, ${rssMb()} MB after a forced GC` : ' (no forced GC: run node --expose-gc)'}`);
  console.log(`memory (MB) before:      ${memoryBefore}`);
  console.log(`memory (MB) right after: ${memoryAfter}`);
  console.log(`memory (MB) 5 s idle:    ${memoryIdle}`);
  if (globalThis.gc) console.log(`memory (MB) after a GC:  ${memory()}`);
  process.exitCode = report.failures.length || report.wedge ? 1 : 0;
} finally {
  // A wedged server may not close: bounded.
  const closing = setTimeout(() => {
    console.log('the server did not close within 30 s');
    process.exit(process.exitCode || 1);
  }, 30_000);
  await server.close();
  clearTimeout(closing);
}
