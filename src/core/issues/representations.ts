// The Issue (also for pull requests, with `pull_request`) and issue Comment representations, as the
// platform shapes them. The admin surface answers with them; webhook payloads and migration
// archives use the same shapes: load the facts with `loadIssueFacts` / `loadCommentFacts`.
import { Type, type Static } from 'typebox';
import { isoSeconds } from '../../platform/clock.ts';
import { nodeId, type Urls } from '../../platform/urls.ts';
import { SimpleUser, simpleUser, team, Team, teamRepresentation } from '../accounts/representations.ts';
import type { UserRow } from '../accounts/store.ts';
import { FullRepository, Label, labelRepresentation } from '../repositories/representations.ts';
import type { CommentFacts, IssueFacts, IssueRow } from './store.ts';
import type { EventFacts } from './list-store.ts';
import { REACTION_CONTENTS, type ReactionCounts, type ReactionRow } from './reaction-store.ts';

export { loadCommentFacts, loadIssueFacts, type CommentFacts, type IssueFacts } from './store.ts';
export { loadCommentPageFacts, loadEventPageFacts, type EventFacts } from './list-store.ts';

const NullableString = Type.Union([Type.String(), Type.Null()]);

/** The issue's type, shaped as GET /repos/{owner}/{repo}/issue-types shows it. */
const IssueTypeRef = Type.Object({
  id: Type.Integer(),
  node_id: Type.String(),
  name: Type.String(),
  description: NullableString,
  color: NullableString,
  is_enabled: Type.Boolean(),
  created_at: Type.String(),
  updated_at: Type.String(),
});

/** The reaction counts of an issue or comment, and where its reactions are listed. */
const Reactions = Type.Object({
  url: Type.String(),
  total_count: Type.Integer(),
  '+1': Type.Integer(),
  '-1': Type.Integer(),
  laugh: Type.Integer(),
  hooray: Type.Integer(),
  confused: Type.Integer(),
  heart: Type.Integer(),
  rocket: Type.Integer(),
  eyes: Type.Integer(),
});

function reactions(url: string, counts: ReactionCounts): Static<typeof Reactions> {
  const total = REACTION_CONTENTS.reduce((sum, content) => sum + counts[content], 0);
  return {
    url: `${url}/reactions`, total_count: total, '+1': counts['+1'], '-1': counts['-1'], laugh: counts.laugh, hooray: counts.hooray,
    confused: counts.confused, heart: counts.heart, rocket: counts.rocket, eyes: counts.eyes,
  };
}

/** The eight contents of a reaction. */
export const ReactionContent = Type.Union([
  Type.Literal('+1'), Type.Literal('-1'), Type.Literal('laugh'), Type.Literal('confused'),
  Type.Literal('heart'), Type.Literal('hooray'), Type.Literal('rocket'), Type.Literal('eyes'),
], { description: 'The reaction type' });

/** A reaction to an issue or an issue comment, as the platform shows it. */
export const Reaction = Type.Object({
  id: Type.Integer(),
  node_id: Type.String(),
  user: Type.Union([SimpleUser, Type.Null()]),
  content: ReactionContent,
  created_at: Type.String(),
});
export type Reaction = Static<typeof Reaction>;

export function reactionRepresentation(urls: Urls, reaction: ReactionRow, user: UserRow): Reaction {
  return {
    id: reaction.id,
    node_id: nodeId('Reaction', reaction.id),
    user: simpleUser(urls, user),
    content: reaction.content,
    created_at: isoSeconds(reaction.created_at),
  };
}

const AuthorAssociation = Type.String({ description: 'OWNER, MEMBER, COLLABORATOR or NONE' });

export const Issue = Type.Object({
  id: Type.Integer(),
  node_id: Type.String(),
  url: Type.String(),
  repository_url: Type.String(),
  labels_url: Type.String(),
  comments_url: Type.String(),
  events_url: Type.String(),
  html_url: Type.String(),
  number: Type.Integer(),
  state: Type.String(),
  state_reason: NullableString,
  title: Type.String(),
  body: NullableString,
  user: SimpleUser,
  labels: Type.Array(Label),
  assignee: Type.Union([SimpleUser, Type.Null()]),
  assignees: Type.Array(SimpleUser),
  milestone: Type.Null(),
  locked: Type.Boolean(),
  active_lock_reason: Type.Union([Type.String(), Type.Null()]),
  comments: Type.Integer(),
  pull_request: Type.Optional(Type.Object({
    url: Type.String(),
    html_url: Type.String(),
    diff_url: Type.String(),
    patch_url: Type.String(),
    merged_at: NullableString,
  })),
  type: Type.Union([IssueTypeRef, Type.Null()]),
  closed_at: NullableString,
  created_at: Type.String(),
  updated_at: Type.String(),
  author_association: AuthorAssociation,
  timeline_url: Type.String(),
  performed_via_vendor_app: Type.Null(),
  reactions: Reactions,
});
export type Issue = Static<typeof Issue>;

