// Notifications: the rules of the notifications API — operator-made threads, lists and their
// validators, marking read, thread subscriptions and repository watching. The fan-out of platform
// activity to threads is fan-out.ts.
import { defineJob } from '../../jobs/job.ts';
import { hash } from 'node:crypto';
import type { Executor } from '../../db/index.ts';
import { heldRows } from '../../db/held.ts';
import { invalidField, notFound } from '../../platform/errors.ts';
import { findAccount } from '../../core/accounts/store.ts';
import { repositoriesWithFacts, type RepositoryWithFacts } from '../../core/repositories/facts.ts';
import { findRepository } from '../../core/repositories/store.ts';
import { isRowId } from '../../platform/schemas.ts';
import type { RepositoryRow } from '../../core/repositories/representations.ts';
import {
  shapeRepository, subscriptionRepresentation, threadRepresentation, threadPageWriter, type ThreadPageWriter, type WrittenPage, type NotificationThread, type ShapedRepository, type ThreadSubscription,
} from './representations.ts';
import * as store from './store.ts';
import * as following from './subscription-store.ts';
import type { MarkSelection, SubscriptionRow, ThreadWithSubject } from './store.ts';
import { Service } from '../../platform/service.ts';
import { userRepositoryPermissions } from '../../core/access/index.ts';

import { PARTICIPATING, type Reason } from './reasons.ts';

/**
 * Threads marked per transaction by the background job, unless CODEHOST_NOTIFICATIONS_MARK_READ_BATCH
 * says otherwise. SQLite runs a batch synchronously on this process's event loop, so its batches
 * stay short; on PostgreSQL a batch only waits on the network, and larger ones cost less per thread
 * (100,000 threads: about 3 s in batches of 10,000, 9 s in batches of 2,000).
 */
const MARK_READ_BATCH = { sqlite: 2_000, postgres: 10_000 } as const;
export const MARK_READ_MESSAGE = "Unread notifications couldn't be marked in a single request. Notifications are being marked as read in the background.";

export interface ListOptions {
  repositoryId?: number;
  all?: boolean;
  participating?: boolean;
  since?: string;
  before?: string;
  page: number;
  perPage: number;
}

/** What a list is decided from (`listValidator`). */
export interface ListValidator {
  etag: string;
  /** Last-Modified (null: nothing ever changed). */
  modifiedAt: string | null;
  /** The versions of the repositories of the user's threads (`repository_versions`). */
  versions: ReadonlyMap<number, number | null>;
  /** Whether deciding it recorded the repositories in the inbox (a write, which moved its version). */
  recorded: boolean;
}

interface MarkReadJob {
  userId: number;
  repositoryId: number | null;
  until: string;
  readAt: string;
  read: boolean;
}

/** Marks a user's threads read (or unread) in the background, in batches: the 202 of mark as read. */
export const MARK_READ = defineJob<MarkReadJob, NotificationService>({
  name: 'notifications.mark-read',
  handle: (service, job) => service.runMarkRead(job),
});

/**
 * A timestamp the schema accepted as date-time, as stored text. The format also admits what Date
 * cannot represent (a leap second, 23:59:60): that is a 422, not a crash.
 */
function storedTime(value: string, resource: string, field: string): string {
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw invalidField(resource, field, `${field} is not a valid timestamp: ${value}`, 'invalid');
  return new Date(ms).toISOString();
}

/** What a list's query asks for, as the store filters threads: `all` read ones too, `participating` its reasons alone. */
export function threadFilter(userId: number, options: Omit<ListOptions, 'page' | 'perPage'>): store.ThreadFilter {
  return {
    userId,
    repositoryId: options.repositoryId,
    all: options.all ?? false,
    reasons: options.participating ? PARTICIPATING : undefined,
    since: options.since === undefined ? undefined : storedTime(options.since, 'Notification', 'since'),
    before: options.before === undefined ? undefined : storedTime(options.before, 'Notification', 'before'),
  };
}

/**
 * What a validator read decides, made once per read: a kept read (src/db/changes.ts) is one shared,
 * never-changed object while nothing changed, so a poll that changes nothing hashes nothing. The
 * tags are per query (`key`) of the read's one user, a few kept.
 */
interface Decided {
  digest: string;
  versions: ReadonlyMap<number, number | null>;
  etags: Map<string, string>;
}
const decided = new WeakMap<store.ListValidator, Decided>();
const TAGS_PER_VALIDATOR = 16;

