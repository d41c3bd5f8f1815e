// Writes a migration archive: a tar stream (tar-stream), gzip (node:zlib), into archive storage, all
// streamed. Records are read in keyset batches and written in files of 1,000; git files are piped
// from disk; every write waits for the compressor to take it, so memory stays flat whatever the size.
import { once } from 'node:events';
import { createReadStream, type Dirent, type Stats } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setImmediate } from 'node:timers/promises';
import { createGzip } from 'node:zlib';
import tar, { type Pack } from 'tar-stream';
import type { Executor } from '../../db/index.ts';
import type { UserRow } from '../../core/accounts/store.ts';
import { authorAssociations } from '../../core/issues/store.ts';
import type { RepositoryRow } from '../../core/repositories/representations.ts';
import { type Urls } from '../../platform/urls.ts';
import { RecordWriter, type RepositoryPaths } from './records.ts';
import type { ArchiveStorage } from './storage.ts';
import * as store from './store.ts';

const SCHEMA_VERSION = '1.2.0';
const RECORDS_PER_FILE = 1000;

export interface ExportPlan {
  migration: store.MigrationRow;
  owner: UserRow;
  repositories: (RepositoryRow & { owner: UserRow })[];
  /** Records rendered before the export (`plan.ts`), as JSON: one per repository (in `repositories`' order), one per organization. */
  records: { repositories: string[]; organizations: string[] };
}

export interface ExportEnvironment {
  db: Executor;
  urls: Urls;
  storage: ArchiveStorage;
  /** Where repositories' `git_path` is relative to. */
  dataDir: string;
  now: Date;
  /** Called after each file of records with the number of records written so far. */
  progress(records: number): Promise<void>;
}

/**
 * What an archive holds, from the migration's flags (org_metadata_only overrides the others).
 * exclude_releases and exclude_owner_projects name kinds codehost keeps no records of: they drop the
 * (empty) `releases` and `projects` files.
 */
export function archiveContents(migration: store.MigrationRow) {
  const orgOnly = Boolean(migration.org_metadata_only);
  const metadata = orgOnly || !migration.exclude_metadata;
  return {
    users: metadata,
    organizations: metadata,
    repositoryMetadata: metadata && !orgOnly,
    attachments: metadata && !orgOnly && !migration.exclude_attachments,
    releases: !migration.exclude_releases,
    projects: !migration.exclude_owner_projects,
    gitData: !orgOnly && !migration.exclude_git_data,
  };
}

type EntryHeader = Parameters<Pack['entry']>[0];
type EntrySink = ReturnType<Pack['entry']>;

/** The tar stream into storage; every write races the pipeline, so a failing sink fails the export instead of stalling it. */
class ArchiveWriter {
  // A few files of slack let the next file be rendered while gzip (on the thread pool) compresses
  // the last one; memory stays bounded by this buffer and one file.
  private readonly pack = tar.pack({ highWaterMark: 4 * 1024 * 1024 });
  private readonly done: Promise<void>;
  /** Entries being written: a failing pipeline rejects them (the sink stops taking data, so they would wait forever). */
  private readonly waiting = new Set<(error: Error) => void>();
  private failure: Error | null = null;
  private readonly mtime: Date;

  constructor(sink: Writable, mtime: Date) {
    this.mtime = mtime;
    this.done = pipeline(this.pack, createGzip({ chunkSize: 256 * 1024 }), sink);
    this.done.catch((error: Error) => {
      this.failure = error;
      for (const reject of this.waiting) reject(error);
    });
  }

