// The export thread's entry. Each export starts a thread that loads its modules afresh (Kysely, the
// drivers, tar, the area's own TypeScript): about a fifth of a 60,000-record export's CPU time. With
// Node's compile cache (the default place: NODE_COMPILE_CACHE, or node-compile-cache in the system's
// temporary directory) the compiled code is reused from the second export on, across restarts; it is
// enabled here, before those modules load, and only for this thread. A cache that cannot be enabled
// (an unwritable directory) only leaves the modules compiled as before.
import { enableCompileCache } from 'node:module';
import { workerData } from 'node:worker_threads';
import type { ExportJob } from './export-worker.ts';

enableCompileCache();
const { exportOnThisThread } = await import('./export-worker.ts');
await exportOnThisThread(workerData as ExportJob);