function decidedOf(read: store.ListValidator): Decided {
  let found = decided.get(read);
  if (!found) {
    const repositories = read.repositories;
    found = {
      digest: hash('sha1', repositories.map((r) => `${r.id}:${r.version}:${r.readable ? 1 : 0}`).join(','), 'base64'),
      versions: new Map(repositories.map((r) => [r.id, r.version])),
      etags: new Map(),
    };
    decided.set(read, found);
  }
  return found;
}

/**
 * A list's (or thread's) entity tag: the user, the inbox version, the repositories' digest, the
 * query, and the world the versions are of (ChangeFeed.world: the test double's resets and restores
 * put versions back, and they climb again through other changes).
 */
const listTag = (userId: number, version: number, digest: string, key: string, world: number) => `W/"${hash('sha1', `${userId}\n${version}\n${digest}\n${key}\n${world}`, 'hex')}"`;

export class NotificationService extends Service {
  /** Shared by every service of this server: the repositories' JSON is kept across requests. */
  private get pages(): ThreadPageWriter {
    return threadPageWriter(this.ctx);
  }

  /** Marking as read names its threads in one array parameter on PostgreSQL (`store.markThreads`). */
  private get onPostgres(): boolean {
    return this.ctx.db.dialect === 'postgres';
  }

  private async canRead(db: Executor, userId: number, repository: RepositoryRow): Promise<boolean> {
    if (repository.visibility === 'public') return true;
    return (await userRepositoryPermissions(db, userId, repository)).pull;
  }

  // --- Operator-made notifications ---------------------------------------------------------------

  /** Creates or updates a user's thread for an operator-named subject (CI, invitations, alerts...). */
  async notify(input: { login: string; repository: string; subject: { type: string; title: string; url: string }; reason: Reason }): Promise<NotificationThread> {
    const user = await findAccount(this.db, input.login);
    if (!user || user.type === 'Organization') throw notFound(`User not found: ${input.login}`);
    const [ownerLogin, name] = input.repository.split('/') as [string, string];
    const repository = await findRepository(this.db, ownerLogin, name);
    if (!repository) throw notFound(`Repository not found: ${input.repository}`);
    if (!(await this.canRead(this.db, user.id, repository))) {
      throw invalidField('Notification', 'login', `${user.login} cannot read ${input.repository}`);
    }
    const key = hash('sha256', `${input.subject.type}\n${input.subject.url}`, 'base64url');
    const now = this.now();
    const threadId = await this.db.transaction().execute(async (trx) => {
      // Deleted since they were looked up: a 404, as when they were not found (held, the inserts
      // cannot fail). In the order of every writer of notifications: the user, the inbox, the repository.
      if (!(await heldRows(trx, 'users', [user.id])).size) throw notFound(`User not found: ${input.login}`);
      await store.lockInbox(trx, user.id, this.onPostgres);
      if (!(await heldRows(trx, 'repositories', [repository.id])).size) throw notFound(`Repository not found: ${input.repository}`);
      const subjectId = await store.upsertSubject(trx, {
        repository_id: repository.id,
        issue_id: null,
        subject_key: `subject:${repository.id}:${key}`,
        type: input.subject.type,
        title: input.subject.title,
        url: input.subject.url,
      }, now);
      await store.upsertThreads(trx, [{
        user_id: user.id,
        subject_id: subjectId,
        repository_id: repository.id,
        reason: input.reason,
        unread: 1,
        done: 0,
        updated_at: now,
        last_read_at: null,
        latest_comment_id: null,
        last_activity_id: 0,
        created_at: now,
      }]);
      await store.touchInboxes(trx, [user.id], now);
      return (await store.findThreadBySubject(trx, user.id, subjectId))!;
    });
    const [thread] = await this.represent([threadId]);
    if (!thread) throw notFound(`Repository not found: ${input.repository}`);
    return thread;
  }

  // --- The API -----------------------------------------------------------------------------------

  /**
   * What a list is decided from, in one statement (`store.listValidator`): its entity tag and
   * Last-Modified, and the repositories to leave out. The tag is made of the user's inbox version
   * (moved by every write of their threads and thread subscriptions), the versions of the
   * repositories of their threads (moved by every write a repository representation is made of) and
   * whether they can read each, and the list's query (`key`): so it changes whenever the page would,
   * and a conditional GET is answered without reading a thread. When the repositories differ from
   * those the inbox last recorded, the inbox records them and its Last-Modified moves to now (an
   * If-Modified-Since poll sees a rename, a new count or lost access too).
   */
  async listValidator(userId: number, key: string): Promise<ListValidator> {
    return this.decide(userId, await store.listValidator(this.db, userId), key);
  }

