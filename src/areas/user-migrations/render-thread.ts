// The render thread's entry (`render.ts`): renders the jobs the export thread sends, in order, and
// sends each chunk back with its buffers transferred. It loads only the records' writer; the compile
// cache as the export thread's (`export-thread.ts`).
import { enableCompileCache } from 'node:module';
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import type { RenderJob, RenderThreadData } from './render.ts';

const data = workerData as RenderThreadData;
enableCompileCache(process.env.NODE_COMPILE_CACHE || join(data.dataDir, 'compile-cache'));
const { RecordWriter } = await import('./records.ts');
const { renderChunk } = await import('./render.ts');
const records = new RecordWriter(data.urls, data.ownerId);
parentPort!.on('message', (job: RenderJob | null) => {
  // The export's end: the thread ends (closing its port leaves it nothing to wait for).
  if (job === null) return parentPort!.close();
  const { bytes, ends } = renderChunk(records, job);
  parentPort!.postMessage({ bytes: bytes.buffer, length: bytes.length, ends }, [bytes.buffer as ArrayBuffer, ends.buffer as ArrayBuffer]);
});