  /** Adds one entry; `write` fills it. Resolves once the entry is in the tar stream, which waits for gzip to take it. */
  private entry(header: EntryHeader, write: (sink: EntrySink) => Promise<void>): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise<void>((resolve, reject) => {
      const settle = (error?: Error | null) => {
        this.waiting.delete(settle);
        if (error) reject(error);
        else resolve();
      };
      this.waiting.add(settle);
      const sink = this.pack.entry({ ...header, mtime: header.mtime ?? this.mtime }, settle);
      write(sink).catch((error: Error) => {
        sink.destroy(error);
        settle(error);
      });
    });
  }

  file(name: string, body: Buffer): Promise<void> {
    return this.entry({ name, size: body.length, mode: 0o644, type: 'file' }, async (sink) => {
      sink.end(body);
    });
  }

  directory(name: string, mtime?: Date): Promise<void> {
    return this.entry({ name, type: 'directory', mode: 0o755, mtime }, async (sink) => {
      sink.end(null);
    });
  }

  /** A file copied from disk; its size must not change while it is read (a changed size fails the entry). */
  copy(name: string, path: string, stats: Stats): Promise<void> {
    return this.entry({ name, size: stats.size, mode: stats.mode & 0o777, mtime: stats.mtime, type: 'file' }, async (sink) => {
      for await (const chunk of createReadStream(path)) {
        if (!sink.write(chunk as Buffer)) await once(sink as unknown as NodeJS.EventEmitter, 'drain');
      }
      sink.end(null);
    });
  }

  async finish(): Promise<void> {
    this.pack.finalize();
    await this.done;
  }

  async abort(error: Error): Promise<void> {
    this.pack.destroy(error);
    await this.done.catch(() => {});
  }
}

const EMPTY_ARRAY = '[]\n';
const [OPEN, COMMA, NEWLINE] = [0x5b, 0x2c, 0x0a];
/** A record file's first buffer: most files of 1,000 records fit (a file of comments is about 1.5 MB). */
const FILE_BUFFER_BYTES = 2 * 1024 * 1024;
/** Records rendered between turns of the event loop (a few milliseconds' work). */
const YIELD_EVERY = 100;

/** One kind's records, written as `<kind>_000001.json`, `<kind>_000002.json`... of 1,000 records each. */
class KindFiles {
  private readonly archive: ArchiveWriter;
  private readonly kind: string;
  private readonly counter: Progress;
  /**
   * The file being filled: `[\n`, records joined by `,\n`, then `\n]\n`. Each record is encoded into
   * it as it is added, so its string dies young (cheap to collect) and is scanned once.
   */
  private body = Buffer.alloc(0);
  private at = 0;
  private count = 0;
  private files = 0;

  constructor(archive: ArchiveWriter, kind: string, counter: KindFiles['counter']) {
    this.archive = archive;
    this.kind = kind;
    this.counter = counter;
  }

  /** Adds a record, as JSON. */
  async add(json: string): Promise<void> {
    // Room for the separator, the record at 3 bytes per UTF-16 unit (UTF-8's most) and the closing `\n]\n`.
    const room = json.length * 3 + 5;
    if (this.body.length - this.at < room) this.grow(room);
    this.body[this.at++] = this.count ? COMMA : OPEN;
    this.body[this.at++] = NEWLINE;
    this.at += this.body.write(json, this.at);
    this.count += 1;
    if (this.count >= RECORDS_PER_FILE) await this.flush();
    // Reading (node:sqlite is synchronous) and rendering never wait for I/O, so without this the
    // thread would see gzip's completions (each starting its next chunk on the thread pool) only
    // when a file waits for room: gzip and rendering would take turns instead of sharing the cores.
    else if (this.count % YIELD_EVERY === 0) await setImmediate();
  }

  /** A larger buffer for the file, what it holds so far copied over. */
  private grow(room: number): void {
    const body = Buffer.allocUnsafe(Math.max(FILE_BUFFER_BYTES, 2 * this.body.length, this.at + room));
    this.body.copy(body, 0, 0, this.at);
    this.body = body;
  }

  /** Writes what is pending, or, for a kind with no records at all, its first file as an empty array. */
  async finish(): Promise<void> {
    if (this.count || this.files > 0) return this.flush();
    this.files = 1;
    await this.archive.file(`${this.kind}_000001.json`, Buffer.from(EMPTY_ARRAY));
  }

  /** Writes what is pending. */
  async flush(): Promise<void> {
    if (!this.count) return;
    this.files += 1;
    const count = this.count;
    this.at += this.body.write('\n]\n', this.at);
    const body = this.body.subarray(0, this.at);
    // The tar stream keeps the file until gzip has taken it: the next file gets a buffer of its own.
    this.body = Buffer.alloc(0);
    this.at = 0;
    this.count = 0;
    await this.archive.file(`${this.kind}_${String(this.files).padStart(6, '0')}.json`, body);
    this.counter.add(count);
  }
}

