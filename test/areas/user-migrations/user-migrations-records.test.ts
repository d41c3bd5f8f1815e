// The export writes its records as JSON text (src/areas/user-migrations/records.ts) instead of
// JSON.stringify of the API's representations: here each kind is held to the exact bytes the
// representations gave (the issue, comment and user builders of the core, and the archive's own
// pull request and issue event shapes as they were built before), over rows with the values that
// need care in JSON (quotes, backslashes, control and non-ASCII characters, lone surrogates, nulls).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { simpleUser, userWithProfile } from '../../../src/core/accounts/representations.ts';
import type { UserRow } from '../../../src/core/accounts/store.ts';
import { commentRepresentation, issueRepresentation, type IssueFacts } from '../../../src/core/issues/representations.ts';
import { noReactions } from '../../../src/core/issues/reaction-store.ts';
import type { RepositoryRow } from '../../../src/core/repositories/representations.ts';
import { RecordWriter } from '../../../src/areas/user-migrations/records.ts';
import type { IssueRow, SimpleTeamRow, TeamWithOrg } from '../../../src/areas/user-migrations/store.ts';
import { isoSeconds } from '../../../src/platform/clock.ts';
import { nodeId, type Urls } from '../../../src/platform/urls.ts';

const URLS: Urls[] = [
  { api: 'http://127.0.0.1:3000/api/v3', web: 'http://127.0.0.1:3000' },
  { api: 'https://codehost.example/ünï/"api"', web: 'https://codehost.example/ünï\\web' },
];
const TRICKY = ['plain', 'quote " and \\ backslash', 'line\nbreak\ttab\u0001\u007f', 'é ünïcödé 😀 \u2028\u2029', 'lone \ud800 surrogate \udc00', '', '</script>'];

let nextId = 100;
function user(login: string, overrides: Partial<UserRow> = {}): UserRow {
  const id = nextId++;
  return {
    id, login, login_lower: login.toLowerCase(), type: 'User', site_admin: 0, name: `Name of ${login}`, email: `${login}@example.com`,
    created_at: '2024-01-02T03:04:05.678Z', updated_at: '2024-02-03T04:05:06.789Z', ...overrides,
  } as UserRow;
}

const owner = user('mona-lisa');
const others = [
  user('octo.cat_2', { site_admin: 1, name: null, email: null }),
  user('the-org', { type: 'Organization', name: TRICKY[1]!, email: null }),
  user('hubot', { type: 'Bot', name: TRICKY[3]!, email: TRICKY[4]! }),
];
const repository = { id: 9, name: 'hello.world_1', owner_id: owner.id } as unknown as RepositoryRow;
const teams: TeamWithOrg[] = [
  { id: 31, org_id: others[1]!.id, slug: 'core-team', name: TRICKY[1]!, org_login: 'the-org' } as unknown as TeamWithOrg,
  { id: 32, org_id: others[1]!.id, slug: 'docs', name: TRICKY[4]!, org_login: 'the-org' } as unknown as TeamWithOrg,
];

function issueRow(i: number, pullRequest: boolean): Omit<IssueRow, 'comment_count'> {
  return {
    id: 1000 + i, repository_id: repository.id, number: i + 1, is_pull_request: pullRequest ? 1 : 0,
    title: TRICKY[i % TRICKY.length]!, body: i % 3 === 0 ? null : TRICKY[(i + 2) % TRICKY.length]!,
    state: i % 2 ? 'closed' : 'open', state_reason: i % 2 ? 'completed' : null, author_id: owner.id,
    closed_at: i % 2 ? '2024-03-04T05:06:07.890Z' : null, merged_at: i % 4 === 1 ? '2024-03-04T05:06:08.000Z' : i % 4 === 3 ? '' : null,
    locked: i % 3 === 1 ? 1 : 0, active_lock_reason: i % 6 === 1 ? 'too heated' : null,
    created_at: '2024-01-01T00:00:00.000Z', updated_at: i % 5 === 0 ? '2024-01-01 10:11:12' : '2024-01-05T00:00:00.001Z',
  } as unknown as Omit<IssueRow, 'comment_count'>;
}

/** The facts the core's representations take, as the archive gathered them (no issue type; no reactions: archives count none). */
const ASSOCIATIONS = ['OWNER', 'COLLABORATOR', 'NONE', 'MEMBER'] as const;

function facts(urls: Urls, issue: Omit<IssueRow, 'comment_count'>, i: number): IssueFacts {
  return {
    issue, repository, owner, author: i % 2 ? others[0]! : owner, authorAssociation: ASSOCIATIONS[i % 4],
    assignees: others.slice(0, i % 4), labels: [], requestedReviewers: others.slice(i % 3), requestedTeams: teams.slice(0, i % 3), comments: i * 7,
    reactions: noReactions(),
  } as unknown as IssueFacts;
}

/** The archive's pull request record as it was built before: the issue representation, its requested reviewers and teams. */
function pullRequestBefore(urls: Urls, f: IssueFacts) {
  return {
    ...issueRepresentation(urls, f),
    requested_reviewers: f.requestedReviewers.map((u) => simpleUser(urls, u)),
    requested_teams: (f.requestedTeams as TeamWithOrg[]).map((t) => teamBefore(urls, t)),
  };
}

