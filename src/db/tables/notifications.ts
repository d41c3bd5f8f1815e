// Tables of the notifications area (migration 0007_notifications).
import type { Generated } from 'kysely';
import type { Bool } from './columns.ts';

/**
 * What a thread is about: an issue or pull request, or a subject the operator surface names
 * (a release, a check suite, an invitation...). Shared by every user's thread about it.
 */
export interface NotificationSubjectsTable {
  id: Generated<number>;
  repository_id: number;
  /** The issue or pull request, when the subject is one (its URL is built from the issue). */
  issue_id: number | null;
  /** `issue:<id>`, or `subject:<hash of type and url>` for an operator-made subject. */
  subject_key: string;
  /** `Issue`, `PullRequest`, or the operator's type. */
  type: string;
  title: string;
  /** The API URL of an operator-made subject; null for issues. */
  url: string | null;
  created_at: string;
  updated_at: string;
}

/** One user × one subject. Listing reads (user_id, unread | done | repository_id, updated_at). */
export interface NotificationThreadsTable {
  id: Generated<number>;
  user_id: number;
  subject_id: number;
  repository_id: number;
  reason: string;
  unread: Bool;
  /** Marked as done: out of the lists until new activity reaches the thread. Done implies read. */
  done: Bool;
  /** Time of the newest activity that notified the user. */
  updated_at: string;
  last_read_at: string | null;
  /** The comment of the newest notification, if it was a comment. */
  latest_comment_id: number | null;
  /** The outbox row that last set the reason: an older row processed later does not override it. */
  last_activity_id: number;
  created_at: string;
}

/**
 * A user's subscription to a subject's threads: `subscribed` (notified of its activity with
 * `reason`), `ignored` (nothing until they comment or are mentioned) or `muted` (deleted: only
 * repository watching still notifies, until they comment or are mentioned).
 */
export interface ThreadSubscriptionsTable {
  user_id: number;
  subject_id: number;
  state: string;
  reason: string | null;
  created_at: string;
}

/** When anything in a user's notifications last changed: the lists' `Last-Modified`. */
export interface NotificationInboxesTable {
  user_id: number;
  modified_at: string;
  /** Moved forward by every write of the user's threads or thread subscriptions (migration 0014). */
  version: Generated<number>;
  /** The repositories (ids, versions, readable) the lists were last decided from; see `listValidator`. */
  repositories_digest: string | null;
}

export interface NotificationTables {
  notification_subjects: NotificationSubjectsTable;
  notification_threads: NotificationThreadsTable;
  thread_subscriptions: ThreadSubscriptionsTable;
  notification_inboxes: NotificationInboxesTable;
}
