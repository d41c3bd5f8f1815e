// The records an archive holds, written straight as JSON text in the platform's REST shapes: the
// same bytes as `JSON.stringify` of the API's representations (test/areas/user-migrations/user-migrations-records.test.ts
// holds them to that), built without the objects. A 60,000-record export spent about half its time
// building those objects (30 URLs each) and stringifying them, and a quarter collecting them; here a
// user's JSON is made once per export and a repository's URL prefixes once per repository.
// Repositories and organizations (a few records) are rendered with the representations themselves,
// on the API thread (`plan.ts`), so the export thread loads neither them nor their schemas.
import { isoSeconds } from '../../platform/clock.ts';
import { nodeId, type Urls } from '../../platform/urls.ts';
import type { UserRow } from '../../core/accounts/store.ts';
import type { IssueRow, SimpleTeamRow } from './store.ts';

/** A string as JSON. */
const str = (value: string) => JSON.stringify(value);
/** A nullable string as JSON. */
const strOrNull = (value: string | null) => (value === null ? 'null' : JSON.stringify(value));
/** A string's JSON escaping without its quotes: a prefix that plain ASCII (paths, numbers) is appended to. */
const inner = (value: string) => JSON.stringify(value).slice(1, -1);
/** The reactions of an issue or comment at `url` (already escaped): an archive counts none (README, "Known limits"). */
const reactions = (url: string) =>
  `{"url":"${url}/reactions","total_count":0,"+1":0,"-1":0,"laugh":0,"hooray":0,"confused":0,"heart":0,"rocket":0,"eyes":0}`;
/** A stored timestamp, cut to seconds (`null` and the empty string are null, as the representations have it). */
const time = (value: string | null) => (value ? `"${isoSeconds(value)}"` : 'null');

/** The JSON of a repository's URLs, computed once per repository. */
export interface RepositoryPaths {
  /** `{api}/repos/{owner}/{name}`, escaped. */
  api: string;
  /** `{web}/{owner}/{name}`, escaped. */
  web: string;
}

/** The fields of a user a simple user is made of: a cached JSON is reused only while they stay the same. */
type UserFields = Pick<UserRow, 'id' | 'login' | 'type' | 'site_admin'>;
/** The fields of an issue or pull request its record is made of. */
type IssueFields = Pick<IssueRow, 'id' | 'number' | 'is_pull_request' | 'state' | 'state_reason' | 'title' | 'body' | 'merged_at' | 'closed_at' | 'locked' | 'active_lock_reason' | 'created_at' | 'updated_at'>;

/** Users whose JSON is kept: enough for a repository's authors, bounded so the thread's heap stays flat. */
const USER_CACHE_SIZE = 10_000;

/** Writes an export's records as JSON text; one per export (it keeps the users' JSON of this export). */
export class RecordWriter {
  private readonly urls: Urls;
  private readonly ownerId: number;
  private readonly webEscaped: string;
  private readonly users = new Map<number, { login: string; type: string; site_admin: number | boolean; json: string }>();

  constructor(urls: Urls, ownerId: number) {
    this.urls = urls;
    this.ownerId = ownerId;
    this.webEscaped = inner(urls.web);
  }

  repositoryPaths(owner: string, name: string): RepositoryPaths {
    return { api: inner(`${this.urls.api}/repos/${owner}/${name}`), web: inner(`${this.urls.web}/${owner}/${name}`) };
  }

  /** `simpleUser` as JSON. */
  simpleUser(user: UserFields): string {
    const cached = this.users.get(user.id);
    if (cached && cached.login === user.login && cached.type === user.type && cached.site_admin === user.site_admin) return cached.json;
    if (this.users.size >= USER_CACHE_SIZE) this.users.clear();
    const json = this.simpleUserFields(user);
    this.users.set(user.id, { login: user.login, type: user.type, site_admin: user.site_admin, json: `{${json}}` });
    return `{${json}}`;
  }

  private simpleUserFields(user: UserFields): string {
    const base = inner(`${this.urls.api}/users/${user.login}`);
    const web = this.webEscaped;
    return `"login":${str(user.login)},"id":${user.id},"node_id":"${nodeId(user.type === 'Organization' ? 'Organization' : 'User', user.id)}",`
      + `"avatar_url":"${web}/avatars/u/${user.id}?v=4","gravatar_id":"","url":"${base}","html_url":${str(`${this.urls.web}/${user.login}`)},`
      + `"followers_url":"${base}/followers","following_url":"${base}/following{/other_user}","gists_url":"${base}/gists{/gist_id}",`
      + `"starred_url":"${base}/starred{/owner}{/repo}","subscriptions_url":"${base}/subscriptions","organizations_url":"${base}/orgs",`
      + `"repos_url":"${base}/repos","events_url":"${base}/events{/privacy}","received_events_url":"${base}/received_events",`
      + `"type":${str(user.type)},"site_admin":${Boolean(user.site_admin)}`;
  }

  /** A `users` record: the migration's owner with profile fields (`userWithProfile`); other users as simple users (their e-mail is not theirs to export). */
  user(user: UserRow): string {
    if (user.id !== this.ownerId) return this.simpleUser(user);
    return `{${this.simpleUserFields(user)},"name":${strOrNull(user.name)},"email":${strOrNull(user.email)},"user_view_type":"public"}`;
  }

