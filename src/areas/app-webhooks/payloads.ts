// The body of an event as the platform shapes it: `action`, the subject (`issue`, `comment`,
// `pull_request`...), `repository`, `sender`; `installation` is added per app. Issue activity shows
// the subject its outbox row kept (src/core/issues/snapshot.ts: the same Issue, pull request and
// Comment the rest of the platform shows, as the write left them); a raw event (POST /_admin/events)
// carries its own payload, to which the platform's fields are added.
//
// The repository, the sender and the people an action names (`assignee`, `requested_reviewer`,
// `requested_team`) are not kept in the row but rendered at dispatch, by id: they say where and
// who, which a receiver acts on with today's names and addresses; a full repository in every row
// would be most of the outbox's size; and a repository deleted before the dispatch still means no
// delivery.
import type { ActivityRow } from '../../activity/outbox.ts';
import { loadCommentFacts, loadIssueFacts } from '../../core/issues/representations.ts';
import { findAccountById, findTeamById, type UserRow } from '../../core/accounts/store.ts';
import { findCommentById, findIssueById } from '../../core/issues/store.ts';
import { subjectSnapshot, type SubjectSnapshot } from '../../core/issues/snapshot.ts';
import type { Executor } from '../../db/index.ts';
import { repositoriesWithFacts } from '../../core/repositories/facts.ts';
import { fullRepository, type RepositoryOwner } from '../../core/repositories/representations.ts';
import { nodeId, type Urls } from '../../platform/urls.ts';
import { simpleUser, teamRepresentation } from '../../core/accounts/representations.ts';

type Body = Record<string, unknown>;

async function user(db: Executor, id: number | null | undefined): Promise<UserRow | undefined> {
  if (id === null || id === undefined) return undefined;
  return findAccountById(db, id);
}

/**
 * A row recorded without a snapshot (before rows kept one) is rendered from the tables as they
 * are now, with the state its action implies put back (an `opened` pull request merged since);
 * other fields (title, assignees...) then show the subject as it is at dispatch.
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

/** The subject of a row without a snapshot, from the tables; null when the issue is gone. */
async function subjectNow(db: Executor, urls: Urls, row: ActivityRow, facts: Body): Promise<SubjectSnapshot | null> {
  const exists = await findIssueById(db, row.issue_id!);
  if (!exists) return null;
  const comment = row.comment_id === null
    ? undefined
    : await findCommentById(db, row.comment_id);
  const subject = subjectSnapshot(urls, row.event, await loadIssueFacts(db, exists.id), comment && (await loadCommentFacts(db, comment.id)));
  if (row.action !== null) asOfAction('pull_request' in subject ? subject.pull_request : subject.issue, row.action, facts, row.event === 'pull_request');
  return subject;
}

const idOf = (facts: Body, key: string): number | null => (typeof facts[key] === 'number' ? (facts[key] as number) : null);

/**
 * The subject of issue activity: `issue` (and `comment`) for `issues` and `issue_comment`,
 * `number` and `pull_request` for `pull_request`, plus the person an action names (`assignee`,
 * `requested_reviewer`, `requested_team`), from the activity's facts (src/core/issues/writes.ts).
 */
async function issueSubject(db: Executor, urls: Urls, row: ActivityRow, facts: Body, owner: RepositoryOwner): Promise<Body | null> {
  const subject = (facts.snapshot as SubjectSnapshot | undefined) ?? (await subjectNow(db, urls, row, facts));
  if (!subject) return null;
  const out: Body = 'pull_request' in subject ? { number: facts.number, pull_request: subject.pull_request } : { ...subject };
  const assignee = await user(db, idOf(facts, 'assignee_id'));
  if (assignee) out.assignee = simpleUser(urls, assignee);
  const reviewer = await user(db, idOf(facts, 'requested_reviewer_id'));
  if (reviewer) out.requested_reviewer = simpleUser(urls, reviewer);
  const teamId = idOf(facts, 'requested_team_id');
  if (teamId !== null) {
    const team = await findTeamById(db, teamId);
    if (team) out.requested_team = teamRepresentation(urls, owner, team);
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
  let owner: RepositoryOwner | undefined;
  if (row.repository_id !== null) {
    const [found] = await repositoriesWithFacts(db, [row.repository_id]);
    if (!found) return null;
    owner = found.owner;
    repository = fullRepository(urls, found.repository, found.owner, found.facts);
  }
  // Issue activity has its subject; anything else is a raw event whose facts are its payload.
  const subject = row.issue_id !== null && owner ? await issueSubject(db, urls, row, facts, owner) : facts;
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