/** Writes the archive under `key`; returns its size. Nothing is visible under `key` unless it completes. */
export async function writeArchive(env: ExportEnvironment, plan: ExportPlan, key: string): Promise<number> {
  const upload = await env.storage.create(key);
  const archive = new ArchiveWriter(upload.stream, env.now);
  try {
    await writeEntries(env, plan, archive);
    await archive.finish();
    return await upload.commit();
  } catch (error) {
    await archive.abort(error as Error);
    await upload.abort();
    throw error;
  }
}

/**
 * The records written so far, recorded after each file without waiting for the write: each waits for
 * the one before (they land in order, on the export's one connection, between its reads), and
 * `settled` answers the last one's outcome, so a failed write still fails the export.
 */
class Progress {
  private records = 0;
  private recorded: Promise<void> = Promise.resolve();
  private readonly record: (records: number) => Promise<void>;

  constructor(record: (records: number) => Promise<void>) {
    this.record = record;
  }

  add(count: number): void {
    this.records += count;
    const records = this.records;
    this.recorded = this.recorded.then(() => this.record(records));
    // Awaited by `settled`; until then a failure is not left unhandled.
    this.recorded.catch(() => {});
  }

  settled(): Promise<void> {
    return this.recorded;
  }
}

async function writeEntries(env: ExportEnvironment, plan: ExportPlan, archive: ArchiveWriter): Promise<void> {
  const { db } = env;
  const records = new RecordWriter(env.urls, plan.owner.id);
  const contents = archiveContents(plan.migration);
  const counter = new Progress(env.progress);
  const kind = async (name: string, produce: (files: KindFiles) => Promise<void>) => {
    const files = new KindFiles(archive, name, counter);
    await produce(files);
    await files.finish();
  };
  const repositoryIds = contents.repositoryMetadata ? plan.repositories.map((r) => r.id) : [];
  const refs = plan.repositories.map((repo) => ({ repo, ref: { owner: repo.owner.login, name: repo.name }, at: records.repositoryPaths(repo.owner.login, repo.name) }));

  await archive.file('schema.json', Buffer.from(`${JSON.stringify({ version: SCHEMA_VERSION })}\n`));

  if (contents.users) {
    await kind('users', async (files) => {
      const read = async (after: number) => ({ rows: await store.involvedUsers(db, plan.owner.id, repositoryIds, after, store.BATCH) });
      for await (const { rows } of batches(read, (row) => row.id)) {
        for (const user of rows) await files.add(records.user(user));
      }
    });
  }
  if (contents.organizations) {
    await kind('organizations', async (files) => {
      for (const json of plan.records.organizations) await files.add(json);
    });
  }
  if (contents.repositoryMetadata) {
    await kind('repositories', async (files) => {
      for (const json of plan.records.repositories) await files.add(json);
    });
    for (const pullRequests of [false, true]) {
      await kind(pullRequests ? 'pull_requests' : 'issues', async (files) => {
        for (const { repo, at } of refs) await issuesOf(db, records, repo, at, pullRequests, files);
      });
    }
    await kind('issue_comments', async (files) => {
      for (const { repo, at } of refs) {
        const read = async (after: number) => {
          const rows = await store.commentsAfter(db, repo.id, after);
          return { rows, associations: await authorAssociations(db, repo, [...new Set(rows.map((r) => r.author_id))]) };
        };
        for await (const { rows, associations } of batches(read, (row) => row.id)) {
          for (const comment of rows) {
            const author = { id: comment.author_id, login: comment.author_login, type: comment.author_type, site_admin: comment.author_site_admin };
            await files.add(records.comment(at, comment, comment, author, associations.get(comment.author_id)!));
          }
        }
      }
    });
    await kind('issue_events', async (files) => {
      for (const { repo, at } of refs) {
        const read = async (after: number) => ({ rows: await store.eventsAfter(db, repo.id, after) });
        for await (const { rows } of batches(read, (row) => row.id)) {
          for (const event of rows) await files.add(records.issueEvent(at, event));
        }
      }
    });
    // Kinds codehost keeps no records of: the layout still has their files, as empty arrays, so an
    // importer finds every file it expects.
    const none = async () => {};
    for (const name of ['bases', 'commit_comments', 'milestones', 'protected_branches', 'pull_request_reviews', 'review_comments']) await kind(name, none);
    if (contents.projects) await kind('projects', none);
    if (contents.releases) await kind('releases', none);
  }
  if (contents.attachments) {
    await kind('attachments', async () => {});
    await archive.directory('attachments/');
  }
  if (contents.gitData) {
    for (const { repo, ref } of refs) {
      if (repo.git_path) await copyGitData(archive, join(env.dataDir, repo.git_path), `repositories/${ref.owner}/${ref.name}.git`);
    }
  }
  await counter.settled();
}

