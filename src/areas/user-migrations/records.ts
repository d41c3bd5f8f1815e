// The records an archive holds, in the platform's REST shapes with their API and web URLs. Issues,
// pull requests and comments use the activity core's representations; users, organizations, teams
// and issue events are shaped here.
import { issueRepresentation, type IssueFacts } from '../../core/issues/representations.ts';
import { isoSeconds } from '../../platform/clock.ts';
import type { UserRow } from '../../core/accounts/store.ts';
import { nodeId, type Urls } from '../../platform/urls.ts';
import { organization, simpleUser, userWithProfile, type SimpleUser } from '../../core/accounts/representations.ts';
import type { TeamRow } from './store.ts';

/** The migration's owner with profile fields; other users as simple users (their e-mail is not theirs to export). */
export function userRecord(urls: Urls, user: UserRow, ownerId: number): SimpleUser {
  return user.id === ownerId ? userWithProfile(urls, user) : simpleUser(urls, user);
}

/** An organization with the exporting user's roles in it. */
export function organizationRecord(urls: Urls, org: UserRow, roles: string[]) {
  return { ...organization(urls, org), roles };
}

export interface RepositoryRef {
  owner: string;
  name: string;
}

type TeamWithOrg = TeamRow & { org_login: string };

function teamRecord(urls: Urls, team: TeamWithOrg) {
  const url = `${urls.api}/orgs/${team.org_login}/teams/${team.slug}`;
  return { id: team.id, node_id: nodeId('Team', team.id), url, html_url: `${urls.web}/orgs/${team.org_login}/teams/${team.slug}`, name: team.name, slug: team.slug };
}

/** A pull request: the issue representation (with `pull_request`) and who is asked to review it. */
export function pullRequestRecord(urls: Urls, facts: IssueFacts) {
  return {
    ...issueRepresentation(urls, facts),
    requested_reviewers: facts.requestedReviewers.map((u) => simpleUser(urls, u)),
    requested_teams: facts.requestedTeams.map((t) => teamRecord(urls, t as TeamWithOrg)),
  };
}

export function issueEventRecord(
  urls: Urls,
  repo: RepositoryRef,
  event: { id: number; event: string; created_at: string; number: number; actor: UserRow; subject: UserRow | null; team: TeamWithOrg | null },
) {
  const api = `${urls.api}/repos/${repo.owner}/${repo.name}`;
  const actor = simpleUser(urls, event.actor);
  const subject = event.subject ? simpleUser(urls, event.subject) : null;
  // The event's subject is named as the REST timeline names it for that kind of event.
  const about: Record<string, unknown> = {};
  if (subject && (event.event === 'assigned' || event.event === 'unassigned')) Object.assign(about, { assignee: subject, assigner: actor });
  else if (event.event === 'review_requested' || event.event === 'review_request_removed') {
    Object.assign(about, { review_requester: actor, ...(subject ? { requested_reviewer: subject } : {}) });
    if (event.team) about.requested_team = teamRecord(urls, event.team);
  } else if (subject) about.subject = subject;
  return {
    id: event.id,
    node_id: nodeId('IssueEvent', event.id),
    url: `${api}/issues/events/${event.id}`,
    actor,
    event: event.event,
    commit_id: null,
    commit_url: null,
    created_at: isoSeconds(event.created_at),
    issue_url: `${api}/issues/${event.number}`,
    ...about,
  };
}
