// Rendering an export's records on two threads. The export thread reads the records in batches; each
// batch becomes a job that either it renders itself or a second thread (`render-thread.ts`) does, so
// the two cores share the rendering while gzip runs on the thread pool. Either way a job comes back
// as a chunk: its records' UTF-8 JSON back to back and where each ends. The export thread appends the
// chunks to the record files in the order the batches were read, so the archive holds the same
// bytes, in the same order, whoever rendered them (the second thread's records come as transferred
// buffers: no copy). At most a few jobs are under way at once, so memory stays bounded.
import { once } from 'node:events';
import { setImmediate } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import type { UserRow } from '../../core/accounts/store.ts';
import type { Urls } from '../../platform/urls.ts';
import { RecordWriter, type RepositoryPaths } from './records.ts';
import type { IssueRow, TeamWithOrg } from './store.ts';

/** A user as a record names it (what a simple user is made of). */
type UserFields = Pick<UserRow, 'id' | 'login' | 'type' | 'site_admin'>;
type IssueFields = Omit<IssueRow, 'comment_count'>;

/** A batch of records to render, in the archive's order; each item holds what its record is made of. */
export type RenderJob =
  | { kind: 'users'; items: UserRow[] }
  | { kind: 'issues'; at: RepositoryPaths; items: { issue: IssueFields; author: UserFields; assignees: UserFields[]; comments: number }[] }
  | {
    kind: 'pull_requests';
    at: RepositoryPaths;
    items: { issue: IssueFields; author: UserFields; assignees: UserFields[]; comments: number; reviewers: UserFields[]; teams: TeamWithOrg[] }[];
  }
  | {
    kind: 'issue_comments';
    at: RepositoryPaths;
    items: { comment: { id: number; body: string; created_at: string; updated_at: string }; issue: Pick<IssueRow, 'number' | 'is_pull_request'>; author: UserFields }[];
  }
  | { kind: 'issue_events'; at: RepositoryPaths; items: Parameters<RecordWriter['issueEvent']>[1][] };

/** Rendered records: their UTF-8 JSON back to back in `bytes`; record i ends at `ends[i]`. */
export interface Chunk {
  bytes: Buffer;
  ends: Int32Array;
}

/** A user's fields a record needs (a job carries no more than that to the other thread). */
export const userFields = (user: UserFields): UserFields => ({ id: user.id, login: user.login, type: user.type, site_admin: user.site_admin });

/** A chunk's first buffer; a batch of 500 comments is about 750 KB. */
const CHUNK_BYTES = 1024 * 1024;

/** Renders a job's records. */
export function renderChunk(records: RecordWriter, job: RenderJob): Chunk {
  const ends = new Int32Array(job.items.length);
  // Its own ArrayBuffer (never Node's shared pool), so it can be transferred.
  let bytes = Buffer.from(new ArrayBuffer(CHUNK_BYTES));
  let at = 0;
  for (let i = 0; i < job.items.length; i++) {
    const json = renderOne(records, job, i);
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    if (bytes.length - at < json.length * 3) {
      const larger = Buffer.from(new ArrayBuffer(Math.max(2 * bytes.length, at + json.length * 3)));
      bytes.copy(larger, 0, 0, at);
      bytes = larger;
    }
    at += bytes.write(json, at);
    ends[i] = at;
  }
  return { bytes: bytes.subarray(0, at), ends };
}

function renderOne(records: RecordWriter, job: RenderJob, i: number): string {
  switch (job.kind) {
    case 'users':
      return records.user(job.items[i]!);
    case 'issues': {
      const { issue, author, assignees, comments } = job.items[i]!;
      return records.issue(job.at, issue, author, assignees, comments);
    }
    case 'pull_requests': {
      const { issue, author, assignees, comments, reviewers, teams } = job.items[i]!;
      return records.pullRequest(job.at, issue, author, assignees, comments, reviewers, teams);
    }
    case 'issue_comments': {
      const { comment, issue, author } = job.items[i]!;
      return records.comment(job.at, comment, issue, author);
    }
    case 'issue_events':
      return records.issueEvent(job.at, job.items[i]!);
  }
}

