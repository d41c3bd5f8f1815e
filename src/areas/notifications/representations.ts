// The Notification thread and Thread subscription representations.
import fastJson from 'fast-json-stringify';
import { Type, type Static } from 'typebox';
import { issueUrls } from '../../core/issues/representations.ts';
import { isoSeconds } from '../../platform/clock.ts';
import type { RepositoryWithFacts } from '../../core/repositories/facts.ts';
import { FullRepository, fullRepository } from '../../core/repositories/representations.ts';
import { type Urls } from '../../platform/urls.ts';
import type { Context } from '../../platform/context.ts';
import { perServer } from '../../platform/per-server.ts';
import type { ListedThread, ThreadWithSubject } from './store.ts';

export const NotificationThread = Type.Object({
  id: Type.String(),
  repository: FullRepository,
  subject: Type.Object({
    title: Type.String(),
    url: Type.String(),
    latest_comment_url: Type.String(),
    type: Type.String(),
  }),
  reason: Type.String(),
  unread: Type.Boolean(),
  updated_at: Type.String(),
  last_read_at: Type.Union([Type.String(), Type.Null()]),
  url: Type.String(),
  subscription_url: Type.String(),
});
export type NotificationThread = Static<typeof NotificationThread>;

export const ThreadSubscription = Type.Object({
  subscribed: Type.Boolean(),
  ignored: Type.Boolean(),
  reason: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  url: Type.String(),
  thread_url: Type.String(),
});
export type ThreadSubscription = Static<typeof ThreadSubscription>;

/** A thread's repository, shaped once per repository of a page (a page often repeats a few). */
export interface ShapedRepository {
  facts: RepositoryWithFacts;
  body: FullRepository;
}

export function shapeRepository(urls: Urls, found: RepositoryWithFacts): ShapedRepository {
  return { facts: found, body: fullRepository(urls, found.repository, found.owner, found.facts) };
}

export const threadUrl = (urls: Urls, threadId: number) => `${urls.api}/notifications/threads/${threadId}`;

export function threadRepresentation(urls: Urls, thread: ThreadWithSubject, shaped: ShapedRepository): NotificationThread {
  const { id, ...rest } = threadFields(urls, thread, shaped.facts);
  return { id, repository: shaped.body, ...rest };
}

/** A thread without its repository. */
type ThreadFields = Omit<NotificationThread, 'repository'>;
const ThreadFields = Type.Omit(NotificationThread, ['repository']);

function threadFields(urls: Urls, thread: ListedThread, found: RepositoryWithFacts): ThreadFields {
  const { repository, owner } = found;
  let subjectUrl = thread.subject_url ?? '';
  let latestCommentUrl = subjectUrl;
  if (thread.issue_number !== null) {
    const at = issueUrls(urls, owner.login, repository.name, { number: thread.issue_number, is_pull_request: thread.is_pull_request ?? 0 });
    subjectUrl = thread.is_pull_request ? at.pull : at.issue;
    latestCommentUrl = thread.latest_comment_id === null ? subjectUrl : at.comment(thread.latest_comment_id);
  }
  const url = threadUrl(urls, thread.id);
  return {
    id: String(thread.id),
    subject: { title: thread.subject_title, url: subjectUrl, latest_comment_url: latestCommentUrl, type: thread.subject_type },
    reason: thread.reason,
    unread: Boolean(thread.unread),
    updated_at: isoSeconds(thread.updated_at),
    last_read_at: thread.last_read_at ? isoSeconds(thread.last_read_at) : null,
    url,
    subscription_url: `${url}/subscription`,
  };
}

/**
 * Writes pages of threads as JSON with serializers compiled from the response schema. A page of 50
 * threads repeats a few full repositories (about 5 KB each): each is serialized once, and kept while
 * what it is made of (the repository's row, its owner, its facts, the server's URLs) stays the same,
 * so a page costs one serialization per changed repository and the small rest of each thread. The
 * kept ones are known by their stored version (`cached`): a page loads only the repositories whose
 * version moved since.
 */
const OPEN_FIRST = Buffer.from(`[{"repository":`);
const OPEN_NEXT = Buffer.from(`,{"repository":`);
const CLOSE = Buffer.from(`]`);
const EMPTY = Buffer.from(`[]`);

/** Compiled once from the response schemas. */
const serializeRepository = fastJson(FullRepository as object) as (value: FullRepository) => string;
const serializeFields = fastJson(ThreadFields as object) as (value: ThreadFields) => string;

/** One writer (and so one cache of repository JSON and of pages) per server, kept per world of its database (ChangeFeed.world). */
const writers = perServer((ctx) => new ThreadPageWriter(ctx.urls, () => ctx.db.feed.world));

/** The page writer of this server, made on first use. */
export function threadPageWriter(ctx: Context): ThreadPageWriter {
  return writers.of(ctx);
}

/**
 * Whether two rows hold the same values under the same keys. The rows' values are what the JSON is
 * made of (text, numbers, null): equal values give equal JSON. A value of another kind compares by
 * identity, which at worst serializes again.
 */
function sameRow(a: object, b: object): boolean {
  if (a === b) return true;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let keys = 0;
  for (const key in x) {
    if (x[key] !== y[key] || !(key in y)) return false;
    keys++;
  }
  for (const _ in y) keys--;
  return keys === 0;
}