/** An issue of the user's and an organization's lists: with its repository, as the platform shows them there. */
export const IssueWithRepository = Type.Object({ ...Issue.properties, repository: FullRepository });
export type IssueWithRepository = Static<typeof IssueWithRepository>;

export const IssueComment = Type.Object({
  id: Type.Integer(),
  node_id: Type.String(),
  url: Type.String(),
  html_url: Type.String(),
  body: Type.String(),
  user: SimpleUser,
  created_at: Type.String(),
  updated_at: Type.String(),
  issue_url: Type.String(),
  author_association: AuthorAssociation,
  performed_via_vendor_app: Type.Null(),
  reactions: Reactions,
});
export type IssueComment = Static<typeof IssueComment>;

const timestamp = (value: string | null) => (value ? isoSeconds(value) : null);

/** The API and web addresses of an issue or pull request. */
export function issueUrls(urls: Urls, ownerLogin: string, repositoryName: string, issue: Pick<IssueRow, 'number' | 'is_pull_request'>) {
  const repository = `${urls.api}/repos/${ownerLogin}/${repositoryName}`;
  const web = `${urls.web}/${ownerLogin}/${repositoryName}`;
  return {
    repository,
    issue: `${repository}/issues/${issue.number}`,
    pull: `${repository}/pulls/${issue.number}`,
    html: `${web}/${issue.is_pull_request ? 'pull' : 'issues'}/${issue.number}`,
    comment: (commentId: number) => `${repository}/issues/comments/${commentId}`,
  };
}

export function issueRepresentation(urls: Urls, facts: IssueFacts): Issue {
  const { issue, repository, owner } = facts;
  const at = issueUrls(urls, owner.login, repository.name, issue);
  const assignees = facts.assignees.map((u) => simpleUser(urls, u));
  return {
    id: issue.id,
    node_id: nodeId(issue.is_pull_request ? 'PullRequest' : 'Issue', issue.id),
    url: at.issue,
    repository_url: at.repository,
    labels_url: `${at.issue}/labels{/name}`,
    comments_url: `${at.issue}/comments`,
    events_url: `${at.issue}/events`,
    html_url: at.html,
    number: issue.number,
    state: issue.state,
    state_reason: issue.state_reason,
    title: issue.title,
    body: issue.body,
    user: simpleUser(urls, facts.author),
    labels: facts.labels.map((label) => labelRepresentation(urls, owner, repository, label)),
    assignee: assignees[0] ?? null,
    assignees,
    milestone: null,
    locked: issue.locked === 1,
    active_lock_reason: issue.active_lock_reason,
    comments: facts.comments,
    ...(issue.is_pull_request
      ? { pull_request: { url: at.pull, html_url: at.html, diff_url: `${at.html}.diff`, patch_url: `${at.html}.patch`, merged_at: timestamp(issue.merged_at) } }
      : {}),
    type: facts.issueType
      ? {
        id: facts.issueType.id,
        node_id: nodeId('IssueType', facts.issueType.id),
        name: facts.issueType.name,
        description: facts.issueType.description,
        color: facts.issueType.color,
        is_enabled: Boolean(facts.issueType.is_enabled),
        created_at: isoSeconds(facts.issueType.created_at),
        updated_at: isoSeconds(facts.issueType.updated_at),
      }
      : null,
    closed_at: timestamp(issue.closed_at),
    created_at: isoSeconds(issue.created_at),
    updated_at: isoSeconds(issue.updated_at),
    author_association: facts.authorAssociation,
    timeline_url: `${at.issue}/timeline`,
    performed_via_vendor_app: null,
    reactions: reactions(at.issue, facts.reactions),
  };
}

export function commentRepresentation(urls: Urls, facts: CommentFacts): IssueComment {
  const { comment, issue, repository, owner } = facts;
  const at = issueUrls(urls, owner.login, repository.name, issue);
  return {
    id: comment.id,
    node_id: nodeId('IssueComment', comment.id),
    url: at.comment(comment.id),
    html_url: `${at.html}#issuecomment-${comment.id}`,
    body: comment.body,
    user: simpleUser(urls, facts.author),
    created_at: isoSeconds(comment.created_at),
    updated_at: isoSeconds(comment.updated_at),
    issue_url: at.issue,
    author_association: facts.authorAssociation,
    performed_via_vendor_app: null,
    reactions: reactions(at.comment(comment.id), facts.reactions),
  };
}

