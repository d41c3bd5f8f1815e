// The export thread's entry. Each export starts a thread that loads its modules afresh (Kysely, the
// drivers, tar, the area's own TypeScript): about a fifth of a 60,000-record export's CPU time. With
// Node's compile cache the compiled code is reused from the second export on, across restarts; it is
// enabled here, before those modules load, and only for this thread. The cache lives in the data
// directory (`compile-cache`; NODE_COMPILE_CACHE overrides it), which only the server writes: not in
// a shared temporary directory, where another local user could plant compiled code. A cache that
// cannot be enabled (an unwritable directory) only leaves the modules compiled as before.
// The thread starts before its job is known (the database settings come with it): the job comes as its
// first message, once the plan is made on the API thread, while the modules load here.
import { once } from 'node:events';
import { enableCompileCache } from 'node:module';
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import type { ExportJob } from './export-worker.ts';

const database = workerData as ExportJob['database'];
enableCompileCache(process.env.NODE_COMPILE_CACHE || join(database.dataDir, 'compile-cache'));
const [{ exportOnThisThread }, [job]] = await Promise.all([
  import('./export-worker.ts'),
  once(parentPort!, 'message') as Promise<[Omit<ExportJob, 'database'>]>,
]);
await exportOnThisThread({ ...job, database });
