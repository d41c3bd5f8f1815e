// The export thread's entry. Loading its modules (Kysely, the drivers, tar, the area's own TypeScript)
// is about a fifth of a 60,000-record export's CPU time, so a thread is started ahead (when an export
// is requested, or when its job starts) and kept for the next export (`ExportThreads`): it runs one
// export after another, each job a message. With Node's compile cache the compiled code is reused by
// a new thread, across restarts; it is enabled here, before those modules load, and only for this
// thread (the server keeps none: writing it would hold up a new data directory's first start, which
// every test-double start pays). The cache lives in the data directory (`compile-cache`;
// NODE_COMPILE_CACHE overrides it), which only the server writes: not in a shared temporary
// directory, where another local user could plant compiled code. A cache that cannot be enabled (an
// unwritable directory) only leaves the modules compiled as before. It is written (flushed) after
// each export has reported its archive, before the thread says it is idle: an export's job ends only
// then, so nothing writes into the data directory once the queue is drained, and a thread ended
// later has nothing left to write.
import { once } from 'node:events';
import { enableCompileCache, flushCompileCache } from 'node:module';
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import type { ExportJob, ThreadMessage } from './export-worker.ts';

const database = workerData as ExportJob['database'];
enableCompileCache(process.env.NODE_COMPILE_CACHE || join(database.dataDir, 'compile-cache'));
const modules = import('./export-worker.ts');
// A failed load fails the thread's first export (awaited below), not before it has one.
modules.catch(() => {});
for (;;) {
  const [job] = (await once(parentPort!, 'message')) as [Omit<ExportJob, 'database'>];
  const { exportOnThisThread } = await modules;
  await exportOnThisThread({ ...job, database });
  flushCompileCache();
  parentPort!.postMessage({ idle: true } satisfies ThreadMessage);
}