/**
 * A kind's rows of a repository in keyset batches (`read(after)` answers the batch after that key,
 * with what its records need). Each batch is read while the one before is being written: on
 * PostgreSQL the database works on the next batch while this thread renders, instead of the two
 * taking turns. At most two batches are held.
 */
async function* batches<B extends { rows: unknown[] }>(read: (after: number) => Promise<B>, keyOf: (row: B['rows'][number]) => number): AsyncGenerator<B> {
  let next = read(0);
  for (;;) {
    const batch = await next;
    const more = batch.rows.length >= store.BATCH;
    if (more) {
      next = read(keyOf(batch.rows.at(-1)!));
      // Awaited on the next turn; should writing this batch fail first, its failure is not left unhandled.
      next.catch(() => {});
    }
    yield batch;
    if (!more) return;
  }
}

async function issuesOf(
  db: Executor,
  records: RecordWriter,
  repository: Pick<RepositoryRow, 'id' | 'owner_id'>,
  at: RepositoryPaths,
  pullRequests: boolean,
  files: KindFiles,
): Promise<void> {
  const read = async (after: number) => {
    const rows = await store.issuesAfter(db, repository.id, pullRequests, after);
    const ids = rows.map((r) => r.id);
    return {
      rows,
      associations: await authorAssociations(db, repository, [...new Set(rows.map((r) => r.author_id))]),
      assignees: await store.assigneesOf(db, ids),
      reviews: pullRequests ? await store.reviewRequestsOf(db, ids) : null,
    };
  };
  for await (const { rows, associations, assignees, reviews } of batches(read, (row) => row.number)) {
    for (const { comment_count, author_login, author_type, author_site_admin, ...issue } of rows) {
      const author = { id: issue.author_id, login: author_login, type: author_type, site_admin: author_site_admin };
      const assigned = assignees.get(issue.id) ?? [];
      const comments = Number(comment_count ?? 0);
      const review = reviews?.get(issue.id);
      const association = associations.get(issue.author_id)!;
      await files.add(pullRequests
        ? records.pullRequest(at, issue, author, assigned, comments, association, review?.users ?? [], review?.teams ?? [])
        : records.issue(at, issue, author, assigned, comments, association));
    }
  }
}

/** The repository's bare git data, file by file, under `prefix/`. Anything but directories and regular files is refused. */
async function copyGitData(archive: ArchiveWriter, root: string, prefix: string): Promise<void> {
  const rootStats = await lstat(root).catch(() => null);
  if (!rootStats?.isDirectory()) throw new Error(`git data of ${prefix} is missing or unreadable`);
  await archive.directory(`${prefix}/`, rootStats.mtime);
  const visit = async (dir: string, name: string): Promise<void> => {
    const entries: Dirent[] = await readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const path = join(dir, entry.name);
      const entryName = `${name}/${entry.name}`;
      const stats = await lstat(path);
      if (stats.isDirectory()) {
        await archive.directory(`${entryName}/`, stats.mtime);
        await visit(path, entryName);
      } else if (stats.isFile()) {
        await archive.copy(entryName, path, stats);
      } else {
        throw new Error(`git data of ${prefix} holds an unexpected file: ${entryName}`);
      }
    }
  };
  await visit(root, prefix);
}
