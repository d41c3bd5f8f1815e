// The render thread's entry (`render.ts`): reads and renders the batches the export thread sends, one
// after another in order, on a database connection of its own, and sends each chunk back with its
// buffers transferred. The compile cache as the export thread's (`export-thread.ts`).
import { enableCompileCache } from 'node:module';
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import type { Batch, RenderThreadData } from './render.ts';

const data = workerData as RenderThreadData;
enableCompileCache(process.env.NODE_COMPILE_CACHE || join(data.database.dataDir, 'compile-cache'));
const { openDatabase } = await import('../../db/index.ts');
const { RecordWriter } = await import('./records.ts');
const { renderBatch } = await import('./render.ts');
const { databaseUrl, dataDir } = data.database;
const db = openDatabase({ databaseUrl, sqlitePath: `${dataDir}/codehost.db`, poolSize: 1 });
const records = new RecordWriter(data.urls, data.ownerId);
let queue = Promise.resolve();
parentPort!.postMessage('ready');
parentPort!.on('message', (batch: Batch | null) => {
  // The export's end: the connection is closed and the thread ends (its port closed, nothing is left to wait for).
  if (batch === null) {
    queue = queue.then(() => db.close()).then(() => parentPort!.close());
    return;
  }
  // One batch at a time, in the order sent; a failure is the thread's (it fails the export).
  queue = queue.then(async () => {
    const { bytes, ends } = await renderBatch(db.kysely, records, batch);
    parentPort!.postMessage({ bytes: bytes.buffer, length: bytes.length, ends }, [bytes.buffer as ArrayBuffer, ends.buffer as ArrayBuffer]);
  });
  queue.catch((error: unknown) => {
    throw error;
  });
});