/** What the render thread is started with. */
export interface RenderThreadData {
  urls: Urls;
  ownerId: number;
  /** Where the thread's compile cache lives (as the export thread's). */
  dataDir: string;
}

/** Heap limits of the render thread, in MB: a few jobs and their chunks. */
const LIMITS = { maxYoungGenerationSizeMb: 32, maxOldGenerationSizeMb: 128 };

/** The second thread: renders the jobs it is given, one after another, in order. */
export class RenderThread {
  private readonly worker: Worker;
  /** The jobs sent and not yet answered, oldest first. */
  private readonly waiting: { resolve(chunk: Chunk): void; reject(error: Error): void }[] = [];
  private failure: Error | null = null;

  constructor(data: RenderThreadData) {
    this.worker = new Worker(new URL('./render-thread.ts', import.meta.url), { workerData: data, resourceLimits: LIMITS });
    this.worker.on('message', (message: { bytes: ArrayBuffer; length: number; ends: Int32Array }) => {
      this.waiting.shift()?.resolve({ bytes: Buffer.from(message.bytes, 0, message.length), ends: message.ends });
    });
    const fail = (error: Error) => {
      this.failure ??= error;
      for (const job of this.waiting.splice(0)) job.reject(this.failure);
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`the render thread stopped (exit code ${code})`)));
  }

  /** Jobs sent and not yet answered. */
  get outstanding(): number {
    return this.waiting.length;
  }

  render(job: RenderJob): Promise<Chunk> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise<Chunk>((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.worker.postMessage(job);
    });
  }

  /** Stops the thread: it ends by itself once its jobs are done (an export that failed does not wait for them). */
  async close(): Promise<void> {
    const exited = once(this.worker, 'exit').catch(() => {});
    if (this.waiting.length || this.failure) await this.worker.terminate();
    else this.worker.postMessage(null);
    await exited;
  }
}

/** Jobs given to the render thread before the export thread renders one itself. */
const THREAD_JOBS = 2;
/** Chunks rendered or being rendered and not yet appended to their files. */
const PENDING_CHUNKS = 3;

/**
 * Renders an export's jobs, in order: a job goes to the render thread when it has fewer than
 * THREAD_JOBS under way, else the export thread renders it; so each thread takes what it has time
 * for. The render thread starts with the first full batch (an export of a few hundred records
 * never starts one).
 */
export class Renderers {
  private readonly records: RecordWriter;
  private readonly data: RenderThreadData;
  private readonly fullBatch: number;
  private thread: RenderThread | null = null;
  private readonly pending: Promise<Chunk>[] = [];

  /** `fullBatch`: a job this large means more records follow, worth a thread. */
  constructor(data: RenderThreadData, fullBatch: number) {
    this.records = new RecordWriter(data.urls, data.ownerId);
    this.data = data;
    this.fullBatch = fullBatch;
  }

  /** Adds a job; `append` takes the chunks, in the jobs' order, as they are ready. */
  async add(job: RenderJob, append: (chunk: Chunk) => Promise<void>): Promise<void> {
    if (!job.items.length) return;
    if (!this.thread && job.items.length >= this.fullBatch) this.thread = new RenderThread(this.data);
    if (this.thread && this.thread.outstanding < THREAD_JOBS) {
      const chunk = this.thread.render(job);
      chunk.catch(() => {}); // Seen when it is appended (or the export has failed already).
      this.pending.push(chunk);
    } else {
      this.pending.push(Promise.resolve(renderChunk(this.records, job)));
      // A turn of the event loop: gzip's completions (each starting its next piece of work on the
      // thread pool) and the render thread's answers are taken while this thread renders.
      await setImmediate();
    }
    while (this.pending.length > PENDING_CHUNKS) await append(await this.pending.shift()!);
  }

  /** Appends every chunk still pending (at the end of a kind). */
  async drain(append: (chunk: Chunk) => Promise<void>): Promise<void> {
    while (this.pending.length) await append(await this.pending.shift()!);
  }

  async close(): Promise<void> {
    await this.thread?.close();
  }
}
