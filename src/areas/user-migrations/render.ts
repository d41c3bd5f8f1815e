// Reading and rendering an export's records on two threads. The export thread hands out each kind's
// records in batches of keys (the batch's end found from the index alone); a batch is read and
// rendered either by the export thread or by a second thread (`render-thread.ts`) with its own
// database connection, so the two cores share the reading and rendering while gzip runs on the
// thread pool, and no rows are copied between threads. Either way a batch comes back as a chunk: its
// records' UTF-8 JSON back to back and where each ends (from the second thread as transferred
// buffers). The export thread appends the chunks to the record files in the batches' order, so the
// archive holds the same bytes in the same order whoever read them. At most a few batches are under
// way at once, so memory stays bounded.
import { once } from 'node:events';
import { setImmediate } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import type { Config } from '../../config.ts';
import type { UserRow } from '../../core/accounts/store.ts';
import type { Executor } from '../../db/index.ts';
import type { Urls } from '../../platform/urls.ts';
import { RecordWriter, type RepositoryPaths } from './records.ts';
import * as store from './store.ts';

/** A batch of one repository's records of a kind. */
export interface Batch extends store.KeyRange {
  kind: store.BatchedKind;
  repositoryId: number;
  at: RepositoryPaths;
}

/** Rendered records: their UTF-8 JSON back to back in `bytes`; record i ends at `ends[i]`. */
export interface Chunk {
  bytes: Buffer;
  ends: Int32Array;
}

/** A chunk's first buffer; a batch of 500 comments is about 750 KB. */
const CHUNK_BYTES = 1024 * 1024;

/** Reads a batch and renders its records. */
export async function renderBatch(db: Executor, records: RecordWriter, batch: Batch): Promise<Chunk> {
  return renderChunk(await readBatch(db, records, batch));
}

/** A batch's records, as JSON. */
async function readBatch(db: Executor, records: RecordWriter, { kind, repositoryId, at, ...range }: Batch): Promise<string[]> {
  if (kind === 'issues' || kind === 'pull_requests') {
    const pullRequests = kind === 'pull_requests';
    const rows = await store.issuesIn(db, repositoryId, pullRequests, range);
    const ids = rows.map((r) => r.id);
    const authors = await store.usersById(db, [...new Set(rows.map((r) => r.author_id))]);
    const assignees = await store.assigneesOf(db, ids);
    const reviews = pullRequests ? await store.reviewRequestsOf(db, ids) : new Map<number, { users: UserRow[]; teams: store.TeamWithOrg[] }>();
    return rows.map(({ comment_count, ...issue }) => {
      const author = authors.get(issue.author_id)!;
      const assigned = assignees.get(issue.id) ?? [];
      const comments = Number(comment_count ?? 0);
      const review = reviews.get(issue.id);
      return pullRequests
        ? records.pullRequest(at, issue, author, assigned, comments, review?.users ?? [], review?.teams ?? [])
        : records.issue(at, issue, author, assigned, comments);
    });
  }
  if (kind === 'issue_comments') {
    const rows = await store.commentsIn(db, repositoryId, range);
    const issues = await store.issuesById(db, [...new Set(rows.map((r) => r.issue_id))]);
    const authors = await store.usersById(db, [...new Set(rows.map((r) => r.author_id))]);
    return rows.map((comment) => records.comment(at, comment, issues.get(comment.issue_id)!, authors.get(comment.author_id)!));
  }
  const rows = await store.eventsIn(db, repositoryId, range);
  const issues = await store.issuesById(db, [...new Set(rows.map((r) => r.issue_id))]);
  const users = await store.usersById(db, [...new Set(rows.flatMap((r) => (r.subject_user_id === null ? [r.actor_id] : [r.actor_id, r.subject_user_id])))]);
  const teams = await store.teamsById(db, [...new Set(rows.flatMap((r) => (r.subject_team_id === null ? [] : [r.subject_team_id])))]);
  return rows.map((event) => records.issueEvent(at, {
    ...event,
    number: issues.get(event.issue_id)!.number,
    actor: users.get(event.actor_id)!,
    subject: event.subject_user_id === null ? null : (users.get(event.subject_user_id) ?? null),
    team: event.subject_team_id === null ? null : (teams.get(event.subject_team_id) ?? null),
  }));
}