function teamBefore(urls: Urls, team: SimpleTeamRow) {
  const url = `${urls.api}/orgs/${team.org_login}/teams/${team.slug}`;
  return { id: team.id, node_id: nodeId('Team', team.id), url, html_url: `${urls.web}/orgs/${team.org_login}/teams/${team.slug}`, name: team.name, slug: team.slug };
}

type EventInput = Parameters<RecordWriter['issueEvent']>[1];

/** The archive's issue event record as it was built before. */
function issueEventBefore(urls: Urls, event: EventInput) {
  const api = `${urls.api}/repos/${owner.login}/${repository.name}`;
  const actor = simpleUser(urls, event.actor);
  const subject = event.subject ? simpleUser(urls, event.subject) : null;
  const about: Record<string, unknown> = {};
  if (subject && (event.event === 'assigned' || event.event === 'unassigned')) Object.assign(about, { assignee: subject, assigner: actor });
  else if (event.event === 'review_requested' || event.event === 'review_request_removed') {
    Object.assign(about, { review_requester: actor, ...(subject ? { requested_reviewer: subject } : {}) });
    if (event.team) about.requested_team = teamBefore(urls, event.team);
  } else if (subject) about.subject = subject;
  return {
    id: event.id, node_id: nodeId('IssueEvent', event.id), url: `${api}/issues/events/${event.id}`, actor, event: event.event,
    commit_id: null, commit_url: null, created_at: isoSeconds(event.created_at), issue_url: `${api}/issues/${event.number}`, ...about,
  };
}

for (const urls of URLS) {
  describe(`export records are the representations' bytes (${urls.api})`, () => {
    const at = (records: RecordWriter) => records.repositoryPaths(owner.login, repository.name);

    test('users: the owner with profile fields, others as simple users', () => {
      const records = new RecordWriter(urls, owner.id);
      assert.equal(records.user(owner), JSON.stringify(userWithProfile(urls, owner)));
      for (const other of others) {
        assert.equal(records.user(other), JSON.stringify(simpleUser(urls, other)));
        assert.equal(records.user(other), JSON.stringify(simpleUser(urls, other)), 'the kept JSON too');
      }
    });

    test('a user renamed during the export is rendered with its new login', () => {
      const records = new RecordWriter(urls, owner.id);
      const renamed = { ...others[0]!, login: 'renamed', site_admin: 0 };
      assert.equal(records.simpleUser(others[0]!), JSON.stringify(simpleUser(urls, others[0]!)));
      assert.equal(records.simpleUser(renamed), JSON.stringify(simpleUser(urls, renamed)));
    });

    test('issues and pull requests', () => {
      const records = new RecordWriter(urls, owner.id);
      for (let i = 0; i < 24; i++) {
        const issue = issueRow(i, false);
        const f = facts(urls, issue, i);
        assert.equal(records.issue(at(records), issue, f.author, f.assignees, f.comments, f.authorAssociation), JSON.stringify(issueRepresentation(urls, f)), `issue ${i}`);
        const pull = issueRow(i, true);
        const p = facts(urls, pull, i);
        assert.equal(
          records.pullRequest(at(records), pull, p.author, p.assignees, p.comments, p.authorAssociation, p.requestedReviewers, p.requestedTeams as TeamWithOrg[]),
          JSON.stringify(pullRequestBefore(urls, p)),
          `pull request ${i}`,
        );
      }
    });

    test('issue comments', () => {
      const records = new RecordWriter(urls, owner.id);
      for (let i = 0; i < 16; i++) {
        const issue = issueRow(i, i % 2 === 1) as IssueRow;
        const comment = { id: 5000 + i, body: TRICKY[i % TRICKY.length]!, created_at: '2024-06-07T08:09:10.111Z', updated_at: i % 3 ? '2024-06-07T08:09:10.111Z' : '2024-06-07 08:09:10' };
        const author = [owner, ...others][i % 4]!;
        const authorAssociation = ASSOCIATIONS[i % 4];
        const expected = commentRepresentation(urls, { comment, issue, author, repository, owner, authorAssociation, reactions: noReactions() } as never);
        assert.equal(records.comment(at(records), comment, issue, author, authorAssociation), JSON.stringify(expected), `comment ${i}`);
      }
    });

    test('issue events of every kind, with and without their subjects', () => {
      const records = new RecordWriter(urls, owner.id);
      const kinds = ['assigned', 'unassigned', 'review_requested', 'review_request_removed', 'mentioned', 'closed', 'reopened', 'merged', 'renamed "odd"'];
      let id = 7000;
      for (const event of kinds) {
        for (const subject of [null, others[0]!, others[2]!]) {
          for (const team of [null, teams[0]!, teams[1]!]) {
            const input: EventInput = { id: id++, event, created_at: '2024-07-08T09:10:11.121Z', number: id % 50, actor: [owner, ...others][id % 4]!, subject, team };
            assert.equal(records.issueEvent(at(records), input), JSON.stringify(issueEventBefore(urls, input)), `${event} ${subject?.login} ${team?.slug}`);
          }
        }
      }
    });
  });
}
