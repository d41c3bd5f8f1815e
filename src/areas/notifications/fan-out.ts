// The fan-out of platform activity to notification threads: a handler per activity that notifies
// (one outbox row at a time, inside the dispatcher's transaction), and the access changes applied in
// the writer's transaction.
// - A thread is one user × one subject (an issue, a pull request, or an operator-made subject).
// - Reasons from the row itself: assignees (`assign`), requested reviewers and members of requested
//   teams (`review_requested`), mentioned users (`mention`), members of mentioned teams
//   (`team_mention`). From the user's thread subscription: its reason (`author`, `comment`,
//   `state_change`, `manual`, or whichever participation created it). From watching the repository:
//   `subscribed`. The most direct wins: mention, team_mention, review_requested, assign, author,
//   comment, state_change, manual, subscribed.
// - The actor is never notified; only users who can read the repository are.
// - Participation (author, comment, mention, assign, review request, state change) creates the
//   thread subscription when there is none. An `ignored` subscription blocks everything, a `muted`
//   (deleted) one everything but repository watching; commenting or being mentioned subscribes again.
//   A repository watched with `ignored` lets through only direct participation (not team mentions,
//   team review requests or watching).
// - Opening, commenting, reviewing and state changes reach subscribers and watchers; an assignment or a review
//   request reaches only the assignee or the requested reviewers.
import type { ActivityHandlers, StoredActivity } from '../../activity/outbox.ts';
import type { AccessChange, Activities, AppliedActivityName, Mentions, StoredActivities } from '../../core/activities.ts';
import { findIssueById } from '../../core/issues/store.ts';
import { readersOf } from '../../core/access/index.ts';
import { findRepositoryById } from '../../core/repositories/store.ts';
import { heldPeople, heldRows } from '../../db/held.ts';
import type { Executor } from '../../db/index.ts';
import type { Context } from '../../platform/context.ts';
import { Service } from '../../platform/service.ts';
import { mostDirect, SUBSCRIBING, type Reason } from './reasons.ts';
import * as store from './store.ts';
import * as following from './subscription-store.ts';
import type { NewThread, SubscriptionRow } from './store.ts';

/** A reason a user has to hear of one activity; `direct` unless it came through a team or watching. */
interface Claim {
  reason: Reason;
  direct: boolean;
}

/** Gives these users a reason to hear of the activity. */
type Claimant = (userIds: readonly number[], reason: Reason, direct: boolean) => void;

/** What one activity asks of the fan-out: who it names and why. */
interface Notice {
  /** The actor's own participation (it subscribes them). */
  actorReason?: Reason;
  /** Whether the activity reaches the subject's subscribers and the repository's watchers. */
  followers?: boolean;
  mentions?: Mentions;
  /** The users the activity names itself (assignees, requested reviewers). */
  claims?(trx: Executor, claim: Claimant): Promise<void>;
}

/** A row of one of these issue activities, as the dispatcher hands it over. */
type IssueRow<K extends keyof StoredActivities & string> = StoredActivity<StoredActivities, K>;