  /**
   * What one thread's GET (`route`: the thread, or its subscription) is decided from, in the same
   * one statement as a list's (which also reads the thread by primary key), without loading or
   * rendering it. Everything either answer shows moves the inbox version (the thread's own fields,
   * its thread subscription) or changes the repositories' digest (its repository's version, which
   * repository watching moves too, and whether the user can read it): so the tag, a hash of these,
   * the thread and the route, changes whenever the answer would, and Last-Modified moves with them.
   * Null when the thread is not the user's or its repository is not readable: not decided here,
   * the route's read answers (404).
   */
  async threadValidator(userId: number, threadId: number, route: 'thread' | 'subscription'): Promise<{ etag: string; modifiedAt: string | null } | null> {
    if (!isRowId(threadId)) return null;
    const read = await store.listValidator(this.db, userId, threadId);
    const thread = read.thread;
    if (!thread || !read.repositories.some((r) => r.id === thread.repositoryId && r.readable)) return null;
    const { etag, modifiedAt } = await this.decide(userId, read, `${route}:${threadId}`);
    // The inbox moved when the thread was last written; the thread's own times are a floor all the same.
    const latest = [modifiedAt, thread.updatedAt, thread.lastReadAt].filter((t): t is string => t !== null).sort().at(-1) ?? null;
    return { etag, modifiedAt: latest };
  }

  private async decide(userId: number, read: store.ListValidator, key: string): Promise<ListValidator> {
    const { inbox } = read;
    const { digest, versions, etags } = decidedOf(read);
    const recorded = inbox ? inbox.repositoriesDigest !== digest : read.repositories.length > 0;
    if (recorded) {
      const current = await store.recordListedRepositories(this.db, userId, digest, this.now());
      return { recorded, etag: listTag(userId, current.version, digest, key, this.ctx.db.feed.world), modifiedAt: current.modifiedAt, versions };
    }
    let etag = etags.get(key);
    if (etag === undefined) {
      if (etags.size >= TAGS_PER_VALIDATOR) etags.clear();
      etags.set(key, (etag = listTag(userId, inbox?.version ?? 0, digest, key, this.ctx.db.feed.world)));
    }
    return { recorded, etag, modifiedAt: inbox?.modifiedAt ?? null, versions };
  }

  /**
   * A page of the user's threads, as the JSON the API answers (see ThreadPageWriter), with what it
   * is decided from (its entity tag and Last-Modified, as `listValidator` gives them): the page, its
   * count and the validator are one statement, one snapshot (`store.listPage`). When the validator
   * has to record the repositories (they changed since the inbox last did, which moves its version),
   * the page is read again after that write: a page older than the recorded version could otherwise
   * be answered under its tag, and a later poll's 304 would hide the change in between. Read after
   * the tag, a page can only be newer than its tag (a later 200 too many, never a 304 hiding a change).
   *
   * A page is written once per tag and kept by this process (ThreadPageWriter.page): the validator
   * is read first (`validated`: a conditional request's, already read; kept between requests itself
   * while nothing changed), and a page already written
   * under its tag is answered as it is. A page newer than its tag is kept under it all the same: the
   * tag it shows is never read again, as what moved it does not move back.
   */
  async list(userId: number, key: string, options: ListOptions, validated?: ListValidator): Promise<{ validator: ListValidator } & WrittenPage> {
    const current = validated ?? (await this.listValidator(userId, key));
    const kept = this.pages.page(current.etag);
    if (kept) return { validator: current, ...kept };
    const filter = threadFilter(userId, options);
    const offset = (options.page - 1) * options.perPage;
    let read = await store.listPage(this.db, filter, options.perPage, offset);
    const validator = await this.decide(userId, read.validator, key);
    if (validator.recorded) read = await store.listPage(this.db, filter, options.perPage, offset);
    // The page's repositories: those rendered at the validator's version come from the page writer;
    // the others are loaded (with the version they were read at) and rendered once.
    const repositories = new Map<number, RepositoryWithFacts>();
    const missing: number[] = [];
    for (const id of new Set(read.threads.map((r) => r.repository_id))) {
      const cached = this.pages.cached(id, validator.versions.get(id));
      if (cached) repositories.set(id, cached);
      else missing.push(id);
    }
    for (const found of await repositoriesWithFacts(this.db, missing)) repositories.set(found.repository.id, found);
    // A repository deleted since the page was read took its threads with it: they are left out, as
    // a read after the deletion would (the count, of the page's snapshot, may still include them).
    const threads = read.threads.filter((thread) => repositories.has(thread.repository_id));
    const page = { body: this.pages.write(threads, repositories).body, returned: threads.length, total: read.total };
    this.pages.keep(validator.etag, page);
    return { validator, ...page };
  }