const { pull_request: _links, timeline_url: _timeline, performed_via_vendor_app: _app, reactions: _reactions, ...issueProperties } = Issue.properties;
const Link = Type.Object({ href: Type.String() });
const TeamReference = Type.Object({ id: Type.Integer(), node_id: Type.String(), name: Type.String(), slug: Type.String(), url: Type.String(), html_url: Type.String() });

/** `head` and `base` of a pull request (see `pullRequestBranches`). */
const PullBranch = Type.Object({ label: Type.String(), ref: Type.String(), sha: Type.String(), user: SimpleUser, repo: FullRepository });

export const PullRequest = Type.Object({
  ...issueProperties,
  head: PullBranch,
  base: PullBranch,
  issue_url: Type.String(),
  diff_url: Type.String(),
  patch_url: Type.String(),
  commits_url: Type.String(),
  review_comments_url: Type.String(),
  review_comment_url: Type.String(),
  statuses_url: Type.String(),
  merged: Type.Boolean(),
  merged_at: NullableString,
  merged_by: Type.Union([SimpleUser, Type.Null()]),
  merge_commit_sha: NullableString,
  mergeable: Type.Union([Type.Boolean(), Type.Null()]),
  mergeable_state: Type.String(),
  maintainer_can_modify: Type.Boolean(),
  auto_merge: Type.Null(),
  draft: Type.Boolean(),
  requested_reviewers: Type.Array(SimpleUser),
  requested_teams: Type.Array(Team),
  comments: Type.Integer(),
  review_comments: Type.Integer(),
  commits: Type.Integer(),
  additions: Type.Integer(),
  deletions: Type.Integer(),
  changed_files: Type.Integer(),
  _links: Type.Object({
    self: Link, html: Link, issue: Link, comments: Link, review_comments: Link, review_comment: Link, commits: Link, statuses: Link,
  }),
});

/**
 * The pull request form of an issue: the Issue's fields plus merge state, requested reviewers and
 * the counts and links of the platform's pull request. codehost keeps no commits, diffs or review
 * comments of a pull request: the counts are 0, `merge_commit_sha` is null, `mergeable` unknown.
 * `head` and `base` come from the repository's git data: see `pullRequestBranches`.
 */
export function pullRequestRepresentation(urls: Urls, facts: IssueFacts) {
  const { issue, owner, repository } = facts;
  const { pull_request: _pull, timeline_url: _timeline, performed_via_vendor_app: _app, reactions: _reactions, ...common } = issueRepresentation(urls, facts);
  const at = issueUrls(urls, owner.login, repository.name, issue);
  const statuses = `${at.repository}/statuses/{sha}`;
  const href = (value: string) => ({ href: value });
  return {
    ...common,
    url: at.pull,
    issue_url: at.issue,
    diff_url: `${at.html}.diff`,
    patch_url: `${at.html}.patch`,
    commits_url: `${at.pull}/commits`,
    review_comments_url: `${at.pull}/comments`,
    review_comment_url: `${at.repository}/pulls/comments{/number}`,
    statuses_url: statuses,
    merged: issue.merged_at !== null,
    merged_at: issue.merged_at ? isoSeconds(issue.merged_at) : null,
    merged_by: facts.mergedBy ? simpleUser(urls, facts.mergedBy) : null,
    merge_commit_sha: null,
    mergeable: null,
    mergeable_state: 'unknown',
    maintainer_can_modify: false,
    auto_merge: null,
    draft: false,
    requested_reviewers: facts.requestedReviewers.map((u) => simpleUser(urls, u)),
    requested_teams: facts.requestedTeams.map((row) => team(urls, owner, row)),
    review_comments: 0,
    commits: 0,
    additions: 0,
    deletions: 0,
    changed_files: 0,
    _links: {
      self: href(at.pull),
      html: href(at.html),
      issue: href(at.issue),
      comments: href(`${at.issue}/comments`),
      review_comments: href(`${at.pull}/comments`),
      review_comment: href(`${at.repository}/pulls/comments{/number}`),
      commits: href(`${at.pull}/commits`),
      statuses: href(statuses),
    },
  };
}
export type PullRequest = ReturnType<typeof pullRequestRepresentation>;

