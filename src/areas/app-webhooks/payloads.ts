// The body of an event as the platform shapes it: `action`, the subject (`issue`, `comment`,
// `pull_request`...), `repository`, `sender`; `installation` is added per app. Issue activity is
// rendered with the activity representations (the same Issue and Comment the rest of the platform
// shows); a raw event (POST /_admin/events) carries its own payload, to which the platform's
// fields are added.
import type { ActivityRow } from '../../activity/outbox.ts';
import {
  commentRepresentation, issueRepresentation, issueUrls, loadCommentFacts, loadIssueFacts, type IssueFacts,
} from '../../activity/representations.ts';
import type { Executor } from '../../db/index.ts';
import { isoSeconds } from '../../platform/clock.ts';
import type { UserRow } from '../../platform/principal.ts';
import { fullRepository, nodeId, simpleUser, type Urls } from '../../platform/representations.ts';

type Body = Record<string, unknown>;

async function user(db: Executor, id: number | null | undefined): Promise<UserRow | undefined> {
  if (id === null || id === undefined) return undefined;
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

function teamBody(urls: Urls, org: Pick<UserRow, 'login'>, team: { id: number; slug: string; name: string }) {
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
function pullRequestBody(urls: Urls, facts: IssueFacts): Body {
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
    requested_teams: facts.requestedTeams.map((team) => teamBody(urls, owner, team)),
  };
}

/**
 * The subject is rendered when the activity is dispatched, which may be after later changes (an
 * `opened` pull request merged since): the state an action implies is put back as it was then.
 * Other fields (title, assignees...) show the subject as it is at dispatch.
 */
function asOfAction(subject: Body, action: string, facts: Body, isPullRequest: boolean): void {
  if (action === 'opened' || action === 'reopened') {
    Object.assign(subject, { state: 'open', closed_at: null });
    if (isPullRequest) Object.assign(subject, { merged: false, merged_at: null });
    else subject.state_reason = action === 'reopened' ? 'reopened' : null;
  } else if (action === 'closed') {
    subject.state = 'closed';
    if (isPullRequest && facts.merged !== true) Object.assign(subject, { merged: false, merged_at: null });
  }
}

const idOf = (facts: Body, key: string): number | null => (typeof facts[key] === 'number' ? (facts[key] as number) : null);

/**
 * The subject of issue activity: `issue` (and `comment`) for `issues` and `issue_comment`,
 * `number` and `pull_request` for `pull_request`, plus the person an action names (`assignee`,
 * `requested_reviewer`, `requested_team`), from the activity's facts (src/activity/service.ts).
 */
async function issueSubject(db: Executor, urls: Urls, row: ActivityRow, facts: Body): Promise<Body | null> {
  const exists = await db.selectFrom('issues').select('id').where('id', '=', row.issue_id!).executeTakeFirst();
  if (!exists) return null;
  const issue = await loadIssueFacts(db, exists.id);
  const rendered = row.event === 'pull_request' ? pullRequestBody(urls, issue) : (issueRepresentation(urls, issue) as Body);
  if (row.action !== null) asOfAction(rendered, row.action, facts, row.event === 'pull_request');
  const out: Body = row.event === 'pull_request' ? { number: issue.issue.number, pull_request: rendered } : { issue: rendered };
  if (row.comment_id !== null) {
    const comment = await db.selectFrom('issue_comments').select('id').where('id', '=', row.comment_id).executeTakeFirst();
    if (comment) out.comment = commentRepresentation(urls, await loadCommentFacts(db, comment.id));
  }
  const assignee = await user(db, idOf(facts, 'assignee_id'));
  if (assignee) out.assignee = simpleUser(urls, assignee);
  const reviewer = await user(db, idOf(facts, 'requested_reviewer_id'));
  if (reviewer) out.requested_reviewer = simpleUser(urls, reviewer);
  const teamId = idOf(facts, 'requested_team_id');
  if (teamId !== null) {
    const team = await db.selectFrom('teams').selectAll().where('id', '=', teamId).executeTakeFirst();
    if (team) out.requested_team = teamBody(urls, issue.owner, team);
  }
  return out;
}

/**
 * The event body shared by every app the activity is delivered to (each adds its `installation`).
 * Null when the activity's subject is gone (deleted before the dispatch ran).
 */
export async function eventBody(db: Executor, urls: Urls, row: ActivityRow): Promise<Body | null> {
  const facts = JSON.parse(row.payload) as Body;
  let repository: Body | undefined;
  if (row.repository_id !== null) {
    const found = await db.selectFrom('repositories').selectAll().where('id', '=', row.repository_id).executeTakeFirst();
    const owner = await user(db, found?.owner_id);
    if (!found || !owner) return null;
    repository = fullRepository(urls, found, owner);
  }
  // Issue activity is rendered from the tables; anything else is a raw event whose facts are its payload.
  const subject = row.issue_id !== null && repository ? await issueSubject(db, urls, row, facts) : facts;
  if (!subject) return null;
  const sender = await user(db, row.actor_id);
  // The platform's fields win over a raw payload's members of the same name; `action` stays first.
  const action = row.action !== null ? { action: row.action } : {};
  return {
    ...action,
    ...subject,
    ...action,
    ...(repository ? { repository } : {}),
    ...(sender ? { sender: simpleUser(urls, sender) } : {}),
  };
}

/** The installation member of a payload. */
export function installationBody(installationId: number) {
  return { id: installationId, node_id: nodeId('IntegrationInstallation', installationId) };
}