  async thread(userId: number, threadId: number): Promise<NotificationThread> {
    const [thread] = await this.represent([await this.requireThread(userId, threadId)]);
    if (!thread) throw notFound();
    return thread;
  }

  /**
   * Marks the user's threads (of one repository, or all) read: those updated at or before
   * `last_read_at` (default now). Up to the threshold at once (`done`); above it, in a background
   * job (`queued`). `read: false` marks them unread instead.
   */
  async markRead(userId: number, input: { repositoryId?: number; last_read_at?: string; read?: boolean }): Promise<'done' | 'queued'> {
    const now = this.now();
    const until = input.last_read_at === undefined ? now : storedTime(input.last_read_at, 'Notification', 'last_read_at');
    // A thread is never read "in the future": later activity must still make it unread.
    const readAt = until < now ? until : now;
    const selection: MarkSelection = { userId, repositoryId: input.repositoryId ?? null, until, read: input.read ?? true };
    const threshold = this.ctx.config.notifications.markReadThreshold;
    const hidden = await store.hiddenRepositoryIds(this.db, userId);
    if (await store.coversMoreThan(this.db, selection, hidden, threshold)) {
      const job: MarkReadJob = { ...selection, readAt };
      await MARK_READ.send(this.ctx.queue, job);
      return 'queued';
    }
    await this.userWrite(userId, async (trx) => {
      // Again inside the transaction: what the user cannot read as the marking happens stays as it is.
      const current = await store.hiddenRepositoryIds(trx, userId);
      if ((await store.markThreads(trx, selection, current, readAt, threshold, this.onPostgres)).changed > 0) await store.touchInboxes(trx, [userId], now);
    });
    return 'done';
  }

  /**
   * The background half of a large mark-as-read: batches in their own transactions, until none is
   * left. It yields to the event loop before each batch: on SQLite the queries run synchronously
   * in this process, and requests (the 202 that queued this job first of all) must not wait for it.
   */
  async runMarkRead(job: MarkReadJob): Promise<void> {
    const batch = this.ctx.config.notifications.markReadBatch || MARK_READ_BATCH[this.ctx.db.dialect];
    // Each batch starts after the last one's final thread (a job run again starts from the beginning).
    let after: store.MarkPosition | null = null;
    for (;;) {
      await new Promise((resolve) => setImmediate(resolve));
      const marked: { chosen: number; last: store.MarkPosition | null } = await this.db.transaction().execute(async (trx) => {
        // A user deleted since the job was queued took their threads with them: nothing is left to mark.
        if (!(await heldRows(trx, 'users', [job.userId])).size) return { chosen: 0, changed: 0, last: null };
        await store.lockInbox(trx, job.userId, this.onPostgres);
        // Access may have changed since the job was queued: the hidden repositories as of now.
        const hidden = await store.hiddenRepositoryIds(trx, job.userId);
        const result = await store.markThreads(trx, job, hidden, job.readAt, batch, this.onPostgres, after);
        if (result.changed > 0) await store.touchInboxes(trx, [job.userId], this.now());
        return result;
      });
      if (marked.chosen < batch) return;
      after = marked.last;
    }
  }

  async markThreadRead(userId: number, threadId: number): Promise<void> {
    const thread = await this.requireThread(userId, threadId);
    if (!thread.unread) return;
    await this.changeThread(userId, threadId, { unread: 0, last_read_at: this.now() });
  }

  /** Done: read, and out of the lists until new activity reaches the thread. */
  async markThreadDone(userId: number, threadId: number): Promise<void> {
    const thread = await this.requireThread(userId, threadId);
    if (thread.done) return;
    await this.changeThread(userId, threadId, { unread: 0, last_read_at: this.now(), done: 1 });
  }

