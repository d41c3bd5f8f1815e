// `npm run fuzz -- --requests 100000 [--seed N] [--concurrency N] [--sqlite | --postgres]`: the
// fuzzer of test/fuzz/fuzzer.ts against a fresh server (the demo data loaded). The database is
// PostgreSQL when DATABASE_URL is set (or with --postgres, which then needs DATABASE_URL), SQLite
// otherwise or with --sqlite. Prints the statuses and every answer >= 500 or hang with a replay
// line; exits 1 if there was any.
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '10000' },
    seed: { type: 'string', default: '1' },
    concurrency: { type: 'string', default: '4' },
    'timeout-ms': { type: 'string', default: '15000' },
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
const { FUZZ_SERVER_ENV, describeFailure, fuzz } = await import('../test/fuzz/fuzzer.ts');

const requests = Number(values.requests);
const seed = Number(values.seed);
const engine = process.env.DATABASE_URL ? 'PostgreSQL' : 'SQLite';
const server = await startServer(FUZZ_SERVER_ENV);
// Interrupted: the server still closes, so its PostgreSQL database is dropped.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void server.close().finally(() => process.exit(130)));
}
console.log(`fuzzing ${server.url} on ${engine}: ${requests} requests, seed ${seed}, concurrency ${values.concurrency}`);
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
  console.log(`\n${engine}: ${report.requests} requests over ${report.covered}/${report.operations} operations in ${report.seconds.toFixed(1)} s`);
  console.log(`statuses: ${statuses}`);
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
  process.exitCode = report.failures.length ? 1 : 0;
} finally {
  await server.close();
}