/** The null object id: the commit of `head` and `base` on a repository without git data. */
export const NO_COMMIT = '0'.repeat(40);

/**
 * `head` and `base` of a pull request, and the links that name the head commit. codehost keeps no
 * branches of a pull request: both are the repository's default branch, at the commit the
 * repository's git data has there, or, for a repository without git data (which the platform cannot
 * hold a pull request on), the null object id. `repository` is the repository as the caller shows it.
 */
export function pullRequestBranches<R extends { url: string; default_branch: string }>(
  urls: Urls,
  repository: R,
  owner: Pick<UserRow, 'id' | 'login' | 'type' | 'site_admin'>,
  sha: string | null,
) {
  const branch = {
    label: `${owner.login}:${repository.default_branch}`,
    ref: repository.default_branch,
    sha: sha ?? NO_COMMIT,
    user: simpleUser(urls, owner),
    repo: repository,
  };
  const statuses = `${repository.url}/statuses/${branch.sha}`;
  return { head: branch, base: { ...branch }, statuses_url: statuses, statusesLink: { href: statuses } };
}
export type PullRequestBranches = ReturnType<typeof pullRequestBranches<FullRepository>>;

/** A pull request with its `head` and `base`, and the links that name the head commit (REST answers and webhook payloads alike). */
export function withBranches<P extends Pick<PullRequest, '_links'>>(pull: P, { statusesLink, ...branches }: PullRequestBranches) {
  return { ...pull, ...branches, _links: { ...pull._links, statuses: statusesLink } };
}
export type ShownPullRequest = ReturnType<typeof withBranches<PullRequest>>;

// --- Issue event (GET /repos/{owner}/{repo}/issues/{issue_number}/events) ---------------------------


export const IssueEvent = Type.Object({
  id: Type.Integer(),
  node_id: Type.String(),
  url: Type.String(),
  actor: SimpleUser,
  event: Type.String(),
  commit_id: Type.Null(),
  commit_url: Type.Null(),
  created_at: Type.String(),
  performed_via_vendor_app: Type.Null(),
  assignee: Type.Optional(SimpleUser),
  assigner: Type.Optional(SimpleUser),
  review_requester: Type.Optional(SimpleUser),
  requested_reviewer: Type.Optional(SimpleUser),
  requested_team: Type.Optional(TeamReference),
});
export type IssueEvent = Static<typeof IssueEvent>;

/** The platform's node type of each event codehost records. */
const EVENT_NODE_TYPES: Record<string, string> = {
  closed: 'ClosedEvent',
  reopened: 'ReopenedEvent',
  merged: 'MergedEvent',
  assigned: 'AssignedEvent',
  unassigned: 'UnassignedEvent',
  review_requested: 'ReviewRequestedEvent',
  review_request_removed: 'ReviewRequestRemovedEvent',
  mentioned: 'MentionedEvent',
};

/**
 * An issue event as the platform shows it. codehost records no commits (`commit_id` and `commit_url`
 * are null) and no labels, milestones or renames. Per event: `assigned`/`unassigned` name the
 * `assignee` and the `assigner` (the actor); `review_requested`/`review_request_removed` the
 * `review_requester` (the actor) and the `requested_reviewer` or `requested_team`; on `mentioned` the
 * actor is the user mentioned, as on the platform (codehost stores the author who mentioned them).
 */
export function eventRepresentation(urls: Urls, facts: EventFacts): IssueEvent {
  const { event, repository, owner } = facts;
  const actor = simpleUser(urls, facts.actor);
  const subject = facts.subjectUser ? simpleUser(urls, facts.subjectUser) : null;
  const extra: Partial<IssueEvent> = {};
  if ((event.event === 'assigned' || event.event === 'unassigned') && subject) Object.assign(extra, { assignee: subject, assigner: actor });
  if (event.event === 'review_requested' || event.event === 'review_request_removed') {
    extra.review_requester = actor;
    if (subject) extra.requested_reviewer = subject;
    if (facts.subjectTeam) extra.requested_team = teamRepresentation(urls, owner, facts.subjectTeam);
  }
  return {
    id: event.id,
    node_id: nodeId(EVENT_NODE_TYPES[event.event] ?? 'IssueEvent', event.id),
    url: `${urls.api}/repos/${owner.login}/${repository.name}/issues/events/${event.id}`,
    actor: event.event === 'mentioned' && subject ? subject : actor,
    event: event.event,
    commit_id: null,
    commit_url: null,
    created_at: isoSeconds(event.created_at),
    performed_via_vendor_app: null,
    ...extra,
  };
}