  async subscription(userId: number, threadId: number): Promise<ThreadSubscription> {
    const thread = await this.requireThread(userId, threadId);
    return this.subscriptionOf(thread);
  }

  /** `ignored: true` blocks the thread; false subscribes (keeping the participation reason, else `manual`). */
  async setSubscription(userId: number, threadId: number, ignored: boolean): Promise<ThreadSubscription> {
    const thread = await this.requireThread(userId, threadId);
    const current = await following.subscription(this.db, userId, thread.subject_id);
    await this.saveSubscription(userId, {
      user_id: userId,
      subject_id: thread.subject_id,
      state: ignored ? 'ignored' : 'subscribed',
      reason: current?.reason ?? (ignored ? null : 'manual'),
      created_at: current?.created_at ?? this.now(),
    });
    return this.subscriptionOf(thread);
  }

  /** Mutes the thread: only repository watching reaches the user, until they comment or are mentioned. */
  async deleteSubscription(userId: number, threadId: number): Promise<void> {
    const thread = await this.requireThread(userId, threadId);
    const current = await following.subscription(this.db, userId, thread.subject_id);
    await this.saveSubscription(userId, {
      user_id: userId,
      subject_id: thread.subject_id,
      state: 'muted',
      reason: current?.reason ?? null,
      created_at: current?.created_at ?? this.now(),
    });
  }

  /** A user's thread subscription, saved with their inbox version moved (the conditional GETs). */
  private async saveSubscription(userId: number, row: SubscriptionRow): Promise<void> {
    await this.userWrite(userId, async (trx) => {
      // The thread's subject went with its repository (or issue) since the thread was read: gone.
      if (!(await heldRows(trx, 'notification_subjects', [row.subject_id])).size) throw notFound();
      await following.saveSubscriptions(trx, [row]);
      await store.touchInboxes(trx, [userId], this.now());
    });
  }

  private async subscriptionOf(thread: ThreadWithSubject): Promise<ThreadSubscription> {
    const current = await following.subscription(this.db, thread.user_id, thread.subject_id);
    if (current && current.state !== 'muted') {
      return subscriptionRepresentation(this.ctx.urls, thread.id, {
        subscribed: current.state === 'subscribed',
        ignored: current.state === 'ignored',
        reason: current.reason,
        created_at: current.created_at,
      });
    }
    // No thread subscription of their own (or a muted one): what reaches them is the repository watch.
    const watch = await following.watchOf(this.db, thread.repository_id, thread.user_id);
    return subscriptionRepresentation(this.ctx.urls, thread.id, {
      subscribed: Boolean(watch?.subscribed && !watch.ignored),
      ignored: false,
      reason: null,
      created_at: current?.created_at ?? thread.created_at,
    });
  }

  private async changeThread(userId: number, threadId: number, values: { unread: 0; last_read_at: string; done?: 1 }): Promise<void> {
    await this.userWrite(userId, async (trx) => {
      await store.updateThread(trx, threadId, values);
      await store.touchInboxes(trx, [userId], this.now());
    });
  }

  /**
   * A write of the user's own notifications (threads, thread subscriptions, their inbox), in a
   * transaction that first holds the user's row (src/db/held.ts): a user deleted since the request
   * was authenticated is a 404, as for anything gone, and a deletion racing the write waits for it
   * instead of making its inserts fail on a foreign key.
   */
  private async userWrite<T>(userId: number, write: (trx: Executor) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(async (trx) => {
      if (!(await heldRows(trx, 'users', [userId])).size) throw notFound();
      await store.lockInbox(trx, userId, this.onPostgres);
      return write(trx);
    });
  }

  private async requireThread(userId: number, threadId: number): Promise<ThreadWithSubject> {
    const thread = isRowId(threadId) ? await store.findThread(this.db, userId, threadId) : undefined;
    if (!thread) throw notFound();
    return thread;
  }

  private async represent(rows: readonly ThreadWithSubject[]): Promise<NotificationThread[]> {
    const repositories = new Map<number, ShapedRepository>(
      (await repositoriesWithFacts(this.db, [...new Set(rows.map((r) => r.repository_id))])).map((facts) => [facts.repository.id, shapeRepository(this.ctx.urls, facts)]),
    );
    // A repository deleted since the threads were read took them with it: they are not represented.
    return rows.flatMap((row) => {
      const repository = repositories.get(row.repository_id);
      return repository ? [threadRepresentation(this.ctx.urls, row, repository)] : [];
    });
  }
}