class NotificationFanOut extends Service {
  /** Notifies of one issue or pull request activity, as `notice` says it concerns whom. */
  async notify(trx: Executor, row: IssueRow<keyof StoredActivities & string>, notice: Notice): Promise<void> {
    if (row.issue_id === null || row.actor_id === null) return;
    const issue = await findIssueById(trx, row.issue_id);
    if (!issue) return;
    const repository = await findRepositoryById(trx, issue.repository_id);
    if (!repository) return;
    const actorId = row.actor_id;

    const claims = new Map<number, Claim[]>();
    const claim: Claimant = (userIds, reason, direct) => {
      for (const id of userIds) claims.set(id, [...(claims.get(id) ?? []), { reason, direct }]);
    };
    const actorReason = notice.actorReason ?? null;
    const followers = notice.followers ?? false;
    const mentions = notice.mentions ?? { mentioned_user_ids: [], mentioned_team_ids: [] };
    await notice.claims?.(trx, claim);
    claim(await following.teamMembers(trx, mentions.mentioned_team_ids), 'team_mention', false);
    claim(mentions.mentioned_user_ids, 'mention', true);

    const now = this.now();
    const subjectKey = `issue:${issue.id}`;
    const subscriptions = new Map((await following.subscriptionsOfSubject(trx, subjectKey)).map((s) => [s.user_id, s]));
    const watches = new Map((await following.watchesOf(trx, repository.id, followers ? undefined : [...claims.keys()])).map((w) => [w.user_id, w]));

    const candidates = new Set<number>([...claims.keys(), actorId]);
    if (followers) {
      for (const s of subscriptions.values()) if (s.state === 'subscribed') candidates.add(s.user_id);
      for (const w of watches.values()) if (w.subscribed && !w.ignored) candidates.add(w.user_id);
    }
    // The users deleted since the activity (its payload names them by id) are skipped; those that
    // remain are held until the fan-out commits, so a deletion racing it cannot make its inserts fail
    // and cost every other recipient the activity (it waits, then its cascade removes their threads).
    // An app's bot account is no recipient, nor subscribed by its own writes: people only.
    const users = await heldPeople(trx, [...candidates]);

    const threads: Omit<NewThread, 'subject_id'>[] = [];
    const subscriptionChanges: Omit<SubscriptionRow, 'subject_id'>[] = [];
    const subscribe = (userId: number, reason: Reason | null, state: 'subscribed' | 'ignored' | 'muted' = 'subscribed') =>
      subscriptionChanges.push({ user_id: userId, state, reason, created_at: subscriptions.get(userId)?.created_at ?? now });

    // Who of them can read the repository, in one query (anyone can read a public one).
    const readers = repository.visibility === 'public' ? null : await readersOf(trx, repository.id, [...users]);

    // Sorted, so concurrent fan-outs lock rows in one order.
    for (const userId of [...users].sort((a, b) => a - b)) {
      const own = claims.get(userId) ?? [];
      const current = subscriptions.get(userId);
      const participation = own.filter((c) => SUBSCRIBING.has(c.reason)).map((c) => c.reason);

      if (userId === actorId) {
        const reasons = [...(actorReason ? [actorReason] : []), ...participation];
        if (!reasons.length) continue;
        // Commenting (or mentioning oneself) lifts an ignored or muted subscription.
        const lifts = actorReason === 'comment' || participation.includes('mention');
        const best = mostDirect([...reasons, ...(current?.reason ? [current.reason as Reason] : [])])!;
        if (!current || (current.state === 'subscribed' && best !== current.reason) || (current.state !== 'subscribed' && lifts)) {
          subscribe(userId, best);
        }
        continue;
      }

      if (readers && !readers.has(userId)) continue;
      let state = current?.state ?? null;
      const lifted = (state === 'ignored' || state === 'muted') && own.some((c) => c.reason === 'mention');
      if (lifted) {
        state = 'subscribed';
        subscribe(userId, 'mention');
      }
      if (state === 'ignored') continue;

      const eligible: Claim[] = state === 'muted' ? [] : [...own];
      if (followers && state === 'subscribed') eligible.push({ reason: (current?.reason as Reason | null) ?? 'manual', direct: true });
      const watch = watches.get(userId);
      if (followers && watch?.subscribed && !watch.ignored) eligible.push({ reason: 'subscribed', direct: false });
      const allowed = watch?.ignored ? eligible.filter((c) => c.direct) : eligible;
      if (!allowed.length) continue;

      threads.push({
        user_id: userId,
        repository_id: repository.id,
        reason: mostDirect(allowed.map((c) => c.reason))!,
        unread: 1,
        done: 0,
        updated_at: row.created_at,
        last_read_at: null,
        latest_comment_id: row.comment_id,
        last_activity_id: row.id,
        created_at: now,
      });
      const subscribing = allowed.filter((c) => SUBSCRIBING.has(c.reason) && own.includes(c)).map((c) => c.reason);
      if (lifted || !subscribing.length) continue;
      if (state === null) subscribe(userId, mostDirect(subscribing)!);
      else if (state === 'subscribed') {
        const best = mostDirect([...subscribing, ...(current?.reason ? [current.reason as Reason] : [])])!;
        if (best !== current?.reason) subscribe(userId, best);
      }
    }

    // The writes, in the order every writer of notifications takes its locks (PostgreSQL), so that
    // none waits for another that waits for it: the users (held above), their inboxes, then the
    // subject's repository and issue and what hangs off them. A deletion of the repository moves
    // the inboxes of its threads' users before it removes the repository; a user's own writes hold
    // the user, then the inbox, then their threads (`userWrite`).
    // A subscription is part of what the user's notifications show (the subscription GET), the
    // actor's own included, whose participation changes it without a thread.
    await store.touchInboxes(trx, [...threads.map((t) => t.user_id), ...subscriptionChanges.map((s) => s.user_id)], now);
    // The repository and the issue, held (src/db/held.ts): deleted since the activity, there is
    // nothing to notify of (their threads would go with them); held, the inserts cannot fail.
    if (!(await heldRows(trx, 'repositories', [repository.id])).size || !(await heldRows(trx, 'issues', [issue.id])).size) return;
    const subjectId = await store.upsertSubject(trx, {
      repository_id: repository.id,
      issue_id: issue.id,
      subject_key: subjectKey,
      type: issue.is_pull_request ? 'PullRequest' : 'Issue',
      title: issue.title,
      url: null,
    }, now);
    await store.upsertThreads(trx, threads.map((thread) => ({ ...thread, subject_id: subjectId })));
    await following.saveSubscriptions(trx, subscriptionChanges.map((change) => ({ ...change, subject_id: subjectId })));
  }

