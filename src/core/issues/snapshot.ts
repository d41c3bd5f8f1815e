// What an outbox row keeps of its subject (`payload.snapshot`, src/core/issues/writes.ts): the issue,
// pull request and comment rendered with the shared representations inside the writing
// transaction, once the change is applied. A consumer that renders the activity later (a webhook
// delivery, after other writes) shows the subject as that write left it, not as it is by then.
import type { Urls } from '../../platform/urls.ts';
import {
  commentRepresentation, issueRepresentation, pullRequestRepresentation, type Issue, type IssueComment, type PullRequest,
} from './representations.ts';
import type { CommentFacts, IssueFacts } from './store.ts';

/**
 * The subject as its webhook event names it: `pull_request` for `pull_request` and
 * `pull_request_review` activity, `issue`
 * (the Issue form, also of a pull request) for `issues` and `issue_comment`, with the `comment`.
 * The repository and the people an action names are not kept: see src/areas/app-webhooks/payloads.ts.
 */
export type SubjectSnapshot = { pull_request: PullRequest } | { issue: Issue; comment?: IssueComment };

export function subjectSnapshot(urls: Urls, event: string, issue: IssueFacts, comment?: CommentFacts): SubjectSnapshot {
  if (event === 'pull_request' || event === 'pull_request_review') return { pull_request: pullRequestRepresentation(urls, issue) };
  return { issue: issueRepresentation(urls, issue), ...(comment ? { comment: commentRepresentation(urls, comment) } : {}) };
}
