// The export thread's entry. Loading its modules (Kysely, the drivers, tar, the area's own TypeScript)
// is about a fifth of a 60,000-record export's CPU time, so a thread is started ahead (when an export
// is requested, or when its job starts) and kept for the next export (`ExportThreads`): it runs one
// export after another, each job a message. With Node's compile cache the compiled code is reused by
// a new thread, across restarts (src/platform/data-dir.ts); it is enabled here, before those modules load. It is written
// (flushed) after each export has reported its archive, before the thread says it is idle: an export's
// job ends only then, so nothing writes into the data directory once the queue is drained, and a
// thread ended later has nothing left to write.
import { once } from 'node:events';
import { flushCompileCache } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';
import { enableCompileCacheIn } from '../../platform/data-dir.ts';
import type { ExportJob, ThreadMessage } from './export-worker.ts';

const database = workerData as ExportJob['database'];
enableCompileCacheIn(database.dataDir);
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
