// The body of an event as the platform shapes it: `action`, the subject (`issue`, `comment`,
// `pull_request`...), `repository`, `sender`; `installation` is added per app. Issue activity is
// rendered from the activity tables; a raw event (POST /_admin/events) carries its own payload,
// to which the platform's fields are added.
import type { Selectable } from 'kysely';
import type { ActivityRow } from '../../activity/outbox.ts';
import type { IssueCommentsTable, IssuesTable } from '../../activity/tables.ts';
import type { Executor } from '../../db/index.ts';
import { orgRoles } from '../../platform/access.ts';
import { isoSeconds } from '../../platform/clock.ts';
import type { UserRow } from '../../platform/principal.ts';
import { fullRepository, nodeId, simpleUser, type RepositoryRow, type Urls } from '../../platform/representations.ts';

type IssueRow = Selectable<IssuesTable>;
type CommentRow = Selectable<IssueCommentsTable>;
type Body = Record<string, unknown>;

async function user(db: Executor, id: number | null | undefined): Promise<UserRow | undefined> {
  if (id === null || id === undefined) return undefined;
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The author's relation to the repository, as the platform reports it on issues and comments. */
async function authorAssociation(db: Executor, repository: RepositoryRow, authorId: number): Promise<string> {
  if (repository.owner_id === authorId) return 'OWNER';
  const roles = await orgRoles(db, repository.owner_id, authorId);
  return roles.has('owner') || roles.has('member') ? 'MEMBER' : 'NONE';
}

interface RepositoryContext {
  repository: RepositoryRow;
  owner: UserRow;
  /** `{api}/repos/{owner}/{repo}` */
  api: string;
  /** `{web}/{owner}/{repo}` */
  web: string;
}

function teamBody(urls: Urls, org: UserRow, team: { id: number; slug: string; name: string }) {
  return {
    id: team.id,
    node_id: nodeId('Team', team.id),
    name: team.name,
    slug: team.slug,
    url: `${urls.api}/orgs/${org.login}/teams/${team.slug}`,
    html_url: `${urls.web}/orgs/${org.login}/teams/${team.slug}`,
  };
}

/** The issue (or pull request) with its people: author, assignees and requested reviewers. */
async function issueParts(db: Executor, urls: Urls, issue: IssueRow) {
  const [author, assigneeRows, requestRows, commentCount] = await Promise.all([
    user(db, issue.author_id),
    db.selectFrom('issue_assignees').innerJoin('users', 'users.id', 'issue_assignees.user_id').selectAll('users').where('issue_id', '=', issue.id).orderBy('users.id').execute(),
    db
      .selectFrom('issue_review_requests')
      .leftJoin('users', 'users.id', 'issue_review_requests.user_id')
      .leftJoin('teams', 'teams.id', 'issue_review_requests.team_id')
      .select(['users.id as user_id', 'teams.id as team_id', 'teams.slug', 'teams.name', 'teams.org_id'])
      .where('issue_id', '=', issue.id)
      .orderBy('issue_review_requests.id')
      .execute(),
    db.selectFrom('issue_comments').select((eb) => eb.fn.countAll<number>().as('count')).where('issue_id', '=', issue.id).executeTakeFirstOrThrow(),
  ]);
  const assignees = assigneeRows.map((row) => simpleUser(urls, row));
  const reviewers = [];
  const teams = [];
  for (const request of requestRows) {
    if (request.user_id !== null) {
      const reviewer = await user(db, request.user_id);
      if (reviewer) reviewers.push(simpleUser(urls, reviewer));
    } else if (request.team_id !== null) {
      const org = await user(db, request.org_id);
      if (org) teams.push(teamBody(urls, org, { id: request.team_id, slug: request.slug!, name: request.name! }));
    }
  }
  return { author: author!, assignees, reviewers, teams, comments: Number(commentCount.count) };
}

async function issueBody(db: Executor, urls: Urls, at: RepositoryContext, issue: IssueRow): Promise<Body> {
  const parts = await issueParts(db, urls, issue);
  const url = `${at.api}/issues/${issue.number}`;
  const body: Body = {
    url,
    repository_url: at.api,
    labels_url: `${url}/labels{/name}`,
    comments_url: `${url}/comments`,
    events_url: `${url}/events`,
    html_url: `${at.web}/${issue.is_pull_request ? 'pull' : 'issues'}/${issue.number}`,
    id: issue.id,
    node_id: nodeId(issue.is_pull_request ? 'PullRequest' : 'Issue', issue.id),
    number: issue.number,
    title: issue.title,
    user: simpleUser(urls, parts.author),
    labels: [],
    state: issue.state,
    locked: false,
    assignee: parts.assignees[0] ?? null,
    assignees: parts.assignees,
    milestone: null,
    comments: parts.comments,
    created_at: isoSeconds(issue.created_at),
    updated_at: isoSeconds(issue.updated_at),
    closed_at: issue.closed_at ? isoSeconds(issue.closed_at) : null,
    author_association: await authorAssociation(db, at.repository, issue.author_id),
    active_lock_reason: null,
    body: issue.body,
    state_reason: issue.state_reason,
  };
  if (issue.is_pull_request) {
    const pull = `${at.web}/pull/${issue.number}`;
    body.pull_request = {
      url: `${at.api}/pulls/${issue.number}`,
      html_url: pull,
      diff_url: `${pull}.diff`,
      patch_url: `${pull}.patch`,
      merged_at: issue.merged_at ? isoSeconds(issue.merged_at) : null,
    };
  }
  return body;
}

async function pullRequestBody(db: Executor, urls: Urls, at: RepositoryContext, issue: IssueRow): Promise<Body> {
  const parts = await issueParts(db, urls, issue);
  const url = `${at.api}/pulls/${issue.number}`;
  const html = `${at.web}/pull/${issue.number}`;
  return {
    url,
    id: issue.id,
    node_id: nodeId('PullRequest', issue.id),
    html_url: html,
    diff_url: `${html}.diff`,
    patch_url: `${html}.patch`,
    issue_url: `${at.api}/issues/${issue.number}`,
    commits_url: `${url}/commits`,
    review_comments_url: `${url}/comments`,
    comments_url: `${at.api}/issues/${issue.number}/comments`,
    number: issue.number,
    state: issue.state,
    locked: false,
    title: issue.title,
    user: simpleUser(urls, parts.author),
    body: issue.body,
    labels: [],
    milestone: null,
    created_at: isoSeconds(issue.created_at),
    updated_at: isoSeconds(issue.updated_at),
    closed_at: issue.closed_at ? isoSeconds(issue.closed_at) : null,
    merged_at: issue.merged_at ? isoSeconds(issue.merged_at) : null,
    merged: issue.merged_at !== null,
    draft: false,
    assignee: parts.assignees[0] ?? null,
    assignees: parts.assignees,
    requested_reviewers: parts.reviewers,
    requested_teams: parts.teams,
    comments: parts.comments,
    author_association: await authorAssociation(db, at.repository, issue.author_id),
    active_lock_reason: null,
  };
}

async function commentBody(db: Executor, urls: Urls, at: RepositoryContext, issue: IssueRow, comment: CommentRow): Promise<Body> {
  const author = await user(db, comment.author_id);
  return {
    url: `${at.api}/issues/comments/${comment.id}`,
    html_url: `${at.web}/${issue.is_pull_request ? 'pull' : 'issues'}/${issue.number}#issuecomment-${comment.id}`,
    issue_url: `${at.api}/issues/${issue.number}`,
    id: comment.id,
    node_id: nodeId('IssueComment', comment.id),
    user: simpleUser(urls, author!),
    created_at: isoSeconds(comment.created_at),
    updated_at: isoSeconds(comment.updated_at),
    author_association: await authorAssociation(db, at.repository, comment.author_id),
    body: comment.body,
  };
}

const idOf = (facts: Body, key: string): number | null => (typeof facts[key] === 'number' ? (facts[key] as number) : null);

/**
 * The subject of issue activity: `issue` (and `comment`) for `issues` and `issue_comment`,
 * `number` and `pull_request` for `pull_request`, plus the person an action names (`assignee`,
 * `requested_reviewer`, `requested_team`), taken from the activity's facts.
 */
async function issueSubject(db: Executor, urls: Urls, at: RepositoryContext, row: ActivityRow, facts: Body): Promise<Body | null> {
  const issue = await db.selectFrom('issues').selectAll().where('id', '=', row.issue_id!).executeTakeFirst();
  if (!issue) return null;
  const out: Body = {};
  if (row.event === 'pull_request') {
    out.number = issue.number;
    out.pull_request = await pullRequestBody(db, urls, at, issue);
  } else {
    out.issue = await issueBody(db, urls, at, issue);
  }
  if (row.comment_id !== null) {
    const comment = await db.selectFrom('issue_comments').selectAll().where('id', '=', row.comment_id).executeTakeFirst();
    if (comment) out.comment = await commentBody(db, urls, at, issue, comment);
  }
  const assignee = await user(db, idOf(facts, 'assignee_id'));
  if (assignee) out.assignee = simpleUser(urls, assignee);
  const reviewer = await user(db, idOf(facts, 'requested_reviewer_id'));
  if (reviewer) out.requested_reviewer = simpleUser(urls, reviewer);
  const teamId = idOf(facts, 'requested_team_id');
  if (teamId !== null) {
    const team = await db.selectFrom('teams').selectAll().where('id', '=', teamId).executeTakeFirst();
    const org = await user(db, team?.org_id);
    if (team && org) out.requested_team = teamBody(urls, org, team);
  }
  return out;
}

/**
 * The event body shared by every app the activity is delivered to (each adds its `installation`).
 * Null when the activity's subject is gone (deleted before the dispatch ran).
 */
export async function eventBody(db: Executor, urls: Urls, row: ActivityRow): Promise<Body | null> {
  const facts = JSON.parse(row.payload) as Body;
  let at: RepositoryContext | undefined;
  if (row.repository_id !== null) {
    const repository = await db.selectFrom('repositories').selectAll().where('id', '=', row.repository_id).executeTakeFirst();
    const owner = await user(db, repository?.owner_id);
    if (!repository || !owner) return null;
    at = { repository, owner, api: `${urls.api}/repos/${owner.login}/${repository.name}`, web: `${urls.web}/${owner.login}/${repository.name}` };
  }
  const sender = await user(db, row.actor_id);
  // Issue activity is rendered from the tables; anything else is a raw event whose facts are its payload.
  let subject: Body;
  if (row.issue_id !== null && at) {
    const rendered = await issueSubject(db, urls, at, row, facts);
    if (!rendered) return null;
    subject = rendered;
  } else {
    subject = facts;
  }
  // The platform's fields win over a raw payload's members of the same name; `action` stays first.
  const action = row.action !== null ? { action: row.action } : {};
  return {
    ...action,
    ...subject,
    ...action,
    ...(at ? { repository: fullRepository(urls, at.repository, at.owner) } : {}),
    ...(sender ? { sender: simpleUser(urls, sender) } : {}),
  };
}

/** The installation member of a payload. */
export function installationBody(installationId: number) {
  return { id: installationId, node_id: nodeId('IntegrationInstallation', installationId) };
}
