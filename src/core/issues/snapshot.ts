// What an outbox row keeps of its subject (`payload.snapshot`, src/core/issues/writes.ts): the issue,
// pull request and comment rendered with the shared representations inside the writing
// transaction, once the change is applied. A consumer that renders the activity later (a webhook
// delivery, after other writes) shows the subject as that write left it, not as it is by then.
import { isoSeconds } from '../../platform/clock.ts';
import type { UserRow } from '../accounts/store.ts';
import { nodeId, type Urls } from '../../platform/urls.ts';
import { simpleUser } from '../accounts/representations.ts';
import { commentRepresentation, issueRepresentation, issueUrls, type Issue, type IssueComment } from './representations.ts';
import type { CommentFacts, IssueFacts } from './store.ts';

/** A team as a pull request's `requested_teams` (and a webhook's `requested_team`) shows it. */
export function teamRepresentation(urls: Urls, org: Pick<UserRow, 'login'>, team: { id: number; slug: string; name: string }) {
  return {
    id: team.id,
    node_id: nodeId('Team', team.id),
    name: team.name,
    slug: team.slug,
    url: `${urls.api}/orgs/${org.login}/teams/${team.slug}`,
    html_url: `${urls.web}/orgs/${org.login}/teams/${team.slug}`,
  };
}

/** The pull request form of an issue: the Issue's fields plus merge state and requested reviewers. */
export function pullRequestRepresentation(urls: Urls, facts: IssueFacts) {
  const { issue, owner, repository } = facts;
  const { pull_request: links, ...common } = issueRepresentation(urls, facts);
  const at = issueUrls(urls, owner.login, repository.name, issue);
  return {
    ...common,
    url: at.pull,
    issue_url: at.issue,
    diff_url: links?.diff_url,
    patch_url: links?.patch_url,
    commits_url: `${at.pull}/commits`,
    review_comments_url: `${at.pull}/comments`,
    merged: issue.merged_at !== null,
    merged_at: issue.merged_at ? isoSeconds(issue.merged_at) : null,
    draft: false,
    requested_reviewers: facts.requestedReviewers.map((u) => simpleUser(urls, u)),
    requested_teams: facts.requestedTeams.map((team) => teamRepresentation(urls, owner, team)),
  };
}
export type PullRequest = ReturnType<typeof pullRequestRepresentation>;

/**
 * The subject as its webhook event names it: `pull_request` for `pull_request` activity, `issue`
 * (the Issue form, also of a pull request) for `issues` and `issue_comment`, with the `comment`.
 * The repository and the people an action names are not kept: see src/areas/app-webhooks/payloads.ts.
 */
export type SubjectSnapshot = { pull_request: PullRequest } | { issue: Issue; comment?: IssueComment };

export function subjectSnapshot(urls: Urls, event: string, issue: IssueFacts, comment?: CommentFacts): SubjectSnapshot {
  if (event === 'pull_request') return { pull_request: pullRequestRepresentation(urls, issue) };
  return { issue: issueRepresentation(urls, issue), ...(comment ? { comment: commentRepresentation(urls, comment) } : {}) };
}
