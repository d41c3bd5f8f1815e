// The export thread's entry. Each export starts a thread that loads its modules afresh (Kysely, the
// drivers, tar, the area's own TypeScript): about a fifth of a 60,000-record export's CPU time. With
// Node's compile cache the compiled code is reused from the second export on, across restarts; it is
// enabled here, before those modules load, and only for this thread. The cache lives in the data
// directory (`compile-cache`; NODE_COMPILE_CACHE overrides it), which only the server writes: not in
// a shared temporary directory, where another local user could plant compiled code. A cache that
// cannot be enabled (an unwritable directory) only leaves the modules compiled as before.
import { enableCompileCache } from 'node:module';
import { join } from 'node:path';
import { workerData } from 'node:worker_threads';
import type { ExportJob } from './export-worker.ts';

const job = workerData as ExportJob;
enableCompileCache(process.env.NODE_COMPILE_CACHE || join(job.database.dataDir, 'compile-cache'));
const { exportOnThisThread } = await import('./export-worker.ts');
await exportOnThisThread(job);
