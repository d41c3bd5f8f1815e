// The export runs on a worker thread of its own. Rendering hundreds of thousands of records is CPU
// work that would otherwise hold up the API's event loop for as long as the export lasts, and the
// thread's heap limits keep the export's memory flat whatever the archive's size (a thread that
// somehow outgrew them would fail the export, not the server).
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

/** What an export thread posts: its archive's size (the export is done), then that it is idle again. */
export type ThreadMessage = { size: number } | { idle: true };

/** How long an idle export thread is kept for the next export before it is ended. */
export const IDLE_THREAD_MS = 60_000;

/** An export thread taken for one export (`ExportThreads.take`). */
export interface ExportThread {
  /**
   * Hands the thread its job; resolves with the archive's size, rejects with the thread's error. It
   * resolves when the thread reports the archive written and its connection closed: what the thread
   * does next (writing Node's compile cache, 0.2–1 s when the cache was cold) waits for `release`.
   */
  run(job: Omit<ExportJob, 'database'>): Promise<number>;
  /**
   * After a run: waits until the thread is idle (its compile cache written), then keeps it for the
   * next export, or ends it (one is kept already, or the server is closing) and waits for its exit.
   */
  release(): Promise<void>;
  /** Ends the thread (an export that failed before or after it ran) and waits for its exit. */
  stop(): Promise<void>;
}

/** One worker thread and what it has posted, in order. */
class ThreadHandle {
  readonly worker: Worker;
  /** Resolves with the exit code when the thread has exited. */
  readonly exited: Promise<number>;
  readonly #inbox: ThreadMessage[] = [];
  #failure: Error | null = null;
  #waiting: { resolve(message: ThreadMessage): void; reject(error: Error): void } | null = null;

  constructor(database: ExportJob['database']) {
    this.worker = new Worker(new URL('./export-thread.ts', import.meta.url), { workerData: database, resourceLimits: LIMITS });
    // Listened to from the start, so an error while the thread loads (or idles) is not an unhandled
    // 'error' event: it fails the thread's next wait. 'error' comes before 'exit'.
    this.worker.on('message', (message: ThreadMessage) => {
      if (this.#waiting) this.#settle(null, message);
      else this.#inbox.push(message);
    });
    this.worker.on('error', (error: Error) => this.#fail(error));
    this.exited = new Promise((resolve) => this.worker.once('exit', resolve));
    void this.exited.then((code) => this.#fail(new Error(`the export thread stopped without finishing (exit code ${code})`)));
  }

  /** The thread's next message; rejects with its error (an exception, or running out of heap) or its exit. */
  next(): Promise<ThreadMessage> {
    const message = this.#inbox.shift();
    if (message) return Promise.resolve(message);
    if (this.#failure) return Promise.reject(this.#failure);
    return new Promise((resolve, reject) => (this.#waiting = { resolve, reject }));
  }

  #fail(error: Error): void {
    this.#failure ??= error;
    if (this.#waiting) this.#settle(this.#failure, null);
  }

  #settle(error: Error | null, message: ThreadMessage | null): void {
    const waiting = this.#waiting!;
    this.#waiting = null;
    if (error) waiting.reject(error);
    else waiting.resolve(message!);
  }
}

/**
 * A server's export threads: at most one idle thread is kept (ended after IDLE_THREAD_MS, or when the
 * server closes); an export takes it, or starts a thread of its own when it is taken (exports run two
 * at a time). A thread that fails is ended, never kept: its failure fails only its export.
 */
export class ExportThreads {
  readonly #database: ExportJob['database'];
  readonly #idleMs: number;
  #started = 0;
  #idle: ThreadHandle | null = null;
  #idleTimer: NodeJS.Timeout | null = null;
  #closed = false;
  /** Threads taken by an export and not yet kept or exited. */
  readonly #busy = new Set<ThreadHandle>();

  constructor(database: ExportJob['database'], idleMs = IDLE_THREAD_MS) {
    this.#database = database;
    this.#idleMs = idleMs;
  }

  /** Starts a thread ahead (an export was requested here), unless one is idle already. */
  warm(): void {
    if (this.#closed || this.#idle) return;
    this.#keep(this.#start());
  }

  /** A thread for one export: the idle one, or a new one (its modules load while the plan is made). */
  take(): ExportThread {
    const thread = this.#idle ?? this.#start();
    if (thread === this.#idle) this.#unkeep();
    thread.worker.ref();
    this.#busy.add(thread);
    return {
      run: async (job) => {
        thread.worker.postMessage(job);
        const message = await thread.next();
        if (!('size' in message)) throw new Error('the export thread answered out of turn');
        return message.size;
      },
      release: async () => {
        try {
          await thread.next();
        } catch {
          this.#busy.delete(thread);
          return; // It failed or exited after its export was done: nothing of the export depends on it.
        }
        if (this.#closed || this.#idle) return this.#end(thread);
        this.#busy.delete(thread);
        this.#keep(thread);
      },
      stop: () => this.#end(thread),
    };
  }

  /** Threads kept idle (0 or 1), working for an export or exiting, and started so far. */
  get threads(): { idle: number; busy: number; started: number } {
    return { idle: this.#idle ? 1 : 0, busy: this.#busy.size, started: this.#started };
  }

  /** Ends the idle thread; the exports still running end theirs when they finish (the queue waits for them). */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#endIdle();
  }

  async #endIdle(): Promise<void> {
    const idle = this.#idle;
    if (!idle) return;
    this.#unkeep();
    await this.#end(idle);
  }

  async #end(thread: ThreadHandle): Promise<void> {
    this.#busy.add(thread);
    try {
      await thread.worker.terminate();
      await thread.exited;
    } finally {
      this.#busy.delete(thread);
    }
  }

  #start(): ThreadHandle {
    this.#started += 1;
    return new ThreadHandle(this.#database);
  }

  #keep(thread: ThreadHandle): void {
    this.#idle = thread;
    // An idle thread does not hold the process open; it is ended after a while, or if it fails.
    thread.worker.unref();
    this.#idleTimer = setTimeout(() => void this.#endIdle(), this.#idleMs);
    this.#idleTimer.unref();
    void thread.exited.then(() => {
      if (this.#idle === thread) this.#unkeep();
    });
  }

  #unkeep(): void {
    this.#idle = null;
    if (this.#idleTimer) clearTimeout(this.#idleTimer);
    this.#idleTimer = null;
  }
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
