// The export runs on a worker thread of its own. Rendering hundreds of thousands of records is CPU
// work that would otherwise hold up the API's event loop for as long as the export lasts, and the
// thread's heap limits keep the export's memory flat whatever the archive's size (a thread that
// somehow outgrew them would fail the export, not the server).
import { once } from 'node:events';
import { parentPort, Worker } from 'node:worker_threads';
import type { Config } from '../../config.ts';
import { openDatabase } from '../../db/index.ts';
import type { Urls } from '../../platform/urls.ts';
import { writeArchive, type ExportPlan } from './archive.ts';
import { archiveStorage } from './storage.ts';
import * as store from './store.ts';

export interface ExportJob {
  database: Pick<Config, 'databaseUrl' | 'dataDir' | 'databasePooler'>;
  urls: Urls;
  /** The export's time (the server clock, which tests move). */
  now: string;
  run: string;
  key: string;
  plan: ExportPlan;
}

/** Heap limits of the export thread, in MB: ample for a batch of rows and a file of records. */
const LIMITS = { maxYoungGenerationSizeMb: 48, maxOldGenerationSizeMb: 256 };

/** An export thread, started before its job is known: it loads its modules while the plan is made. */
export interface ExportThread {
  /**
   * Hands the thread its job; resolves with the archive's size, rejects with the thread's error. It
   * resolves when the thread reports the archive written and its connection closed, not when the
   * thread has exited: a thread's exit writes Node's compile cache of the modules it compiled, 0.2–1 s
   * when the cache was cold (a new data directory), and nothing the export needs waits for that.
   */
  run(job: Omit<ExportJob, 'database'>): Promise<number>;
  /** Stops the thread (an export that failed before or after it ran). */
  stop(): Promise<void>;
}

export function startExportThread(database: ExportJob['database']): ExportThread {
  const worker = new Worker(new URL('./export-thread.ts', import.meta.url), { workerData: database, resourceLimits: LIMITS });
  // Both listen from the start, so an error while the thread loads is not an unhandled 'error' event;
  // once the size has come, the thread has nothing left that can fail the export: a late error is dropped.
  const exited = once(worker, 'exit') as Promise<[number]>;
  exited.catch(() => {});
  const reported = once(worker, 'message') as Promise<[{ size: number }]>;
  reported.catch(() => {});
  return {
    async run(job) {
      worker.postMessage(job);
      // `once` rejects with the thread's error when it fails (an exception, or running out of heap).
      const first = await Promise.race([reported, exited.then(([code]) => code)]);
      if (typeof first === 'number') throw new Error(`the export thread stopped without finishing (exit code ${first})`);
      return first[0].size;
    },
    async stop() {
      await worker.terminate();
    },
  };
}

/** The export thread's work (`export-thread.ts` starts it): writes the archive, closes its connection, posts the archive's size. */
export async function exportOnThisThread(job: ExportJob): Promise<void> {
  const { databaseUrl, dataDir, databasePooler } = job.database;
  const db = openDatabase({ databaseUrl, sqlitePath: `${dataDir}/codehost.db`, poolSize: 1, pooler: databasePooler });
  let size: number;
  try {
    const migrationId = job.plan.migration.id;
    size = await writeArchive(
      {
        db: db.kysely,
        urls: job.urls,
        storage: archiveStorage({ dataDir }),
        dataDir,
        now: new Date(job.now),
        progress: (records) => store.recordProgress(db.kysely, migrationId, job.run, records),
      },
      job.plan,
      job.key,
    );
  } finally {
    await db.close();
  }
  parentPort!.postMessage({ size });
}