const sameInputs = (a: RepositoryWithFacts, b: RepositoryWithFacts) => sameRow(a.repository, b.repository) && sameRow(a.owner, b.owner) && sameRow(a.facts, b.facts);

/** A page as answered: its bytes, how many threads it shows and how many the list has in all. */
export interface WrittenPage {
  body: Buffer;
  returned: number;
  total: number;
}

export class ThreadPageWriter {
  private static readonly CACHED_REPOSITORIES = 1000;
  /** The bytes of whole pages kept (about 120 pages of 50 threads, at about 270 KB each). */
  static readonly CACHED_PAGE_BYTES = 32 * 1024 * 1024;
  /** Repository id → its JSON and the inputs it was made from; oldest use first. */
  private readonly repositories = new Map<number, { inputs: RepositoryWithFacts; json: Buffer }>();
  /** A list's entity tag → the page answered under it; oldest use first. */
  private readonly pages = new Map<string, WrittenPage>();
  private pageBytes = 0;
  private readonly urls: Urls;
  /** The world what is kept was made in: when another is put in place, versions start over, and everything kept goes. */
  private readonly currentWorld: () => number;
  private world: number;

  constructor(urls: Urls, world: () => number = () => 0) {
    this.urls = urls;
    this.currentWorld = world;
    this.world = world();
  }

  /** Forgets what was kept for another world than the present one. */
  private sameWorld(): void {
    const world = this.currentWorld();
    if (world === this.world) return;
    this.world = world;
    this.repositories.clear();
    this.pages.clear();
    this.pageBytes = 0;
  }

  /**
   * A repository's inputs as kept with its JSON, when they were read at `version` (the version a
   * list's validator gave): the page needs neither to load nor to render it. A version moves with
   * every write the representation is made of (migration 0014), so an equal one is an equal body.
   */
  cached(id: number, version: number | null | undefined): RepositoryWithFacts | undefined {
    this.sameWorld();
    const entry = this.repositories.get(id);
    return entry && version != null && entry.inputs.version === version ? entry.inputs : undefined;
  }

  /**
   * The page answered under a list's entity tag, when this process wrote it. The tag is made of
   * everything the page shows (the user, the inbox version, the versions of the repositories of the
   * user's threads and whether the user reads each, the query, the world: NotificationService.listValidator),
   * and none of these ever comes back to an earlier value: an equal tag is an equal page, however
   * long ago it was written.
   */
  page(etag: string): WrittenPage | undefined {
    this.sameWorld();
    const page = this.pages.get(etag);
    if (page) {
      this.pages.delete(etag);
      this.pages.set(etag, page);
    }
    return page;
  }

  /** Keeps a page written under `etag` (never older than the tag: NotificationService.list), the least recently used going first. */
  keep(etag: string, page: WrittenPage): void {
    this.sameWorld();
    if (page.body.length > ThreadPageWriter.CACHED_PAGE_BYTES || this.pages.has(etag)) return;
    this.pages.set(etag, page);
    this.pageBytes += page.body.length;
    for (const [oldest, kept] of this.pages) {
      if (this.pageBytes <= ThreadPageWriter.CACHED_PAGE_BYTES) break;
      this.pages.delete(oldest);
      this.pageBytes -= kept.body.length;
    }
  }

  private repositoryJson(found: RepositoryWithFacts): { json: Buffer } {
    const id = found.repository.id;
    const cached = this.repositories.get(id);
    this.repositories.delete(id);
    if (cached && sameInputs(cached.inputs, found)) {
      this.repositories.set(id, cached);
      return cached;
    }
    const json = Buffer.from(serializeRepository(fullRepository(this.urls, found.repository, found.owner, found.facts)));
    const entry = { inputs: found, json };
    this.repositories.set(id, entry);
    if (this.repositories.size > ThreadPageWriter.CACHED_REPOSITORIES) this.repositories.delete(this.repositories.keys().next().value!);
    return entry;
  }

  /**
   * The page's JSON array, as UTF-8 bytes (the repositories' are encoded once, and the socket takes
   * bytes without encoding 260 KB of text per request). Its entity tag comes from the list's
   * validator, read in the same statement as the page (NotificationService.list).
   */
  write(rows: readonly ListedThread[], repositories: ReadonlyMap<number, RepositoryWithFacts>): { body: Buffer } {
    const parts: Buffer[] = [];
    // A page repeats a few repositories: each is looked up in the cache once per page.
    const onPage = new Map<number, { json: Buffer }>();
    for (const [i, row] of rows.entries()) {
      const found = repositories.get(row.repository_id)!;
      let repository = onPage.get(row.repository_id);
      if (!repository) onPage.set(row.repository_id, (repository = this.repositoryJson(found)));
      const fields = serializeFields(threadFields(this.urls, row, found));
      // The thread's own fields begin `{"id":...`: its repository goes first.
      parts.push(i === 0 ? OPEN_FIRST : OPEN_NEXT, repository.json, Buffer.from(`,${fields.slice(1)}`));
    }
    parts.push(rows.length ? CLOSE : EMPTY);
    return { body: Buffer.concat(parts) };
  }
}

export function subscriptionRepresentation(
  urls: Urls,
  threadId: number,
  state: { subscribed: boolean; ignored: boolean; reason: string | null; created_at: string },
): ThreadSubscription {
  const url = threadUrl(urls, threadId);
  return { ...state, created_at: isoSeconds(state.created_at), url: `${url}/subscription`, thread_url: url };
}
