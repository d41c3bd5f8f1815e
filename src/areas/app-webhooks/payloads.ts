// The body of an event as the platform shapes it: `action`, the subject (`issue`, `comment`,
// `pull_request`...), `repository`, `organization` (the repository's or the event's account, when it
// is an organization), `enterprise` (the organization's, when it has one), `sender`; `installation`
// is added per app: `{id, node_id}`, or the whole installation in installation events. Issue activity shows
// the subject its outbox row kept (src/core/issues/snapshot.ts: the same Issue, pull request and
// Comment the rest of the platform shows, as the write left them); a raw event (POST /_admin/events)
// carries its own payload, to which the platform's fields are added.
//
// The repository, the sender and the people an action names (`assignee`, `requested_reviewer`,
// `requested_team`) are not kept in the row but rendered at dispatch, by id: they say where and
// who, which a receiver acts on with today's names and addresses; a full repository in every row
// would be most of the outbox's size; and a repository deleted before the dispatch still means no
// delivery — but for its own `repository.deleted`, whose row keeps the repository as it was. The
// `repository` events, whose subject the repository is, keep it as the write left it (as issue
// activity keeps its issue): a `privatized` delivered after a later publicizing still shows it private.
import type { Activity } from '../../core/activities.ts';
import { loadCommentFacts, loadIssueFacts } from '../../core/issues/representations.ts';
import { findAccountById, findOrganizationEnterprise, findTeamById, type UserRow } from '../../core/accounts/store.ts';
import { findInstallation } from '../../core/apps/store.ts';
import { installationRepresentation } from '../../core/apps/representations.ts';
import { branchHead } from '../../core/repositories/git.ts';
import type { RepositoryRow } from '../../core/repositories/representations.ts';
import { findCommentById, findIssueById } from '../../core/issues/store.ts';
import { subjectSnapshot, type SubjectSnapshot } from '../../core/issues/snapshot.ts';
import type { Executor } from '../../db/index.ts';
import { repositoriesWithFacts } from '../../core/repositories/facts.ts';
import { fullRepository, type RepositoryOwner } from '../../core/repositories/representations.ts';
import { nodeId, type Urls } from '../../platform/urls.ts';
import { enterpriseRepresentation, organizationSimple, simpleUser, team } from '../../core/accounts/representations.ts';
import { pullRequestBranches, withBranches } from '../../core/issues/representations.ts';
import { isoSeconds } from '../../platform/clock.ts';
import { findHook } from './store.ts';
import { findAppBy } from '../../core/access/index.ts';

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
async function subjectNow(db: Executor, urls: Urls, row: Activity, facts: Body): Promise<SubjectSnapshot | null> {
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
async function issueSubject(db: Executor, place: Place, row: Activity, facts: Body, where: Where): Promise<Body | null> {
  const { urls } = place;
  const { owner } = where;
  const subject = (facts.snapshot as SubjectSnapshot | undefined) ?? (await subjectNow(db, urls, row, facts));
  if (!subject) return null;
  let out: Body;
  if ('pull_request' in subject) {
    const branches = pullRequestBranches(urls, where.repository, owner, await branchHead(place.dataDir, where.row, where.repository.default_branch));
    // A review's event names the review first, and no number (the platform's `pull_request_review`).
    const named = row.event === 'pull_request_review' ? { review: facts.review } : { number: facts.number };
    out = { ...named, pull_request: withBranches(subject.pull_request, branches) };
  } else {
    out = { ...subject };
  }
  // What an edit changed (`issue_comment` `edited`: the old body), as the platform's `changes`; the
  // label a `labeled` / `unlabeled` names, as the write left it.
  if (facts.changes !== undefined) out.changes = facts.changes;
  if (facts.label !== undefined) out.label = facts.label;
  const assignee = await user(db, idOf(facts, 'assignee_id'));
  if (assignee) out.assignee = simpleUser(urls, assignee);
  const reviewer = await user(db, idOf(facts, 'requested_reviewer_id'));
  if (reviewer) out.requested_reviewer = simpleUser(urls, reviewer);
  const teamId = idOf(facts, 'requested_team_id');
  if (teamId !== null) {
    const found = await findTeamById(db, teamId);
    if (found) out.requested_team = team(urls, owner, found);
  }
  return out;
}

/**
 * The subject of a typed activity that names who or which team by id (src/core/repositories and
 * src/core/accounts activities): `member` (`member`, its `changes`), `membership` (`scope`,
 * `member`, `team`), `team` and `team_add` (`team`); null when who it names is gone. Any other
 * activity's payload is its subject (`changes`, `membership`, the installation's `repositories`).
 */
async function namedSubject(db: Executor, urls: Urls, row: Activity & { name: string }): Promise<Body | null> {
  const facts: Body = row.payload;
  const memberId = idOf(facts, 'member_id');
  const teamId = idOf(facts, 'team_id');
  if (memberId === null && teamId === null) return facts;
  const { member_id: _member, team_id: _team, ...rest } = facts;
  const out: Body = row.event === 'membership' ? { scope: 'team', ...rest } : { ...rest };
  if (memberId !== null) {
    const member = await user(db, memberId);
    if (!member) return null;
    out.member = simpleUser(urls, member);
  }
  if (teamId !== null) {
    const found = await findTeamById(db, teamId);
    const org = found && (await findAccountById(db, found.org_id));
    if (!found || !org) return null;
    out.team = team(urls, org, found);
  }
  return out;
}

/** Where payloads are rendered: the addresses they show and the data directory (git data). */
export interface Place {
  urls: Urls;
  dataDir: string;
}

/** The repository an activity is about: its row, its owner and its representation. */
interface Where {
  row: RepositoryRow;
  owner: RepositoryOwner;
  repository: ReturnType<typeof fullRepository>;
}

/** `organization` and `enterprise` of a payload about an account (a repository's owner, or the event's). */
async function accountEnvelope(db: Executor, urls: Urls, accountId: number | null): Promise<Body> {
  if (accountId === null) return {};
  const account = await findAccountById(db, accountId);
  if (!account || account.type !== 'Organization') return {};
  const enterprise = await findOrganizationEnterprise(db, account.id);
  return {
    ...(enterprise ? { enterprise: enterpriseRepresentation(urls, enterprise) } : {}),
    organization: organizationSimple(urls, account),
  };
}

/** The platform's `zen` lines; a ping carries one. */
const ZEN = ['Design for failure.', 'Keep it logically awesome.', 'Speak like a human.', 'Favor focus over features.', 'Practicality beats purity.', 'Encourage flow.'];

/**
 * `ping`: the app's webhook as the platform shows an app's hook (`type` App, `app_id`), its
 * `hook_id` and a `zen` line; null when the app or its URL is gone since.
 */
async function pingBody(db: Executor, urls: Urls, facts: { app_id: number; hook_id: number }): Promise<Body | null> {
  const app = await findAppBy(db, { id: facts.app_id });
  const hook = app && (await findHook(db, app.id));
  if (!app || !hook?.url) return null;
  return {
    zen: ZEN[hook.id % ZEN.length],
    hook_id: hook.id,
    hook: {
      type: 'App',
      id: hook.id,
      name: 'web',
      active: hook.active === 1,
      events: JSON.parse(app.events) as string[],
      config: { content_type: hook.content_type, insecure_ssl: hook.insecure_ssl, url: hook.url },
      updated_at: isoSeconds(hook.updated_at),
      created_at: isoSeconds(hook.created_at),
      app_id: app.id,
      deliveries_url: `${urls.api}/app/hook/deliveries`,
    },
  };
}

/**
 * The event body shared by every app the activity is delivered to (each adds its `installation`).
 * Null when the activity's subject is gone (deleted before the dispatch ran).
 */
export async function eventBody(db: Executor, place: Place, row: Activity): Promise<Body | null> {
  const { urls } = place;
  if (row.name === 'ping') return pingBody(db, urls, row.payload);
  const facts: Body = row.payload;
  let where: Where | undefined;
  // A deleted repository's row is gone: its payload kept the repository as it was.
  if (row.name === 'repository.deleted') {
    const envelope = await accountEnvelope(db, urls, row.account_id);
    const sender = await user(db, row.actor_id ?? row.account_id);
    return { action: row.action, repository: row.payload.repository, ...envelope, ...(sender ? { sender: simpleUser(urls, sender) } : {}) };
  }
  if (row.repository_id !== null) {
    const [found] = await repositoriesWithFacts(db, [row.repository_id]);
    if (!found) return null;
    where = { row: found.repository, owner: found.owner, repository: fullRepository(urls, found.repository, found.owner, found.facts) };
  }
  // Issue activity has its subject; other typed activity names its own; a raw event's is its payload.
  const subject = row.issue_id !== null && where
    ? await issueSubject(db, place, row, facts, where)
    : row.name !== null ? await namedSubject(db, urls, row) : facts;
  if (!subject) return null;
  // A typed activity no user acted on (the operator's writes say no actor) is sent by the account it
  // is about: the repository's owner, or the event's account (a user, or an organization).
  const sender = await user(db, row.actor_id ?? (row.name === null ? null : where ? where.owner.id : row.account_id));
  // A user's repository has neither: no need to look.
  const envelope = where?.owner.type === 'User' ? {} : await accountEnvelope(db, urls, where ? where.owner.id : row.account_id);
  // The platform's fields win over a raw payload's members of the same name; `action` stays first.
  const action = row.action !== null ? { action: row.action } : {};
  // A `repository` event kept its subject as the write left it; other events show it as it is now.
  const repository = row.name !== null && row.event === 'repository' && 'repository' in facts ? facts.repository : where?.repository;
  return {
    ...action,
    ...subject,
    ...action,
    ...(repository ? { repository } : {}),
    ...envelope,
    ...(sender ? { sender: simpleUser(urls, sender) } : {}),
  };
}

/** Events whose `installation` member is the whole installation, as the platform sends them. */
const WHOLE_INSTALLATION: readonly string[] = ['installation', 'installation_repositories'];

/**
 * The installation member of a payload: `{id, node_id}`, or in installation events the whole
 * installation as GET /app/installations/{installation_id} shows it; once it is deleted, as its
 * row `recorded` it (an `installation` `deleted` event).
 */
export async function installationBody(db: Executor, urls: Urls, event: string, target: { app_id: number; installation_id: number }, recorded?: Body): Promise<Body> {
  if (WHOLE_INSTALLATION.includes(event)) {
    const app = await findAppBy(db, { id: target.app_id });
    const found = app && (await findInstallation(db, app.id, target.installation_id));
    if (app && found) return installationRepresentation(urls, app, found.installation, found.account);
    if (recorded && 'account' in recorded) return recorded;
  }
  return { id: target.installation_id, node_id: nodeId('IntegrationInstallation', target.installation_id) };
}
