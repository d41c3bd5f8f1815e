// The Notification thread and Thread subscription representations.
import { Type, type Static } from 'typebox';
import { issueUrls } from '../../core/issues/representations.ts';
import { isoSeconds } from '../../platform/clock.ts';
import type { RepositoryWithFacts } from '../../core/repositories/facts.ts';
import { FullRepository, fullRepository } from '../../core/repositories/representations.ts';
import { type Urls } from '../../platform/urls.ts';
import type { ThreadWithSubject } from './store.ts';

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
  const { repository, owner } = shaped.facts;
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
    repository: shaped.body,
    subject: { title: thread.subject_title, url: subjectUrl, latest_comment_url: latestCommentUrl, type: thread.subject_type },
    reason: thread.reason,
    unread: Boolean(thread.unread),
    updated_at: isoSeconds(thread.updated_at),
    last_read_at: thread.last_read_at ? isoSeconds(thread.last_read_at) : null,
    url,
    subscription_url: `${url}/subscription`,
  };
}

export function subscriptionRepresentation(
  urls: Urls,
  threadId: number,
  state: { subscribed: boolean; ignored: boolean; reason: string | null; created_at: string },
): ThreadSubscription {
  const url = threadUrl(urls, threadId);
  return { ...state, created_at: isoSeconds(state.created_at), url: `${url}/subscription`, thread_url: url };
}