  /**
   * Repository access changed: the threads of the repositories concerned leave (or rejoin) the lists
   * of the users concerned. The lists filter by access themselves; what changes here is their
   * Last-Modified, which moves to now, so that a poller's If-Modified-Since sees the change and the
   * header never stays at the time of activity the user may no longer see.
   */
  async accessChanged(trx: Executor, change: AccessChange): Promise<void> {
    const userIds = 'userIds' in change ? change.userIds : await store.usersWithThreadsIn(trx, change.repositoryIds);
    await store.touchInboxes(trx, userIds, this.now());
  }
}

/** A handler that notifies of the rows of these names as `notice` says. */
const notifying = <K extends keyof StoredActivities & string>(notice: (row: IssueRow<K>) => Notice) =>
  (ctx: Context, trx: Executor, row: IssueRow<K>) => new NotificationFanOut(ctx).notify(trx, row, notice(row));

const opened = notifying<'issues.opened' | 'pull_request.opened'>((row) => ({
  actorReason: 'author',
  followers: true,
  mentions: row.payload,
  async claims(trx, claim) {
    claim(row.payload.assignee_ids, 'assign', true);
    claim(row.payload.requested_reviewer_ids, 'review_requested', true);
    claim(await following.teamMembers(trx, row.payload.requested_team_ids), 'review_requested', false);
  },
}));

const stateChanged = notifying<'issues.closed' | 'issues.reopened' | 'pull_request.closed' | 'pull_request.reopened'>(() => ({ actorReason: 'state_change', followers: true }));

const assigned = notifying<'issues.assigned' | 'pull_request.assigned'>((row) => ({
  async claims(_trx, claim) {
    claim([row.payload.assignee_id], 'assign', true);
  },
}));

const reviewRequested = notifying<'issues.review_requested' | 'pull_request.review_requested'>((row) => ({
  async claims(trx, claim) {
    const request = row.payload;
    if ('requested_reviewer_id' in request) claim([request.requested_reviewer_id], 'review_requested', true);
    else claim(await following.teamMembers(trx, [request.requested_team_id]), 'review_requested', false);
  },
}));

/**
 * A submitted review: the pull request's author hears of it (`author`, unless they ignore or muted
 * the thread), its subscribers and the repository's watchers as of a comment; the reviewer
 * participates (`comment`).
 */
const reviewed = notifying<'pull_request_review.submitted'>((row) => ({
  actorReason: 'comment',
  followers: true,
  async claims(trx, claim) {
    const pull = row.issue_id === null ? undefined : await findIssueById(trx, row.issue_id);
    if (pull) claim([pull.author_id], 'author', true);
  },
}));

/** What notifications does with activity; every other activity is nothing to it. */
export const notificationHandlers: ActivityHandlers<Activities, AppliedActivityName> = {
  'issues.opened': opened,
  'pull_request.opened': opened,
  'issue_comment.created': notifying<'issue_comment.created'>((row) => ({ actorReason: 'comment', followers: true, mentions: row.payload })),
  'issues.closed': stateChanged,
  'issues.reopened': stateChanged,
  'pull_request.closed': stateChanged,
  'pull_request.reopened': stateChanged,
  'issues.assigned': assigned,
  'pull_request.assigned': assigned,
  'issues.review_requested': reviewRequested,
  'pull_request.review_requested': reviewRequested,
  'pull_request_review.submitted': reviewed,
  // In the writer's transaction: threads of who lost access leave their lists as the change commits.
  'access.changed': (ctx, trx, { payload }) => new NotificationFanOut(ctx).accessChanged(trx, payload),
};