/** Records' JSON as a chunk. */
export function renderChunk(jsons: string[]): Chunk {
  const ends = new Int32Array(jsons.length);
  // Its own ArrayBuffer (never Node's shared pool), so it can be transferred.
  let bytes = Buffer.from(new ArrayBuffer(CHUNK_BYTES));
  let at = 0;
  for (let i = 0; i < jsons.length; i++) {
    const json = jsons[i]!;
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

/** What the render thread is started with. */
export interface RenderThreadData {
  database: Pick<Config, 'databaseUrl' | 'dataDir'>;
  urls: Urls;
  ownerId: number;
}

/** Heap limits of the render thread, in MB: a batch of rows and its chunk. */
const LIMITS = { maxYoungGenerationSizeMb: 32, maxOldGenerationSizeMb: 128 };

/** The second thread: reads and renders the batches it is given, one after another, in order. */
export class RenderThread {
  private readonly worker: Worker;
  /** The batches sent and not yet answered, oldest first. */
  private readonly waiting: { resolve(chunk: Chunk): void; reject(error: Error): void }[] = [];
  private failure: Error | null = null;
  /** Whether the thread has loaded its modules and opened its connection (until then the export thread reads every batch itself). */
  ready = false;

  constructor(data: RenderThreadData) {
    this.worker = new Worker(new URL('./render-thread.ts', import.meta.url), { workerData: data, resourceLimits: LIMITS });
    this.worker.on('message', (message: { bytes: ArrayBuffer; length: number; ends: Int32Array } | 'ready') => {
      if (message === 'ready') this.ready = true;
      else this.waiting.shift()?.resolve({ bytes: Buffer.from(message.bytes, 0, message.length), ends: message.ends });
    });
    const fail = (error: Error) => {
      this.failure ??= error;
      for (const job of this.waiting.splice(0)) job.reject(this.failure);
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`the render thread stopped (exit code ${code})`)));
  }

  /** Batches sent and not yet answered. */
  get outstanding(): number {
    return this.waiting.length;
  }

  render(batch: Batch): Promise<Chunk> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise<Chunk>((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.worker.postMessage(batch);
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

/** Batches given to the render thread before the export thread reads one itself. */
const THREAD_BATCHES = 2;
/** Chunks read or being read and not yet appended to their files. */
const PENDING_CHUNKS = 3;

/**
 * Reads and renders an export's batches, in order: a batch goes to the render thread when it has
 * fewer than THREAD_BATCHES under way, else the export thread reads it; so each thread takes what it
 * has time for. The render thread starts with the first batch that has more after it (an export of
 * a few hundred records of each kind never starts one).
 */
export class Renderers {
  private readonly db: Executor;
  private readonly records: RecordWriter;
  private readonly data: RenderThreadData;
  private thread: RenderThread | null = null;
  private readonly pending: Promise<Chunk>[] = [];

  constructor(db: Executor, data: RenderThreadData) {
    this.db = db;
    this.records = new RecordWriter(data.urls, data.ownerId);
    this.data = data;
  }

  /** Adds a batch; `append` takes the chunks, in the batches' order, as they are ready. */
  async add(batch: Batch, append: (chunk: Chunk) => Promise<void>): Promise<void> {
    if (!this.thread && batch.upTo !== null) this.thread = new RenderThread(this.data);
    if (this.thread?.ready && this.thread.outstanding < THREAD_BATCHES) {
      const chunk = this.thread.render(batch);
      chunk.catch(() => {}); // Seen when it is appended (or the export has failed already).
      this.pending.push(chunk);
    } else {
      this.pending.push(Promise.resolve(await renderBatch(this.db, this.records, batch)));
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