  /** `issueRepresentation` (an issue or a pull request, with no issue type) as JSON, without its closing brace. */
  private issueFields(at: RepositoryPaths, issue: IssueFields, author: UserFields, assignees: UserFields[], comments: number, association: string): string {
    const pull = Boolean(issue.is_pull_request);
    const url = `${at.api}/issues/${issue.number}`;
    const html = `${at.web}/${pull ? 'pull' : 'issues'}/${issue.number}`;
    const assigned = assignees.map((u) => this.simpleUser(u));
    return `{"id":${issue.id},"node_id":"${nodeId(pull ? 'PullRequest' : 'Issue', issue.id)}","url":"${url}","repository_url":"${at.api}",`
      + `"labels_url":"${url}/labels{/name}","comments_url":"${url}/comments","events_url":"${url}/events","html_url":"${html}",`
      + `"number":${issue.number},"state":${str(issue.state)},"state_reason":${strOrNull(issue.state_reason)},"title":${str(issue.title)},`
      + `"body":${strOrNull(issue.body)},"user":${this.simpleUser(author)},"labels":[],"assignee":${assigned[0] ?? 'null'},`
      + `"assignees":[${assigned.join(',')}],"milestone":null,"locked":${Number(issue.locked) === 1},"active_lock_reason":${strOrNull(issue.active_lock_reason)},"comments":${comments},`
      + (pull
        ? `"pull_request":{"url":"${at.api}/pulls/${issue.number}","html_url":"${html}","diff_url":"${html}.diff","patch_url":"${html}.patch","merged_at":${time(issue.merged_at)}},`
        : '')
      + `"type":null,"closed_at":${time(issue.closed_at)},"created_at":"${isoSeconds(issue.created_at)}","updated_at":"${isoSeconds(issue.updated_at)}",`
      + `"author_association":${str(association)},"timeline_url":"${url}/timeline","performed_via_vendor_app":null,"reactions":${reactions(url)}`;
  }

  /** An `issues` record: `issueRepresentation`. */
  issue(at: RepositoryPaths, issue: IssueFields, author: UserFields, assignees: UserFields[], comments: number, association: string): string {
    return `${this.issueFields(at, issue, author, assignees, comments, association)}}`;
  }

  /** A `pull_requests` record: the issue representation (with `pull_request`) and who is asked to review it. */
  pullRequest(
    at: RepositoryPaths,
    issue: IssueFields,
    author: UserFields,
    assignees: UserFields[],
    comments: number,
    association: string,
    reviewers: UserFields[],
    teams: SimpleTeamRow[],
  ): string {
    return `${this.issueFields(at, issue, author, assignees, comments, association)},"requested_reviewers":[${reviewers.map((u) => this.simpleUser(u)).join(',')}],`
      + `"requested_teams":[${teams.map((t) => this.team(t)).join(',')}]}`;
  }

  /** An `issue_comments` record: `commentRepresentation`. */
  comment(
    at: RepositoryPaths,
    comment: { id: number; body: string; created_at: string; updated_at: string },
    issue: Pick<IssueRow, 'number' | 'is_pull_request'>,
    author: UserFields,
    association: string,
  ): string {
    const html = `${at.web}/${issue.is_pull_request ? 'pull' : 'issues'}/${issue.number}`;
    const url = `${at.api}/issues/comments/${comment.id}`;
    return `{"id":${comment.id},"node_id":"${nodeId('IssueComment', comment.id)}","url":"${url}",`
      + `"html_url":"${html}#issuecomment-${comment.id}","body":${str(comment.body)},"user":${this.simpleUser(author)},`
      + `"created_at":"${isoSeconds(comment.created_at)}","updated_at":"${isoSeconds(comment.updated_at)}","issue_url":"${at.api}/issues/${issue.number}",`
      + `"author_association":${str(association)},"performed_via_vendor_app":null,"reactions":${reactions(url)}}`;
  }

  /** A team as an issue event or a pull request names it. */
  private team(team: SimpleTeamRow): string {
    const path = `/orgs/${team.org_login}/teams/${team.slug}`;
    return `{"id":${team.id},"node_id":"${nodeId('Team', team.id)}","url":${str(`${this.urls.api}${path}`)},"html_url":${str(`${this.urls.web}${path}`)},`
      + `"name":${str(team.name)},"slug":${str(team.slug)}}`;
  }

  /** An `issue_events` record; its subject is named as the REST timeline names it for that kind of event. */
  issueEvent(
    at: RepositoryPaths,
    event: { id: number; event: string; created_at: string; number: number; actor: UserFields; subject: UserFields | null; team: SimpleTeamRow | null },
  ): string {
    const actor = this.simpleUser(event.actor);
    const subject = event.subject ? this.simpleUser(event.subject) : null;
    let about = '';
    if (subject && (event.event === 'assigned' || event.event === 'unassigned')) about = `,"assignee":${subject},"assigner":${actor}`;
    else if (event.event === 'review_requested' || event.event === 'review_request_removed') {
      about = `,"review_requester":${actor}${subject ? `,"requested_reviewer":${subject}` : ''}${event.team ? `,"requested_team":${this.team(event.team)}` : ''}`;
    } else if (subject) about = `,"subject":${subject}`;
    return `{"id":${event.id},"node_id":"${nodeId('IssueEvent', event.id)}","url":"${at.api}/issues/events/${event.id}","actor":${actor},`
      + `"event":${str(event.event)},"commit_id":null,"commit_url":null,"created_at":"${isoSeconds(event.created_at)}",`
      + `"issue_url":"${at.api}/issues/${event.number}"${about}}`;
  }
}
